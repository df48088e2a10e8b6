"""Vector writes held in SQLite until the worker is quiet, so LanceDB's process is not up while it serves."""

from __future__ import annotations

import os
import sqlite3
import threading
from array import array
from collections.abc import Iterator
from typing import Any

from memory.recall.vector_host import VectorHostBusy

NAME = "vector_stage.db"
# A backlog this large (a first index, an import) is written at once: the vector process is up for it anyway.
FLUSH_ROWS = 1024


class Staged:
    """A vector store (memory.recall.vector_host.RemoteStore, or VectorStore in one process) whose upserts
    and deletes wait in <project>/vector_stage.db until flush(): the worker flushes when it goes light, when
    it stops, or once FLUSH_ROWS are waiting. Between, which is most of a session, it searches its in-memory
    lists (already current: memory/worker/index.py applies each batch to them), and LanceDB's child process
    (~230 MiB at 10,000 memories) does not run. Every read of the store flushes first, so LanceDB answers
    with everything. Crash safety: the stage is committed before the ledger, keyed by memory id (the
    newest write wins), and a flush is an idempotent upsert or delete before the stage rows go."""

    def __init__(self, inner: Any, project_dir: str, provider: str) -> None:
        self.inner, self.provider = inner, provider
        self.dim = getattr(inner, "dim", 0)
        self._lock = threading.Lock()
        self.db = sqlite3.connect(os.path.join(project_dir, NAME), check_same_thread=False, isolation_level=None)
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
        self.db.execute("CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY, vector BLOB, type TEXT, "
                        "session_id TEXT, created_at REAL, expires_at REAL)")
        row = self.db.execute("SELECT value FROM meta WHERE key = 'provider'").fetchone()
        if row is None or row[0] != provider:  # rows of another model: its table is being dropped
            with self.db:
                self.db.execute("DELETE FROM rows")
                self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('provider', ?)", (provider,))
        self.waiting = int(self.db.execute("SELECT count(*) FROM rows").fetchone()[0])

    def close(self) -> None:
        self.db.close()

    # -- writes: held here --------------------------------------------------------------------------

    def upsert(self, rows: list[dict[str, Any]]) -> None:
        self._stage([(r["id"], array("f", r["vector"]).tobytes(), r["type"], r["session_id"], r["created_at"],
                      r["expires_at"]) for r in rows])

    def delete(self, ids: list[int]) -> None:
        self._stage([(i, None, None, None, None, None) for i in ids])

    def _stage(self, rows: list[tuple[Any, ...]]) -> None:
        if not rows:
            return
        with self._lock, self.db:
            self.db.executemany("INSERT OR REPLACE INTO rows VALUES (?, ?, ?, ?, ?, ?)", rows)
            self.waiting = int(self.db.execute("SELECT count(*) FROM rows").fetchone()[0])

    def flush(self) -> int:
        """Write what waits into the store, FLUSH_ROWS at a time; returns how many rows went."""
        done = 0
        with self._lock:
            while rows := self.db.execute("SELECT * FROM rows ORDER BY id LIMIT ?", (FLUSH_ROWS,)).fetchall():
                self.inner.upsert([{"id": r[0], "vector": array("f", r[1]).tolist(), "type": r[2],
                                    "session_id": r[3], "created_at": r[4], "expires_at": r[5]}
                                   for r in rows if r[1] is not None])
                self.inner.delete([r[0] for r in rows if r[1] is None])
                with self.db:  # only now: a flush cut short is done again, to the same result
                    self.db.executemany("DELETE FROM rows WHERE id = ?", [(r[0],) for r in rows])
                done += len(rows)
            self.waiting = 0
        return done

    def _clear(self) -> None:
        with self._lock, self.db:
            self.db.execute("DELETE FROM rows")
            self.waiting = 0

    # -- reads: after a flush -----------------------------------------------------------------------

    def search(self, vector: list[float], k: int, where: str | None = None) -> list[tuple[int, float]]:
        """Before the in-memory lists: a store with writes waiting would miss them, so VectorHostBusy (the
        search answers with keywords; the lists' build flushes them)."""
        if self.waiting:
            raise VectorHostBusy("vector writes are waiting for the store")
        return list(self.inner.search(vector, k, where))

    def scan(self, *args: Any) -> Iterator[tuple[Any, Any]]:
        self.flush()
        yield from self.inner.scan(*args)

    def count(self) -> int:
        self.flush()
        return int(self.inner.count())

    def versions(self) -> int:
        self.flush()
        return int(self.inner.versions())

    def maintain(self, force: bool = False, keep_s: float | None = None) -> str | None:
        self.flush()
        return self.inner.maintain(force, keep_s) if keep_s is not None else self.inner.maintain(force=force)

    def release(self) -> None:
        """Stop LanceDB's process now if nothing else uses it (the in-memory lists are built: the worker
        reads nothing more from it, and its writes wait here)."""
        host = getattr(self.inner, "host", None)
        if host is not None:
            host.release_if_quiet(0.0)

    def cleanup_due(self) -> bool:
        return bool(self.inner.cleanup_due())

    # -- the store replaced ---------------------------------------------------------------------------

    def drop_other_tables(self) -> list[str]:
        return list(self.inner.drop_other_tables())

    def reset(self) -> None:
        self._clear()
        self.inner.reset()

    def forget(self) -> None:
        self._clear()
        forget = getattr(self.inner, "forget", None)
        if forget is not None:
            forget()
