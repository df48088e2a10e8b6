"""The work queue in SQLite: hooks enqueue slow jobs (extraction, embedding, eviction) for the worker.

A job is claimed with an atomic UPDATE, so two workers never run the same job; a claim older than the
lease is taken over, so a killed worker loses nothing."""

from __future__ import annotations

import os
import sqlite3
import time

from memory.fastpath import jsonlite as json  # not the json package: it imports re (~5 ms a hook)
from memory.store.db import Tx

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from typing import Any

LEASE_SECONDS = 300


def enqueue(db: sqlite3.Connection, kind: str, payload: dict[str, Any], *, dedup_key: str | None = None,
            delay: float = 0.0) -> int | None:
    now = time.time()
    with Tx(db):
        cur = db.execute(
            """INSERT INTO queue (kind, payload, dedup_key, run_after, created_at) VALUES (?, ?, ?, ?, ?)
               ON CONFLICT(dedup_key) DO UPDATE SET
                 status = CASE WHEN queue.status = 'running' THEN 'running' ELSE 'pending' END,
                 payload = excluded.payload, run_after = excluded.run_after
               RETURNING id""",
            (kind, json.dumps(payload), dedup_key, now + delay, now),
        )
        row = cur.fetchone()  # RETURNING: lastrowid is wrong after the DO UPDATE branch
    return int(row[0]) if row else None


def claim(db: sqlite3.Connection, worker: str | None = None, kinds: tuple[str, ...] | None = None
          ) -> sqlite3.Row | None:
    """The next due job (of `kinds` only, when given: a worker leaves the kinds it cannot run pending)."""
    worker = worker or f"pid:{os.getpid()}"
    now = time.time()
    only = f" AND kind IN ({','.join('?' * len(kinds))})" if kinds else ""
    with Tx(db):
        row = db.execute(
            f"""SELECT id FROM queue WHERE ((status = 'pending' AND run_after <= ?)
               OR (status = 'running' AND locked_at < ?)){only} ORDER BY run_after, id LIMIT 1""",
            (now, now - LEASE_SECONDS, *(kinds or ())),
        ).fetchone()
        if row is None:
            return None
        db.execute(
            "UPDATE queue SET status = 'running', locked_by = ?, locked_at = ?, attempts = attempts + 1 WHERE id = ?",
            (worker, now, row["id"]),
        )
        return db.execute("SELECT * FROM queue WHERE id = ?", (row["id"],)).fetchone()


def finish(db: sqlite3.Connection, job_id: int, error: str | None = None, retry_in: float | None = None) -> None:
    if error:  # an error may quote what the job read: filtered, then cut
        from memory.base.log import filtered

        error = filtered(error, 500)
    with Tx(db):
        if error and retry_in is not None:
            db.execute("UPDATE queue SET status = 'pending', error = ?, run_after = ?, locked_by = NULL WHERE id = ?",
                       (error, time.time() + retry_in, job_id))
        else:
            db.execute("UPDATE queue SET status = ?, error = ?, finished_at = ? WHERE id = ?",
                       ("failed" if error else "done", error or None, time.time(), job_id))


def claim_batch(db: sqlite3.Connection, kind: str, limit: int, worker: str | None = None) -> list[sqlite3.Row]:
    """Up to `limit` due jobs of one kind in one transaction (the worker embeds in batches)."""
    worker = worker or f"pid:{os.getpid()}"
    now = time.time()
    with Tx(db):
        ids = [r[0] for r in db.execute(
            """SELECT id FROM queue WHERE kind = ? AND ((status = 'pending' AND run_after <= ?)
               OR (status = 'running' AND locked_at < ?)) ORDER BY run_after, id LIMIT ?""",
            (kind, now, now - LEASE_SECONDS, limit))]
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        db.execute(f"UPDATE queue SET status = 'running', locked_by = ?, locked_at = ?, attempts = attempts + 1 "
                   f"WHERE id IN ({marks})", (worker, now, *ids))
        return db.execute(f"SELECT * FROM queue WHERE id IN ({marks}) ORDER BY id", ids).fetchall()


def release_running(db: sqlite3.Connection) -> int:
    """Put every claimed job back to pending: for a worker that holds the single-worker lock, so any
    claim it finds was left by a worker that died (no need to wait out the lease)."""
    with Tx(db):
        return db.execute("UPDATE queue SET status = 'pending', locked_by = NULL WHERE status = 'running'").rowcount


def counts(db: sqlite3.Connection) -> dict[str, int]:
    return {r["status"]: r["n"] for r in db.execute("SELECT status, count(*) AS n FROM queue GROUP BY status")}
