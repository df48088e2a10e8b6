"""The background worker: `python -m memory.worker`. Cold side: may import base, store, capture, recall,
hook, outline, learn and team (their handle_job functions), never present, cli or mcp.

Started detached by a hook when there is queued work and no worker is alive (memory/base/worker_client.py);
one per data dir, through an exclusive flock on <home>/worker.lock. It drains every project's queue
(vector jobs: embed, upsert into LanceDB, index with neighbours in memories_ctx; other kinds through
their modules' handle_job), keeps the ANN index fresh, answers hybrid-search queries from hooks on a
unix socket (owner-only, in the data dir; no TCP port), and exits after MEMORY_WORKER_IDLE_SECONDS with
no jobs and no queries.

Idle footprint: after MEMORY_WORKER_RELEASE_SECONDS with nothing to do, the worker lets go of the model, the
projects' in-memory lists and LanceDB: it re-executes itself (same pid, same lock) as a light process that
only holds the lock and the socket (~20 MiB against 190-230 MiB warm with MiniLM on numpy at 10,000
memories; torch ~400 MiB more, and a freed model leaves its libraries mapped), and loads them again when a job
or a query comes. A worker run in another process's interpreter (tests, `memory worker run`) frees them in place.
LanceDB is never imported here: its reads and writes run in a child process that exits once they stop
(memory/recall/vector_host.py; lancedb and pyarrow held ~160 MiB of the worker's 352 MiB).

Crash safety: a batch is embedded, written to LanceDB in one commit (idempotent upserts and deletes), then
its memories_ctx rows, its ledger rows (memory_index) and the jobs' `done` commit in one SQLite
transaction. A worker killed anywhere leaves jobs `running`; the next worker holds the lock, so it knows
their owner is dead and puts them back to pending, and redoing them gives the same state. A sweep at
start compares the ledger with the memories table, so even a job that never got queued is not lost.
"""

from __future__ import annotations

import fcntl
import gc
import hashlib
import importlib
import importlib.util
import json
import os
import socket
import sys
import threading
import time
import traceback
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from memory import store
from memory.base.config import data_home, env_int
from memory.base.log import described, filtered
from memory.base.progress import Rate
from memory.base.project import Project
from memory.base.worker_client import failed_path, lock_path, socket_path
from memory.recall import context
from memory.recall.hybrid import Scored, Weights
from memory.recall.hybrid import search as hybrid_search
from memory.recall.search import Filters
from memory.recall.vector_host import Host
from memory.recall.vectors import is_index_damage
from memory.store import queue
from memory.store.db import Tx, connect
from memory.store.workspace import Workspace

BATCH = 32
# Other kinds of jobs in the same queue and where their handlers live: handle_job(ws, payload) -> dict.
# A kind whose module is not there (yet) stays pending for a worker that has it.
HANDLERS = {
    "index_markdown": "memory.capture.mdindex:handle_job",
    "evict": "memory.worker:evict_job",
    "extract": "memory.learn.job:handle_job",
    "team_sync": "memory.team.job:handle_job",
    "repo_map": "memory.outline.mapbuild:handle_job",
}
MAX_ATTEMPTS = 3
SWEEP_EVERY_S = 300
META_PROVIDER = "vectors:provider"
# A search is hybrid once this share of the project's memories have current vectors; below, the worker
# answers that keyword results are due ("index 40% built") rather than fuse a list that misses most.
MIN_COVERAGE = 0.9
# Own vectors kept per project for the "mean" window rule, by their text's hash: a window's members were
# mostly embedded by the batch before (a session's memories come in order), so neighbours cost no forward
# pass. 1,024 x 384 float32: 1.5 MiB.
OWN_VECTORS = 1024


def _log(message: str) -> None:
    """One line of logs/worker.log (the worker's stderr), through the privacy filter like every write (then
    cut, long enough for a traceback)."""
    text = filtered(message, 16_000)
    sys.stderr.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} worker pid={os.getpid()} {text}\n")
    sys.stderr.flush()


def evict_job(ws: Workspace, payload: dict[str, Any]) -> dict[str, Any]:
    """An `evict` job, with the vector store's delete that memory/store/evict.py (hot) cannot import."""
    from memory.recall import vectors
    from memory.store import evict

    return evict.handle_job(ws, payload, vectors.delete)


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

            self.vectors: Any = RemoteStore(host, self.dir, self.provider, embedder.dim)
        else:
            from memory.recall import vectors

            try:
                self.vectors = vectors.VectorStore(self.dir, self.provider, embedder.dim)
            except vectors.IndexDamaged as exc:
                self._set_aside(exc)
                self.vectors = vectors.VectorStore(self.dir, self.provider, embedder.dim)
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

    def close(self) -> None:
        """Let go of the in-memory lists, the thread pool, the LanceDB table and the database."""
        with self._warm_lock:
            self.warm, self._warm_pending = None, []
        with self._cache_lock:
            self._query_cache.clear()
        self.pool.shutdown(wait=False)
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
            self.db.execute("DELETE FROM memory_index")
            self.db.execute("DELETE FROM memories_ctx")
            self.db.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET "
                            "value = excluded.value", (META_PROVIDER, self.provider))
        dropped = self.vectors.drop_other_tables()
        self.vectors.reset()
        with self._warm_lock:
            self.warm, self._warm_pending = None, []
        _log(f"{self.key}: vectors reset for {self.provider} (dropped {dropped or 'nothing'})")
        return True

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
        vectors = self._embed(docs)
        self.vectors.upsert([
            {"id": d.row["id"], "vector": v, "type": d.row["type"], "session_id": d.row["session_id"],
             "created_at": float(d.row["created_at"]), "expires_at": d.row["expires_at"]}
            for d, v in zip(docs, vectors, strict=True)])
        self.vectors.delete(gone)
        self.changed = self.changed or bool(docs or gone)
        with Tx(db):
            for d in docs:
                r = d.row
                db.execute("DELETE FROM memories_ctx WHERE rowid = ?", (r["id"],))
                db.execute("INSERT INTO memories_ctx (rowid, title, content, tags, ctx) VALUES (?, ?, ?, ?, ?)",
                           (r["id"], r["title"], r["content"], r["tags"], d.ctx))
                db.execute(
                    """INSERT INTO memory_index (memory_id, session_id, created_at, provider, text_hash, indexed_at)
                       VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(memory_id) DO UPDATE SET session_id = excluded.session_id,
                       created_at = excluded.created_at, provider = excluded.provider,
                       text_hash = excluded.text_hash, indexed_at = excluded.indexed_at""",
                    (r["id"], r["session_id"], r["created_at"], self.provider, d.hash, read_at))
            for mid in gone:
                db.execute("DELETE FROM memories_ctx WHERE rowid = ?", (mid,))
                db.execute("DELETE FROM memory_index WHERE memory_id = ?", (mid,))
            for job in jobs or []:
                queue.finish(db, job)
        self._warm_apply(docs, vectors, gone)
        return {"embedded": len(docs), "deleted": len(gone)}

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
                db.execute("BEGIN DEFERRED")  # one snapshot of memories and memories_ctx; writers go on (WAL)
                warm.load(db, self.vectors.scan())  # no clean-up deletes the version it reads
                db.execute("ROLLBACK")
            finally:
                db.close()
        except Exception as exc:  # noqa: BLE001 - searches keep using SQLite and LanceDB
            _log(f"{self.key}: warm index failed: {described(exc)}")
            with self._warm_lock:
                self._warm_building, self._warm_failed, self._warm_pending = False, True, []
            return
        with self._warm_lock:
            for entries, gone in self._warm_pending:  # what index() did meanwhile, in order
                warm.update(entries)
                warm.delete(gone)
            self.warm, self._warm_building, self._warm_pending = warm, False, []
        trim_heap()  # the build's temporaries (per-term lists, Arrow batches): 10,000 memories, -40 MiB of RSS
        _log(f"{self.key}: warm index of {warm.live} memories ({warm.nbytes() >> 20} MiB) built in "
             f"{time.perf_counter() - t0:.1f} s")

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

    def maintain(self, force: bool = False) -> None:
        """After a burst of work (the queue is empty), or when old vector versions are due for their
        clean-up: index and compaction upkeep (memory/recall/vectors.py)."""
        if not self.changed and not force and not self.vectors.cleanup_due():
            return
        self.changed = False
        try:
            done = self.vectors.maintain(force=force)
        except Exception as exc:  # noqa: BLE001 - upkeep can wait for the next burst
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


def filters_from(data: dict[str, Any] | None) -> Filters:
    data = data or {}
    return Filters(types=data.get("types") or None, since=data.get("since"), until=data.get("until"),
                   session_id=data.get("session_id"), exclude_session=data.get("exclude_session"),
                   include_expired=bool(data.get("include_expired")), as_of=data.get("as_of"))


class Worker:
    def __init__(self, home: str | None = None, embedder: Any = None) -> None:
        self.home = home or data_home()
        self._embedder = embedder
        self.projects: dict[str, ProjectIndex] = {}
        self.lock_fd: int | None = None
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self.last_activity = time.monotonic()
        self.server: socket.socket | None = None
        self._projects_lock = threading.Lock()
        self.to_load: set[str] = set()
        self.to_recover: dict[str, BaseException] = {}  # projects whose vector store was found damaged
        # Re-executing a light process to shed the heavy imports: only for `python -m memory.worker`,
        # never inside another program's interpreter.
        self.can_exec = False
        self.light = False  # started by such a re-execution: nothing heavy loaded yet
        # Queries are answered by a fixed set of threads, so each keeps its SQLite connections.
        self.query_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="query")
        # LanceDB lives in a child process that comes and goes with the writes (memory/recall/vector_host.py).
        self.vector_host = Host()

    # -- lifecycle ----------------------------------------------------------------------------------

    @staticmethod
    def _usable_tmpdir() -> None:
        """LanceDB (Rust) writes temporary files under TMPDIR as given: one that does not exist fails every
        upsert. Python's tempfile checks its candidates, so its choice replaces a broken TMPDIR."""
        configured = os.environ.get("TMPDIR")
        if configured and not os.path.isdir(configured):
            import tempfile

            os.environ["TMPDIR"] = tempfile.gettempdir()

    def acquire(self, attempts: int = 10) -> bool:
        os.makedirs(self.home, mode=0o700, exist_ok=True)
        fd = os.open(lock_path(self.home), os.O_RDWR | os.O_CREAT, 0o600)
        for _ in range(attempts):  # a hook's liveness probe holds the lock for microseconds
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                time.sleep(0.05)
        else:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self.lock_fd = fd
        return True

    @property
    def embedder(self) -> Any:
        if self._embedder is None:
            from memory.recall import embed

            self._embedder = embed.Background(embed.choose())  # indexing at low priority, searches not
            _log(f"embedder {embed.key(self._embedder)}")
        return self._embedder

    def project(self, key: str) -> ProjectIndex | None:
        with self._projects_lock:
            p = self.projects.get(key)
            if p is None:
                if not os.path.exists(os.path.join(self.home, "projects", key, "memory.db")):
                    return None
                p = ProjectIndex(self.home, key, self.embedder, self.vector_host)
                p.check_provider()
                p.warm_enabled = True  # a long-lived process: worth the in-memory copy
                self.projects[key] = p
                queue.release_running(p.db)  # we hold the lock: whoever claimed these is dead
                p.sweep()
            return p

    def all_keys(self) -> list[str]:
        base = os.path.join(self.home, "projects")
        try:
            return sorted(k for k in os.listdir(base) if os.path.exists(os.path.join(base, k, "memory.db")))
        except OSError:
            return []

    def dirty_keys(self) -> list[str]:
        folder = os.path.join(self.home, "dirty")
        try:
            keys = os.listdir(folder)
        except OSError:
            return []
        for k in keys:  # cleared before the drain: work queued during it marks the project again
            try:
                os.unlink(os.path.join(folder, k))
            except OSError:
                pass
        return keys

    # -- jobs ---------------------------------------------------------------------------------------

    def drain(self, p: ProjectIndex) -> int:
        done = 0
        while not self.stopping.is_set():
            jobs = queue.claim_batch(p.db, "vector", BATCH)
            if jobs:
                ids = [int(json.loads(j["payload"]).get("id", 0)) for j in jobs]
                t0 = time.perf_counter()
                try:
                    p.index(ids, [j["id"] for j in jobs])
                    p.rate.add(len(jobs), time.perf_counter() - t0)
                except Exception as exc:  # noqa: BLE001 - one bad batch must not stop the worker
                    if is_index_damage(exc):
                        for j in jobs:
                            queue.finish(p.db, j["id"], error="the vector store was damaged", retry_in=0.0)
                        p.recover_vectors(exc)
                        continue
                    _log(f"{p.key}: vector batch failed: {described(exc)}\n{traceback.format_exc()}")
                    for j in jobs:
                        retry = 30.0 * j["attempts"] if j["attempts"] < MAX_ATTEMPTS else None
                        queue.finish(p.db, j["id"], error=described(exc), retry_in=retry)
                    return done  # failures are not activity: a worker that only fails still goes idle
                done += len(jobs)
                self.last_activity = time.monotonic()
                continue
            job = queue.claim(p.db, kinds=self.other_kinds())
            if job is None:
                break
            self.run_other(p, job)
            done += 1
            self.last_activity = time.monotonic()
        return done

    _available: tuple[str, ...] | None = None

    def other_kinds(self) -> tuple[str, ...]:
        if self._available is None:
            kinds = []
            for kind, target in HANDLERS.items():
                module, _, _name = target.partition(":")
                try:
                    if importlib.util.find_spec(module) is not None:
                        kinds.append(kind)
                except (ImportError, ValueError):
                    continue
            kinds.append("delete_vectors")
            self._available = tuple(kinds)
        return self._available

    def run_other(self, p: ProjectIndex, job: Any) -> None:
        payload = json.loads(job["payload"] or "{}")
        try:
            if job["kind"] == "delete_vectors":
                p.index([int(i) for i in payload.get("ids", [])])
                result: Any = "ok"
            else:
                module, _, name = HANDLERS[job["kind"]].partition(":")
                handler = getattr(importlib.import_module(module), name)
                ws = p.workspace()
                try:
                    result = handler(ws, payload)
                finally:
                    ws.close()
            queue.finish(p.db, job["id"])
            _log(f"{p.key}: {job['kind']} job {job['id']} done: {result}")
        except Exception as exc:  # noqa: BLE001
            retry = 60.0 * job["attempts"] if job["attempts"] < MAX_ATTEMPTS else None
            queue.finish(p.db, job["id"], error=described(exc), retry_in=retry)
            _log(f"{p.key}: {job['kind']} job {job['id']} failed: {described(exc)}")

    # -- the socket ---------------------------------------------------------------------------------

    def serve(self) -> None:
        path = socket_path(self.home)
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        try:
            os.unlink(path)  # a stale socket of a dead worker (we hold the lock)
        except FileNotFoundError:
            pass
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)  # the socket file is created 0600: only its owner may connect
        try:
            srv.bind(path)
        finally:
            os.umask(old)
        os.chmod(path, 0o600)
        srv.listen(16)
        srv.settimeout(0.5)
        self.server = srv
        threading.Thread(target=self._accept, daemon=True, name="accept").start()

    def _accept(self) -> None:
        assert self.server is not None
        while not self.stopping.is_set():
            try:
                conn, _ = self.server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.query_pool.submit(self._handle, conn)

    def _handle(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(5)
            data = b""
            while not data.endswith(b"\n") and len(data) < 1_000_000:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
            answer = self.answer(json.loads(data or b"{}"))
            conn.sendall(json.dumps(answer).encode() + b"\n")
        except Exception as exc:  # noqa: BLE001 - a bad request must not take the worker down
            try:
                conn.sendall(json.dumps({"ok": False, "error": repr(exc)}).encode() + b"\n")
            except OSError:
                pass
        finally:
            conn.close()

    def answer(self, req: dict[str, Any]) -> dict[str, Any]:
        op = req.get("op")
        if op == "ping":  # a status probe is not use: it must not keep the model loaded or the worker alive
            return {"ok": True, "pid": os.getpid(), "provider": self._provider_key(), "home": self.home,
                    **self.state()}
        self.last_activity = time.monotonic()
        if op == "wake":
            self.wake.set()
            return {"ok": True}
        if op == "shutdown":
            self.stopping.set()
            self.wake.set()
            return {"ok": True, "pid": os.getpid()}
        if op == "search":
            t0, c0 = time.perf_counter(), time.thread_time()
            key = str(req.get("project") or "")
            p = self.projects.get(key)
            if p is None:
                # Loading a project opens its database: the main thread's job (sqlite3 connections stay in
                # their thread). This query gets no answer (the hook uses keyword recall); the next one will.
                self.to_load.add(key)
                self.wake.set()
                return {"ok": False, "error": "project not loaded yet", "loading": True}
            indexed, total = store.vector_coverage(p.reader())
            out: dict[str, Any] = {"ok": True, "provider": p.provider, "indexed": indexed, "total": total}
            if indexed < MIN_COVERAGE * total:
                # Memories without a vector would rank on their keyword score alone, below the others.
                out["keyword"] = f"index {100 * indexed // total}% built"
            elif p.warm is None and not self.vector_host.ready:
                # Before the in-memory lists, a search goes through the vector process, whose start costs
                # ~2 CPU-s of imports: more than a query waits. Start it (the lists' build, or a count) and
                # say so: a hook answers with keyword recall, the CLI asks again within its bounded wait.
                p.warm_up()
                self.vector_host.start_soon(p.vectors.count)
                return {"ok": False, "error": "vector process starting", "loading": True}
            else:
                try:
                    hits = p.search(str(req.get("query") or ""), int(req.get("limit") or 10),
                                    filters_from(req.get("filters")))
                except Exception as exc:
                    if not is_index_damage(exc):
                        raise
                    self.to_recover[key] = exc  # the main thread rebuilds it (sqlite3 stays in its thread)
                    self.wake.set()
                    out["keyword"] = "the semantic index was damaged: the worker is rebuilding it from SQLite"
                    return out
                out.update(hits=[h.as_dict() for h in hits], warm=p.warm is not None)
            return {**out, "ms": round((time.perf_counter() - t0) * 1000, 2),
                    "cpu_ms": round((time.thread_time() - c0) * 1000, 2)}
        if op == "team_search":  # the team server's search, with this worker's warm embedder (memory/team)
            from memory.team.sync import search_for

            return search_for(self.home, str(req.get("project") or ""), str(req.get("query") or ""),
                              int(req.get("limit") or 10), self.embedder)
        return {"ok": False, "error": f"unknown op {op!r}"}

    def state(self) -> dict[str, Any]:
        """What this process holds: `memory worker status` and the tests read it through the socket."""
        return {"model_loaded": self._embedder is not None,
                "lancedb_loaded": "lancedb" in sys.modules or self.vector_host.pid is not None,
                "lancedb_in_worker": "lancedb" in sys.modules, "vector_process": self.vector_host.pid,
                "projects": {k: {"warm": p.warm is not None, "warm_memories": p.warm.live if p.warm else 0,
                                 "index_rate": round(p.rate.per_s, 2) if p.rate.per_s else None}
                             for k, p in list(self.projects.items())},
                "index_nice": getattr(self._embedder, "nice", lambda: None)(),
                "rss_bytes": rss_bytes(), "idle_seconds": round(time.monotonic() - self.last_activity, 1)}

    def _provider_key(self) -> str | None:
        from memory.recall import embed

        return embed.key(self._embedder) if self._embedder is not None else None

    # -- main loop ----------------------------------------------------------------------------------

    def run(self, idle_seconds: float | None = None) -> int:
        if not self._inherit() and not self.acquire():
            return 0  # another worker is alive: it will do the work
        self._usable_tmpdir()
        idle = float(idle_seconds if idle_seconds is not None else env_int("MEMORY_WORKER_IDLE_SECONDS"))
        release = float(env_int("MEMORY_WORKER_RELEASE_SECONDS"))
        try:
            if self.light:
                self.serve()  # ping answers; a search is told "not loaded yet" and wakes the loading
                if not self._wait_for_work(idle):
                    _log("idle: exiting")
                    return 0
            try:
                for module in ("lancedb", "pyarrow"):  # imported by the vector process only, when it starts
                    if importlib.util.find_spec(module) is None:  # a stdlib-only venv cannot run a worker
                        raise ImportError(f"No module named {module!r}", name=module)
                self.embedder  # noqa: B018 - load the model before serving: queries must find it warm
            except Exception as exc:
                # Hooks read this and stop starting workers from this interpreter for a while.
                self._failed(exc)
                _log(f"cannot run: {described(exc)}")
                return 1
            if not self.light:
                self.serve()
                self.last_activity = time.monotonic()  # the idle clock starts once it can serve
                _log(f"started (home {self.home}, idle exit after {idle:.0f} s)")
            else:
                _log(f"loaded again ({self._provider_key()}, {rss_bytes() >> 20} MiB)")
            pending = self.all_keys()  # everything once: markers may have been lost with a crash
            while not self.stopping.is_set():
                if not os.path.isdir(os.path.join(self.home, "projects")) and not os.path.isdir(self.home):
                    _log("data dir gone: exiting")
                    break
                # Loaded projects are polled too (one indexed query each): a dirty marker can be consumed
                # before the hook that wrote it has committed its jobs.
                for key, exc in list(self.to_recover.items()):
                    self.to_recover.pop(key, None)
                    if key in self.projects:
                        self.projects[key].recover_vectors(exc)
                keys = list(dict.fromkeys([*pending, *self.dirty_keys(), *self.projects, *self.to_load]))
                self.to_load.clear()
                pending = []
                worked = 0
                for key in keys:
                    p = self.project(key)
                    if p is not None:
                        worked += self.drain(p)
                for p in list(self.projects.values()):
                    if time.time() - p.last_sweep > SWEEP_EVERY_S and p.sweep():
                        pending.append(p.key)
                if worked or pending:
                    continue
                for p in list(self.projects.values()):
                    try:
                        p.maintain()
                    except Exception as exc:
                        if not is_index_damage(exc):
                            raise
                        p.recover_vectors(exc)
                if self.vector_host.release_if_quiet():
                    trim_heap()  # the replies' buffers (a warm build's scan: 12 MiB a message)
                if time.monotonic() - self.last_activity > idle:
                    _log("idle: exiting")
                    break
                if 0 < release < idle and time.monotonic() - self.last_activity > release and self._heavy():
                    self.shed()
                self.wake.wait(timeout=min(1.0, max(0.05, idle)))
                self.wake.clear()
        finally:
            self.close()
        return 0

    # -- the idle footprint ---------------------------------------------------------------------------

    def _heavy(self) -> bool:
        return self._embedder is not None or bool(self.projects)

    def shed(self) -> None:
        """Idle for MEMORY_WORKER_RELEASE_SECONDS: free the model, the in-memory lists and (by re-executing
        a light process) the heavy imports. A warm list still being built is left to finish first."""
        if any(p._warm_building for p in list(self.projects.values())):
            return
        before = rss_bytes()
        self.vector_host.stop()
        if self.can_exec and self.lock_fd is not None:
            self._reexec(before)
        with self._projects_lock:
            projects, self.projects = self.projects, {}
        for p in projects.values():
            p.close()
        if (close := getattr(self._embedder, "close", None)) is not None:
            close()  # the indexing thread
        self._embedder = None
        gc.collect()
        trim_heap()
        _log(f"idle: model and in-memory lists freed ({before >> 20} -> {rss_bytes() >> 20} MiB)")

    def _reexec(self, before: int) -> None:
        """Become `python -m memory.worker` again, keeping the pid, the lock (an inherited descriptor) and
        the idle clock; returns only if the exec failed (then the caller frees in place)."""
        assert self.lock_fd is not None
        environ = dict(os.environ)
        environ["MEMORY_WORKER_LOCK_FD"] = str(self.lock_fd)
        environ["MEMORY_WORKER_IDLE_SINCE"] = str(time.time() - (time.monotonic() - self.last_activity))
        _log(f"idle: re-executing light to free the model, lists and libraries ({before >> 20} MiB)")
        try:
            os.set_inheritable(self.lock_fd, True)
            if self.server is not None:  # the new process binds the socket again (hooks fall back meanwhile)
                self.server.close()
            os.execve(sys.executable, [sys.executable, "-m", "memory.worker"], environ)
        except OSError as exc:
            os.set_inheritable(self.lock_fd, False)
            self.server = None
            _log(f"re-exec failed: {described(exc)}")
            self.serve()

    def _inherit(self) -> bool:
        """A process re-executed by shed(): adopt the lock and the idle clock, start light."""
        fd = os.environ.pop("MEMORY_WORKER_LOCK_FD", "")
        since = os.environ.pop("MEMORY_WORKER_IDLE_SINCE", "")
        if not fd.isdigit():
            return False
        self.lock_fd = int(fd)
        os.set_inheritable(self.lock_fd, False)
        self.light = True
        try:
            self.last_activity = time.monotonic() - max(0.0, time.time() - float(since))
        except ValueError:
            pass
        _log(f"light: holding the lock and the socket ({rss_bytes() >> 20} MiB)")
        return True

    def _wait_for_work(self, idle: float) -> bool:
        """Light: sleep until a hook wakes us (new work, a search) or a project is marked dirty; False when
        the idle time is over first."""
        dirty = os.path.join(self.home, "dirty")
        while not self.stopping.is_set():
            if self.wake.wait(timeout=1.0):
                self.wake.clear()
                return not self.stopping.is_set()
            try:
                if os.listdir(dirty):
                    return True
            except OSError:
                pass
            if time.monotonic() - self.last_activity > idle:
                return False
        return False

    def _failed(self, exc: BaseException) -> None:
        from memory.store.workspace import write_private

        write_private(failed_path(self.home), json.dumps({"python": sys.executable, "at": time.time(),
                                                          "error": filtered(described(exc), 500)}))

    def close(self) -> None:
        self.stopping.set()
        if self.server is not None:
            try:
                os.unlink(socket_path(self.home))
            except OSError:
                pass
            self.server.close()
        self.query_pool.shutdown(wait=False, cancel_futures=True)
        for p in self.projects.values():
            p.close()
        self.vector_host.stop()
        if self.lock_fd is not None:
            os.close(self.lock_fd)
            self.lock_fd = None


def rss_bytes() -> int:
    """This process's resident set (VmRSS), 0 where /proc is not there."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def few_arenas(n: int = 1) -> None:
    """At most `n` glibc malloc arenas (default: 8 per core), before any thread starts: the query and vector
    threads and LanceDB's runtime each took one, and freed memory stays in them (10,000 memories with
    MiniLM: 370 MiB warm after malloc_trim, 330 MiB with two arenas). One: a forward pass in the embedding
    thread left 49 MiB after malloc_trim in a second arena, 28 in the main one (the threads' allocations
    are numpy's large arrays and Python's over 512 bytes, under the GIL: little to contend for). Not glibc:
    nothing to do."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").mallopt(-8, n)  # M_ARENA_MAX
    except (OSError, AttributeError):
        pass


def trim_heap() -> None:
    """Hand freed heap back to the system: glibc keeps it in its arenas otherwise (a freed MiniLM on numpy:
    RSS 346 MiB loaded, 264 MiB after del and gc, 193 MiB after malloc_trim). Not glibc: nothing to do."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def main() -> int:
    # One BLAS thread: a dense model's 100,000 x 384 similarity took 12 ms on one thread and 135 ms on two
    # contending with a busy machine's other work; the worker is a background process.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    few_arenas()
    os.umask(0o077)  # LanceDB's folders and files in the data dir: owner-only
    w = Worker()
    w.can_exec = True
    return w.run()


if __name__ == "__main__":
    sys.exit(main())
