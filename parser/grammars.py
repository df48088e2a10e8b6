"""Lazy, per-process cache of tree-sitter languages, parsers and queries.

Each grammar lives in its own wheel (tree-sitter-python, ...). Importing one
costs a few milliseconds, so nothing is imported until a language is asked
for, and then only that one grammar module.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # importing typing costs a hook several ms
if TYPE_CHECKING:  # keep `import parser.grammars` free of tree_sitter
    from collections.abc import Callable
    from typing import Any, TypeVar

    from tree_sitter import Language, Parser, Query

    F = TypeVar("F", bound=Callable[..., Any])


def cache(fn: F) -> F:
    """functools.cache for these one-argument getters, without importing functools (and the `types` it
    imports) in a hook: see _load_binding."""
    memo: dict = {}

    def cached(*args: Any) -> Any:
        if args not in memo:
            memo[args] = fn(*args)
        return memo[args]

    cached.__wrapped__ = fn  # type: ignore[attr-defined]
    cached.__doc__ = fn.__doc__
    return cached  # type: ignore[return-value]

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
def ts() -> Any:
    """The tree_sitter bindings (Language, Parser, Query, QueryCursor...).

    Loaded straight from the compiled `tree_sitter._binding`: the package `__init__` imports `typing`
    (~3 ms of a hook) only to declare a Protocol. Falls back to `import tree_sitter`."""
    loaded = sys.modules.get("tree_sitter._binding")
    if loaded is not None:
        return loaded
    try:
        return _load_binding("tree_sitter")
    except (ImportError, AttributeError, OSError):
        import tree_sitter

        return tree_sitter


def _package_dir(package: str) -> str | None:
    """The folder of an installed package, found on sys.path (importlib.util.find_spec without importing
    importlib.util, warnings and contextlib: ~5 ms CPU of a cold Read hook)."""
    for entry in sys.path:
        folder = os.path.join(entry or ".", package)
        if os.path.isfile(os.path.join(folder, "__init__.py")):
            return folder
    return None


def _load_binding(package: str) -> Any:
    """The grammar's compiled ``_binding`` module.

    Loaded straight from its file with the interpreter's own frozen loader: the package ``__init__``
    imports importlib.resources (~5 ms) only to read query files we do not use. Falls back to a normal
    import if the layout is not the expected one.
    """
    folder = _package_dir(package)
    for entry in sorted(os.listdir(folder)) if folder else []:
        if entry.startswith("_binding.") and entry.endswith((".so", ".pyd")):
            bootstrap = sys.modules["_frozen_importlib"]
            name = f"{package}._binding"
            loader = sys.modules["_frozen_importlib_external"].ExtensionFileLoader(name, os.path.join(folder, entry))
            lent = _lend_re_and_enum() if package == "tree_sitter" else ()
            try:  # the binding's init runs when the module is created
                module = bootstrap.module_from_spec(bootstrap.spec_from_loader(name, loader))
                loader.exec_module(module)
            finally:
                for stand_in in lent:
                    if sys.modules.get(stand_in) is _STAND_INS[stand_in]:
                        del sys.modules[stand_in]
            # Registered: a later `import tree_sitter` reuses it (one set of types).
            return sys.modules.setdefault(name, module)
    return __import__(package, fromlist=("_",))


class _LazyRe:
    """What tree_sitter._binding takes from `re` when it loads: `compile`, kept for queries' `#match?`
    predicates. The real `re` is imported on the first call."""

    @staticmethod
    def compile(pattern: Any, flags: int = 0) -> Any:
        if sys.modules.get("re") is _LazyRe:
            del sys.modules["re"]
        import re

        return re.compile(pattern, flags)


class _PlainEnum:
    """What tree_sitter._binding takes from `enum` when it loads: `IntEnum("LogType", {"PARSE": 0, "LEX": 1})`,
    the type of the log callback's first argument (no logger is set here). A class with the members as int
    attributes stands in."""

    @staticmethod
    def IntEnum(name: str, members: dict[str, int]) -> type:  # enum's name
        return type(name, (int,), {key: int(value) for key, value in members.items()})


_STAND_INS = {"re": _LazyRe, "enum": _PlainEnum}


def _lend_re_and_enum() -> tuple[str, ...]:
    """Put the stand-ins in sys.modules for the binding's init, where `re` and `enum` are not loaded yet:
    importing them (with the `functools`, `types` and `collections` they import) cost a cold Read hook ~4-6 ms
    of CPU, and the outline path needs none of them (its patterns come compiled from parser/recode.py). The
    caller removes them once the binding is loaded, so a later `import re` gets the real module."""
    lent = tuple(name for name in _STAND_INS if name not in sys.modules)
    for name in lent:
        sys.modules[name] = _STAND_INS[name]  # type: ignore[assignment]
    return lent


@cache
def get_language(name: str) -> Language:
    try:
        package, func = GRAMMARS[name]
        try:
            module = _load_binding(package)
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
