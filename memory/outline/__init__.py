"""What a Read hook shows instead of a large file: the outline from parser/, cached per file in SQLite.

Hot: read.py runs inside the PostToolUse(Read) hook, cache.py stores outlines in the project database.
May import base, store, capture and the top-level parser package (tree-sitter). Must not import lancedb,
anthropic, ollama, mcp, psycopg, numpy, pyarrow or click."""
