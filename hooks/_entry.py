"""Shared entrypoint for every hook process: one JSON event in, at most one JSON object out, exit 0."""

import os
import sys

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
            import _sqlite3  # noqa: F401 - a Python built without it: the real package says so
        except ImportError:
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


sys.meta_path.insert(0, _LightSqlite3)  # type: ignore[arg-type]

from memory.hook.run import run  # noqa: E402

__all__ = ["run"]
