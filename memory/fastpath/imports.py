"""hooks/_entry.py's import finders: sqlite3 without its dbapi2 layer, and the plugin's own modules loaded
straight from their .pyc (memory/fastpath/__init__.py; the costs they save: docs/benchmarks.md, "The fast path").

A hook loads this module from its file before anything of `memory` (hooks/_entry.py), so that `memory` itself
comes through the .pyc loader: it imports nothing of the plugin, and holds the switch every part reads."""

from __future__ import annotations

import os
import sys

SWITCH = "MEMORY_FASTPATH"


def switched_off() -> bool:
    """Whether MEMORY_FASTPATH turns every part of the fast path off."""
    return os.environ.get(SWITCH, "on").strip().lower() in ("off", "0", "no", "false")


class LightSqlite3:
    """`import sqlite3` in a hook process gives the C module without the package's dbapi2 layer, whose
    imports (datetime, collections.abc, for the default date adapters deprecated since 3.12, which nothing
    here uses) every hook would pay: _sqlite3 (where connect, Connection, Row and the errors live)
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


class LruCacheOnly:
    """What _sqlite3 takes from `functools` when it loads: `lru_cache`, its statement cache (CPython's
    Modules/_sqlite/module.c). The real functools imports collections (paid by every hook that opens a
    database); this gives the same C cache from the builtin _functools, and is
    gone from sys.modules once _sqlite3 is loaded, so a later `import functools` gets the real one."""

    @staticmethod
    def lru_cache(maxsize: int | None = 128, typed: bool = False) -> object:
        import _functools

        return lambda fn: _functools._lru_cache_wrapper(fn, maxsize, typed, lambda *info: info)


def _import_sqlite_c() -> None:
    """Import _sqlite3, lending it LruCacheOnly as functools when functools is not loaded yet; the real
    functools if that is refused (another Python's _sqlite3 asking for more)."""
    if "_sqlite3" in sys.modules or "functools" in sys.modules:
        import _sqlite3  # noqa: F401
        return
    sys.modules["functools"] = LruCacheOnly  # type: ignore[assignment]
    try:
        import _sqlite3  # noqa: F401
    except AttributeError:
        sys.modules.pop("_sqlite3", None)
        sys.modules.pop("functools", None)
        import _sqlite3  # noqa: F401
    finally:
        if sys.modules.get("functools") is LruCacheOnly:
            del sys.modules["functools"]


class PluginModules:
    """The plugin's own modules (`memory`, `parser` and theirs) found and loaded straight from their .pyc:
    the path finder's directory listings and importlib's loader run in Python for each of the ~35 modules a
    cached Read hook loads. The .pyc is taken only when its header says it
    is this Python's and the source's (mtime and size, as importlib checks it); anything else (no .pyc,
    stale, hash-based, a pycache prefix or -O) is left to the usual finders, which compile and write it."""

    root = ""  # the plugin's folder: install() sets it
    tag = sys.implementation.cache_tag
    magic = sys.modules["_frozen_importlib_external"].MAGIC_NUMBER + bytes(4)  # + flags 0: timestamp-checked

    @classmethod
    def find_spec(cls, name: str, path: object = None, target: object = None) -> object:
        if name.partition(".")[0] not in ("memory", "parser"):
            return None
        base = f"{cls.root}/{name.replace('.', '/')}"
        for source in (f"{base}/__init__.py", f"{base}.py"):  # a package first, as the path finder looks
            try:
                st = os.stat(source)
            except OSError:
                continue
            folder, _, file = source.rpartition("/")
            cached = f"{folder}/__pycache__/{file[:-3]}.{cls.tag}.pyc"
            try:
                with open(cached, "rb", buffering=0) as fh:
                    data = fh.readall()
            except OSError:
                return None
            if data[:16] != cls.magic + (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little") + \
                    (st.st_size & 0xFFFFFFFF).to_bytes(4, "little"):
                return None
            package = file == "__init__.py"
            spec = sys.modules["_frozen_importlib"].ModuleSpec(name, cls, origin=source, loader_state=data,
                                                                is_package=package)
            spec.has_location, spec.cached = True, cached
            if package:
                spec.submodule_search_locations = [folder]
            return spec
        return None

    @staticmethod
    def create_module(spec: object) -> None:
        return None

    @staticmethod
    def exec_module(module: object) -> None:
        import _imp
        import marshal

        spec = module.__spec__  # type: ignore[attr-defined]
        if spec.loader_state is None:  # loaded again (importlib.reload): as importlib would
            loader = sys.modules["_frozen_importlib_external"].SourceFileLoader(spec.name, spec.origin)
            return loader.exec_module(module)
        code = marshal.loads(memoryview(spec.loader_state)[16:])
        spec.loader_state = None  # the bytes are not kept for the process's life
        fix = getattr(_imp, "_fix_co_filename", None)  # as importlib: the source's path, should the tree have moved
        if fix is not None:
            fix(code, spec.origin)
        exec(code, module.__dict__)  # noqa: S102


def install(root: str) -> None:
    """Put the finders in front of a hook process's import system; `root` is the plugin's folder. Nothing with
    MEMORY_FASTPATH=off; the .pyc loader only where Python would read the same .pyc (a cache tag, no -O, no
    pycache prefix)."""
    if switched_off():
        return
    if PluginModules.tag and not sys.flags.optimize and not sys.pycache_prefix:
        PluginModules.root = root
        sys.meta_path.insert(0, PluginModules)  # type: ignore[arg-type]
    sys.meta_path.insert(0, LightSqlite3)  # type: ignore[arg-type]


def uninstall() -> None:
    """Take the finders out again (the check refused this part on this Python: memory/fastpath/check.py)."""
    for finder in (LightSqlite3, PluginModules):
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)  # type: ignore[arg-type]
