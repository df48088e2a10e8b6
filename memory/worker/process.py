"""The worker process: its lock, projects, main loop, idle re-exec to a light process, and `main()`."""

from __future__ import annotations

import fcntl
import gc
import importlib.util
import json
import os
import signal
import socket
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from memory.base.config import data_home, env_int
from memory.base.log import described, filtered
from memory.base.worker_client import failed_path, lock_path, socket_path, stop_path
from memory.recall.vector_host import Host
from memory.recall.vectors import is_index_damage
from memory.store import queue
from memory.worker import jobs
from memory.worker.heap import few_arenas, rss_bytes, trim_heap
from memory.worker.index import ProjectIndex
from memory.worker.log import log as _log
from memory.worker.priority import SearchFirst
from memory.worker.server import Server
from memory.worker.stage import FLUSH_ROWS

SWEEP_EVERY_S = 300


class Worker(Server):
    """One per data dir (an exclusive flock): drains every project's queue and answers on the socket."""

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
        self.first = SearchFirst()  # searches before indexing (memory/worker/priority.py)

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
            self._embedder.pause = self.first.pause
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
                p.pause = self.first.pause
                p.convert_ctx()  # a pre-m014 store's rows, here rather than in a hook's migration
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

    def drain(self, p: ProjectIndex) -> int:
        """The project's jobs, until its queue is empty or another project asks to be loaded (a search for it)."""
        return jobs.drain(p, lambda: not self.stopping.is_set() and not self.to_load, self._worked)

    def _worked(self) -> None:
        self.last_activity = time.monotonic()

    # -- main loop ----------------------------------------------------------------------------------

    def run(self, idle_seconds: float | None = None) -> int:
        if not self._inherit() and not self.acquire():
            return 0  # another worker is alive: it will do the work
        self._usable_tmpdir()
        idle = float(idle_seconds if idle_seconds is not None else env_int("MEMORY_WORKER_IDLE_SECONDS"))
        release = float(env_int("MEMORY_WORKER_RELEASE_SECONDS"))
        try:
            if not self.light and self._stop_requested():
                _log("a stop was asked for after this worker was spawned: exiting")
                return 0
            if self.can_exec:
                _check_fast_path()  # under the lock: `memory worker stop` sees (and stops) a worker doing this
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
                for key, damage in list(self.to_recover.items()):
                    self.to_recover.pop(key, None)
                    if key in self.projects:
                        self.projects[key].recover_vectors(damage)
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
                # Staged vector writes wait for the worker to go light (LanceDB's process stays down while it
                # serves), unless it never does or a backlog has built up (memory/worker/stage.py).
                goes_light = 0 < release < idle
                for p in list(self.projects.values()):
                    try:
                        p.maintain(flush=not goes_light or p.waiting() >= FLUSH_ROWS)
                    except Exception as exc:
                        if not is_index_damage(exc):
                            raise
                        p.recover_vectors(exc)
                        self._worked()  # it queued every memory again: work, not idle time
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

    def flush(self) -> None:
        """Every project's staged vector writes into LanceDB, and its upkeep (going light, stopping); a
        failure leaves them staged for the next worker."""
        for p in list(self.projects.values()):
            if p.waiting():
                try:
                    p.maintain()
                except Exception as exc:
                    if not is_index_damage(exc):
                        raise
                    p.recover_vectors(exc)  # the next worker embeds everything again

    def _heavy(self) -> bool:
        return self._embedder is not None or bool(self.projects)

    def shed(self) -> None:
        """Idle for MEMORY_WORKER_RELEASE_SECONDS: free the model, the in-memory lists and (by re-executing
        a light process) the heavy imports. A warm list still being built is left to finish first."""
        if any(p._warm_building for p in list(self.projects.values())):
            return
        before = rss_bytes()
        self._drop_for_flush()
        self.flush()
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

    def _drop_for_flush(self) -> None:
        """Before the flush starts LanceDB's process: free the model and the in-memory lists, which the
        light process does not keep either, so that the two are not in memory at once (10,000 memories
        with MiniLM: ~100 MiB of the worker's ~160). A search meanwhile answers from SQLite and keywords."""
        for p in list(self.projects.values()):
            p.drop_lists()
        if (unload := getattr(self._embedder, "unload", None)) is not None:
            unload()
        gc.collect()
        trim_heap()

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

    def _stop_requested(self) -> bool:
        """`memory worker stop` ran between this worker's spawn and its taking the lock, when the stop could
        not see it (it looks for the lock's holder): worker.stop holds the stop's time."""
        spawned = os.environ.pop("MEMORY_WORKER_SPAWNED", "")
        try:
            with open(stop_path(self.home), encoding="utf-8") as fh:
                return float(fh.read()) >= float(spawned)
        except (OSError, ValueError):
            return False

    def on_sigterm(self, signum: int, frame: Any) -> None:
        """SIGTERM (`memory worker stop` when the socket does not answer yet): stop at the loop's next step.
        Before it serves (loading the model) it has claimed no job, so it exits at once."""
        self.stopping.set()
        self.wake.set()
        if self.server is None:
            raise SystemExit(0)

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
        self.flush()
        for p in self.projects.values():
            p.close()
        self.vector_host.stop()
        if self.lock_fd is not None:
            try:
                os.ftruncate(self.lock_fd, 0)  # no pid left behind for a later stop to signal
            except OSError:
                pass
            os.close(self.lock_fd)
            self.lock_fd = None



def _check_fast_path() -> None:
    """The hooks' fast path checked against the standard library on this Python, when no current verdict is kept
    (memory/fastpath/check.py): a part that fails runs the standard library in every later hook."""
    try:
        from memory.fastpath import check

        check.ensure()
    except Exception as exc:  # noqa: BLE001 - the check must never keep the worker from starting
        _log(f"fast path check failed: {described(exc)}")


def main() -> int:
    # One BLAS thread: a dense model's 100,000 x 384 similarity took 12 ms on one thread and 135 ms on two
    # contending with a busy machine's other work; the worker is a background process.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    few_arenas()
    os.umask(0o077)  # LanceDB's folders and files in the data dir: owner-only
    w = Worker()
    w.can_exec = True
    signal.signal(signal.SIGTERM, w.on_sigterm)
    try:
        return w.run()
    except SystemExit:  # on_sigterm's, before it served
        _log("SIGTERM before it served: exiting")
        raise


if __name__ == "__main__":
    sys.exit(main())
