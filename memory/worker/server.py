"""The worker's unix socket: owner-only, in the data dir; answers pings, wake-ups and hybrid searches."""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from memory import store
from memory.base.worker_client import socket_path
from memory.recall.search import Filters
from memory.recall.vector_host import Host, VectorHostBusy
from memory.recall.vectors import is_index_damage
from memory.worker.heap import rss_bytes
from memory.worker.index import ProjectIndex
from memory.worker.priority import SearchFirst

# A search is hybrid once this share of the project's memories have current vectors; below, the worker
# answers that keyword results are due ("index 40% built") rather than fuse a list that misses most.
MIN_COVERAGE = 0.9


def filters_from(data: dict[str, Any] | None) -> Filters:
    data = data or {}
    return Filters(types=data.get("types") or None, since=data.get("since"), until=data.get("until"),
                   session_id=data.get("session_id"), exclude_session=data.get("exclude_session"),
                   include_expired=bool(data.get("include_expired")), as_of=data.get("as_of"))


class Server:
    """The socket side of the Worker (memory/worker/process.py): what it reads of the worker's state."""

    home: str
    projects: dict[str, ProjectIndex]
    to_load: set[str]
    to_recover: dict[str, BaseException]
    wake: threading.Event
    stopping: threading.Event
    last_activity: float
    server: socket.socket | None
    query_pool: ThreadPoolExecutor
    vector_host: Host
    first: SearchFirst
    _embedder: Any

    @property
    def embedder(self) -> Any:
        raise NotImplementedError


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
            with self.first.searching():  # indexing waits at its next step (memory/worker/priority.py)
                steps = self.first.steps
                out = self._search(req)
                if out.get("ok"):
                    out["index_steps"] = self.first.steps - steps  # steps of indexing it ran beside
                return out
        if op == "team_search":  # the team server's search, with this worker's warm embedder (memory/team)
            from memory.team.sync import search_for

            return search_for(self.home, str(req.get("project") or ""), str(req.get("query") or ""),
                              int(req.get("limit") or 10), self.embedder)
        return {"ok": False, "error": f"unknown op {op!r}"}

    def _search(self, req: dict[str, Any]) -> dict[str, Any]:
        """A hybrid search's answer: its hits, or why keyword recall is due, or "loading" (ask again)."""
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
        elif p.building_first_lists():
            # LanceDB's process is reading the lists out (a search through it would wait), and the model
            # is loaded after it has gone, not beside it: for these few seconds a hook answers with keyword
            # recall at once, and the CLI or the MCP tool asks again within its bounded wait.
            return {"ok": False, "error": "the in-memory lists are loading", "loading": True}
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
                out.update(hits=[h.as_dict() for h in hits], warm=p.warm is not None)
            except VectorHostBusy:
                out["keyword"] = "the vector store is busy indexing and its in-memory copy is loading"
            except Exception as exc:
                if not is_index_damage(exc):
                    raise
                self.to_recover[key] = exc  # the main thread rebuilds it (sqlite3 stays in its thread)
                self.wake.set()
                out["keyword"] = "the semantic index was damaged: the worker is rebuilding it from SQLite"
                return out
        return {**out, "ms": round((time.perf_counter() - t0) * 1000, 2),
                "cpu_ms": round((time.thread_time() - c0) * 1000, 2)}

    def state(self) -> dict[str, Any]:
        """What this process holds: `memory worker status` and the tests read it through the socket."""
        return {"model_loaded": self._embedder is not None and bool(getattr(self._embedder, "loaded", True)),
                "lancedb_loaded": "lancedb" in sys.modules or self.vector_host.pid is not None,
                "lancedb_in_worker": "lancedb" in sys.modules, "vector_process": self.vector_host.pid,
                "projects": {k: {"warm": p.warm is not None, "warm_memories": p.warm.live if p.warm else 0,
                                 "index_rate": round(p.rate.per_s, 2) if p.rate.per_s else None,
                                 "vectors_waiting": p.waiting()}
                             for k, p in list(self.projects.items())},
                "index_nice": getattr(self._embedder, "nice", lambda: None)(),
                "rss_bytes": rss_bytes(), "idle_seconds": round(time.monotonic() - self.last_activity, 1)}

    def _provider_key(self) -> str | None:
        from memory.recall import embed

        return embed.key(self._embedder) if self._embedder is not None else None

