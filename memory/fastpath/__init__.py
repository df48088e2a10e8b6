"""The hook hot path's private copies of standard-library machinery, fenced here behind one switch.

A hook process has ~100 ms, and importing the ordinary modules costs a good part of it (docs/benchmarks.md,
"The fast path", has the figures). Each part below does what a standard module does, without that import:

- imports (imports.py): hooks/_entry.py's import finders: sqlite3 without its dbapi2 layer, a functools
  stand-in while _sqlite3 loads, and the plugin's own modules loaded straight from their .pyc;
- json (jsonlite.py): json.loads/dumps on the C accelerator, without the json package (which imports re);
- sha (sha.py): SHA-256 from CPython's builtin module, without hashlib (which loads OpenSSL);
- grammars (grammars.py): tree-sitter's binding and grammars loaded from their files, with stand-ins for
  `re` and `enum` while the binding initialises, and a plain memo instead of functools.cache;
- regex (recode.py): the cold Read hook's regexes loaded as `_sre` programs compiled ahead of time.

`MEMORY_FASTPATH=off` runs the plain standard library for every part. check.py compares each part with its
standard counterpart once per Python (the worker at start and `memory doctor` run it; the verdict is kept beside
this package's bytecode); a part it refuses runs the standard library too, and `memory doctor` says which and why.

Imports the standard library only (check.py, cold side, also what the copies replace); must not import any other
memory package: it is the ground floor, memory.base and parser build on it.
"""

from __future__ import annotations

import os
import sys

from memory.fastpath.imports import SWITCH, switched_off  # loaded first in a hook: hooks/_entry.py

PARTS = ("imports", "json", "sha", "grammars", "regex")
_HERE = os.path.dirname(os.path.abspath(__file__))
VERDICT_PATH = os.path.join(_HERE, "__pycache__", f"verdict.{sys.implementation.cache_tag}.txt")
_refused: list[dict[str, str]] = []


def verdict_key() -> str:
    """What a verdict holds for: this Python's build and the checks' and the regex table's sources."""
    stamps = []
    for name in ("check.py", "_regex_table.py"):
        try:
            stamps.append(str(os.stat(os.path.join(_HERE, name)).st_mtime_ns))
        except OSError:
            stamps.append("-")
    return " ".join([sys.version.replace("\n", " "), *stamps])


def refused() -> dict[str, str]:
    """The parts the last check refused on this Python (part -> why), read once a process. None is known
    refused before a check has run: the parts' own guards (a missing module, a table for another Python) hold."""
    if not _refused:
        _refused.append(_read_verdict())
    return _refused[0]


def _read_verdict() -> dict[str, str]:
    try:
        with open(VERDICT_PATH, encoding="utf-8") as fh:
            lines = fh.read().split("\n")
    except OSError:
        return {}
    if lines[0] != verdict_key():
        return {}  # another Python's or stale: as if unchecked, until the next check
    return dict(line.split("\t", 1) for line in lines[1:] if "\t" in line)


__all__ = ["PARTS", "SWITCH", "VERDICT_PATH", "on", "refused", "switched_off", "verdict_key"]


def on(part: str) -> bool:
    """Whether `part` runs its private copy here (else the standard library)."""
    return not switched_off() and part not in refused()
