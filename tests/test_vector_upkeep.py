"""The vector store reclaims its old versions in normal use: right after `memory reindex`, and a few seconds
after a real worker's burst of writes (MEMORY_VECTOR_KEEP_VERSIONS_SECONDS), with no write to prompt it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from memory import store
from memory.base import worker_client
from memory.recall import vectors
from memory.store.workspace import Workspace
from tests.test_worker import counts, spawn, wait_for

N = 2000


def fill(ws: Workspace, n: int = N, start: int = 0) -> None:
    """n memories (numbered from `start`) in 40 sessions (each queues its vector job), in one connection."""
    t0 = time.time() - 86400
    topics = ["postgres pool", "redis cache", "grpc deadline", "terraform state", "pytest fixture", "nginx proxy"]
    for i in range(start, start + n):
        text = f"note {i}: the {topics[i % len(topics)]} needed a change in module m{i % 97} after run {i * 7}"
        store.save(ws.db, ws.project.key, store.NewMemory(title=text[:60], content=text, type="observation",
                                                          session_id=f"s{i % 40}", created_at=t0 + i),
                   filter_low_value=False)


def lance(ws: Workspace) -> tuple[int, int]:
    """(versions, bytes) of the project's vector store, read from its files."""
    versions, size = 0, 0
    for root, _dirs, files in os.walk(os.path.join(ws.dir, "vectors.lance")):
        for f in files:
            size += os.path.getsize(os.path.join(root, f))
            versions += root.endswith("_versions") and f.endswith(".manifest")
    return versions, size


def compacted_bytes(provider: str) -> int:
    """Bytes a memory takes in a store with one version: its float16 vector and its fields, and less than
    the same again for the ANN index and the manifests (superseded fragments would double it)."""
    return int(provider.rsplit(":", 1)[1]) * vectors.VALUE_BYTES + 1000


def test_reindex_leaves_one_version(home: Path, project: Path) -> None:
    ws = Workspace.for_dir(str(project), home=str(home))
    fill(ws)
    env = {**os.environ, "MEMORY_HOME": str(home), "MEMORY_EMBEDDER": "hashing", "MEMORY_WORKER": "off"}
    out = subprocess.run([sys.executable, "-m", "memory", "reindex", "--json"], cwd=project, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    (result,) = json.loads(out.stdout)
    assert result["embedded"] == N
    versions, size = lance(ws)
    assert versions == 1, versions
    assert size < N * compacted_bytes(result["provider"]), size


def provider_of(ws: Workspace) -> str:
    return str(ws.db.execute("SELECT value FROM meta WHERE key = 'vectors:provider'").fetchone()[0])


def test_the_worker_cleans_up_after_a_burst(home: Path, project: Path) -> None:
    ws = Workspace.for_dir(str(project), home=str(home))
    fill(ws)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1]), "MEMORY_HOME": str(home),
           "MEMORY_EMBEDDER": "hashing", "MEMORY_WORKER": "on", "MEMORY_WORKER_IDLE_SECONDS": "120",
           "MEMORY_WORKER_RELEASE_SECONDS": "0", "MEMORY_VECTOR_KEEP_VERSIONS_SECONDS": "2"}
    proc = spawn(env)
    try:
        assert wait_for(lambda: (c := counts(ws.db_path))["ledger"] == c["memories"] == N, 240, 0.5), \
            counts(ws.db_path)
        # The burst's writes reach LanceDB after it, in commits of up to 1,024 rows (memory/worker/stage.py),
        # not one per batch; then nothing writes any more: the clean-up alone brings it down to one version.
        provider = provider_of(ws)
        raw = N * int(provider.rsplit(":", 1)[1]) * vectors.VALUE_BYTES
        assert wait_for(lambda: (v := lance(ws))[0] == 1 and v[1] > raw, 60, 0.5), lance(ws)
        versions, size = lance(ws)
        assert size < N * compacted_bytes(provider), size
    finally:
        worker_client.ask(str(home), {"op": "shutdown"}, timeout=5)
        proc.wait(timeout=30)
