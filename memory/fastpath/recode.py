"""The cold Read hook's regular expressions, loaded already compiled.

`re.compile` parses and compiles a pattern in pure Python: the macro masks (parser/preprocess.py), the C++ hint of
a `.h` file, the token count and the signature clean-up cost a cold Read hook of a C or C++ file a good part of
its CPU before any text is searched (docs/benchmarks.md, "The fast path"). _regex_table.py beside this module
holds each of those patterns compiled, for the Python it was made with (VERSION: its version and its regex
engine's MAGIC and code size; BYTEORDER), written by `scripts/gen_regex_table.py`, each program's code as the
bytes of an array of unsigned ints (one object to unmarshal: several times faster than tuples of ints);
`_sre.compile` turns an entry into the Pattern `re.compile` would return (equal to it: a test checks every entry)
in microseconds. On any other Python, or for a pattern not in the table (changed since it was written), or with
the part off (MEMORY_FASTPATH=off, or refused by memory/fastpath/check.py), `re.compile` does the work as before.
"""

from __future__ import annotations

import sys

from memory.fastpath import on

TYPE_CHECKING = False  # importing typing costs a hook several ms
if TYPE_CHECKING:
    import re
    from collections.abc import Callable, Iterable

_ON = on("regex")
_loaded: list[dict] = []
# The table's code words: native unsigned ints of _sre.CODESIZE (4) bytes, in the table's BYTEORDER.
CODE_TYPE = "I"


def _table() -> dict:
    if not _loaded:
        try:
            import _sre

            from memory.fastpath._regex_table import BYTEORDER, TABLE, VERSION

            usable = VERSION == (tuple(sys.version_info[:2]), _sre.MAGIC, _sre.CODESIZE) and (
                BYTEORDER == sys.byteorder)
        except (ImportError, AttributeError):
            usable = False
        _loaded.append(TABLE if usable else {})
    return _loaded[0]


def compile(source: str | bytes, flags: int = 0) -> re.Pattern:
    """`re.compile(source, flags)`, from the table when it holds the pattern (and the part is on)."""
    found = from_table(source, flags) if _ON else None
    if found is not None:
        return found
    import re

    return re.compile(source, flags)


def from_table(source: str | bytes, flags: int = 0) -> re.Pattern | None:
    """The table's Pattern for `source` and `flags`, None when the table has none (or is another Python's)."""
    entry = _table().get((source, int(flags)))
    if entry is None:
        return None
    import _sre

    final_flags, code, groups, groupindex, indexgroup = entry
    words = list(memoryview(code).cast(CODE_TYPE))
    return _sre.compile(source, final_flags, words, groups - 1, dict(groupindex), indexgroup)


def sub_matches(text: str | bytes, matches: Iterable[re.Match], repl: Callable[[re.Match], str | bytes]
                ) -> str | bytes:
    """`pattern.sub(repl, text)` given the pattern's matches in `text`, in order: for a caller that finds them
    only where they can be (the macro masks' lines, the privacy rules' lines and anchors), each match still
    seeing the whole text around it."""
    out = []
    last = 0
    for match in matches:
        out.append(text[last:match.start()])
        out.append(repl(match))
        last = match.end()
    if not out:
        return text
    out.append(text[last:])
    return text[:0].join(out)


def program(source: str | bytes, flags: int = 0) -> tuple:
    """A table entry: what `re._compiler.compile` hands `_sre.compile` for this pattern."""
    from re import _compiler, _parser

    parsed = _parser.parse(source, flags)
    code = tuple(int(op) for op in _compiler._code(parsed, flags))
    groupindex = dict(parsed.state.groupdict)
    indexgroup = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    return int(flags) | int(parsed.state.flags), code, parsed.state.groups, groupindex, tuple(indexgroup)
