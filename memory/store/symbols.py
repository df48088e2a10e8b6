"""The symbols a memory is about (memory_symbols, m010) and whether their code has changed since: a change
memory records the definitions its edit was in with their headers; when the file is next read, edited or
recalled about, a header that changed or a definition that is gone marks the memory stale. A row's path is the
file's path privacy-filtered (memory/base/privacy.py), as memories.files holds it: a secret in a directory's
name stays off the disk, and a file so named is read by its real path but looked up by that form."""

from __future__ import annotations

import time

from memory.base.privacy import clean
from memory.store.db import Tx

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    import sqlite3

MAX_BYTES = 2 << 20  # a file read to check its memories' symbols


def record(db: sqlite3.Connection, memory_id: int, path: str, text: str, names: list[str]) -> int:
    """The headers of `names` as `text` (the file now) has them, recorded for the memory; returns how many."""
    from memory.base.definitions import headers

    found = headers(text, set(names))
    key = clean(path)
    rows = [(memory_id, key, n, found[n]) for n in names if n in found]
    if rows:
        db.executemany("INSERT OR REPLACE INTO memory_symbols (memory_id, path, name, signature, stale_at, why, "
                       "checked_at) VALUES (?, ?, ?, ?, NULL, NULL, ?)", [(*r, time.time()) for r in rows])
    return len(rows)


def check(db: sqlite3.Connection, path: str, text: str | bytes, session: str | None = None) -> int:
    """Mark stale the memories whose recorded symbols of `path` changed header or are gone; returns how many
    rows were marked. The memories of `session` (the one editing the file) describe its code as it leaves
    it: their headers follow its later edits instead. One indexed read when nothing is recorded about the file
    (the file's bytes are decoded only when something is)."""
    path = clean(path)  # the form record() stored
    rows = db.execute("SELECT s.memory_id, s.name, s.signature, m.session_id FROM memory_symbols s JOIN memories m "
                      "ON m.id = s.memory_id WHERE s.path = ? AND s.stale_at IS NULL", (path,)).fetchall()
    if not rows:
        return 0
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    now = _current(text, {r[1] for r in rows})
    at = time.time()
    changed = [r for r in rows if now.get(r[1]) != r[2]]
    own = [(now[r[1]], r[0], path, r[1]) for r in changed if session and r[3] == session and r[1] in now]
    marks = [(at, "gone" if r[1] not in now else "signature changed", r[0], path, r[1])
             for r in changed if not (session and r[3] == session and r[1] in now)]
    with Tx(db):
        db.execute("UPDATE memory_symbols SET checked_at = ? WHERE path = ? AND stale_at IS NULL", (at, path))
        db.executemany("UPDATE memory_symbols SET signature = ? WHERE memory_id = ? AND path = ? AND name = ?", own)
        db.executemany("UPDATE memory_symbols SET stale_at = ?, why = ? WHERE memory_id = ? AND path = ? "
                       "AND name = ?", marks)
    return len(marks)


def _current(text: str, names: set[str]) -> dict[str, str]:
    """headers() of these names; a name recorded unqualified (before names were qualified) is its first
    definition of that last name, as it was recorded then. (memory.base.definitions is imported here, not at the
    top: a Read of a file nothing is recorded about, the usual case, never needs it: ~0.15 ms of a cold hook.)"""
    from memory.base.definitions import headers

    found = headers(text, names)
    bare = {n for n in names if n not in found and "." not in n}
    if bare:
        for qualified, header in headers(text).items():
            last = qualified.rsplit(".", 1)[-1]
            if last in bare and last not in found:
                found[last] = header.split(" | ", 1)[0]
    return found


def read(path: str) -> bytes | None:
    """The file's first MAX_BYTES (b"" when it is gone: its symbols are gone too), None when it cannot be read."""
    try:
        with open(path, "rb") as f:
            return f.read(MAX_BYTES)
    except FileNotFoundError:
        return b""
    except OSError:
        return None


def check_file(db: sqlite3.Connection, path: str, session: str | None = None) -> int:
    """check() against the file on disk."""
    data = read(path)
    return 0 if data is None else check(db, path, data, session)


def sweep(db: sqlite3.Connection, most: int = 8, paths: int = 400) -> int:
    """check_file() on the files written since their memories' definitions were last compared (a pull, a
    merge, another editor: changes no session's hook saw), newest first, at most `most` files read; returns
    how many rows were marked. A stat a file otherwise."""
    import os

    rows = db.execute("SELECT path, min(checked_at) FROM memory_symbols WHERE stale_at IS NULL GROUP BY path "
                      "ORDER BY min(checked_at) LIMIT ?", (paths,)).fetchall()
    due: list[tuple[float, str]] = []
    for path, checked in rows:
        try:
            mtime = os.stat(path).st_mtime
        except FileNotFoundError:
            mtime = float("inf")  # gone: so are its definitions
        except OSError:
            continue
        if mtime > checked - 1.0:  # a second's slack: a file's time can lag the clock a little
            due.append((mtime, path))
    return sum(check_file(db, path) for _, path in sorted(due, reverse=True)[:most])


def stale(db: sqlite3.Connection, ids: list[int]) -> dict[int, str]:
    """Which of these memories are stale, each with what changed ("apply_limit: signature changed")."""
    if not ids:
        return {}
    out: dict[int, str] = {}
    for mid, name, why in db.execute(
            f"SELECT memory_id, name, why FROM memory_symbols WHERE stale_at IS NOT NULL AND memory_id IN "
            f"({','.join('?' * len(ids))}) ORDER BY stale_at", ids):
        out.setdefault(mid, f"{name}: {why}")
    return out
