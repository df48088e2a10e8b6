"""memory: a persistent memory for Claude Code.

The packages follow the pipeline (docs/architecture.md). Hot side, standard library only, imported by
the hook processes: base, store, capture, hook, outline and recall's search/layers/inject. Cold side:
recall's embeddings and vectors, worker, learn, team, present, cli, mcp."""

import os

__version__ = "0.1.0"  # the one home of the version: pyproject.toml reads it, scripts/gen_docs.py copies it
# The plugin's folder (hooks/, scripts/, pyproject.toml beside this package): one place computes it.
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
