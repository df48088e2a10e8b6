"""The background worker as real processes: started on demand by a hook, one instance under concurrent
starts, idle exit, kill -9 in the middle of its work then recovery with nothing lost, hybrid recall in
the prompt hook while it is warm, and an owner-only socket."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memory import store
from memory.base import worker_client
from memory.base.project import identify
from memory.store.workspace import Workspace
from tests.support.helpers import ROOT, HookRunner


@pytest.fixture
def worker_env(home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    monkeypatch.setenv("MEMORY_WORKER", "on")
    monkeypatch.setenv("MEMORY_EMBEDDER", "hashing")
    monkeypatch.setenv("MEMORY_WORKER_IDLE_SECONDS", "3")
    monkeypatch.setenv("MEMORY_DAILY_LOG", "off")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    yield env
    # Whatever a test left running is stopped, by its own socket and lock (never by name).
    worker_client.ask(str(home), {"op": "shutdown"}, timeout=2)
    wait_for(lambda: not worker_client.alive(str(home)), 20)


def wait_for(check: Callable[[], object], timeout: float, step: float = 0.05) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(step)
    return check()


def started_lines(home: Path) -> list[str]:
    log = Path(worker_client.log_file(str(home)))
    return [line for line in log.read_text().splitlines() if " started (home " in line] if log.exists() else []


def spawn(env: dict[str, str]) -> subprocess.Popen[bytes]:
    log = Path(worker_client.log_file(env["MEMORY_HOME"]))
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as fh:  # the same log a hook-started worker writes
        return subprocess.Popen([sys.executable, "-m", "memory.worker"], env=env, stdout=subprocess.DEVNULL,
                                stderr=fh, start_new_session=True)


def counts(db_path: str) -> dict[str, int]:
    import sqlite3

    db = sqlite3.connect(db_path)
    try:
        out = {"memories": db.execute("SELECT count(*) FROM memories").fetchone()[0],
               "ledger": db.execute("SELECT count(*) FROM memory_index").fetchone()[0],
               "ctx": db.execute("SELECT count(*) FROM memories_ctx").fetchone()[0]}
        for status, n in db.execute("SELECT status, count(*) FROM queue GROUP BY status"):
            out[status] = n
        return out
    finally:
        db.close()


def test_a_hook_starts_the_worker_which_indexes_and_exits_when_idle(worker_env: dict[str, str], home: Path,
                                                                    project: Path, hooks: HookRunner) -> None:
    assert not worker_client.alive(str(home))
    hooks.start()  # SessionStart starts the worker (so it is warm by the first prompt)
    assert wait_for(lambda: worker_client.alive(str(home)), 10)
    hooks.tool("Bash", {"command": "pytest -q tests/test_auth.py"}, failed="FAILED test_refresh - token expired")
    hooks.tool("Bash", {"command": "pytest -q tests/test_auth.py"}, {"stdout": "3 passed", "stderr": "",
                                                                    "interrupted": False})
    ws = Workspace(identify(str(project)), str(home))
    assert wait_for(lambda: (c := counts(ws.db_path))["memories"] and c["ledger"] == c["memories"], 20), \
        counts(ws.db_path)
    assert len(started_lines(home)) == 1
    # Idle for MEMORY_WORKER_IDLE_SECONDS: it exits, and takes its socket with it.
    assert wait_for(lambda: not worker_client.alive(str(home)), 20)
    assert not os.path.exists(worker_client.socket_path(str(home)))
    assert "idle: exiting" in Path(worker_client.log_file(str(home))).read_text()


def test_one_worker_under_concurrent_starts(worker_env: dict[str, str], home: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_WORKER_IDLE_SECONDS", "60")  # alive until the test has looked
    worker_env = {**worker_env, "MEMORY_WORKER_IDLE_SECONDS": "60"}
    procs = [spawn(worker_env) for _ in range(6)]
    threads = [threading.Thread(target=worker_client.start, args=(str(home),)) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wait_for(lambda: len(started_lines(home)) >= 1, 20)
    time.sleep(1.0)  # every contender has had time to try the lock
    assert len(started_lines(home)) == 1
    running = [p for p in procs if p.poll() is None]
    assert len(running) <= 1  # the others exited at once (the survivor may be one started by a thread)
    assert worker_client.ask(str(home), {"op": "ping"}, timeout=5)["pid"] > 0


def test_socket_is_owner_only(worker_env: dict[str, str], home: Path) -> None:
    worker_client.start(str(home))
    assert wait_for(lambda: worker_client.ask(str(home), {"op": "ping"}, timeout=1), 20)
    path = worker_client.socket_path(str(home))
    mode = stat.S_IMODE(os.stat(path).st_mode)
    assert mode == 0o600, oct(mode)
    assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) & 0o077 == 0


def test_kill_9_in_the_middle_then_recovery_loses_nothing(worker_env: dict[str, str], home: Path,
                                                         project: Path) -> None:
    ws = Workspace(identify(str(project)), str(home))
    for n in range(3000):
        store.save(ws.db, ws.project.key, store.NewMemory(
            f"note {n}: change to module_{n % 97}.py", f"Changed function handler_{n} in module_{n % 97}.py "
            f"because of issue {n * 7 % 1000} with the cache layer", session_id=f"s{n // 40}",
            created_at=1_700_000_000 + n), filter_low_value=False)
    gone = [1, 2, 3, 500]
    first = spawn(worker_env)
    # Killed once it has committed some batches but not all.
    assert wait_for(lambda: 0 < counts(ws.db_path)["ledger"] < 3000, 60, 0.01), counts(ws.db_path)
    os.kill(first.pid, signal.SIGKILL)
    first.wait(10)
    mid = counts(ws.db_path)
    assert mid["ledger"] < 3000 and mid.get("pending", 0) + mid.get("running", 0) > 0
    store.forget(ws.db, gone)  # work that arrives while no worker runs
    second = spawn(worker_env)
    assert wait_for(lambda: counts(ws.db_path)["ledger"] == 2996 and not counts(ws.db_path).get("pending")
                    and not counts(ws.db_path).get("running"), 120, 0.2), counts(ws.db_path)
    worker_client.ask(str(home), {"op": "shutdown"}, timeout=5)
    second.wait(30)
    final = counts(ws.db_path)
    assert final["memories"] == final["ledger"] == final["ctx"] == 2996
    assert final.get("failed", 0) == 0
    from memory.recall.vectors import VectorStore

    meta = ws.db.execute("SELECT value FROM meta WHERE key = 'vectors:provider'").fetchone()[0]
    vs = VectorStore(ws.dir, meta, 1024)
    ids = vs.table.to_arrow().column("id").to_pylist()
    assert len(ids) == len(set(ids)) == 2996 and not set(gone) & set(ids)


def test_prompt_hook_uses_the_warm_worker_and_falls_back_without_it(worker_env: dict[str, str], home: Path,
                                                                     project: Path, monkeypatch: pytest.MonkeyPatch
                                                                     ) -> None:
    monkeypatch.setenv("MEMORY_LOG_LEVEL", "debug")
    monkeypatch.setenv("MEMORY_WORKER_TIMEOUT_MS", "1000")  # a loaded CI machine: the answer, not the budget
    ws = Workspace(identify(str(project)), str(home))
    texts = ["Orders service: Postgres connection pool exhausted under load",
             "Root cause: the retry decorator leaves transactions open; wrapped it in a context manager"]
    for n, text in enumerate(texts):
        store.save(ws.db, ws.project.key, store.NewMemory(text[:60], text, type="bugfix", session_id="old",
                                                          created_at=1_700_000_000 + n), filter_low_value=False)
    worker_client.start(str(home))
    assert wait_for(lambda: counts(ws.db_path)["ledger"] == 2, 30)
    hooks = HookRunner(project, session="new-session")
    context = hooks.prompt("why was the postgres connection pool exhausted in the orders service?")
    assert "pool exhausted" in context
    log = (home / "logs" / "hooks.log").read_text()
    assert "recall: hybrid" in log
    worker_client.ask(str(home), {"op": "shutdown"}, timeout=5)
    assert wait_for(lambda: not worker_client.alive(str(home)), 20)
    monkeypatch.setenv("MEMORY_WORKER", "off")
    hooks = HookRunner(project, session="third-session")
    assert "pool exhausted" in hooks.prompt("the postgres connection pool exhausted again in orders")
    assert all(json.loads(json.dumps(r))["exit_code"] == 0 for r in hooks.results)


def test_an_interpreter_without_lancedb_fails_once_and_hooks_back_off(worker_env: dict[str, str], home: Path) -> None:
    import shutil

    bare = None
    for cand in ("/usr/bin/python3", shutil.which("python3")):
        if cand and subprocess.run([cand, "-c", "import lancedb"], capture_output=True).returncode != 0:
            bare = cand
            break
    if bare is None:
        pytest.skip("no interpreter without lancedb on this machine")
    real = subprocess.run([bare, "-c", "import sys; print(sys.executable)"], capture_output=True,
                          text=True).stdout.strip()
    proc = subprocess.run([bare, "-m", "memory.worker"], env=worker_env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "cannot run" in proc.stderr
    info = json.loads((home / "worker.failed").read_text())
    assert info["python"] == real and "lancedb" in info["error"]
    assert not worker_client.alive(str(home))
    # A hook on that interpreter would not try again for a while; the venv's interpreter still may.
    monkey_exe = sys.executable
    try:
        sys.executable = real
        assert worker_client._recently_failed(str(home))
    finally:
        sys.executable = monkey_exe
    assert not worker_client._recently_failed(str(home))


def _searched_warm(home: Path, key: str) -> dict | None:
    answer = worker_client.ask(str(home), {"op": "search", "project": key, "query": "postgres connection pool",
                                           "limit": 5}, timeout=5)
    return answer if answer and answer.get("warm") and answer.get("hits") else None


def _idle_state(home: Path) -> dict:
    return worker_client.ask(str(home), {"op": "ping"}, timeout=5) or {}


@pytest.mark.parametrize("how", ["re-exec", "in place"])
def test_an_idle_worker_frees_its_model_and_lists_then_loads_them_again(
        worker_env: dict[str, str], home: Path, project: Path, how: str) -> None:
    """After MEMORY_WORKER_RELEASE_SECONDS without jobs or queries the worker holds neither the model nor the
    in-memory lists (seen through its own status on the socket); the next search loads them again. Started
    as `python -m memory.worker` it re-executes itself light (same pid, lock kept, lancedb no longer
    imported); run inside another program (`memory worker run`) it frees them in place."""
    ws = Workspace(identify(str(project)), str(home))
    for n, text in enumerate(["Orders service: Postgres connection pool exhausted under load",
                              "Root cause: the retry decorator leaves transactions open"]):
        store.save(ws.db, ws.project.key, store.NewMemory(text[:60], text, type="bugfix", session_id="s",
                                                          created_at=1_700_000_000 + n), filter_low_value=False)
    env = {**worker_env, "MEMORY_WORKER_RELEASE_SECONDS": "2", "MEMORY_WORKER_IDLE_SECONDS": "120"}
    cmd = [sys.executable, "-m", "memory.worker"] if how == "re-exec" else [sys.executable, "-m", "memory",
                                                                             "worker", "run"]
    log = Path(worker_client.log_file(str(home)))
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as fh:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=fh, start_new_session=True)
    try:
        assert wait_for(lambda: _searched_warm(home, ws.project.key), 60), log.read_text()
        busy = _idle_state(home)
        assert busy["model_loaded"] and busy["projects"][ws.project.key]["warm"], busy
        assert not busy["lancedb_in_worker"], busy  # LanceDB is the vector process's (vector_host.py)
        freed = wait_for(lambda: (s := _idle_state(home)) and not s["model_loaded"] and s, 30, step=0.2)
        assert freed, log.read_text()
        assert freed["projects"] == {} and freed["pid"] == busy["pid"] == proc.pid and freed["provider"] is None
        assert worker_client.alive(str(home)) and proc.poll() is None  # still the data dir's worker
        if how == "re-exec":
            # lancedb and the model were the bulk of it; with hashing and two memories little else is left
            assert not freed["lancedb_loaded"] and freed["rss_bytes"] < busy["rss_bytes"], (busy, freed)
            assert "light: holding the lock" in log.read_text()
        else:
            assert wait_for(lambda: "model and in-memory lists freed" in log.read_text(), 10)
        # The status probes above were not use: the idle clock kept running through them.
        assert freed["idle_seconds"] >= 2
        again = wait_for(lambda: _searched_warm(home, ws.project.key), 60)
        assert again and again["hits"][0]["id"] == 1, (again, log.read_text())
        assert _idle_state(home)["model_loaded"]
    finally:
        worker_client.ask(str(home), {"op": "shutdown"}, timeout=5)
        proc.wait(30)
    assert proc.returncode == 0
    ws.close()
