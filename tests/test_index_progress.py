"""Indexing at low priority, with progress: the embedding thread's niceness (bulk embedding yields to hooks,
a search's query embedding does not), the worker's rate of memories per second, and the time left that
`memory worker status` and `memory reindex` print."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from memory import store
from memory.base import progress, worker_client
from memory.base.project import identify
from memory.recall import embed
from memory.recall.embed.hashing import HashingEmbedder
from memory.store.workspace import Workspace
from tests.support.helpers import ROOT
from tests.test_worker import spawn, wait_for

linux_only = pytest.mark.skipif(sys.platform != "linux", reason="threads have a niceness of their own on Linux")


def test_rate_and_time_left() -> None:
    r = progress.Rate(weight=0.5)
    r.add(0, 1.0)  # an empty batch says nothing
    assert r.per_s is None
    r.add(10, 1.0)
    r.add(30, 1.0)
    assert r.per_s == 20.0
    assert progress.line(640, 10_000, 14.2) == "640 of 10,000 memories, 14.2/s, about 11 min left"
    assert progress.line(5, 10, None) == "5 of 10 memories"
    assert [progress.duration(s) for s in (0.2, 40, 660, 9000)] == ["1 s", "40 s", "11 min", "2.5 h"]


@linux_only
def test_bulk_embedding_runs_niced_queries_do_not() -> None:
    base = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())  # pytest may itself run niced
    inner = HashingEmbedder()
    e = embed.Background(inner)
    try:
        assert embed.key(e) == embed.key(inner)  # the same index: wrapping changes no vector
        texts = ["redis cache eviction", "postgres pool exhausted"]
        assert e.embed(texts) == inner.embed(texts)
        assert e.embed_query("redis") == inner.embed_query("redis")
        in_pool = e._pool.submit(lambda: os.getpriority(os.PRIO_PROCESS, threading.get_native_id())).result()
        assert in_pool == max(embed.INDEX_NICE, base)
        assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == base  # the caller's is kept
    finally:
        e.close()


@linux_only
def test_worker_indexes_niced_and_reports_its_rate(home: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_WORKER", "on")
    monkeypatch.setenv("MEMORY_EMBEDDER", "hashing")
    monkeypatch.setenv("MEMORY_WORKER_IDLE_SECONDS", "30")
    monkeypatch.setenv("MEMORY_DAILY_LOG", "off")
    ws = Workspace(identify(str(project)), str(home))
    for n in range(40):
        store.save(ws.db, ws.project.key, store.NewMemory(f"note {n} on cache eviction", f"eviction detail {n}",
                                                          session_id="s", created_at=1_700_000_000 + n),
                   filter_low_value=False)
    proc = spawn({**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        def state() -> dict | None:
            s = worker_client.ask(str(home), {"op": "ping"}, timeout=2) or {}
            return s if (s.get("projects", {}).get(ws.project.key) or {}).get("index_rate") else None

        indexed = wait_for(state, 60)
        assert indexed, Path(worker_client.log_file(str(home))).read_text()
        base = os.getpriority(os.PRIO_PROCESS, 0)  # the worker started at ours (pytest may run niced)
        assert indexed["index_nice"] == max(embed.INDEX_NICE, base)
        assert os.getpriority(os.PRIO_PROCESS, proc.pid) == base  # its main thread (and socket threads): not
    finally:
        worker_client.ask(str(home), {"op": "shutdown"}, timeout=5)
        proc.wait(30)
    ws.close()


def test_status_says_what_is_left(home: Path, project: Path) -> None:
    """With vector jobs pending and no worker to give a rate, the status counts them and says so."""
    ws = Workspace(identify(str(project)), str(home))
    for n in range(3):
        store.save(ws.db, ws.project.key, store.NewMemory(f"note {n}", f"detail {n}", session_id="s",
                                                          created_at=1_700_000_000 + n), filter_low_value=False)
    ws.close()
    env = {**os.environ, "MEMORY_HOME": str(home), "MEMORY_WORKER": "off", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "memory", "worker", "status", "--json"], cwd=project, env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["project_indexed"] == "0 of 3 memories"
    assert data["project_indexing"] == "3 memories to embed, rate unknown (the worker has not indexed this project yet)"
