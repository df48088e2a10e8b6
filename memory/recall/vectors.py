"""The vector store: one LanceDB database per project beside its SQLite file (projects/<key>/vectors.lance),
one table per embedding provider (its name, model and dimension in the table name).

Derived data: SQLite is the source of truth and `memory reindex` rebuilds all of this from it. Only the
worker writes here (it holds the single-worker lock); `lancedb` costs 1.3-1.6 s to import, so no hook
imports this module (pyproject.toml's import-linter contract keeps it so).

Each row holds a memory's vector and the fields filters need (type, session, dates), so filters run
before the cut (LanceDB prefilter) rather than on a top-k that they would empty.
"""

from __future__ import annotations

import math
import os
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

from memory.base import clock
from memory.base.config import env_int
from memory.store.workspace import Workspace

DIRNAME = "vectors.lance"
# Every upsert and delete is a LanceDB commit: a version of its own and small fragments, all kept on disk
# until a clean-up (a reindex of 10,000 memories: 163 versions, 208 MB against 82 MB compacted). Old
# versions are kept MEMORY_VECTOR_KEEP_VERSIONS_SECONDS for readers (a query in another thread) still on one.
# Commits between two compactions during a long burst (a reindex, a bulk save's jobs), so the store does
# not grow to twice its size before the burst ends (each costs ~0.1 s at 10,000 rows).
COMPACT_EVERY = 50
VALUE_BYTES = 2  # a vector's values are float16 (VectorStore._open)


def path(project_dir: str) -> str:
    return os.path.join(project_dir, DIRNAME)


class IndexDamaged(RuntimeError):
    """The LanceDB store could not be read (a damaged manifest or data file): it is derived data, so it is
    moved aside and rebuilt from SQLite (set_aside)."""


# What LanceDB (or the worker's vector process relaying it) says of a store it cannot read. A full or
# read-only disk is not damage: the store is fine, and moving it would only cost a rebuild.
_DAMAGE_WORDS = ("lance error", "lanceerror", "corrupt", "invalid manifest", "file size is too small",
                 "not a valid", "unexpected end", "indexdamaged")
_NOT_DAMAGE = ("no space", "read-only", "readonly", "quota", "permission denied")


def is_index_damage(exc: BaseException) -> bool:
    if isinstance(exc, IndexDamaged):
        return True
    text = f"{type(exc).__name__}: {exc}".lower()
    return any(w in text for w in _DAMAGE_WORDS) and not any(w in text for w in _NOT_DAMAGE)


def set_aside(project_dir: str) -> str | None:
    """Move a damaged store aside (`vectors.lance.corrupt-<time>`; an older such copy is removed: it is
    derived data) so that a fresh one is built. Only a holder of the worker lock calls this (the worker,
    `memory reindex`, a CLI search that took the lock). Returns where it went."""
    import shutil

    here = path(project_dir)
    if not os.path.exists(here):
        return None
    for name in os.listdir(project_dir):
        if name.startswith(DIRNAME + ".corrupt-"):
            shutil.rmtree(os.path.join(project_dir, name), ignore_errors=True)
    target = f"{here}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}"
    os.rename(here, target)
    return target


def forget_index(db: Any) -> None:
    """The SQLite side of a store set aside: no memory counts as embedded and no provider as built, so the
    worker re-embeds every memory (its sweep) and searches answer with keywords until it has."""
    from memory.store.db import Tx

    with Tx(db):
        db.execute("DELETE FROM memory_index")
        db.execute("DELETE FROM meta WHERE key = 'vectors:provider'")


def table_name(provider_key: str) -> str:
    return "memories_" + re.sub(r"[^a-z0-9]+", "_", provider_key.lower()).strip("_")


def delete(ws: Workspace, ids: list[int]) -> None:
    """For callers outside the worker (eviction from `memory cleanup`, the MCP delete tool, the worker's
    evict job, which pass it to memory/store/evict.py): queue the deletes, the worker applies them. Cheap
    SQL, no LanceDB import."""
    from memory import store

    store.queue_vector_jobs(ws.db, list(ids))
    store.mark_dirty(ws.db, None)


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def where_clause(types: list[str] | None = None, since: float | None = None, until: float | None = None,
                 session_id: str | None = None, exclude_session: str | None = None,
                 include_expired: bool = True, now: float | None = None) -> str | None:
    """memory.recall.search.Filters as a LanceDB SQL filter. Hybrid search passes only the narrowing filters
    (type, dates, session): a prefilter costs ~8 ms at 10,000 rows, and the rare expired memory or the
    current session's are dropped from the 200 candidates against SQLite anyway."""
    parts = []
    if types:
        parts.append(f"type IN ({', '.join(_quote(t) for t in types)})")
    if since is not None:
        parts.append(f"created_at >= {float(since)!r}")
    if until is not None:
        parts.append(f"created_at < {float(until)!r}")
    if session_id:
        parts.append(f"session_id = {_quote(session_id)}")
    if exclude_session:
        parts.append(f"(session_id IS NULL OR session_id != {_quote(exclude_session)})")
    if not include_expired:
        parts.append(f"(expires_at IS NULL OR expires_at > {float(now or clock.now())!r})")
    return " AND ".join(parts) or None


class VectorStore:
    def __init__(self, project_dir: str, provider_key: str, dim: int) -> None:
        import lancedb
        import pyarrow as pa

        self._pa = pa
        self.dir = path(project_dir)
        self.name = table_name(provider_key)
        self.dim = dim
        os.makedirs(self.dir, mode=0o700, exist_ok=True)
        try:
            self._open(lancedb, pa, dim)
        except Exception as exc:
            if not is_index_damage(exc):
                raise
            raise IndexDamaged(f"the vector store {self.dir} cannot be read: {str(exc)[:200]}") from exc
        self._indexed_rows = self._index_rows()
        self._optimized_at = 0.0
        self._commits = 0  # since the last compaction
        # When the last clean-up left versions younger than KEEP_VERSIONS_S: the monotonic time to clean
        # again, even with no new write. Unknown at open (a reindex or a killed worker may have left some).
        self._cleanup_due: float | None = 0.0
        # True while a long read (the worker's warm-list build, a scan of every row) is under way: then a
        # compaction deletes no version, and the clean-up is retried a few seconds later.
        self.reading: Callable[[], bool] = lambda: False
        self._scans: set[object] = set()  # scans under way (set.add/discard: safe across threads)

    def _open(self, lancedb: Any, pa: Any, dim: int) -> None:
        self.db = lancedb.connect(self.dir)
        # float16: half the bytes of float32 (at 10,000 x 384, 0.8 KB a memory instead of 1.5 KB); a model's
        # unit vectors keep ~3 significant digits, which moves no top-10 that float32 keeps (recall the same,
        # docs/benchmarks.md). A table written before keeps its float32 until it is built again (reindex).
        self.new_schema = pa.schema([
            pa.field("id", pa.int64()),
            pa.field("vector", pa.list_(pa.float16(), dim)),
            pa.field("type", pa.string()),
            pa.field("session_id", pa.string()),
            pa.field("created_at", pa.float64()),
            pa.field("expires_at", pa.float64()),
        ])
        if self.name in self._tables():
            self.table = self.db.open_table(self.name)
        else:
            self.table = self.db.create_table(self.name, schema=self.new_schema)
        self.schema = self.table.schema
        self.table.count_rows()  # reads the manifest: a damaged one fails here, not at the first search

    def _tables(self) -> list[str]:
        result = self.db.list_tables()
        return list(getattr(result, "tables", result))

    def drop_other_tables(self) -> list[str]:
        """Tables of other providers (or models): stale once this one is complete."""
        dropped = [t for t in self._tables() if t != self.name]
        for t in dropped:
            self.db.drop_table(t, ignore_missing=True)
        return dropped

    def reset(self) -> None:
        self.db.drop_table(self.name, ignore_missing=True)
        self.table = self.db.create_table(self.name, schema=self.new_schema)
        self.schema = self.table.schema
        self._indexed_rows = 0

    def count(self) -> int:
        return int(self.table.count_rows())

    def upsert(self, rows: list[dict[str, Any]]) -> None:
        """Insert or replace rows by id: one LanceDB commit, so a crash leaves all of them or none."""
        if not rows:
            return
        data = self._pa.Table.from_pylist(rows, schema=self.schema)
        (self.table.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(data))
        self._committed()

    def delete(self, ids: list[int]) -> None:
        if ids:
            self.table.delete(f"id IN ({', '.join(str(int(i)) for i in ids)})")
            self._committed()

    def _committed(self) -> None:
        self._commits += 1
        if self._commits >= COMPACT_EVERY:
            self.compact()

    def versions(self) -> int:
        return len(self.table.list_versions())

    def compact(self, keep_s: float | None = None) -> None:
        """Merge small fragments, fold new rows into the ANN index and delete the versions older than
        `keep_s` (default MEMORY_VECTOR_KEEP_VERSIONS_SECONDS; 0: all but the latest, for a caller that holds
        the worker lock and has finished). When younger ones are left, `cleanup_due` says when to return."""
        import warnings
        from datetime import timedelta

        keep_s = env_int("MEMORY_VECTOR_KEEP_VERSIONS_SECONDS") if keep_s is None else keep_s
        held = self.reading() or bool(self._scans)
        with warnings.catch_warnings():  # lancedb warns about keep_s=0; the callers that pass it are alone
            warnings.simplefilter("ignore", UserWarning)
            self.table.optimize(cleanup_older_than=timedelta(days=7) if held else timedelta(seconds=keep_s))
            if keep_s <= 0 and not held and self.versions() > 1:
                # The index step commits after the clean-up: a second pass (~10 ms) drops what it left
                # (6,000 rows with their ANN index: 2 versions and 28 MB after one pass, 1 and 18 MB after two).
                self.table.optimize(cleanup_older_than=timedelta(seconds=0))
        self._commits, self._optimized_at = 0, time.monotonic()
        if held:
            self._cleanup_due = time.monotonic() + 5
        else:
            self._cleanup_due = None if keep_s <= 0 or self.versions() <= 1 else time.monotonic() + keep_s + 1

    def cleanup_due(self) -> bool:
        return self._cleanup_due is not None and time.monotonic() >= self._cleanup_due

    def scan(self, rows: int = 8192) -> Iterator[tuple[Any, Any]]:
        """Every row's id and vector as numpy arrays ([n] int64, [n, dim] float16, or float32 in a table from
        before), `rows` at a time: the warm
        lists' build. No clean-up deletes a version while a scan reads it."""
        token = object()
        self._scans.add(token)
        try:
            for batch in self.table.search().select(["id", "vector"]).limit(None).to_batches(rows):
                ids = batch.column("id").to_numpy()
                yield ids, batch.column("vector").values.to_numpy().reshape(len(ids), -1)
        finally:
            self._scans.discard(token)

    def search(self, vector: list[float], k: int, where: str | None = None) -> list[tuple[int, float]]:
        """The k nearest by dot product (vectors are stored unnormalised mixes, see worker.py), as (id, score)."""
        q = self.table.search(vector).metric("dot").limit(k).select(["id", "_distance"])
        if self._indexed_rows:
            q = q.nprobes(20)
        if where:
            q = q.where(where, prefilter=True)
        out = q.to_arrow()
        ids = out.column("id").to_pylist()
        dist = out.column("_distance").to_pylist()
        return [(int(i), 1.0 - float(d)) for i, d in zip(ids, dist, strict=True)]

    def _drop_vector_index(self) -> None:
        for idx in self.table.list_indices():
            if "vector" in list(getattr(idx, "columns", []) or []):
                self.table.drop_index(idx.name)
        self._indexed_rows = 0

    def _index_rows(self) -> int:
        try:
            for idx in self.table.list_indices():
                if "vector" in list(getattr(idx, "columns", []) or []):
                    stats = self.table.index_stats(idx.name)
                    return int(getattr(stats, "num_indexed_rows", 0) or 0) or 1
        except Exception:  # noqa: BLE001 - an unreadable index is rebuilt below
            return 0
        return 0

    def maintain(self, force: bool = False, keep_s: float | None = None) -> str | None:
        """Off the hot path: build the ANN index once the table is big enough and rebuild it when the table
        has doubled since; otherwise, at most once a minute or when a clean-up is due, compact: merge the
        small fragments every upsert leaves, fold new rows into the index (else they are searched flat for
        ever) and drop old versions. Below MEMORY_VECTOR_INDEX_MIN_ROWS exact search is fast enough."""
        n = self.count()
        done = None
        least = env_int("MEMORY_VECTOR_INDEX_MIN_ROWS")
        if self._indexed_rows and n < least:
            # An index built under a lower threshold (5,000 before): a second copy of every vector, dropped.
            self._drop_vector_index()
            done = f"dropped the ANN index ({n} vectors, under {least})"
        if n >= least and (not self._indexed_rows or n >= 2 * self._indexed_rows):
            t0 = time.perf_counter()
            # IVF_FLAT rather than IVF_PQ: at 10,000 x 1024 it builds in 3 s instead of 44 s, searches as fast
            # (20 of sqrt(n) partitions probed) and its distances are exact, so no refine step is needed.
            self.table.create_index(metric="dot", vector_column_name="vector", index_type="IVF_FLAT",
                                    num_partitions=max(8, int(math.sqrt(n))), replace=True)
            self._indexed_rows = n
            done = f"built IVF_FLAT index over {n} vectors in {time.perf_counter() - t0:.1f} s"
        if force or done or self.cleanup_due() or time.monotonic() - self._optimized_at > 60:
            self.compact(keep_s)
            done = done or "optimized"
        return done


