"""Power cut: the data dir (memory.db, -wal, -shm, the LanceDB folder) copied while hooks and the worker are
writing, at several points, and each copy opened as the next start would open it.

A power cut stops every process at one instant and leaves the disk as it was then. Copying files one
after another while writers keep going is something else (each file from another moment), so the main
copies are taken with every writer frozen (SIGSTOP) mid-whatever-it-was-doing: hooks inside a transaction
or a commit, the worker inside a LanceDB commit or its ledger transaction. Each such copy must open
healthy (or be made healthy by `memory doctor --repair`) and hold every memory whose hook exited 0 before
the copy began; a worker run on it must leave LanceDB equal to SQLite. A copy taken without freezing
(torn across files) must still be brought back by doctor, with no traceback."""

from __future__ import annotations

import os
import random
import shutil
import signal
import stat
import subprocess
import threading
import time
from pathlib import Path

from memory.base import worker_client
from tests.support.crash import (
    bash_event,
    crash_env,
    healthy_or_repaired,
    prompt_event,
    settle_worker,
    spawn_worker,
    start_hook,
    titles,
)
from tests.support.helpers import make_git_project

COPIES = 3


def _regular_files_only(folder: str, names: list[str]) -> list[str]:
    """The worker's socket and lock are not data (and a socket cannot be copied)."""
    return [n for n in names if n in ("worker.lock",) or (
        not stat.S_ISREG(os.lstat(os.path.join(folder, n)).st_mode)
        and not stat.S_ISDIR(os.lstat(os.path.join(folder, n)).st_mode))]


def _children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (the worker's LanceDB process, memory/recall/vector_host.py), found in
    /proc: a power cut stops them too, and one left running changed the vector store under the copy."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    stat_line = fh.read()
            except OSError:  # gone meanwhile
                continue
            if int(stat_line[stat_line.rfind(b")") + 2:].split()[1]) == pid:
                found.append(int(entry))
    return found


def _copy_live(home: Path, torn: Path, attempts: int = 5) -> None:
    """A copy of the data dir while every writer runs. A file can go between the listing of its folder and its
    copy (LanceDB's temporary files): that copy is dropped and another one taken, a moment later."""
    for attempt in range(attempts):
        try:
            shutil.copytree(home, torn, ignore=_regular_files_only)
            return
        except (shutil.Error, FileNotFoundError):
            shutil.rmtree(torn, ignore_errors=True)
            if attempt == attempts - 1:
                raise


def test_copies_taken_mid_write_open_with_every_acknowledged_memory(tmp_path: Path) -> None:
    seed = int(os.environ.get("MEMORY_CRASH_SEED", str(time.time_ns() % 2**32)))
    print(f"MEMORY_CRASH_SEED={seed}")
    rng = random.Random(seed)
    home, project = tmp_path / "data", make_git_project(tmp_path / "app")
    env = crash_env(home)
    worker = spawn_worker({**env, "MEMORY_WORKER_IDLE_SECONDS": "60"})
    acked: list[tuple[float, str]] = []
    running: dict[int, subprocess.Popen[bytes]] = {}
    gate = threading.Lock()  # held to start a hook; the freezer holds it while the writers are stopped
    stop = threading.Event()
    failures: list[str] = []

    def writer(lane: int) -> None:
        i = 0
        while not stop.is_set():
            marker = f"p{lane}x{i}z"
            i += 1
            data = (prompt_event(project, f"s{lane}", marker) if i % 4 == 0
                    else bash_event(project, f"s{lane}", marker))
            with gate:
                proc = start_hook("user_prompt_submit" if i % 4 == 0 else "post_tool_use", data, env)
                running[proc.pid] = proc
            out, err = proc.communicate(timeout=120)
            done = time.monotonic()
            with gate:
                running.pop(proc.pid, None)
            if proc.returncode == 0 and not err:
                acked.append((done, marker))
            else:
                failures.append(f"{marker}: exit {proc.returncode} {err[-300:]!r}")

    threads = [threading.Thread(target=writer, args=(lane,), daemon=True) for lane in range(3)]
    for t in threads:
        t.start()
    copies: list[tuple[Path, set[str], bool]] = []
    try:
        for n in range(COPIES):
            # A few more hooks acknowledged since the last copy, then a random moment.
            deadline, wanted = time.monotonic() + 60, len(acked) + 4
            while len(acked) < wanted and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(rng.uniform(0, 0.5))
            with gate:
                victims = []
                hooks = [p.pid for p in running.values() if p.poll() is None]
                for pid in [*hooks, worker.pid, *_children(worker.pid)]:
                    try:  # a hook may have exited since poll()
                        os.kill(pid, signal.SIGSTOP)
                        victims.append(pid)
                    except ProcessLookupError:
                        pass
                began = time.monotonic()
                before = {m for t, m in acked if t < began}
                frozen = tmp_path / f"frozen-{n}"
                shutil.copytree(home, frozen, ignore=_regular_files_only)
                for pid in victims:
                    try:
                        os.kill(pid, signal.SIGCONT)
                    except ProcessLookupError:
                        pass
            copies.append((frozen, before, True))
            torn = tmp_path / f"torn-{n}"  # while everything runs: each file from another moment
            _copy_live(home, torn)
            copies.append((torn, set(), False))
    finally:
        stop.set()
        for t in threads:
            t.join(60)
        worker_client.ask(str(home), {"op": "shutdown"}, timeout=5)
        try:
            worker.wait(30)
        except subprocess.TimeoutExpired:  # a loaded machine: it may not have been serving yet
            worker.kill()
            worker.wait(10)
    assert failures == [], failures[:5]
    assert all(before for _, before, frozen in copies if frozen)
    print(f"{len(acked)} hooks acknowledged; copies hold {[len(b) for _, b, f in copies if f]} acknowledged before")

    for copy, before, frozen in copies:
        healthy, repaired = healthy_or_repaired(copy, project)
        assert healthy, f"{copy.name}: doctor --repair could not bring it back"
        if frozen:
            found = "\n".join(titles(copy, project))
            lost = sorted(m for m in before if m not in found)
            assert lost == [], f"{copy.name}: acknowledged before the copy but missing: {lost[:10]}"
            assert not repaired, f"{copy.name}: a point-in-time copy needed a repair"
    last_frozen = [c for c, _, f in copies if f][-1]
    index = settle_worker(last_frozen, project, crash_env(last_frozen))
    assert index["consistent"], index
