"""Storage limits and the cheap check that store.save runs after an insert.

The check runs inside hooks, so it only stats files and reads one integer: when it says a limit may be
passed, an `evict` job is queued and the worker does the real (slow) work in memory/store/evict.py.
Standard library only, nothing imported that a hook cannot afford.
"""

from __future__ import annotations

import os
import sqlite3

from memory.base.config import ENV_VARS, env

EVICT_JOB = "evict"
TARGET_RATIO = 0.85  # eviction stops under 85% of a limit, so it does not run again at the next save
_SIZE_PATTERN = r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$"  # the rule parse_size reads, without re
_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}


def parse_size(text: str) -> int:
    """'500MB', '1.5G', '200k', '1048576' -> bytes (K/M/G are powers of 1024). Raises ValueError.

    String methods, not re: every hook that saves a memory checks the size limit, and importing re (with
    enum) costs it ~4-6 ms CPU (tests/test_hook_hot_path.py checks this against _SIZE_PATTERN)."""
    rest = (text or "").strip().lower()
    rest = rest[:-1] if rest.endswith("b") else rest
    rest = rest[:-1] if rest.endswith("i") else rest
    unit = rest[-1] if rest and rest[-1] in "kmgt" else ""
    whole, dot, frac = rest[: len(rest) - len(unit)].rstrip().partition(".")
    if not whole.isdecimal() or (dot and not frac.isdecimal()) or whole != whole.strip():
        raise ValueError(f"cannot read {text!r} as a size: use bytes or a number with K, M or G (e.g. 500MB)")
    return int(float(f"{whole}.{frac}" if dot else whole) * _UNITS[unit])


def max_bytes() -> int:
    try:
        return parse_size(env("MEMORY_MAX_BYTES"))
    except ValueError:
        return parse_size(ENV_VARS["MEMORY_MAX_BYTES"][0])


def max_memories() -> int:
    try:
        return max(0, int(env("MEMORY_MAX_MEMORIES")))
    except ValueError:
        return int(ENV_VARS["MEMORY_MAX_MEMORIES"][0])


def db_file(db: sqlite3.Connection) -> str:
    row = db.execute("PRAGMA database_list").fetchone()
    return str(row[2] or "") if row else ""


def home_of(db_path: str) -> str | None:
    """The data dir of a project database (<home>/projects/<key>/memory.db), None for any other layout."""
    project_dir = os.path.dirname(db_path)
    projects = os.path.dirname(project_dir)
    if not db_path or os.path.basename(projects) != "projects":
        return None
    return os.path.dirname(projects)


def database_bytes(home: str) -> int:
    """Bytes of every project database (with its WAL): a handful of stat calls."""
    base = os.path.join(home, "projects")
    total = 0
    try:
        entries = os.listdir(base)
    except OSError:
        return 0
    for key in entries:
        for suffix in ("memory.db", "memory.db-wal"):
            try:
                total += os.stat(os.path.join(base, key, suffix)).st_size
            except OSError:
                pass
    return total


def may_be_over(db: sqlite3.Connection, home: str | None, sampled: bool = True) -> str | None:
    """Why a limit may be passed ('bytes' or 'memories'), or None. Cheap and conservative: max(id) is an
    upper bound of the count, and the databases' file sizes include free pages. `sampled` off counts every
    time (after a batch of saves, which a 1-in-32 sample would mostly skip)."""
    cap = max_memories()
    if cap:
        top = db.execute("SELECT max(id) FROM memories").fetchone()[0] or 0
        # After an eviction max(id) stays above the cap, and count(*) costs ~3 ms per 100,000 rows: a big
        # store counts at one insert in 32 (the worker evicts to 85%, so a few more rows do not matter).
        if top > cap and (cap <= 5000 or not sampled or top % 32 == 0) and \
                db.execute("SELECT count(*) FROM memories").fetchone()[0] > cap:
            return "memories"
    if home and database_bytes(home) > max_bytes():
        return "bytes"
    return None


def check_after_insert(db: sqlite3.Connection, sampled: bool = True) -> bool:
    """Queue an eviction when a limit may be passed and none is pending. Returns True when one was queued."""
    home = home_of(db_file(db))
    reason = may_be_over(db, home, sampled)
    if reason is None:
        return False
    if db.execute("SELECT 1 FROM queue WHERE dedup_key = ? AND status IN ('pending', 'running')",
                  (EVICT_JOB,)).fetchone():
        return False
    from memory.store import queue

    queue.enqueue(db, EVICT_JOB, {"reason": reason}, dedup_key=EVICT_JOB)
    return True
