"""The warm worker's copy of a project's vectors, held in memory (numpy), searched exactly.

LanceDB stays the store (memory/vectors.py: durable, rebuilt by `memory reindex`); this is a cache of it
that the worker loads once per project and keeps in step with its own upserts and deletes. A LanceDB
query costs ~20 ms whatever its index (its query machinery, not the arithmetic). Here a query is one
matrix-vector product, exact. The matrix is stored column by column, so a sparse query (the hashing
embedder's: a few dozen of 1,024 buckets) reads only its own columns, a few percent of the matrix; a
dense one (a neural model's) reads all of it. Narrowing filters (type, dates, session) run as a mask
before the cut.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np


class Resident:
    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._lock = threading.Lock()
        cap = 1024
        self._vec = np.zeros((cap, dim), dtype=np.float32, order="F")  # columns contiguous: see above
        self._ids = np.zeros(cap, dtype=np.int64)
        self._alive = np.zeros(cap, dtype=bool)
        self._created = np.zeros(cap, dtype=np.float64)
        self._type: list[str | None] = [None] * cap
        self._session: list[str | None] = [None] * cap
        self._n = 0
        self._row: dict[int, int] = {}
        self.dead = 0

    # -- loading and keeping in step -----------------------------------------------------------------

    @classmethod
    def from_store(cls, store: Any) -> Resident:
        """All rows of a memory.vectors.VectorStore's table."""
        r = cls(store.dim)
        data = store.table.to_arrow()
        if data.num_rows:
            flat = data.column("vector").combine_chunks().flatten()
            vecs = np.asarray(flat.to_numpy(zero_copy_only=False), dtype=np.float32).reshape(-1, store.dim)
            r._append(data.column("id").to_pylist(), vecs, data.column("type").to_pylist(),
                      data.column("session_id").to_pylist(), data.column("created_at").to_pylist())
        return r

    def __len__(self) -> int:
        return self._n - self.dead

    def _grow(self, need: int) -> None:
        cap = len(self._ids)
        if need <= cap:
            return
        new = max(need, cap * 2)
        for name in ("_vec", "_ids", "_alive", "_created"):
            old = getattr(self, name)
            arr = np.zeros((new, *old.shape[1:]), dtype=old.dtype, order="F")
            arr[:cap] = old
            setattr(self, name, arr)
        self._type += [None] * (new - cap)
        self._session += [None] * (new - cap)

    def _append(self, ids: list[int], vecs: np.ndarray, types: list[Any], sessions: list[Any],
                created: list[Any]) -> None:
        n = self._n
        self._grow(n + len(ids))
        self._vec[n:n + len(ids)] = vecs
        self._ids[n:n + len(ids)] = ids
        self._alive[n:n + len(ids)] = True
        self._created[n:n + len(ids)] = [float(c or 0.0) for c in created]
        self._type[n:n + len(ids)] = types
        self._session[n:n + len(ids)] = sessions
        for k, i in enumerate(ids):
            self._row[int(i)] = n + k
        self._n = n + len(ids)

    def upsert(self, rows: list[dict[str, Any]]) -> None:
        """The rows the worker has just written to LanceDB (same dicts)."""
        if not rows:
            return
        with self._lock:
            fresh = []
            for r in rows:
                at = self._row.get(int(r["id"]))
                if at is not None:
                    self._set(at, r)
                else:
                    fresh.append(r)
            if fresh:
                self._append([int(r["id"]) for r in fresh], np.asarray([r["vector"] for r in fresh], dtype=np.float32),
                             [r.get("type") for r in fresh], [r.get("session_id") for r in fresh],
                             [r.get("created_at") for r in fresh])

    def _set(self, at: int, r: dict[str, Any]) -> None:
        self._vec[at] = np.asarray(r["vector"], dtype=np.float32)
        self._created[at] = float(r.get("created_at") or 0.0)
        self._type[at], self._session[at] = r.get("type"), r.get("session_id")
        if not self._alive[at]:
            self._alive[at] = True
            self.dead -= 1

    def delete(self, ids: list[int]) -> None:
        with self._lock:
            for i in ids:
                at = self._row.pop(int(i), None)
                if at is not None and self._alive[at]:
                    self._alive[at] = False
                    self.dead += 1

    def needs_compaction(self) -> bool:
        return self.dead > 1000 and self.dead * 4 > self._n

    def compact(self) -> str:
        """Drop deleted rows (they cost a query their columns' reads). The worker's main thread runs it;
        queries go on against the old arrays, which are replaced in one step."""
        with self._lock:
            fresh = Resident(self.dim)
            keep = np.flatnonzero(self._alive[:self._n])
            fresh._append(self._ids[keep].tolist(), self._vec[keep], [self._type[i] for i in keep],
                          [self._session[i] for i in keep], self._created[keep].tolist())
            self.__dict__.update({k: v for k, v in fresh.__dict__.items() if k != "_lock"})
        return f"compacted to {len(keep)} vectors"

    # -- queries ------------------------------------------------------------------------------------

    def search(self, query: list[float], k: int, types: list[str] | None = None, since: float | None = None,
               until: float | None = None, session_id: str | None = None) -> dict[int, float]:
        """The k best rows by dot product, as {memory id: score}; narrowing filters before the cut."""
        q = np.asarray(query, dtype=np.float32)
        with self._lock:  # one consistent set of arrays: compact() swaps them all at once
            n, vec, ids, alive = self._n, self._vec, self._ids, self._alive
            kinds, sessions, created = self._type, self._session, self._created
        live = alive[:n]
        if types or since is not None or until is not None or session_id:
            live = live & _mask(n, kinds, sessions, created, types, since, until, session_id)
        nz = np.flatnonzero(q)
        if len(nz) * 4 < self.dim:  # sparse: only the query's columns (the rest add nothing)
            scores = vec[:n, nz] @ q[nz]
        else:
            scores = vec[:n] @ q
        return self._best(np.where(live, scores, -np.inf), ids[:n], k)

    def search_exact(self, query: list[float], k: int) -> dict[int, float]:
        """Every live row scored (what the lists approximate): for measuring the index."""
        q = np.asarray(query, dtype=np.float32)
        with self._lock:
            n, vec, ids, alive = self._n, self._vec, self._ids, self._alive
        return self._best(np.where(alive[:n], vec[:n] @ q, -np.inf), ids[:n], k)

    @staticmethod
    def _best(scores: np.ndarray, ids: np.ndarray, k: int) -> dict[int, float]:
        if len(scores) > k:
            top = np.argpartition(-scores, k)[:k]
        else:
            top = np.arange(len(scores))
        return {int(ids[i]): float(scores[i]) for i in top if np.isfinite(scores[i])}


def _mask(n: int, kinds: list[str | None], sessions: list[str | None], created: np.ndarray,
          types: list[str] | None, since: float | None, until: float | None, session_id: str | None) -> np.ndarray:
    mask = np.ones(n, dtype=bool)
    if types:
        wanted = set(types)
        mask &= np.fromiter((t in wanted for t in kinds[:n]), dtype=bool, count=n)
    if session_id:
        mask &= np.fromiter((s == session_id for s in sessions[:n]), dtype=bool, count=n)
    if since is not None:
        mask &= created[:n] >= since
    if until is not None:
        mask &= created[:n] < until
    return mask
