"""Finding memories again: keyword search (FTS5), hybrid search, prompt-time injection, and embeddings.

Hot modules (standard library only): search.py (FTS5 bm25), layers.py (the 3-layer API, hybrid through
the worker) and inject.py (what a prompt or a session start is given), which hooks import, and finder.py
(one project or all, for the CLI and MCP). They must not import lancedb, numpy, pyarrow, ollama or
anything from the cold modules beside them; callers pass cold code in (the CLI's in-process hybrid
search). Cold modules (worker, CLI, MCP only): hybrid.py, vectors.py (LanceDB), warm_index.py (numpy),
context.py and embed/. The package may import base, store and capture; never hook, outline or a cold
package (worker, learn, team, present, cli, mcp)."""
