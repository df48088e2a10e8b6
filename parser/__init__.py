"""Tree-sitter signature outliner for the Read hook.

Importing the package costs nothing: the submodules (and tree_sitter, and one grammar) are imported only
when a name is first used, so `parser.languages` can decide in a hook whether tree-sitter is worth
importing at all.
"""

from __future__ import annotations

_EXPORTS = {
    "Outline": "parser.outline",
    "Symbol": "parser.outline",
    "outline_file": "parser.outline",
    "outline_source": "parser.outline",
    "language_for_path": "parser.languages",
    "estimate_tokens": "parser.tokens",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'parser' has no attribute {name!r}")
    # __import__ with a fromlist returns the submodule: importing importlib costs a hook ~1 ms.
    return getattr(__import__(module, fromlist=("_",)), name)
