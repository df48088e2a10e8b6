"""What a Read hook shows instead of a large file: the outline from parser/, cached per file in SQLite; and the
repository map built from the same outlines.

Hot: read.py runs inside the PostToolUse(Read) hook, cache.py stores outlines in the project database,
repomap.py gives SessionStart the map the worker last built. Cold: mapbuild.py (runs git, parses a whole
repository; the CLI, the MCP server and the worker's `repo_map` job), which no hook imports.
May import base, store, capture and the top-level parser package (tree-sitter). Must not import lancedb,
anthropic, ollama, mcp, psycopg, numpy, pyarrow or click."""
