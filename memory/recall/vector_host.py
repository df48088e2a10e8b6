"""The worker's vector store in a child process: `python -m memory.recall.vector_host` holds LanceDB while
the worker writes (a burst of indexing, the upkeep after it) or reads it (the warm lists' build, searches
before they are ready), and exits once nothing has used it for MEMORY_VECTOR_PROCESS_SECONDS.

Why: lancedb and pyarrow were the largest part of a warm worker's memory. At 10,000 memories with MiniLM
on numpy (2026-11-24): their import 98 MiB of RSS (47 of it anonymous: 637 Python modules, pydantic models
among them; 61 MiB of the 185 MB Rust library resident), LanceDB's first IVF search 64 MiB more, of a
352 MiB worker. The warm worker answers searches from its in-memory lists (memory/recall/warm_index.py),
which hold every vector already, so between bursts it needs none of that. Cold side: imports
memory.recall.vectors in the child only; the worker side imports the standard library.

Protocol: pickled (op, args) over the child's stdin and (status, value, cleanup due) back over a
descriptor that was its stdout (its fd 1 then points at stderr, so a library's print cannot corrupt
the stream). A store is named in every call by (project dir, provider key, dim), so a child started
again after a quiet spell opens it again itself. The child exits at EOF: a worker that dies takes it along.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from typing import Any

# A child nobody has called for MEMORY_VECTOR_PROCESS_SECONDS (20) is stopped by the worker's idle loop
# (release_if_quiet). Starting one costs ~2 CPU-s (the imports); a burst's batches come every few seconds at
# most, so 20 s spans them.
# Rows per message of a scan: 384 KiB of float32 at 384 dimensions, 1 MiB at 1,024. The worker's peak while
# it builds its lists from 10,000 memories: 94 MiB of RSS with 256, 111 with 2,048 (each message's buffer
# and its arrays are left in malloc's heap); the child's is the same (2026-12-07).
SCAN_ROWS = 256
# How long a search waits for the child while another call (a batch's write, a scan) has it: a search is
# answered within the hooks' 40 ms (MEMORY_WORKER_TIMEOUT_MS), by keyword recall if need be.
SEARCH_WAIT_S = 0.02


class VectorHostError(RuntimeError):
    """The child failed an operation (its message), or is gone."""


class VectorHostBusy(VectorHostError):
    """The child was busy with another call for longer than the caller would wait."""


class Host:
    """One child process, shared by every project of a worker; calls from any thread, one at a time."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._out: Connection | None = None
        self._in: Connection | None = None
        self._lock = threading.Lock()
        self.used = 0.0  # monotonic time of the last call
        self.scans = 0  # open scans: the child is not stopped under them
        self.started = 0  # children started so far (benchmarks and tests read it)
        self.ready = False  # the child has answered a call: the next one pays no imports
        self._probing = False
        # Each store's next clean-up (VectorStore._cleanup_due): the child stays up for one due soon.
        self.dues: dict[tuple[str, str, int], float | None] = {}

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    def call(self, op: str, *args: Any, wait: float = -1) -> tuple[Any, float | None]:
        """Run `op` in the child (started if need be): its result and the store's clean-up due time. `wait`:
        seconds to wait for a call under way (VectorHostBusy after them; -1: as long as it takes)."""
        if not self._lock.acquire(timeout=wait):
            raise VectorHostBusy(f"vector process busy with another call for {wait:g} s")
        try:
            if self.pid is None:
                self._start()
            assert self._out is not None and self._in is not None
            try:
                self._out.send((op, args))
                status, value, due = self._in.recv()
                self.ready = True
            except (EOFError, OSError) as exc:
                self._stop()
                raise VectorHostError(f"vector process gone: {exc!r}") from exc
            finally:
                self.used = time.monotonic()
        finally:
            self._lock.release()
        if status != "ok":
            raise VectorHostError(value)
        return value, due

    def _start(self) -> None:
        self._stop()
        env = {**os.environ, "MALLOC_ARENA_MAX": "2"}
        self._proc = subprocess.Popen([sys.executable, "-m", "memory.recall.vector_host"], env=env,
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, close_fds=True)
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._out = Connection(os.dup(self._proc.stdin.fileno()), readable=False)
        self._in = Connection(os.dup(self._proc.stdout.fileno()), writable=False)
        self._proc.stdin.close()
        self._proc.stdout.close()
        self.started += 1

    def start_soon(self, probe: Callable[[], object]) -> None:
        """Bring the child up in a thread through `probe` (a cheap call), unless it is ready or coming up:
        its imports take ~2 CPU-s, longer than a query may wait."""
        if self.ready or self._probing:
            return
        self._probing = True

        def run() -> None:
            try:
                probe()
            except VectorHostError:
                pass  # the child answered (an empty store) or is gone: the next call tells
            finally:
                self._probing = False

        threading.Thread(target=run, daemon=True, name="vector-start").start()

    def _stop(self) -> None:
        self.ready = False
        for conn in (self._out, self._in):
            if conn is not None:
                conn.close()
        self._out = self._in = None
        if self._proc is not None:
            try:
                self._proc.wait(10)  # EOF on its stdin: it finishes the call under way and exits
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._proc = None
        self.scans = 0

    def stop(self) -> None:
        with self._lock:
            self._stop()

    def release_if_quiet(self, quiet_s: float | None = None) -> bool:
        """Stop the child if nothing has called it for `quiet_s` (MEMORY_VECTOR_PROCESS_SECONDS), no scan is
        open and no store's clean-up is due within `quiet_s` (it would start again for it); True if stopped.
        A clean-up already overdue is not waited for: the worker's loop did not run it (its writes are staged,
        memory/worker/stage.py), so it comes with the flush."""
        if self.pid is None:
            return False
        if quiet_s is None:
            from memory.base.config import env_int

            quiet_s = float(env_int("MEMORY_VECTOR_PROCESS_SECONDS"))
        if not self._lock.acquire(blocking=False):  # a call under way: not quiet, and the loop must not wait
            return False
        try:
            now = time.monotonic()
            if (self.pid is None or self.scans or now - self.used < quiet_s
                    or any(due is not None and 0 <= due - now < quiet_s for due in self.dues.values())):
                return False
            self._stop()
        finally:
            self._lock.release()
        return True


class RemoteStore:
    """memory.recall.vectors.VectorStore's methods the worker uses, run in the Host's child."""

    def __init__(self, host: Host, project_dir: str, provider_key: str, dim: int) -> None:
        self.host, self.where, self.dim = host, (project_dir, provider_key, dim), dim
        self._due: float | None = 0.0  # as VectorStore: unknown until the child has opened the store

    def _call(self, op: str, *args: Any, wait: float = -1) -> Any:
        value, self._due = self.host.call(op, self.where, *args, wait=wait)
        self.host.dues[self.where] = self._due
        return value

    def cleanup_due(self) -> bool:
        """Known here without the child: a quiet worker does not start one to ask."""
        return self._due is not None and time.monotonic() >= self._due

    def upsert(self, rows: list[dict[str, Any]]) -> None:
        if rows:
            self._call("upsert", rows)

    def delete(self, ids: list[int]) -> None:
        if ids:
            self._call("delete", ids)

    def count(self) -> int:
        return int(self._call("count"))

    def versions(self) -> int:
        return int(self._call("versions"))

    def drop_other_tables(self) -> list[str]:
        return list(self._call("drop_other_tables"))

    def reset(self) -> None:
        self._call("reset")

    def forget(self) -> None:
        """The child lets go of this store (a damaged one, about to be moved aside)."""
        try:
            self.host.call("forget", self.where)
        except VectorHostError:
            pass

    def maintain(self, force: bool = False, keep_s: float | None = None) -> str | None:
        return self._call("maintain", force, keep_s)

    def search(self, vector: list[float], k: int, where: str | None = None) -> list[tuple[int, float]]:
        """The worker's searches before its in-memory lists are built: VectorHostBusy rather than wait."""
        return list(self._call("search", vector, k, where, wait=SEARCH_WAIT_S))

    def scan(self, rows: int = SCAN_ROWS) -> Iterator[tuple[Any, Any]]:
        """The child's VectorStore.scan, a message per batch; the child stays up until it is closed."""
        self.host.scans += 1
        try:
            scan_id = self._call("scan_open", rows)
            try:
                while (batch := self._call("scan_next", scan_id)) is not None:
                    yield batch
            finally:
                try:
                    self._call("scan_close", scan_id)
                except VectorHostError:
                    pass
        finally:
            self.host.scans = max(0, self.host.scans - 1)


# -- the child ------------------------------------------------------------------------------------------


REST_CLIENT = "lance_namespace_urllib3_client"


def defer_rest_client() -> bool:
    """Register lance-namespace's generated REST client package without running its __init__, which imports
    every REST API class (lancedb 0.40 imports the package for its request models only; a local table never
    calls a server); the first attribute asked of the package runs it. At import: 20 MiB less RSS and ~0.5
    CPU-s less (10,000 memories, 2026-12-07). False if it is imported already or not installed."""
    import importlib.util

    if REST_CLIENT in sys.modules:
        return False
    spec = importlib.util.find_spec(REST_CLIENT)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return False
    pkg = importlib.util.module_from_spec(spec)  # __path__ set: its submodules import as usual
    loader = spec.loader

    def run_init(name: str) -> Any:
        del pkg.__dict__["__getattr__"]
        loader.exec_module(pkg)
        return getattr(pkg, name)

    pkg.__dict__["__getattr__"] = run_init
    sys.modules[REST_CLIENT] = pkg
    return True


def serve(inp: Connection, out: Connection) -> None:
    """Answer calls until the worker closes the pipe."""
    defer_rest_client()
    from memory.recall.vectors import VectorStore

    stores: dict[tuple[str, str, int], VectorStore] = {}
    scans: dict[int, Iterator[tuple[Any, Any]]] = {}
    while True:
        try:
            op, (where, *args) = inp.recv()
        except EOFError:
            return
        store = None
        if op == "forget":
            stores.pop(where, None)
            out.send(("ok", None, None))
            continue
        try:
            store = stores.get(where)
            if store is None:
                store = stores[where] = VectorStore(*where)
            if op == "scan_open":
                scan_id = len(scans) and max(scans) + 1
                scans[scan_id] = store.scan(*args)
                value: Any = scan_id
            elif op == "scan_next":
                value = next(scans[args[0]], None)
            elif op == "scan_close":
                it = scans.pop(args[0], None)
                if it is not None:
                    it.close()  # type: ignore[attr-defined]
                value = None
            else:
                value = getattr(store, op)(*args)
            reply = ("ok", value, store._cleanup_due)
        except Exception as exc:  # noqa: BLE001 - the worker logs it and retries the batch
            reply = ("err", f"{type(exc).__name__}: {exc}", getattr(store, "_cleanup_due", 0.0))
        out.send(reply)


def main() -> None:
    reply_fd = os.dup(1)
    os.dup2(2, 1)  # a library's print goes to the worker's log, not into the replies
    serve(Connection(0, writable=False), Connection(reply_fd, readable=False))


if __name__ == "__main__":
    main()
