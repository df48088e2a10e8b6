"""Shared entrypoint for every hook process: one JSON event in, at most one JSON object out, exit 0."""

import gc
import os
import sys

# No cyclic garbage collection: a hook lives well under a second and makes few reference cycles (freed at
# exit), while its imports and a cold outline's tree nodes set off dozens of collections: 3-5% of a Read
# hook's instructions (callgrind), ~1 ms CPU of a cold C++ outline, ~0.7 ms of a cached one.
gc.disable()

# The hooks run from the plugin root, which need not be pip-installed: import `memory` from there. The
# plugin root takes the place of hooks/ (the script's folder, which Python put first and which nothing
# needs once this module is found), so the path is not one entry longer for every import to search.
sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _LightSqlite3:
    """`import sqlite3` in a hook process gives the C module without the package's dbapi2 layer, whose
    imports (datetime, collections.abc, for the default date adapters deprecated since 3.12, which nothing
    here uses) cost ~2 ms CPU of every hook: _sqlite3 (where connect, Connection, Row and the errors live)
    under the package's name, with the few plain names dbapi2 adds. Only on import (PreToolUse never
    loads it); the worker, the CLI and the tests use the real package."""

    @classmethod
    def find_spec(cls, name: str, path: object = None, target: object = None) -> object:
        if name != "sqlite3":
            return None
        try:
            _import_sqlite_c()
        except ImportError:  # a Python built without it: the real package says so
            return None
        return sys.modules["_frozen_importlib"].ModuleSpec(name, cls)

    @staticmethod
    def create_module(spec: object) -> None:
        return None

    @staticmethod
    def exec_module(mod: object) -> None:
        import _sqlite3

        mod.__dict__.update({k: v for k, v in vars(_sqlite3).items() if not k.startswith("__")})
        mod.Binary, mod.paramstyle, mod.apilevel = memoryview, "qmark", "2.0"
        mod.sqlite_version_info = tuple(int(x) for x in _sqlite3.sqlite_version.split("."))


class _LruCacheOnly:
    """What _sqlite3 takes from `functools` when it loads: `lru_cache`, its statement cache (CPython's
    Modules/_sqlite/module.c). The real functools imports collections (~3.5 ms CPU of every hook that opens a
    database, measured with `python -S`); this gives the same C cache from the builtin _functools, and is
    gone from sys.modules once _sqlite3 is loaded, so a later `import functools` gets the real one."""

    @staticmethod
    def lru_cache(maxsize: int | None = 128, typed: bool = False) -> object:
        import _functools

        return lambda fn: _functools._lru_cache_wrapper(fn, maxsize, typed, lambda *info: info)


def _import_sqlite_c() -> None:
    """Import _sqlite3, lending it _LruCacheOnly as functools when functools is not loaded yet; the real
    functools if that is refused (another Python's _sqlite3 asking for more)."""
    if "_sqlite3" in sys.modules or "functools" in sys.modules:
        import _sqlite3  # noqa: F401
        return
    sys.modules["functools"] = _LruCacheOnly  # type: ignore[assignment]
    try:
        import _sqlite3  # noqa: F401
    except AttributeError:
        sys.modules.pop("_sqlite3", None)
        sys.modules.pop("functools", None)
        import _sqlite3  # noqa: F401
    finally:
        if sys.modules.get("functools") is _LruCacheOnly:
            del sys.modules["functools"]


sys.meta_path.insert(0, _LightSqlite3)  # type: ignore[arg-type]

from memory.hook.run import run  # noqa: E402

__all__ = ["run"]
