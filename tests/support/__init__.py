"""Code the tests share, imported as `tests.support.<module>`: fake servers, real processes, corpora.

Nothing here is a test (pytest collects only `test_*.py`), and nothing in `memory/` or `parser/` may import it.
"""
