"""The worker holds no LanceDB: its writes and first reads go to a child process (memory/recall/vector_host.py)
that exits after MEMORY_VECTOR_PROCESS_SECONDS, and a warm worker that only searches neither imports lancedb
nor starts that process again; its RSS stays under a bound lancedb's import alone would break."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memory import store
from memory.base import worker_client
from memory.recall.embed import numpy_minilm
from memory.store.workspace import Workspace
from tests.test_vector_upkeep import fill
from tests.test_worker import counts, spawn, wait_for

# Measured 2026-11-24 in this test: a warm worker with the hashing embedder and 300 memories 44 MiB, with MiniLM
# on numpy and 20 memories 104 MiB. Before this change lancedb and pyarrow's import alone added 98 MiB and
# LanceDB's first search ~60 more (hashing, 2,000 memories: 304-320 MiB warm).
BOUND_MIB = {"hashing": 100, "minilm": 170}


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not Path(f"/proc/{pid}/stat").exists() or Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


def search(home: Path, key: str, query: str) -> dict | None:
    answer = worker_client.ask(str(home), {"op": "search", "project": key, "query": query, "limit": 5}, timeout=10)
    return answer if answer and answer.get("ok") and answer.get("hits") else None


@pytest.mark.parametrize("embedder,n", [("hashing", 300), ("minilm", 20)])
def test_a_warm_worker_searches_without_lancedb(home: Path, project: Path, embedder: str, n: int) -> None:
    if embedder == "minilm" and not numpy_minilm.available():
        pytest.skip("the packaged all-MiniLM-L6-v2 is not installed")
    ws = Workspace.for_dir(str(project), home=str(home))
    fill(ws, n)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1]), "MEMORY_HOME": str(home),
           "MEMORY_EMBEDDER": embedder, "MEMORY_WORKER": "on", "MEMORY_WORKER_IDLE_SECONDS": "120",
           "MEMORY_WORKER_RELEASE_SECONDS": "0", "MEMORY_VECTOR_KEEP_VERSIONS_SECONDS": "1",
           "MEMORY_VECTOR_PROCESS_SECONDS": "1", "MEMORY_DAILY_LOG": "off"}
    proc = spawn(env)
    key = ws.project.key
    try:
        assert wait_for(lambda: (c := counts(ws.db_path))["ledger"] == c["memories"] == n, 240, 0.5), \
            counts(ws.db_path)
        assert wait_for(lambda: (a := search(home, key, "postgres pool module")) and a.get("warm"), 60, 0.2)
        state = worker_client.ask(str(home), {"op": "ping"}, timeout=5)
        assert not state["lancedb_in_worker"], state  # the warm build's scan went to the child
        # Once the lists are built the child is stopped (the writes are staged); the worker lets go of nothing else.
        assert wait_for(lambda: worker_client.ask(str(home), {"op": "ping"}, timeout=5)["vector_process"] is None,
                        60, 0.2)
        assert state["vector_process"] is None or wait_for(lambda: not alive(state["vector_process"]), 10, 0.1)
        for q in ("redis cache", "grpc deadline module", "terraform state run", "pytest fixture", "nginx proxy"):
            answer = search(home, key, q)
            assert answer and answer["warm"], answer
        # The searches need no child; a clean-up of old versions that falls due (1 s here) may start it again
        # for a moment, so the worker is asked until it has let go of it once more.
        assert wait_for(lambda: (s := worker_client.ask(str(home), {"op": "ping"}, timeout=5))["vector_process"]
                        is None and not s["lancedb_loaded"], 30, 0.2)
        state = worker_client.ask(str(home), {"op": "ping"}, timeout=5)
        assert not state["lancedb_loaded"], state
        assert state["projects"][key]["warm"] and state["model_loaded"]
        assert state["rss_bytes"] < BOUND_MIB[embedder] << 20, state["rss_bytes"] >> 20
        # A new memory starts the child again for its write; the search after it finds the memory.
        saved = store.save(ws.db, key, store.NewMemory("kafka offsets", "kafka consumer offsets reset after a "
                                                        "rebalance", type="bugfix", session_id="s-new"),
                           filter_low_value=False)
        store.mark_dirty(ws.db, None)
        worker_client.ask(str(home), {"op": "wake"}, timeout=5)
        assert wait_for(lambda: (c := counts(ws.db_path))["ledger"] == c["memories"] == n + 1, 60, 0.2)
        hit = wait_for(lambda: (a := search(home, key, "kafka consumer offsets")) and a["hits"][0]["id"], 30)
        assert hit == saved.id, hit
    finally:
        worker_client.ask(str(home), {"op": "shutdown"}, timeout=5)
        proc.wait(timeout=30)
    assert proc.returncode == 0
    ws.close()


def test_the_vector_process_comes_back_after_a_crash_and_a_release(tmp_path: Path) -> None:
    """Writes, scans and searches in the child; after the child is killed the next call (or the one after, if
    it was the call under way) starts a new one on the same files; a release stops it, and the next call starts
    it again."""
    import signal

    import numpy as np

    from memory.recall.vector_host import Host, RemoteStore, VectorHostError

    host = Host()
    vs = RemoteStore(host, str(tmp_path), "hashing:test:8", 8)
    rows = [{"id": i, "vector": [float(i == d) for d in range(8)], "type": "note", "session_id": "s",
             "created_at": float(i), "expires_at": None} for i in range(8)]
    try:
        vs.upsert(rows)
        assert vs.count() == 8 and vs.search(rows[3]["vector"], 1) == [(3, 1.0)]
        first = host.pid
        assert first is not None and host.started == 1
        os.kill(first, signal.SIGKILL)
        assert wait_for(lambda: not alive(first), 10, 0.05)
        try:  # seen dead before the call (a new child answers it) or during it (the call fails)
            n = vs.count()
        except VectorHostError:
            n = vs.count()
        assert n == 8 and host.pid not in (None, first) and host.started == 2
        ids, vecs = zip(*vs.scan(3), strict=True)
        assert sorted(np.concatenate(ids).tolist()) == list(range(8)) and all(v.shape[1] == 8 for v in vecs)
        vs.maintain(force=True, keep_s=0)  # no clean-up left due: nothing keeps the child up
        assert host.release_if_quiet(0.0) and host.pid is None
        vs.delete([0])
        assert vs.count() == 7 and host.started == 3
    finally:
        host.stop()


def ping(home: Path) -> dict:
    return worker_client.ask(str(home), {"op": "ping"}, timeout=5) or {}


def test_a_serving_worker_stages_its_writes_and_flushes_them_when_it_goes_light(home: Path, project: Path) -> None:
    """While the worker serves (searches, new memories from hooks) LanceDB's process stays down: the vector
    writes wait in the stage (memory/worker/stage.py) and the in-memory lists answer with them; when the
    worker goes light it writes them to LanceDB, which then holds every memory."""
    from memory.recall.vectors import VectorStore

    ws = Workspace.for_dir(str(project), home=str(home))
    fill(ws, 120)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1]), "MEMORY_HOME": str(home),
           "MEMORY_EMBEDDER": "hashing", "MEMORY_WORKER": "on", "MEMORY_WORKER_IDLE_SECONDS": "120",
           "MEMORY_WORKER_RELEASE_SECONDS": "12", "MEMORY_VECTOR_PROCESS_SECONDS": "1",
           "MEMORY_VECTOR_KEEP_VERSIONS_SECONDS": "1", "MEMORY_DAILY_LOG": "off"}
    proc = spawn(env)
    key = ws.project.key
    try:
        assert wait_for(lambda: (c := counts(ws.db_path))["ledger"] == c["memories"] == 120, 120, 0.2)
        assert wait_for(lambda: (a := search(home, key, "postgres pool module")) and a.get("warm"), 60, 0.2)
        # The lists' build flushed what was staged, then the child went quiet and exited.
        assert wait_for(lambda: ping(home).get("vector_process", 0) is None, 60, 0.2)
        for i in range(3):  # serving: new memories and searches; the child is not started for them
            saved = store.save(ws.db, key, store.NewMemory(f"kafka offsets {i}", f"kafka consumer offsets reset "
                                                           f"after rebalance number {i}", type="bugfix",
                                                           session_id="s-new"), filter_low_value=False)
            store.mark_dirty(ws.db, None)
            worker_client.ask(str(home), {"op": "wake"}, timeout=5)
            assert wait_for(lambda: (c := counts(ws.db_path))["ledger"] == c["memories"], 60, 0.1)
            query = f"kafka offsets rebalance number {i}"
            hit = wait_for(lambda q=query: (a := search(home, key, q)) and a["hits"], 30)
            assert hit and saved.id in [h["id"] for h in hit], hit
        state = ping(home)
        assert state["vector_process"] is None and state["projects"][key]["vectors_waiting"] >= 3, (
            state, Path(worker_client.log_file(str(home))).read_text())
        # Quiet for MEMORY_WORKER_RELEASE_SECONDS: the staged writes go to LanceDB, then it re-executes light.
        assert wait_for(lambda: ping(home).get("model_loaded") is False, 60, 0.2)
        meta = ws.db.execute("SELECT value FROM meta WHERE key = 'vectors:provider'").fetchone()[0]
        assert VectorStore(ws.dir, meta, 1024).count() == 123
    finally:
        wait_for(lambda: worker_client.ask(str(home), {"op": "shutdown"}, timeout=5), 30, 0.2)
        proc.wait(timeout=60)
    assert proc.returncode == 0
