"""The hook contract: one JSON event on stdin, one handler per event, output within 100 ms.

run.py reads the event and calls its handler from an explicit table; spool.py keeps what could not be
written; one module per event. Standard library only: imports base, store, capture, outline and the hot
recall modules (search, inject, layers). Must not import lancedb, anthropic, ollama, mcp, psycopg, numpy,
pyarrow or click, nor the cold packages (worker, learn, present, cli, mcp)."""
