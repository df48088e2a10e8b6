"""`memory worker stop` and `memory ui stop` against real processes: one call stops a worker however far its
start got (spawned, holding the lock while loading, serving, light), and a viewer leaves no ui.json (its
token) behind however it stops; a stale ui.json is ignored and removed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from memory.base import worker_client
from tests.support.helpers import ROOT
from tests.support.ui import running_ui


def _memory(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memory", *args], capture_output=True, text=True, cwd=ROOT)


@pytest.fixture
def worker_env(home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("MEMORY_WORKER", "on")
    monkeypatch.setenv("MEMORY_EMBEDDER", "hashing")
    monkeypatch.setenv("MEMORY_WORKER_IDLE_SECONDS", "600")  # only a stop ends it
    monkeypatch.setenv("MEMORY_DAILY_LOG", "off")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    home.mkdir(parents=True, exist_ok=True)
    yield
    worker_client.ask(str(home), {"op": "shutdown"}, timeout=2)  # whatever a failed test left running


def _kill(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    os.kill(pid, signal.SIGCONT)
    os.waitpid(pid, 0)


def _frozen_before_its_lock(home: Path, tries: int = 50) -> int:
    """A worker spawned and frozen (SIGSTOP) at once, before it has taken its lock. Whether it got that far
    first is the scheduler's choice: one that did is killed and another spawned."""
    for _ in range(tries):
        pid = worker_client.start(str(home))
        assert pid
        os.kill(pid, signal.SIGSTOP)
        if not worker_client.alive(str(home)):
            return pid
        _kill(pid)
    pytest.skip(f"each of {tries} workers took its lock before it could be frozen")


@contextmanager
def _spawned(home: Path, frozen_before_its_lock: bool = False) -> Iterator[int]:
    """A worker spawned as a hook spawns it; one a failed test left (frozen, say) is killed and reaped."""
    pid = _frozen_before_its_lock(home) if frozen_before_its_lock else worker_client.start(str(home))
    assert pid
    try:
        yield pid
    finally:
        try:
            if os.waitpid(pid, os.WNOHANG) == (0, 0):
                _kill(pid)
        except ChildProcessError:
            pass  # reaped by the test


def _exit_status(pid: int) -> int:
    """Reap a worker this test spawned (worker_client.start): blocks until it has exited."""
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def _sigterm_pending(pid: int) -> bool:
    """A SIGTERM sent to the (stopped) process waits in its shared pending set (/proc/<pid>/status ShdPnd)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("ShdPnd:"):
            return bool(int(line.split()[1], 16) & (1 << (signal.SIGTERM - 1)))
    return False


def _log(home: Path) -> str:
    path = Path(worker_client.log_file(str(home)))
    return path.read_text() if path.exists() else ""


def test_worker_stop_right_after_the_cli_started_it(worker_env: None, home: Path) -> None:
    started = _memory("worker", "start")
    assert started.returncode == 0 and started.stdout.startswith("started pid"), started
    pid = int(started.stdout.split()[2])
    stopped = _memory("worker", "stop")
    assert stopped.returncode == 0 and stopped.stdout.strip() == f"stopped (pid {pid})", stopped
    assert not worker_client.alive(str(home))  # gone when the one call returned, not later
    assert not os.path.exists(worker_client.socket_path(str(home)))
    again = _memory("worker", "stop")
    assert again.returncode == 0 and again.stdout.strip() == "not running", again


def test_worker_stop_at_once_after_a_hook_spawned_it(worker_env: None, home: Path) -> None:
    """No wait between the spawn and the stop: the worker may not hold its lock yet, or hold it while it
    loads (no socket): either way it exits, and it never serves."""
    with _spawned(home) as pid:
        stopped = _memory("worker", "stop")
        assert stopped.returncode == 0, stopped
        assert stopped.stdout.strip() in ("not running", f"stopped (pid {pid})"), stopped
        assert _exit_status(pid) == 0
    assert not worker_client.alive(str(home))


@pytest.mark.parametrize("phase", ["before its lock", "holding its lock"])
def test_worker_stop_of_a_worker_frozen_while_starting(worker_env: None, home: Path, phase: str) -> None:
    """The worker is frozen (SIGSTOP) at a point of its start, the stop runs, then it goes on (SIGCONT): the
    one stop call stops it. Before its lock the stop cannot see it: it exits as it takes the lock
    (worker.stop). Holding its lock before it serves: the socket does not answer, SIGTERM ends it."""
    with _spawned(home, frozen_before_its_lock=phase == "before its lock") as pid:
        lock = Path(worker_client.lock_path(str(home)))
        if phase == "holding its lock":  # and has written its pid, which it does just after taking the lock
            while not (worker_client.alive(str(home)) and lock.read_text().strip() == str(pid)):
                time.sleep(0.002)
            os.kill(pid, signal.SIGSTOP)
        serving = os.path.exists(worker_client.socket_path(str(home)))
        assert worker_client.alive(str(home)) == (phase == "holding its lock")
        stop = subprocess.Popen([sys.executable, "-m", "memory", "worker", "stop"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=ROOT)
        marker = Path(worker_client.stop_path(str(home)))
        while not marker.exists():  # the stop has begun: its marker is its first step
            time.sleep(0.01)
        if phase == "holding its lock":
            while not _sigterm_pending(pid):  # the socket did not answer: the stop signalled the frozen worker
                assert stop.poll() is None, stop.communicate()
                time.sleep(0.01)
        os.kill(pid, signal.SIGCONT)
        out, err = stop.communicate()
        assert stop.returncode == 0, (out, err)
        assert _exit_status(pid) == 0, _log(home)
        assert not worker_client.alive(str(home))
        if phase == "before its lock":
            assert out.strip() == "not running"
            assert "a stop was asked for after this worker was spawned" in _log(home)
            assert " started (home " not in _log(home)
        else:
            assert out.strip() == f"stopped (pid {pid})", (out, err)
            if not serving:  # frozen before its socket existed (the usual case): SIGTERM, no serving
                assert " started (home " not in _log(home) and "SIGTERM before it served" in _log(home), _log(home)


def test_worker_stop_of_a_light_worker(worker_env: None, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker that re-executed itself light (same pid, lock kept) is stopped by one call."""
    monkeypatch.setenv("MEMORY_WORKER_RELEASE_SECONDS", "1")
    with _spawned(home) as pid:
        while "light: holding the lock" not in _log(home):
            assert os.waitpid(pid, os.WNOHANG) == (0, 0), _log(home)
            time.sleep(0.1)
        stopped = _memory("worker", "stop")
        assert stopped.returncode == 0 and stopped.stdout.strip() == f"stopped (pid {pid})", stopped
        assert _exit_status(pid) == 0
    assert not worker_client.alive(str(home))


def test_a_viewer_ended_by_sigterm_removes_its_ui_json(home: Path, project: Path) -> None:
    with running_ui(project) as s:
        assert json.loads((home / "ui.json").read_text())["pid"] == s.proc.pid
        s.proc.send_signal(signal.SIGTERM)
        assert s.proc.wait() == 0
    assert not (home / "ui.json").exists()


@pytest.fixture
def no_viewer_left(home: Path) -> Iterator[None]:
    """A detached viewer a failed test left is stopped (by the pid its ui.json names)."""
    yield
    if (home / "ui.json").exists():
        _memory("ui", "stop")


def test_memory_ui_stop_stops_a_detached_viewer(home: Path, project: Path, no_viewer_left: None) -> None:
    started = _memory("ui", "--detach", "--no-browser", "-p", str(project))
    assert started.returncode == 0 and "token=" in started.stdout, started
    pid = json.loads((home / "ui.json").read_text())["pid"]
    stopped = _memory("ui", "stop")
    assert stopped.returncode == 0 and stopped.stdout.strip() == f"stopped (pid {pid})", stopped
    assert not (home / "ui.json").exists()  # the viewer removed it as it exited, before the stop returned
    assert "memory ui: stopped" in (home / "ui.log").read_text()
    again = _memory("ui", "stop")
    assert again.returncode == 0 and again.stdout.strip() == "not running", again


def test_a_stale_ui_json_is_ignored_and_removed(home: Path, project: Path, no_viewer_left: None) -> None:
    """ui.json of a viewer killed hard (SIGKILL: no cleanup) names a dead pid and a dead token."""
    with running_ui(project) as s:
        old = json.loads((home / "ui.json").read_text())
        s.proc.kill()
        s.proc.wait()
    assert (home / "ui.json").exists()
    stopped = _memory("ui", "stop")
    assert stopped.returncode == 0 and stopped.stdout.strip() == "not running", stopped
    assert not (home / "ui.json").exists()
    # A detached start past a stale file serves anew instead of printing the dead viewer's URL.
    (home / "ui.json").write_text(json.dumps(old))
    started = _memory("ui", "--detach", "--no-browser", "-p", str(project))
    assert started.returncode == 0, started
    assert started.stdout.strip() != old["url"] and "token=" in started.stdout
    state = json.loads((home / "ui.json").read_text())
    assert state["pid"] != old["pid"] and state["url"] == started.stdout.strip()
    assert _memory("ui", "stop").returncode == 0
    assert not (home / "ui.json").exists()
