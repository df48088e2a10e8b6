"""One project's derived indexes in the worker: memories_ctx, the memory_index ledger, LanceDB, warm lists."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from memory import store
from memory.base.log import described
from memory.base.progress import Rate
from memory.base.project import Project
from memory.recall import context
from memory.recall.hybrid import Scored, Weights
from memory.recall.hybrid import search as hybrid_search
from memory.recall.search import Filters
from memory.recall.vectors import is_index_damage
from memory.store import ctx_rows, queue
from memory.store.db import Tx, connect, is_lock_error
from memory.store.workspace import Workspace
from memory.worker import stage
from memory.worker.heap import trim_heap
from memory.worker.log import log as _log
from memory.worker.stage import Staged

META_PROVIDER = "vectors:provider"
# Own vectors kept per project for the "mean" window rule, by their text's hash: a window's members were
# mostly embedded by the batch before (a session's memories come in order), so neighbours cost no forward
# pass. 1,024 x 384 float32: 1.5 MiB.
OWN_VECTORS = 1024



def mix(own: list[float], window: list[float] | None) -> list[float]:
    """The stored vector: half the memory's own embedding, half its neighbour window's (LoCoMo: dense
    recall@10 0.45 own alone, 0.52 mixed). Left unnormalised, so a dot product is exactly the mix of the
    two similarities."""
    if window is None:
        return own
    return [0.5 * (a + b) for a, b in zip(own, window, strict=True)]


class ProjectIndex:
    """One project's derived indexes: memories_ctx, memory_index and the LanceDB table."""

    def __init__(self, home: str, key: str, embedder: Any, host: Any = None, window: str | None = None) -> None:
        """`host`: a memory.recall.vector_host.Host, whose child process then holds LanceDB (the worker);
        without one (the CLI's reindex, benchmarks, tests) LanceDB is opened in this process. `window`: the
        window rule (memory/recall/context.py), WINDOW_RULE unless a benchmark compares them."""
        from memory.recall import embed

        self.home, self.key, self.embedder = home, key, embedder
        self.dir = os.path.join(home, "projects", key)
        self.window = window or context.WINDOW_RULE
        self.provider = context.index_key(embed.key(embedder), self.window)
        self._own: OrderedDict[bytes, Any] = OrderedDict()  # text hash -> own vector, newest last
        self.db = connect(os.path.join(self.dir, "memory.db"))
        if host is not None:
            from memory.recall.vector_host import RemoteStore

            self.vectors: Any = Staged(RemoteStore(host, self.dir, self.provider, embedder.dim), self.dir,
                                       self.provider)
        else:
            from memory.recall import vectors

            try:
                self.vectors = vectors.VectorStore(self.dir, self.provider, embedder.dim)
            except vectors.IndexDamaged as exc:
                self._set_aside(exc)
                self.vectors = vectors.VectorStore(self.dir, self.provider, embedder.dim)
            if os.path.exists(os.path.join(self.dir, stage.NAME)):  # a worker's writes still waiting: newer
                held = Staged(self.vectors, self.dir, self.provider)
                held.flush()
                held.close()
        self._local = threading.local()
        self._query_cache: OrderedDict[str, list[float]] = OrderedDict()
        self._cache_lock = threading.Lock()
        self.last_sweep = 0.0
        self.changed = False
        self.rate = Rate()  # memories indexed per second (wall), for the ETA of `memory worker status`
        # The in-memory copy of both search lists (memory/recall/warm_index.py): built in a thread on first
        # search; index() keeps it current, and records its changes for a build under way.
        self.warm: Any = None
        self.warm_enabled = False  # the worker turns it on; a CLI process would build it for nothing
        self._warm_lock = threading.Lock()
        self._warm_building = False
        self._warm_failed = False
        self._warm_pending: list[tuple[list[Any], list[int]]] = []
        self._warm_thread: threading.Thread | None = None
        # The vector list is searched in another thread while SQLite ranks the keyword list: both release
        # the GIL, so a query costs about the slower of the two rather than their sum.
        self.pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix=f"vec-{key[:12]}")
        # Called between the steps of indexing and of the lists' build: the worker's SearchFirst.pause, so a
        # search in flight goes first (memory/worker/priority.py).
        self.pause: Callable[[], None] = lambda: None

    def close(self) -> None:
        """Let go of the in-memory lists, the thread pool, the LanceDB table and the database."""
        with self._warm_lock:
            self.warm, self._warm_pending = None, []
        with self._cache_lock:
            self._query_cache.clear()
        self.pool.shutdown(wait=False)
        if isinstance(self.vectors, Staged):
            self.vectors.close()
        self.db.close()

    # -- state shared with query threads ------------------------------------------------------------

    def reader(self) -> Any:
        """A connection per thread: sqlite3 connections are not shared across threads."""
        db = getattr(self._local, "db", None)
        if db is None:
            db = self._local.db = connect(os.path.join(self.dir, "memory.db"))
        return db

    def workspace(self) -> Workspace:
        try:
            with open(os.path.join(self.dir, "project.json"), encoding="utf-8") as fh:
                meta = json.load(fh)
        except (OSError, ValueError):
            meta = {"key": self.key, "name": self.key, "root": ""}
        return Workspace(Project(meta["key"], meta.get("name") or self.key, meta.get("root") or "",
                                 meta.get("remote")), self.home)

    # -- consistency --------------------------------------------------------------------------------

    def _set_aside(self, exc: BaseException) -> None:
        """A damaged vector store: moved aside and forgotten in SQLite, so that it is built again."""
        from memory.recall import vectors

        moved = vectors.set_aside(self.dir)
        vectors.forget_index(self.db)
        _log(f"{self.key}: the vector store was damaged ({str(exc)[:200]}); moved to {moved}, rebuilding it "
             "from SQLite")

    def recover_vectors(self, exc: BaseException) -> None:
        """Rebuild a damaged vector store from SQLite: the store moved aside, every memory queued again
        (searches answer with keywords until it is done). Only the lock holder's main thread calls this."""
        forget = getattr(self.vectors, "forget", None)
        if forget is not None:
            forget()  # the vector process lets go of the damaged store first
        self._set_aside(exc)
        with self._warm_lock:
            self.warm, self._warm_pending, self._warm_failed = None, [], False
        self.check_provider()
        self.sweep()

    def check_provider(self) -> bool:
        """A new provider or model: everything is re-embedded (the old table serves nothing meanwhile)."""
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (META_PROVIDER,)).fetchone()
        if row and row[0] == self.provider:
            return False
        with Tx(self.db):
            ctx_rows.clear(self.db)
            self.db.execute("DELETE FROM memory_index")
            self.db.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET "
                            "value = excluded.value", (META_PROVIDER, self.provider))
        dropped = self.vectors.drop_other_tables()
        self.vectors.reset()
        with self._warm_lock:
            self.warm, self._warm_pending = None, []
        _log(f"{self.key}: vectors reset for {self.provider} (dropped {dropped or 'nothing'})")
        return True

    def convert_ctx(self) -> int:
        """A pre-m014 store's neighbour rows moved into the contentless index (ctx_rows.convert), a batch a
        transaction with a search let in between: before the in-memory lists, built from the ledger's copy."""
        t0, c0 = time.perf_counter(), time.process_time()
        done = ctx_rows.convert(self.db, pause=self.pause)
        if done:
            _log(f"{self.key}: {done} neighbour rows converted to the contentless index in "
                 f"{time.perf_counter() - t0:.1f} s ({time.process_time() - c0:.1f} s CPU)")
        return done

    def sweep(self) -> int:
        """Queue a vector job for every memory the ledger lacks or holds an older version of, and for every
        ledger entry whose memory is gone. Catches work whose job was lost to a crash or a race."""
        self.last_sweep = time.time()
        ids = [r[0] for r in self.db.execute(
            """SELECT m.id FROM memories m LEFT JOIN memory_index i ON i.memory_id = m.id
               WHERE i.memory_id IS NULL OR m.updated_at > i.indexed_at""")]
        ids += [r[0] for r in self.db.execute(
            "SELECT memory_id FROM memory_index WHERE memory_id NOT IN (SELECT id FROM memories)")]
        # Not those already queued, nor those that failed for good: a failing memory waits for its next
        # save or `memory reindex` rather than keeping the worker busy (and alive) for ever.
        busy = {r[0] for r in self.db.execute(
            "SELECT CAST(json_extract(payload, '$.id') AS INTEGER) FROM queue "
            "WHERE kind = 'vector' AND status IN ('pending', 'running', 'failed')")}
        ids = [i for i in ids if i not in busy]
        if ids:
            with Tx(self.db):
                store.queue_vector_jobs(self.db, ids)
        return len(ids)

    # -- indexing -----------------------------------------------------------------------------------

    def index(self, ids: list[int], jobs: list[int] | None = None) -> dict[str, int]:
        """Bring the indexes of these memories (and of their neighbours, whose context they are) up to
        date; mark `jobs` done in the same transaction."""
        db = self.db
        read_at = time.time()
        affected: dict[int, Any] = {}
        gone: list[int] = []
        n = context.radius()
        for mid in dict.fromkeys(ids):
            row = db.execute("SELECT * FROM memories WHERE id = ?", (mid,)).fetchone()
            if row is not None:
                affected[mid] = row
                before, after = context.neighbours(db, row["session_id"], row["created_at"], mid, n)
            else:
                gone.append(mid)
                led = db.execute("SELECT session_id, created_at FROM memory_index WHERE memory_id = ?",
                                 (mid,)).fetchone()
                before, after = (context.neighbours(db, led["session_id"], led["created_at"], mid, n)
                                 if led else ([], []))
            for nb in [*before, *after]:
                affected.setdefault(nb["id"], None)
        docs = []
        for mid, row in affected.items():
            row = row if row is not None else db.execute("SELECT * FROM memories WHERE id = ?", (mid,)).fetchone()
            if row is None:
                continue
            doc = context.document(db, row, self.provider, n)
            led = db.execute("SELECT text_hash FROM memory_index WHERE memory_id = ?", (mid,)).fetchone()
            if led is None or led[0] != doc.hash:
                docs.append(doc)
            elif mid in ids:
                # Unchanged text (a duplicate save): only the ledger's time moves on.
                with Tx(db):
                    db.execute("UPDATE memory_index SET indexed_at = ? WHERE memory_id = ?", (read_at, mid))
        self.warm_up()  # built from the first batch on, searches meanwhile never wait for LanceDB's writes
        self.await_first_lists()
        self.pause()
        vectors = self._embed(docs)
        self.pause()
        self.vectors.upsert([
            {"id": d.row["id"], "vector": v, "type": d.row["type"], "session_id": d.row["session_id"],
             "created_at": float(d.row["created_at"]), "expires_at": d.row["expires_at"]}
            for d, v in zip(docs, vectors, strict=True)])
        self.vectors.delete(gone)
        self.changed = self.changed or bool(docs or gone)
        with Tx(db):
            for d in docs:
                r = d.row
                ctx_rows.drop(db, [r["id"]])
                packed = ctx_rows.insert(db, r["id"], (r["title"], r["content"], r["tags"], d.ctx))
                db.execute(
                    """INSERT INTO memory_index (memory_id, session_id, created_at, provider, text_hash, indexed_at,
                       doc) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(memory_id) DO UPDATE SET
                       session_id = excluded.session_id, created_at = excluded.created_at,
                       provider = excluded.provider, text_hash = excluded.text_hash,
                       indexed_at = excluded.indexed_at, doc = excluded.doc""",
                    (r["id"], r["session_id"], r["created_at"], self.provider, d.hash, read_at, packed))
            ctx_rows.drop(db, gone)
            for mid in gone:
                db.execute("DELETE FROM memory_index WHERE memory_id = ?", (mid,))
            for job in jobs or []:
                queue.finish(db, job)
        self._warm_apply(docs, vectors, gone)
        self._decide_flags(ids)
        return {"embedded": len(docs), "deleted": len(gone)}

    def _decide_flags(self, ids: list[int]) -> None:
        """The trust flags of the memories indexed, decided under the rules in force (store.decide_flags), read
        and marked under one write lock so that a row edited meanwhile is not marked. Bookkeeping: a busy
        database leaves them to the hook that injects them."""
        marks = ",".join("?" * len(ids))
        try:
            with Tx(self.db):
                store.decide_flags(self.db, self.db.execute(
                    f"SELECT id, title, content, origin, author, flags, checked FROM memories WHERE id IN ({marks})",
                    ids).fetchall())
        except sqlite3.OperationalError as exc:
            if not is_lock_error(exc):
                raise

    # -- the warm in-memory index -------------------------------------------------------------------

    def _warm_apply(self, docs: list[context.Document], vectors: list[list[float]], gone: list[int]) -> None:
        if not (docs or gone) or (self.warm is None and not self._warm_building):
            return
        from memory.recall.warm_index import Entry

        entries = [Entry(d.row["id"], d.row["type"], d.row["session_id"], float(d.row["created_at"]),
                         d.row["importance"], (d.row["title"], d.row["content"], d.row["tags"], d.ctx), v)
                   for d, v in zip(docs, vectors, strict=True)]
        with self._warm_lock:
            if self.warm is not None:
                self.warm.update(entries)
                self.warm.delete(gone)
                if self.warm.dead > max(10_000, self.warm.live) and not self._warm_building:
                    self._start_warm_build()  # re-indexed memories leave dead slots: start afresh
            if self._warm_building:
                self._warm_pending.append((entries, gone))

    def warm_up(self, wait: bool = False) -> None:
        """Build the in-memory index (in a thread) unless it is there, being built, off or failed; the
        worker's projects build it on their first search, others (benchmarks, tests) with wait=True."""
        from memory.base.config import env

        if (not self.warm_enabled and not wait) or env("MEMORY_WARM_INDEX").lower() in ("off", "0", "false", "no"):
            return
        with self._warm_lock:
            if self.warm is None and not self._warm_building and not self._warm_failed:
                self._start_warm_build()
            thread = self._warm_thread
        if wait and thread is not None:
            thread.join()

    def drop_lists(self) -> None:
        """Free the in-memory lists for good (the worker is going light): searches go to the stores."""
        with self._warm_lock:
            self.warm_enabled, self.warm = False, None

    def building_first_lists(self) -> bool:
        """The in-memory lists are being built and there are none yet: LanceDB's process is up for it."""
        return self.warm is None and self._warm_building

    def await_first_lists(self) -> None:
        """Wait for a first build under way that LanceDB's process reads for (the worker's): the model is
        loaded once that process has gone, not beside it (10,000 memories, MiniLM: ~60 + ~190 MiB RSS)."""
        thread = self._warm_thread
        if (isinstance(self.vectors, Staged) and self.building_first_lists() and thread is not None
                and thread is not threading.current_thread()):
            thread.join()

    def _start_warm_build(self) -> None:
        self._warm_building, self._warm_pending = True, []
        self._warm_thread = threading.Thread(target=self._build_warm, daemon=True, name=f"warm-{self.key[:12]}")
        self._warm_thread.start()

    def _build_warm(self) -> None:
        from memory.recall.hybrid import BM25_WEIGHTS
        from memory.recall.warm_index import WarmIndex

        t0 = time.perf_counter()
        try:
            warm = WarmIndex(self.embedder.dim, self.embedder.name == "hashing",
                             tuple(float(w) for w in BM25_WEIGHTS.split(",")))
            db = connect(os.path.join(self.dir, "memory.db"))
            try:
                ctx_rows.convert(db, pause=self.pause)  # the lists come from the ledger's copy: complete it
                db.execute("BEGIN DEFERRED")  # one snapshot of memories and memories_ctx; writers go on (WAL)
                warm.load(db, self.vectors.scan(), pause=self.pause)  # no clean-up deletes the version it reads
                db.execute("ROLLBACK")
            finally:
                db.close()
        except Exception as exc:  # noqa: BLE001 - searches keep using SQLite and LanceDB
            _log(f"{self.key}: warm index failed: {described(exc)}")
            with self._warm_lock:
                self._warm_building, self._warm_failed, self._warm_pending = False, True, []
            return
        if isinstance(self.vectors, Staged):
            # The lists answer from now on: LanceDB's process need not wait 20 s. Before they are published,
            # so that a search's query vector (the model's load) never comes while it is still up.
            self.vectors.release()
        trim_heap()  # the build's temporaries (per-term lists, Arrow batches): 10,000 memories, -40 MiB of RSS
        with self._warm_lock:
            for entries, gone in self._warm_pending:  # what index() did meanwhile, in order
                warm.update(entries)
                warm.delete(gone)
            self.warm, self._warm_building, self._warm_pending = warm, False, []
        _log(f"{self.key}: warm index of {warm.live} memories ({warm.nbytes() >> 20} MiB) built in "
             f"{time.perf_counter() - t0:.1f} s")
        self.query_vector("")  # the model, now that LanceDB's process is down: the first search does not wait

    def _embed(self, docs: list[context.Document]) -> list[list[float]]:
        """The stored vector of each document, under the project's window rule (memory/recall/context.py)."""
        if not docs:
            return []
        if self.window != "text":
            return self._embed_own(docs)
        texts: list[str] = []
        slots: dict[str, int] = {}
        for d in docs:
            for t in (d.own, d.window):
                if t not in slots:
                    slots[t] = len(texts)
                    texts.append(t)
        out = self.embedder.embed(texts)
        return [mix(out[slots[d.own]], None if d.window == d.own else out[slots[d.window]]) for d in docs]

    def _embed_own(self, docs: list[context.Document]) -> list[list[float]]:
        """Rules "mean" and "none": one forward pass per text, of the memory's own text; a "mean" window is
        the normalised sum of its members' own vectors, mixed half and half with the memory's own as "text"."""
        import numpy as np

        own = self._own_vectors([t for d in docs for t in (d.members if self.window == "mean" else [d.own])])
        out = []
        for d in docs:
            mine = own[d.own]
            if self.window == "none" or len(d.members) == 1:
                out.append(mine.tolist())
                continue
            window = np.sum([own[t] for t in d.members], axis=0)
            window /= max(float(np.linalg.norm(window)), 1e-12)
            out.append((0.5 * (mine + window)).tolist())
        return out

    def _own_vectors(self, texts: list[str]) -> dict[str, Any]:
        """text -> its own vector (float32), from those kept or embedded now, in one embed() call."""
        import numpy as np

        out: dict[str, Any] = {}
        keys = {t: hashlib.sha1(t.encode()).digest() for t in texts}
        for t, k in keys.items():
            if k in self._own:
                self._own.move_to_end(k)
                out[t] = self._own[k]
        todo = [t for t in keys if t not in out]
        for t, v in zip(todo, self.embedder.embed(todo) if todo else [], strict=True):
            out[t] = self._own[keys[t]] = np.asarray(v, dtype=np.float32)
        while len(self._own) > OWN_VECTORS:
            self._own.popitem(last=False)
        return out

    def waiting(self) -> int:
        """Vector writes held in the stage (memory/worker/stage.py), not yet in LanceDB."""
        return int(getattr(self.vectors, "waiting", 0))

    def maintain(self, force: bool = False, flush: bool = True) -> None:
        """After a burst of work (the queue is empty), or when old vector versions are due for their
        clean-up: the staged writes flushed, index and compaction upkeep (memory/recall/vectors.py).
        Without `flush`, nothing while writes are staged: the worker writes them when it goes light."""
        if self.waiting() and not flush:
            return
        if not self.changed and not force and not self.waiting() and not self.vectors.cleanup_due():
            return
        self.changed = False
        try:
            done = self.vectors.maintain(force=force)
        except Exception as exc:  # noqa: BLE001 - upkeep can wait for the next burst
            if is_index_damage(exc):
                raise  # found by the staged writes' flush: the caller rebuilds the store (recover_vectors)
            _log(f"{self.key}: vector upkeep failed: {described(exc)}")
            return
        if done and done != "optimized":
            _log(f"{self.key}: {done}")
        try:  # an open connection keeps the WAL file: empty it once a burst is over
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except Exception:  # noqa: BLE001 - busy: the next burst tries again
            pass
        # The burst's freed activations and replies stay in malloc's arenas otherwise (10,000 memories with
        # MiniLM, 64 memories indexed: 260 MiB after the burst, 215 once searches had reused some of it).
        trim_heap()

    # -- queries ------------------------------------------------------------------------------------

    def query_vector(self, text: str) -> list[float]:
        with self._cache_lock:
            hit = self._query_cache.get(text)
            if hit is not None:
                self._query_cache.move_to_end(text)
                return hit
        vec = self.embedder.embed_query(text)
        with self._cache_lock:
            self._query_cache[text] = vec
            while len(self._query_cache) > 256:
                self._query_cache.popitem(last=False)
        return vec

    def search(self, query: str, limit: int, filters: Filters) -> list[Scored]:
        from memory.recall.vectors import where_clause

        weights = Weights.from_env(self.embedder.name)
        warm = self.warm
        if warm is not None:  # both lists in memory: a few ms each, no thread hand-off needed
            return hybrid_search(self.reader(), query, limit=limit, filters=filters, weights=weights,
                                 vector_search=lambda q, k, f: warm.vector(self.query_vector(q), f, k),
                                 lexical=warm.keyword, info=warm.info)
        self.warm_up()

        def vector_search(q: str, k: int, f: Filters) -> dict[int, float]:
            where = where_clause(f.types, f.since, f.until, f.session_id)
            return dict(self.vectors.search(self.query_vector(q), k, where))

        return hybrid_search(self.reader(), query, limit=limit, filters=filters, vector_search=vector_search,
                             weights=weights, pool=self.pool)

