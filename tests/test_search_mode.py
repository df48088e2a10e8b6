"""A search says what answered it: hybrid, or keyword and why (asked for, no worker running, no semantic
index, index N% built), in `memory search --json` (each hit), on stderr for the text output, and in the MCP
tool's answer; with a real worker (hashing embedder) whose index is partly built, then complete."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memory.base import worker_client
from memory.mcp.tools import Places
from memory.mcp.tools import search as mcp_search
from memory.recall import layers
from memory.store.workspace import Workspace
from tests.test_vector_upkeep import fill
from tests.test_worker import counts, spawn, wait_for

ROOT = Path(__file__).resolve().parents[1]
QUERY = ["postgres", "pool", "change"]


def cli(home: Path, project: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(ROOT), "MEMORY_HOME": str(home), "MEMORY_EMBEDDER": "hashing",
            "MEMORY_WORKER": "off", **env}
    return subprocess.run([sys.executable, "-m", "memory", *args], cwd=project, env=full, capture_output=True,
                          text=True, timeout=120)


def searched(home: Path, project: Path, *args: str, **env: str) -> list[dict[str, object]]:
    out = cli(home, project, "search", *QUERY, "--json", *args, **env)
    assert out.returncode == 0, out.stderr
    hits = json.loads(out.stdout)
    assert hits
    return hits


def test_keyword_asked_and_no_semantic_index(home: Path, project: Path) -> None:
    fill(Workspace.for_dir(str(project), home=str(home)), 50)
    hits = searched(home, project, "--mode", "keyword")
    assert {(h["mode"], h["why"]) for h in hits} == {("keyword", "asked for keyword")}
    assert {(h["mode"], h["why"]) for h in searched(home, project)} == {("keyword", "no semantic index")}
    text = cli(home, project, "search", *QUERY)
    # The text output: the hits on stdout as before, what answered in one line on stderr.
    assert text.stdout.startswith("#") and "keyword" not in text.stdout.splitlines()[0]
    assert text.stderr.strip() == "memory: keyword results (no semantic index)"


def test_no_worker_running(home: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = Workspace.for_dir(str(project), home=str(home))
    fill(ws, 50)
    assert cli(home, project, "reindex").returncode == 0
    monkeypatch.setenv("MEMORY_WORKER", "on")
    hits, answered = layers.search(ws, " ".join(QUERY), limit=5, wait=1.0)
    monkeypatch.setenv("MEMORY_WORKER", "off")
    assert hits and (answered.mode, answered.why) == ("keyword", "no worker running")
    # The CLI answers from its own process with a hashing index, and says so.
    assert {h["mode"] for h in searched(home, project)} == {"hybrid"}


def test_a_partly_built_index_then_hybrid(home: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = Workspace.for_dir(str(project), home=str(home))
    fill(ws, 100)
    assert cli(home, project, "reindex").returncode == 0
    fill(ws, 300, start=100)  # 300 more, whose vector jobs are held back: 100 of 400 embedded
    with ws.db:
        ws.db.execute("UPDATE queue SET run_after = ? WHERE kind = 'vector' AND status = 'pending'",
                      (time.time() + 3600,))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MEMORY_HOME": str(home), "MEMORY_EMBEDDER": "hashing",
           "MEMORY_WORKER": "on", "MEMORY_WORKER_IDLE_SECONDS": "60", "MEMORY_WORKER_RELEASE_SECONDS": "0"}
    proc = spawn(env)
    monkeypatch.setenv("MEMORY_WORKER", "on")  # the MCP tool, called in this process
    try:
        assert wait_for(lambda: worker_client.ask(str(home), {"op": "ping"}, timeout=1), 30)
        hits = searched(home, project, MEMORY_WORKER="on")
        assert {(h["mode"], h["why"], h["indexed"], h["total"]) for h in hits} == {
            ("keyword", "index 25% built", 100, 400)}
        text = cli(home, project, "search", *QUERY, MEMORY_WORKER="on")
        assert text.stderr.strip() == "memory: keyword results (index 25% built)"
        answer = mcp_search(Places(str(project), str(home)), " ".join(QUERY))
        assert "keyword results (index 25% built)" in answer
        # The held jobs are let go: once the worker has embedded them, the same search is hybrid.
        with ws.db:
            ws.db.execute("UPDATE queue SET run_after = 0 WHERE kind = 'vector' AND status = 'pending'")
        worker_client.ask(str(home), {"op": "wake"}, timeout=2)
        assert wait_for(lambda: (c := counts(ws.db_path))["ledger"] == c["memories"] == 400, 60, 0.2)
        hits = searched(home, project, MEMORY_WORKER="on")
        assert {(h["mode"], h["why"], h["indexed"], h["total"]) for h in hits} == {("hybrid", None, 400, 400)}
        answer = mcp_search(Places(str(project), str(home)), " ".join(QUERY))
        assert "hybrid results" in answer
    finally:
        worker_client.ask(str(home), {"op": "shutdown"}, timeout=5)
        proc.wait(timeout=30)


def test_a_starting_worker_is_waited_for(home: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = Workspace.for_dir(str(project), home=str(home))
    fill(ws, 50)
    assert cli(home, project, "reindex").returncode == 0
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MEMORY_HOME": str(home), "MEMORY_EMBEDDER": "hashing",
           "MEMORY_WORKER": "on", "MEMORY_WORKER_IDLE_SECONDS": "60", "MEMORY_WORKER_RELEASE_SECONDS": "0"}
    proc = spawn(env)
    monkeypatch.setenv("MEMORY_WORKER", "on")
    try:
        wait_for(lambda: worker_client.alive(str(home)), 10, 0.01)
        t0 = time.monotonic()
        hits, answered = layers.search(ws, " ".join(QUERY), limit=5, timeout=2.0, wait=20.0)
        waited = time.monotonic() - t0
        assert hits and answered.mode == "hybrid", (answered.why, waited)
    finally:
        worker_client.ask(str(home), {"op": "shutdown"}, timeout=5)
        proc.wait(timeout=30)
