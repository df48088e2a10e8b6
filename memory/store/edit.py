"""Changing a stored memory in place: its text, its type and its pin (kept by eviction).

What the web viewer's actions (memory/ui) call (sharing with the team is
memory/team/outbox.py's share). Each change goes through the rules a save applies (the
privacy filter, the hashes dedup reads, the trust flags) and queues the memory's vector job, so recall
sees the new text. Hot-side module, standard library only (memory/store's rules)."""

from __future__ import annotations

import sqlite3
import time

from memory.base.classify import TYPES
from memory.base.fence import flags_for
from memory.store import NewMemory, _prepare, content_hash, mark_dirty, normalise, queue_vector_jobs, title_key
from memory.store.db import Tx

PIN_TAG = "pinned"  # a tag, not a column: visible in `memory get`, searchable, and no migration


class EditError(ValueError):
    """A change that cannot be made (unknown memory, empty text, same title or text as another memory)."""


def _row(db: sqlite3.Connection, memory_id: int) -> sqlite3.Row:
    row = db.execute("SELECT * FROM memories WHERE id = ?", (memory_id,)).fetchone()
    if row is None:
        raise EditError(f"no memory #{memory_id}")
    return row


def edit(db: sqlite3.Connection, memory_id: int, title: str, content: str) -> None:
    """New title and content, cleaned as a save cleans them; the trust flags are found again."""
    row = _row(db, memory_id)
    title, content = _prepare(NewMemory(title=title, content=content))
    if not title or not content:
        raise EditError("nothing left of the title or the text once private text and secrets were removed")
    chash = content_hash(f"{normalise(title)}\x00{normalise(content)}")
    try:
        with Tx(db):
            db.execute("UPDATE memories SET title = ?, title_key = ?, content = ?, content_hash = ?, flags = ?, "
                       "updated_at = ? WHERE id = ?",
                       (title, title_key(normalise(title), row["type"], row["origin"], row["session_id"]), content,
                        chash, flags_for(title, content), time.time(), memory_id))
            queue_vector_jobs(db, [memory_id])
    except sqlite3.IntegrityError:
        raise EditError("another memory has this title or this text already") from None
    mark_dirty(db, row["project"])


def set_type(db: sqlite3.Connection, memory_id: int, type_: str) -> None:
    if type_ not in TYPES:
        raise EditError(f"unknown type {type_!r}; use one of {', '.join(TYPES)}")
    _row(db, memory_id)
    with Tx(db):
        db.execute("UPDATE memories SET type = ?, updated_at = ? WHERE id = ?", (type_, time.time(), memory_id))
        queue_vector_jobs(db, [memory_id])  # the vector store filters on type


def is_pinned(tags: str) -> bool:
    return PIN_TAG in tags.split(",")


def set_pinned(db: sqlite3.Connection, memory_id: int, pinned: bool) -> None:
    """Pin (memory/store/evict.py never evicts it) or unpin."""
    tags = set(filter(None, _row(db, memory_id)["tags"].split(",")))
    tags = tags | {PIN_TAG} if pinned else tags - {PIN_TAG}
    with Tx(db):
        db.execute("UPDATE memories SET tags = ? WHERE id = ?", (",".join(sorted(tags)), memory_id))
