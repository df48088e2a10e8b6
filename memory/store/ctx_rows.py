"""The neighbour-aware FTS rows (memories_ctx) and the compressed copy of each that the ledger keeps.

memories_ctx is a contentless FTS5 table (migration m014): it holds the index, not the text, which was
1.9 KB of the 7.2 KB a memory cost at 10,000 memories (each row carries its neighbours' text). A contentless
table forgets what it indexed, and SQLite before 3.43 (3.40 here) can only remove a row by being given the
very values it indexed (the 'delete' command), so the ledger (memory_index.doc) keeps them, JSON compressed
with zlib (~0.6 KB). The worker's in-memory lists are built from that copy too (memory/recall/warm_index.py).
"""

from __future__ import annotations

import sqlite3
import zlib

COLUMNS = ("title", "content", "tags", "ctx")


def pack(values: tuple[str, str, str, str]) -> bytes:
    import json  # here, not at the top: a new database's migrations import this module on a hook's path

    return zlib.compress(json.dumps(list(values), ensure_ascii=False).encode(), 6)


def unpack(blob: bytes) -> tuple[str, str, str, str]:
    import json

    title, content, tags, ctx = json.loads(zlib.decompress(blob))
    return title, content, tags, ctx


def has_table(db: sqlite3.Connection) -> bool:
    found = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'memories_ctx'").fetchone()
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
    return dropped


def clear(db: sqlite3.Connection) -> None:
    """Every row gone (a new provider: everything is indexed again)."""
    db.execute("INSERT INTO memories_ctx (memories_ctx) VALUES ('delete-all')")
    db.execute("UPDATE memory_index SET doc = NULL")


def get(db: sqlite3.Connection, memory_id: int) -> tuple[str, str, str, str] | None:
    """(title, content, tags, ctx) as memories_ctx indexed them for this memory, None if it has no row."""
    row = db.execute("SELECT doc FROM memory_index WHERE memory_id = ? AND doc IS NOT NULL", (memory_id,)).fetchone()
    return None if row is None else unpack(row[0])


def restore(db: sqlite3.Connection) -> int:
    """Index again the rows the ledger keeps (a database rebuilt from a damaged one, whose memories_ctx was
    not copied); a ledger row without its values is forgotten, so the worker's sweep indexes its memory."""
    db.execute("DELETE FROM memory_index WHERE doc IS NULL")
    kept = db.execute("SELECT memory_id, doc FROM memory_index").fetchall()
    for mid, doc in kept:
        insert(db, mid, unpack(doc))
    return len(kept)
