"""The neighbour-aware FTS rows (memories_ctx) and the compressed copy of each that the ledger keeps.

memories_ctx is a contentless FTS5 table (migration m014): it holds the index, not the text, which was
1.9 KB of the 7.2 KB a memory cost at 10,000 memories (each row carries its neighbours' text). A contentless
table forgets what it indexed, and SQLite before 3.43 (3.40 here) can only remove a row by being given the
very values it indexed (the 'delete' command), so the ledger (memory_index.doc) keeps them, JSON compressed
with zlib (~0.6 KB). The worker's in-memory lists are built from that copy too (memory/recall/warm_index.py).

A store from before m014 keeps its rows, text and all, in memories_ctx_old (OLD) until the worker converts
them (convert(): a batch a transaction, when it loads the project): the migration only renames the table,
as it runs in whichever process opens the database first, usually a hook with a 100 ms budget.
"""

from __future__ import annotations

import sqlite3
import zlib

from memory.store.db import Tx

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from collections.abc import Callable

COLUMNS = ("title", "content", "tags", "ctx")
OLD = "memories_ctx_old"  # a pre-m014 store's rows with their text, until convert() has moved them
BATCH = 200  # rows a transaction: a hook waits for the write lock one batch at most (~45 ms CPU)


def pack(values: tuple[str, str, str, str]) -> bytes:
    import json  # here, not at the top: a new database's migrations import this module on a hook's path

    return zlib.compress(json.dumps(list(values), ensure_ascii=False).encode(), 6)


def unpack(blob: bytes) -> tuple[str, str, str, str]:
    import json

    title, content, tags, ctx = json.loads(zlib.decompress(blob))
    return title, content, tags, ctx


def has_table(db: sqlite3.Connection, name: str = "memories_ctx") -> bool:
    found = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone()
    return found is not None


def insert(db: sqlite3.Connection, memory_id: int, values: tuple[str, str, str, str]) -> bytes:
    """Index one memory's row (after drop() of its old one); returns what the ledger keeps as its doc."""
    db.execute("INSERT INTO memories_ctx (rowid, title, content, tags, ctx) VALUES (?, ?, ?, ?, ?)",
               (memory_id, *values))
    return pack(values)


def drop(db: sqlite3.Connection, ids: list[int]) -> int:
    """Remove these memories' rows from memories_ctx, with the values the ledger says were indexed, and
    forget those values (the ledger rows stay: the worker's to update). Inside the caller's transaction."""
    dropped = 0
    for mid in ids:
        row = db.execute("SELECT doc FROM memory_index WHERE memory_id = ? AND doc IS NOT NULL", (mid,)).fetchone()
        if row is None:
            continue
        db.execute("INSERT INTO memories_ctx (memories_ctx, rowid, title, content, tags, ctx) "
                   "VALUES ('delete', ?, ?, ?, ?, ?)", (mid, *unpack(row[0])))
        db.execute("UPDATE memory_index SET doc = NULL WHERE memory_id = ?", (mid,))
        dropped += 1
    if ids and has_table(db, OLD):  # not converted yet: it must not come back beside its new row
        dropped += sum(db.execute(f"DELETE FROM {OLD} WHERE rowid = ?", (mid,)).rowcount for mid in ids)
    return dropped


def clear(db: sqlite3.Connection) -> None:
    """Every row gone (a new provider: everything is indexed again)."""
    db.execute("INSERT INTO memories_ctx (memories_ctx) VALUES ('delete-all')")
    db.execute(f"DROP TABLE IF EXISTS {OLD}")
    db.execute("UPDATE memory_index SET doc = NULL")


def get(db: sqlite3.Connection, memory_id: int) -> tuple[str, str, str, str] | None:
    """(title, content, tags, ctx) as memories_ctx indexed them for this memory, None if it has no row."""
    row = db.execute("SELECT doc FROM memory_index WHERE memory_id = ? AND doc IS NOT NULL", (memory_id,)).fetchone()
    if row is not None:
        return unpack(row[0])
    if has_table(db, OLD):  # not converted yet: its text is still in the old table
        old = db.execute(f"SELECT title, content, tags, ctx FROM {OLD} WHERE rowid = ?", (memory_id,)).fetchone()
        if old is not None:
            return _texts(old)
    return None


def _texts(row: tuple[str | None, ...]) -> tuple[str, str, str, str]:
    title, content, tags, ctx = (v or "" for v in row)
    return title, content, tags, ctx


def convert(db: sqlite3.Connection, batch: int = BATCH, pause: Callable[[], None] | None = None) -> int:
    """Move a pre-m014 store's rows from OLD into memories_ctx, their values into the ledger, a batch a
    transaction (a hook waits one batch at most), and drop OLD once empty; returns the rows converted.
    A row whose memory the ledger does not know, or knows re-indexed since, is dropped: the worker's."""
    done = 0
    while True:
        with Tx(db):
            if not has_table(db, OLD):
                return done
            rows = db.execute(f"SELECT rowid, title, content, tags, ctx FROM {OLD} ORDER BY rowid LIMIT ?",
                              (batch,)).fetchall()
            if not rows:
                db.execute(f"DROP TABLE {OLD}")
                return done
            ids = [r[0] for r in rows]
            marks = ",".join("?" * len(ids))
            want = {r[0] for r in db.execute(
                f"SELECT memory_id FROM memory_index WHERE doc IS NULL AND memory_id IN ({marks})", ids)}
            for mid, *values in rows:
                if mid in want:
                    db.execute("UPDATE memory_index SET doc = ? WHERE memory_id = ?",
                               (insert(db, mid, _texts(values)), mid))
                    done += 1
            db.executemany(f"DELETE FROM {OLD} WHERE rowid = ?", [(i,) for i in ids])
        if pause is not None:
            pause()


def unconverted(old: sqlite3.Connection) -> dict[int, tuple[str, str, str, str]]:
    """The rows OLD still holds in a damaged database (doctor's salvage), as many as can be read."""
    out: dict[int, tuple[str, str, str, str]] = {}
    try:
        for mid, *values in old.execute(f"SELECT rowid, title, content, tags, ctx FROM {OLD}"):
            out[mid] = _texts(values)
    except sqlite3.DatabaseError:  # no such table, or a damaged page: what was read is kept
        pass
    return out


def restore(db: sqlite3.Connection, pending: dict[int, tuple[str, str, str, str]] | None = None) -> int:
    """Index again the rows the ledger keeps (a database rebuilt from a damaged one, whose memories_ctx was
    not copied), with `pending` (unconverted() of the damaged one) converted first; a ledger row without its
    values is forgotten, so the worker's sweep indexes its memory."""
    for mid, values in (pending or {}).items():
        db.execute("UPDATE memory_index SET doc = ? WHERE memory_id = ? AND doc IS NULL", (pack(values), mid))
    db.execute("DELETE FROM memory_index WHERE doc IS NULL")
    kept = db.execute("SELECT memory_id, doc FROM memory_index").fetchall()
    for mid, doc in kept:
        insert(db, mid, unpack(doc))
    return len(kept)
