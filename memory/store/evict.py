"""Keeping the data dir under its limits: expired memories removed, then least recently used ones evicted.

Run by the worker for an `evict` job (queued by store.save when memory/store/limits.py's cheap check fires) and
by `memory cleanup`. The byte limit (MEMORY_MAX_BYTES) covers the whole data dir, every project's database
and the vectors, because that is what a disk cap means to the user; the count limit (MEMORY_MAX_MEMORIES)
is per project, because it bounds how large one project's recall gets.

Order: least recently accessed first (a memory never accessed counts from its creation), then oldest.
Never evicted: decisions, pinned memories (tag `pinned`, memory/store/edit.py), and memories of a session
still active (seen within ACTIVE_SESSION_HOURS).
Deletions go in batches of 100 until the usage is under 85% of the limit; each batch takes its vectors
with it; then the FTS index is optimised and the freed pages are given back to the filesystem.
"""

from __future__ import annotations

import heapq
import os
import sqlite3
import time
from collections.abc import Callable
from typing import Any

from memory import store
from memory.base.config import data_home
from memory.base.project import Project
from memory.store import ctx_rows, limits, queue
from memory.store.db import Tx
from memory.store.expiry import expired_ids
from memory.store.workspace import Workspace, all_projects

BATCH = 100
ACTIVE_SESSION_HOURS = 24  # a session that sent no event for a day is over, even without a SessionEnd
PROTECTED_TYPES = ("decision",)
MAX_ROUNDS = 8
QUEUE_KEEP_DAYS = 7
# The exact text of each injection (`memory why`, the viewer) is kept this long; the row itself (kind, mode,
# query, time) and each memory's rank and score parts stay. Up to ~9 KB an injection: a busy project's
# ~100 a day would otherwise add ~1 MB a day, which the byte limit would pay for with memories.
INJECTED_TEXT_KEEP_DAYS = 30
# A cached outline (file_signatures, memory/outline/cache.py) not read for this long goes: its next read parses
# the file again (a few ms); kept forever, the cache would grow with every file ever read.
OUTLINE_KEEP_DAYS = 90
VECTOR_DIR = "vectors.lance"  # memory/recall/vectors.py keeps each project's LanceDB there
# The vector store's delete (memory/recall/vectors.py's delete), which this hot module cannot import: the
# cold callers (memory cleanup, the MCP delete tool, the worker's evict job) pass it in.
VectorDelete = Callable[[Workspace, list[int]], None]


# -- measuring --------------------------------------------------------------------------------------


def _tree_bytes(path: str) -> int:
    total = 0
    for folder, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                pass
    return total


def usage(home: str) -> dict[str, int]:
    """Bytes on disk that count towards MEMORY_MAX_BYTES: every project folder (database, WAL, state, and
    the vector store beside the database). The venv, the logs and the daily log are not memory, and
    neither is a database's -shm file: SQLite's 32 KiB index of the WAL, made by any open connection
    (this measurement's own included) and removed when the last one closes."""
    total = vectors = 0
    base = os.path.join(home, "projects")
    for key in os.listdir(base) if os.path.isdir(base) else []:
        folder = os.path.join(base, key)
        for entry in os.scandir(folder) if os.path.isdir(folder) else []:
            if entry.name.endswith("-shm"):
                continue
            size = _tree_bytes(entry.path) if entry.is_dir(follow_symlinks=False) else entry.stat(
                follow_symlinks=False).st_size
            total += size
            if entry.name == VECTOR_DIR:
                vectors += size
    return {"bytes": total, "databases": total - vectors, "vectors": vectors}


def _workspaces(home: str) -> list[Workspace]:
    out = []
    for meta in all_projects(home):
        if os.path.exists(os.path.join(home, "projects", str(meta.get("key")), "memory.db")):
            out.append(Workspace(Project(meta["key"], meta.get("name") or meta["key"], meta.get("root") or "",
                                         meta.get("remote")), home))
    return out


# -- choosing ---------------------------------------------------------------------------------------


def _protection(now: float) -> tuple[str, list[Any]]:
    marks = ",".join("?" * len(PROTECTED_TYPES))
    where = (f"type NOT IN ({marks}) AND instr(',' || tags || ',', ',pinned,') = 0 "
             "AND (session_id IS NULL OR session_id NOT IN "
             "(SELECT id FROM sessions WHERE status = 'active' AND COALESCE(last_event_at, started_at) > ?))")
    return where, [*PROTECTED_TYPES, now - ACTIVE_SESSION_HOURS * 3600]


_PAYLOAD = "length(title) + length(content) + length(tags) + length(files) + length(title_key) + 120"


def candidates(db: sqlite3.Connection, limit: int, now: float) -> list[sqlite3.Row]:
    """Evictable memories of one database, least recently used first, then oldest."""
    where, args = _protection(now)
    return db.execute(
        f"""SELECT id, type, title, COALESCE(accessed_at, created_at) AS last_used, created_at,
                   {_PAYLOAD} AS payload
            FROM memories WHERE {where} ORDER BY last_used, created_at, id LIMIT ?""",
        [*args, limit],
    ).fetchall()


def _bytes_per_payload(db: sqlite3.Connection) -> float:
    """How many database bytes one byte of memory text stands for (FTS index, indexes, page slack),
    measured on this database: deleting a memory frees about payload * this."""
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    live = (db.execute("PRAGMA page_count").fetchone()[0] - db.execute("PRAGMA freelist_count").fetchone()[0])
    # An empty database still holds a page per table and index (~230 KiB here): no eviction frees those.
    live -= db.execute("SELECT count(*) FROM sqlite_master WHERE rootpage > 0").fetchone()[0]
    payload = db.execute(f"SELECT COALESCE(sum({_PAYLOAD}), 0) FROM memories").fetchone()[0]
    return max(1.0, live * page_size / payload) if payload else 1.0


# -- deleting ---------------------------------------------------------------------------------------


def _delete_vectors(ws: Workspace, ids: list[int], delete: VectorDelete | None) -> str:
    """The vector store's delete when the (cold) caller passed one in (memory/recall/vectors.py's), else a
    queued `delete_vectors` job for the worker."""
    if delete is not None:
        try:
            delete(ws, ids)
            return "deleted"
        except Exception as exc:  # the store can be rebuilt from SQLite: a failure here is not fatal
            from memory.base.log import log

            log("warning", f"vector delete failed, queued instead: {exc!r}", event="evict")
    queue.enqueue(ws.db, "delete_vectors", {"ids": ids})
    return "queued"


def _drop_derived(ws: Workspace, ids: list[int]) -> None:
    """The worker's neighbour-aware FTS rows (memories_ctx) of deleted memories go now, so the space is
    freed in this run; the vector rows and the ledger are the worker's to update (it re-indexes the
    neighbours from the ledger), through the jobs store.forget queued."""
    if not ids or not ctx_rows.has_table(ws.db):
        return
    with Tx(ws.db):
        ctx_rows.drop(ws.db, ids)


def remove(ws: Workspace, ids: list[int], delete_vectors: VectorDelete | None = None) -> tuple[int, str]:
    """Delete memories (FTS rows go with them through the delete trigger) and their vectors, 100 at a time,
    through `delete_vectors` when given (else a queued job)."""
    removed = 0
    how = "none"
    for start in range(0, len(ids), BATCH):
        batch = ids[start : start + BATCH]
        gone = store.forget(ws.db, batch)
        removed += len(gone)
        _drop_derived(ws, gone)
        if gone:
            how = _delete_vectors(ws, gone, delete_vectors)
    return removed, how


def reclaim(db: sqlite3.Connection) -> None:
    """Optimise the FTS index and give free pages back. A database made before auto_vacuum was set is
    converted once with a full VACUUM; after that an incremental vacuum is enough."""
    try:
        db.execute("INSERT INTO memories_fts(memories_fts) VALUES ('optimize')")
        if ctx_rows.has_table(db):
            db.execute("INSERT INTO memories_ctx(memories_ctx) VALUES ('optimize')")
        if db.execute("PRAGMA auto_vacuum").fetchone()[0] != 2:
            db.execute("PRAGMA auto_vacuum = INCREMENTAL")
            db.execute("VACUUM")
        else:
            # Each step frees one page, and the sqlite3 module steps a row-less statement only once;
            # executescript steps it to the end (there is no open transaction here for it to commit).
            db.executescript("PRAGMA incremental_vacuum;")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except sqlite3.OperationalError as exc:  # busy: another process holds the database; next run frees it
        from memory.base.log import log

        log("warning", f"could not reclaim space yet: {exc}", event="evict")


def _reclaimable(ws: Workspace) -> int:
    """Bytes a reclaim would give back: the free pages and the WAL."""
    db = ws.db
    free = db.execute("PRAGMA freelist_count").fetchone()[0] * db.execute("PRAGMA page_size").fetchone()[0]
    try:
        wal = os.path.getsize(ws.db_path + "-wal")
    except OSError:
        wal = 0
    return free + wal


def purge_queue(db: sqlite3.Connection, now: float) -> int:
    cur = db.execute("DELETE FROM queue WHERE status IN ('done', 'failed') AND finished_at < ?",
                     (now - QUEUE_KEEP_DAYS * 86400,))
    return cur.rowcount


def purge_injected_texts(db: sqlite3.Connection, now: float) -> int:
    """Drop the text of injections older than INJECTED_TEXT_KEEP_DAYS; returns how many."""
    cur = db.execute("UPDATE injections SET text = NULL WHERE text IS NOT NULL AND at < ?",
                     (now - INJECTED_TEXT_KEEP_DAYS * 86400,))
    return cur.rowcount


def purge_outlines(db: sqlite3.Connection, now: float) -> int:
    """Drop the cached outlines of files that are gone or were not read for OUTLINE_KEEP_DAYS; returns how
    many. Here, not in memory/outline/cache.py: a cleanup (this module) may not import the outline package."""
    with Tx(db):
        old = db.execute("DELETE FROM file_signatures WHERE accessed_at < ?",
                         (now - OUTLINE_KEEP_DAYS * 86400,)).rowcount
        gone = [r[0] for r in db.execute("SELECT path FROM file_signatures") if not os.path.exists(r[0])]
        db.executemany("DELETE FROM file_signatures WHERE path = ?", [(p,) for p in gone])
    return old + len(gone)


# -- the run ----------------------------------------------------------------------------------------


class Run:
    """What one cleanup did (or, dry, would do)."""

    def __init__(self, home: str, max_bytes: int, max_memories: int, dry_run: bool,
                 delete_vectors: VectorDelete | None = None) -> None:
        self.home, self.dry_run, self.delete_vectors = home, dry_run, delete_vectors
        self.max_bytes, self.max_memories = max_bytes, max_memories
        self.target_bytes = int(max_bytes * limits.TARGET_RATIO)
        self.before: dict[str, int] = {}
        self.after: dict[str, int] = {}
        self.expired = 0
        self.evicted_for_count = 0
        self.evicted_for_bytes = 0
        self.by_project: dict[str, int] = {}
        self.sample: list[dict[str, Any]] = []
        self.vectors = "none"
        self.rounds = 0
        self.queue_rows = 0
        self.injected_texts = 0
        self.outlines = 0
        self.memories_before = 0
        self.memories_after = 0
        self.note = ""

    def chose(self, ws: Workspace, rows: list[Any]) -> None:
        self.by_project[ws.project.name] = self.by_project.get(ws.project.name, 0) + len(rows)
        for r in rows[: max(0, 10 - len(self.sample))]:
            self.sample.append({"project": ws.project.name, "id": r["id"], "type": r["type"], "title": r["title"]})

    def as_dict(self) -> dict[str, Any]:
        return {
            "dry_run": self.dry_run, "home": self.home,
            "limits": {"max_bytes": self.max_bytes, "target_bytes": self.target_bytes,
                       "max_memories_per_project": self.max_memories},
            "before": self.before, "after": self.after,
            "freed_bytes": max(0, self.before.get("bytes", 0) - self.after.get("bytes", 0)),
            "memories_before": self.memories_before, "memories_after": self.memories_after,
            "expired": self.expired, "evicted_for_count": self.evicted_for_count,
            "evicted_for_bytes": self.evicted_for_bytes, "by_project": self.by_project, "sample": self.sample,
            "vectors": self.vectors, "rounds": self.rounds, "queue_rows_purged": self.queue_rows,
            "injected_texts_dropped": self.injected_texts, "outlines_dropped": self.outlines, "note": self.note,
        }


def run(home: str | None = None, *, max_bytes: int | None = None, max_memories: int | None = None,
        dry_run: bool = False, now: float | None = None, delete_vectors: VectorDelete | None = None
        ) -> dict[str, Any]:
    """One cleanup of the data dir; `delete_vectors` as for remove()."""
    home = home or data_home()
    now = time.time() if now is None else now
    r = Run(home, limits.max_bytes() if max_bytes is None else max_bytes,
            limits.max_memories() if max_memories is None else max_memories, dry_run, delete_vectors)
    spaces = _workspaces(home)
    try:
        r.before = usage(home)
        r.memories_before = _count(spaces)
        gone: dict[str, set[int]] = {ws.project.key: set() for ws in spaces}  # for the dry run's bookkeeping
        touched = _drop_expired(r, spaces, gone, now) | _enforce_count(r, spaces, gone, now)
        if not dry_run:
            _tidy(r, spaces, touched, now)
        used = _enforce_bytes(r, spaces, gone, now)
        r.after = usage(home) if not dry_run else {**r.before, "bytes": max(0, used)}
        if not dry_run and r.after["bytes"] > used:
            r.note = (r.note + " " if r.note else "") + (
                f"the vector files shrink to about {used} bytes in all once the worker has deleted the "
                "evicted vectors and compacted its tables")
        r.memories_after = _count(spaces) - (sum(len(v) for v in gone.values()) if dry_run else 0)
        return r.as_dict()
    finally:
        for ws in spaces:
            ws.close()


def _count(spaces: list[Workspace]) -> int:
    return sum(ws.db.execute("SELECT count(*) FROM memories").fetchone()[0] for ws in spaces)


def _drop_expired(r: Run, spaces: list[Workspace], gone: dict[str, set[int]], now: float) -> set[str]:
    """Phase 1: expired memories go whatever the limits. Returns the keys of the projects changed."""
    touched: set[str] = set()
    for ws in spaces:
        ids = expired_ids(ws.db, now)
        r.expired += len(ids)
        if ids and not r.dry_run:
            _, r.vectors = remove(ws, ids, r.delete_vectors)
            touched.add(ws.project.key)
        gone[ws.project.key].update(ids)
    return touched


def _enforce_count(r: Run, spaces: list[Workspace], gone: dict[str, set[int]], now: float) -> set[str]:
    """Phase 2: the per-project count limit, down to its target ratio, least recently used first."""
    touched: set[str] = set()
    if not r.max_memories:
        return touched
    keep = int(r.max_memories * limits.TARGET_RATIO)
    for ws in spaces:
        left = gone[ws.project.key]
        count = ws.db.execute("SELECT count(*) FROM memories").fetchone()[0] - len(left)
        if count <= r.max_memories:
            continue
        rows = [c for c in candidates(ws.db, count - keep + len(left), now) if c["id"] not in left][: count - keep]
        r.evicted_for_count += len(rows)
        r.chose(ws, rows)
        left.update(c["id"] for c in rows)
        if not r.dry_run:
            _, r.vectors = remove(ws, [c["id"] for c in rows], r.delete_vectors)
            touched.add(ws.project.key)
    return touched


def _tidy(r: Run, spaces: list[Workspace], touched: set[str], now: float) -> None:
    """Old injected texts, finished queue rows and old outlines go; changed databases give space back."""
    for ws in spaces:
        texts = purge_injected_texts(ws.db, now)
        r.injected_texts += texts
        if ws.project.key in touched or texts:
            reclaim(ws.db)
        r.queue_rows += purge_queue(ws.db, now)
        r.outlines += purge_outlines(ws.db, now)


def _measured(r: Run, spaces: list[Workspace]) -> int:
    """Bytes used now. LanceDB frees deleted rows only when the worker compacts the table (after it has run
    the delete jobs): count the vectors of the memories that are left, not the files as they are."""
    u = usage(r.home)
    if not u["vectors"] or not r.memories_before:
        return u["bytes"]
    return u["databases"] + min(u["vectors"], int(r.before["vectors"] * _count(spaces) / r.memories_before))


_PROTECTED = ("could not get under the target: what is left is protected (decisions, pinned, active sessions) "
              "or not memory")


def _enforce_bytes(r: Run, spaces: list[Workspace], gone: dict[str, set[int]], now: float) -> int:
    """Phase 3, the byte limit: estimate what each memory frees, evict the least recently used across all
    projects until the estimate reaches the excess, give the space back, measure, repeat if needed. The
    excess is measured once the free pages and the WAL are given back (or, dry, subtracted): counting them
    would evict memories for space that costs nothing to recover. Returns the bytes used at the end."""
    used = _measured(r, spaces)
    if r.dry_run:  # what the removals above would give back (a real run has them done and measured)
        used -= _estimate_freed(r, spaces, gone)
    if used <= r.max_bytes:
        return used
    if r.dry_run:
        used -= sum(_reclaimable(ws) for ws in spaces)
    else:
        for ws in spaces:
            reclaim(ws.db)
        used = _measured(r, spaces)
    while used > r.target_bytes and r.rounds < MAX_ROUNDS:
        r.rounds += 1
        freed = _evict_bytes(r, spaces, used - r.target_bytes, now, gone)
        if freed == 0:
            r.note = _PROTECTED
            break
        if r.dry_run:
            if freed < used - r.target_bytes:  # every candidate taken and still over
                r.note = "a cleanup " + _PROTECTED
            return used - freed
        used = _measured(r, spaces)
    return used


def _per_vector(home: str, spaces: list[Workspace]) -> float:
    """Bytes of the vector store per memory (its files spread evenly over the memories)."""
    total = sum(ws.db.execute("SELECT count(*) FROM memories").fetchone()[0] for ws in spaces) or 1
    return usage(home)["vectors"] / total


def _estimate_freed(r: Run, spaces: list[Workspace], gone: dict[str, set[int]]) -> int:
    """Bytes that deleting the chosen memories would free: their text times each database's bytes per
    byte of text, plus their share of the vector files (the estimate _evict_bytes makes per row)."""
    if not any(gone.values()):
        return 0
    per_vector = _per_vector(r.home, spaces)
    freed = 0.0
    for ws in spaces:
        ids = sorted(gone[ws.project.key])
        factor = _bytes_per_payload(ws.db) if ids else 0.0
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            payload = ws.db.execute(f"SELECT COALESCE(sum({_PAYLOAD}), 0) FROM memories WHERE id IN "
                                    f"({','.join('?' * len(chunk))})", chunk).fetchone()[0]
            freed += payload * factor + per_vector * len(chunk)
    return int(freed)


def _evict_bytes(r: Run, spaces: list[Workspace], excess: int, now: float, gone: dict[str, set[int]]) -> int:
    """One round: pick across projects (merged LRU order) until the estimated bytes freed cover `excess`.
    Returns the estimate of what was (or, dry, would be) freed."""
    per_vector = _per_vector(r.home, spaces)
    streams = []
    factors: dict[str, float] = {}
    for ws in spaces:
        factors[ws.project.key] = _bytes_per_payload(ws.db)
        rows = [c for c in candidates(ws.db, 20000, now) if c["id"] not in gone[ws.project.key]]
        streams.append([(c["last_used"], c["created_at"], c["id"], ws.project.key, c) for c in rows])
    by_key = {ws.project.key: ws for ws in spaces}
    chosen: dict[str, list[Any]] = {}
    estimate = 0.0
    for _last, _created, _id, key, row in heapq.merge(*streams):
        if estimate >= excess * 1.02:  # a 2% margin: the estimate is an average
            break
        chosen.setdefault(key, []).append(row)
        estimate += row["payload"] * factors[key] + per_vector
    for key, rows in chosen.items():
        ws = by_key[key]
        r.evicted_for_bytes += len(rows)
        r.chose(ws, rows)
        gone[key].update(c["id"] for c in rows)
        if not r.dry_run:
            _, r.vectors = remove(ws, [c["id"] for c in rows], r.delete_vectors)
            reclaim(ws.db)
    return int(estimate)


def handle_job(ws: Workspace, payload: dict[str, Any], delete_vectors: VectorDelete | None = None
               ) -> dict[str, Any]:
    """An `evict` job (payload: {"reason": ...}) over the whole data dir the workspace lives in; the
    worker runs it with the vector store's delete (memory/worker/jobs.py's evict_job)."""
    return run(ws.home, delete_vectors=delete_vectors)
