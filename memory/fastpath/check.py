"""The fast path's startup check: each private copy against its standard counterpart, once per Python.

A CPython upgrade can change what a copy relies on (`_sha256` became `_sha2` in 3.12; `_sre` programs are
version-specific; _sqlite3 may ask its `functools` for more). run() tries each part beside the standard module
it replaces, on a few inputs each, and keeps the verdict beside the package's bytecode (VERDICT_PATH, keyed on
this Python's build: memory/fastpath/__init__.py reads it); a refused part runs the standard library from then
on, and report() gives `memory doctor` its line. The worker runs it at start when the verdict is missing or
stale, `memory doctor` every time. Cold side: it imports what the copies avoid (json, hashlib, re, tree_sitter).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from memory.fastpath import PARTS, VERDICT_PATH, refused, switched_off, verdict_key

_JSON_SAMPLES: list[object] = [
    {"a": [1, 2.5, None, True, False], "b": {"c": "é\u2028\n\"\\"}, "": []}, [], {}, "😀\ud800", 2**70, -0.0,
    1e300, float("inf"), float("nan"), [[[]], {"k": {}}], ["x", "y"], {"n": 12345678.9},
]


def _json() -> str | None:
    import json

    from memory.fastpath import jsonlite

    for value in _JSON_SAMPLES:
        for ascii_only in (True, False):
            for indent in (None, 2):
                text = json.dumps(value, ensure_ascii=ascii_only, indent=indent)
                if jsonlite.fast_dumps(value, ensure_ascii=ascii_only, indent=indent) != text:
                    return f"dumps differs from json.dumps on {value!r}"
                if json.dumps(jsonlite.fast_loads(text)) != json.dumps(json.loads(text)):
                    return f"loads differs from json.loads on {text[:60]!r}"
    return None


def _sha() -> str | None:
    import hashlib

    from memory.fastpath import sha

    try:
        fast = sha.builtin()
    except ImportError as exc:
        return f"no builtin SHA-256 module in this Python ({exc})"
    for data in (b"", b"abc", bytes(range(256)) * 9):
        if fast(data).hexdigest() != hashlib.sha256(data).hexdigest():
            return "the builtin SHA-256 differs from hashlib's"
    return None


def _regex() -> str | None:
    import _sre
    import re

    from memory.fastpath import _regex_table, recode

    made = _regex_table.VERSION, _regex_table.BYTEORDER
    here = (tuple(sys.version_info[:2]), _sre.MAGIC, _sre.CODESIZE), sys.byteorder
    if made != here:
        return f"the regex table was made for {made}, this Python is {here} (run scripts/gen_regex_table.py)"
    table: dict[tuple[Any, int], Any] = dict(_regex_table.TABLE)
    for source, flags in table:
        if recode.from_table(source, flags) != re.compile(source, flags):
            return f"the table's program for {source[:40]!r} differs from re.compile's"
    return None


def _imports() -> str | None:
    import functools
    import sqlite3
    import types

    from memory.fastpath.imports import LightSqlite3, LruCacheOnly, PluginModules

    light = types.ModuleType("sqlite3")
    LightSqlite3.exec_module(light)
    missing = [n for n in ("connect", "Row", "Connection", "Error", "OperationalError", "DatabaseError",
                           "IntegrityError", "sqlite_version", "sqlite_version_info") if not hasattr(light, n)]
    if missing or light.sqlite_version_info != sqlite3.sqlite_version_info:
        return f"_sqlite3 lacks what the hooks use of sqlite3: {missing or 'sqlite_version_info'}"
    db = light.connect(":memory:")
    db.row_factory = light.Row
    row = db.execute("SELECT ? AS a, ? AS b", (1, "x")).fetchone()
    if (row["a"], row["b"]) != (1, "x") or not issubclass(light.OperationalError, sqlite3.Error):
        return "_sqlite3 does not behave as sqlite3"
    calls: list[int] = []

    def square(n: int) -> int:
        calls.append(n)
        return n * n

    for cache in (LruCacheOnly.lru_cache(2), functools.lru_cache(2)):
        cached = cache(square)  # type: ignore[operator]
        [cached(n) for n in (1, 2, 1, 3, 1)]
    if calls[:len(calls) // 2] != calls[len(calls) // 2:]:
        return "the functools stand-in caches unlike functools.lru_cache"
    return _pyc_reason(PluginModules)


def _pyc_reason(finder: type) -> str | None:
    """The .pyc loader's spec of a module of this package, against importlib's (when its .pyc is current)."""
    import importlib.util

    name = "memory.fastpath.check"
    finder.root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # type: ignore[attr-defined]
    ours, theirs = finder.find_spec(name), importlib.util.find_spec(name)  # type: ignore[attr-defined]
    if ours is None:
        return None  # no current .pyc to compare: importlib loads it, as it would without the fast path
    if theirs is None or (ours.origin, ours.cached) != (theirs.origin, theirs.cached):
        return "the .pyc loader finds other files than importlib"
    return None


def _grammars() -> str | None:
    try:
        import tree_sitter
        import tree_sitter_python
    except ImportError:
        return None  # no tree-sitter here: the outline is off whatever the fast path does
    from memory.fastpath import grammars

    stand_in = grammars._PlainEnum.IntEnum("LogType", {"PARSE": 0, "LEX": 1})
    if (stand_in.PARSE, stand_in.LEX) != (0, 1):  # type: ignore[attr-defined]
        return "the enum stand-in differs from enum.IntEnum"
    source = b"def f(x):\n    return x\n"
    binding = sys.modules.get("tree_sitter._binding") or grammars.load_binding("tree_sitter", fast=True)
    fast = binding.Parser(binding.Language(grammars.load_binding("tree_sitter_python", fast=True).language()))
    plain = tree_sitter.Parser(tree_sitter.Language(tree_sitter_python.language()))
    if str(fast.parse(source).root_node) != str(plain.parse(source).root_node):
        return "the grammar loaded from its file parses unlike the package's"
    return None


CHECKS: dict[str, Callable[[], str | None]] = {
    "imports": _imports, "json": _json, "sha": _sha, "grammars": _grammars, "regex": _regex,
}


def run() -> dict[str, str]:
    """Check every part, keep the verdict (part -> why it is refused) and return it."""
    verdict = {}
    for part in PARTS:
        try:
            reason = CHECKS[part]()
        except Exception as exc:  # noqa: BLE001 - a copy that fails outright is refused with its error
            reason = f"{type(exc).__name__}: {exc}"
        if reason:
            verdict[part] = " ".join(reason.split())
    _write(verdict)
    return verdict


def _write(verdict: dict[str, str]) -> None:
    """Atomically, so a hook reads the old verdict or the new one; a folder it cannot write keeps none."""
    lines = [verdict_key(), *(f"{part}\t{why}" for part, why in sorted(verdict.items()))]
    tmp = f"{VERDICT_PATH}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(VERDICT_PATH), exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
        os.replace(tmp, VERDICT_PATH)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def ensure() -> None:
    """Run the check when no current verdict is kept (a new Python, the checks edited, never checked)."""
    try:
        with open(VERDICT_PATH, encoding="utf-8") as fh:
            if fh.readline().rstrip("\n") == verdict_key():
                return
    except OSError:
        pass
    run()


def report() -> dict[str, str]:
    """Each part's state for `memory doctor`: on, off by the switch, or refused (and why) by a fresh check."""
    verdict = run()
    if switched_off():
        return {part: "off (MEMORY_FASTPATH=off): the standard library" for part in PARTS}
    return {part: f"REFUSED: {verdict[part]}; the standard library runs instead" if part in verdict else "on"
            for part in PARTS}


__all__ = ["CHECKS", "ensure", "refused", "report", "run"]
