"""The worker's jobs: vector batches drained from a project's queue, other kinds through their handlers."""

from __future__ import annotations

import importlib
import importlib.util
import json
import time
import traceback
from collections.abc import Callable
from functools import cache
from typing import Any

from memory.base.log import described
from memory.recall.vectors import is_index_damage
from memory.store import queue
from memory.store.workspace import Workspace
from memory.worker.index import ProjectIndex
from memory.worker.log import log as _log

BATCH = 32
# Other kinds of jobs in the same queue and where their handlers live: handle_job(ws, payload) -> dict.
# A kind whose module is not there (yet) stays pending for a worker that has it.
HANDLERS = {
    "index_markdown": "memory.capture.mdindex:handle_job",
    "evict": "memory.worker.jobs:evict_job",
    "extract": "memory.learn.job:handle_job",
    "team_sync": "memory.team.job:handle_job",
    "repo_map": "memory.outline.mapbuild:handle_job",
}
MAX_ATTEMPTS = 3


def evict_job(ws: Workspace, payload: dict[str, Any]) -> dict[str, Any]:
    """An `evict` job, with the vector store's delete that memory/store/evict.py (hot) cannot import."""
    from memory.recall import vectors
    from memory.store import evict

    return evict.handle_job(ws, payload, vectors.delete)



def drain(p: ProjectIndex, go_on: Callable[[], bool], worked: Callable[[], None]) -> int:
    """Run the project's due jobs while `go_on()` and its queue is not empty; `worked` is called after each
    batch or job (the idle clock). Each batch waits first for the searches in flight. Returns the jobs done."""
    done = 0
    while go_on():
        p.pause()
        jobs = queue.claim_batch(p.db, "vector", BATCH)
        if jobs:
            if not index_batch(p, jobs):
                return done  # failures are not activity: a worker that only fails still goes idle
            done += len(jobs)
            worked()
            continue
        job = queue.claim(p.db, kinds=other_kinds())
        if job is None:
            break
        run_other(p, job)
        done += 1
        worked()
    return done


def index_batch(p: ProjectIndex, jobs: list[Any]) -> bool:
    """One batch of vector jobs indexed and marked done; False when it failed (its jobs retried later)."""
    ids = [int(json.loads(j["payload"]).get("id", 0)) for j in jobs]
    t0 = time.perf_counter()
    try:
        p.index(ids, [j["id"] for j in jobs])
        p.rate.add(len(jobs), time.perf_counter() - t0)
        return True
    except Exception as exc:  # noqa: BLE001 - one bad batch must not stop the worker
        if is_index_damage(exc):
            for j in jobs:
                queue.finish(p.db, j["id"], error="the vector store was damaged", retry_in=0.0)
            p.recover_vectors(exc)
            return True
        _log(f"{p.key}: vector batch failed: {described(exc)}\n{traceback.format_exc()}")
        for j in jobs:
            retry = 30.0 * j["attempts"] if j["attempts"] < MAX_ATTEMPTS else None
            queue.finish(p.db, j["id"], error=described(exc), retry_in=retry)
        return False


@cache
def other_kinds() -> tuple[str, ...]:
    """The kinds besides `vector` this worker can run: those whose handler's module is installed."""
    kinds = []
    for kind, target in HANDLERS.items():
        module, _, _name = target.partition(":")
        try:
            if importlib.util.find_spec(module) is not None:
                kinds.append(kind)
        except (ImportError, ValueError):
            continue
    kinds.append("delete_vectors")
    return tuple(kinds)


def run_other(p: ProjectIndex, job: Any) -> None:
    """One job of another kind, through its handler; a failure is retried later, up to MAX_ATTEMPTS."""
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
