"""tree-sitter's binding and grammars loaded for a hook without what their packages import around them
(memory/fastpath/__init__.py): parser/grammars.py gets them from here. With the part off (MEMORY_FASTPATH=off, or
refused by memory/fastpath/check.py), the packages are imported as anyone would and functools.cache memoises."""

from __future__ import annotations

import os
import sys

from memory.fastpath import on

TYPE_CHECKING = False  # importing typing costs a hook several ms
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    F = TypeVar("F", bound=Callable[..., Any])

ON = on("grammars")


def memo(fn: F) -> F:
    """functools.cache for one-argument getters, without importing functools (and the `types` it imports) in
    a hook: see load_binding."""
    memo: dict = {}

    def cached(*args: Any) -> Any:
        if args not in memo:
            memo[args] = fn(*args)
        return memo[args]

    cached.__wrapped__ = fn  # type: ignore[attr-defined]
    cached.__doc__ = fn.__doc__
    return cached  # type: ignore[return-value]


def cache(fn: F) -> F:
    """functools.cache, or with the fast path on, the same without importing functools."""
    if ON:
        return memo(fn)
    import functools

    return functools.cache(fn)  # type: ignore[return-value]


@cache
def ts() -> Any:
    """The tree_sitter bindings (Language, Parser, Query, QueryCursor...).

    Loaded straight from the compiled `tree_sitter._binding`: the package `__init__` imports `typing` only to
    declare a Protocol (its cost: docs/benchmarks.md, "The fast path"). Falls back to `import tree_sitter`."""
    loaded = sys.modules.get("tree_sitter._binding")
    if loaded is not None:
        return loaded
    if not ON:
        import tree_sitter

        return tree_sitter
    try:
        return load_binding("tree_sitter")
    except (ImportError, AttributeError, OSError):
        import tree_sitter

        return tree_sitter


def _package_dir(package: str) -> str | None:
    """The folder of an installed package, found on sys.path (importlib.util.find_spec without importing
    importlib.util, warnings and contextlib)."""
    for entry in sys.path:
        folder = os.path.join(entry or ".", package)
        if os.path.isfile(os.path.join(folder, "__init__.py")):
            return folder
    return None


def load_binding(package: str, fast: bool = ON) -> Any:
    """The grammar's compiled ``_binding`` module.

    Loaded straight from its file with the interpreter's own frozen loader: the package ``__init__``
    imports importlib.resources only to read query files we do not use. Falls back to a normal
    import if the layout is not the expected one, or with the fast path off (`fast`: memory/fastpath/check.py
    tries the file whatever the switch says).
    """
    folder = (_package_dir(package) if fast else None) or ""
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
    importing them (with the `functools`, `types` and `collections` they import) is a good part of a cold Read
    hook's CPU, and the outline path needs none of them (its patterns come compiled from memory/fastpath/recode.py). The
    caller removes them once the binding is loaded, so a later `import re` gets the real module."""
    lent = tuple(name for name in _STAND_INS if name not in sys.modules)
    for name in lent:
        sys.modules[name] = _STAND_INS[name]  # type: ignore[assignment]
    return lent
