"""Finding memories again: keyword search (FTS5), hybrid search, prompt-time injection, and embeddings.

Hot modules (hooks import them): search.py (FTS5 bm25), layers.py (the 3-layer API, hybrid through the
worker), inject.py (what a prompt or a session start is given). They must not import lancedb, numpy,
pyarrow, ollama or anything from the cold modules beside them. Cold modules (worker, CLI, MCP only):
hybrid.py, vectors.py (LanceDB), warm_index.py (numpy), context.py and embed/."""
