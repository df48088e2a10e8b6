"""Lazy, per-process cache of tree-sitter languages, parsers and queries.

How the binding and the grammars are loaded in a hook (without what their packages import) is the fast path's:
memory/fastpath/grammars.py.

Each grammar lives in its own wheel (tree-sitter-python, ...). Importing one
costs a few milliseconds, so nothing is imported until a language is asked
for, and then only that one grammar module.
"""

from __future__ import annotations

import os

from memory.fastpath.grammars import cache, load_binding, ts

TYPE_CHECKING = False  # importing typing costs a hook several ms
if TYPE_CHECKING:  # keep `import parser.grammars` free of tree_sitter
    from tree_sitter import Language, Parser, Query


# language name -> (module, function returning the language pointer)
GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
    "csharp": ("tree_sitter_c_sharp", "language"),
    "php": ("tree_sitter_php", "language_php"),
    "kotlin": ("tree_sitter_kotlin", "language"),
    "swift": ("tree_sitter_swift", "language"),
    "bash": ("tree_sitter_bash", "language"),
    "lua": ("tree_sitter_lua", "language"),
    "scala": ("tree_sitter_scala", "language"),
}

# TypeScript's grammar extends JavaScript's: both share ecmascript.scm, and
# each adds the node types only its own grammar has (a query naming an
# unknown node type does not compile).
_QUERY_FILES: dict[str, tuple[str, ...]] = {
    "javascript": ("ecmascript", "javascript"),
    "typescript": ("ecmascript", "typescript"),
    "tsx": ("ecmascript", "typescript"),
}

QUERY_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "queries")


class GrammarUnavailable(Exception):
    """The grammar wheel (or tree_sitter itself) is not installed."""


@cache
def get_language(name: str) -> Language:
    try:
        package, func = GRAMMARS[name]
        try:
            module = load_binding(package)
            pointer = getattr(module, func)()
        except (ImportError, AttributeError, OSError):
            pointer = getattr(__import__(package, fromlist=("_",)), func)()
        return ts().Language(pointer)
    except (KeyError, ImportError, AttributeError, ValueError) as exc:
        raise GrammarUnavailable(name) from exc


@cache
def get_parser(name: str) -> Parser:
    return ts().Parser(get_language(name))


def query_source(name: str) -> str:
    files = _QUERY_FILES.get(name, (name,))
    parts = []
    for f in files:
        with open(os.path.join(QUERY_DIR, f"{f}.scm"), encoding="utf-8") as fh:
            parts.append(fh.read())
    return "\n".join(parts)


@cache
def get_query(name: str) -> Query:
    return ts().Query(get_language(name), query_source(name))


def available(name: str) -> bool:
    """True when the grammar for ``name`` can be loaded (loads it)."""
    try:
        get_language(name)
    except GrammarUnavailable:
        return False
    return True
