"""kill -9 at random points, many times: of real hook processes while they write (several at once, so
some die holding the write lock and others wait on it), and of the worker while it starts, embeds and
commits. Afterwards `memory doctor` reports a healthy database (or `--repair` makes it so), every memory
whose hook exited 0 is in SQLite, the queue has no duplicate job and no memory without its job or index
entry, and once a worker has run again the vector index (LanceDB) holds exactly SQLite's memories.

MEMORY_CRASH_KILLS sets the rounds of hook kills (default 45 rounds of 3 hooks: 100-125 killed);
MEMORY_CRASH_SEED replays a run (the seed is printed)."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import statistics
import time
from pathlib import Path

from memory import store
from memory.store.workspace import Workspace
from tests.support.crash import (
    bash_event,
    crash_env,
    db_path,
    healthy_or_repaired,
    prompt_event,
    queue_problems,
    settle_worker,
    spawn_worker,
    start_hook,
    titles,
)
from tests.support.helpers import make_git_project

ROUNDS = int(os.environ.get("MEMORY_CRASH_KILLS", "45"))
LANES = 3


def _seed() -> int:
    seed = int(os.environ.get("MEMORY_CRASH_SEED", str(time.time_ns() % 2**32)))
    print(f"MEMORY_CRASH_SEED={seed}")
    return seed


def _finish(proc: object) -> tuple[int, bytes, bytes]:
    out, err = proc.communicate(timeout=60)  # type: ignore[attr-defined]
    return proc.returncode, out, err  # type: ignore[attr-defined]


def test_hooks_killed_at_random_points(tmp_path: Path) -> None:
    rng = random.Random(_seed())
    home, project = tmp_path / "data", make_git_project(tmp_path / "app")
    env = crash_env(home)
    # How long a hook takes here and now: kills are spread over that span (and a bit past it).
    spans = []
    for n in range(3):
        t0 = time.perf_counter()
        code, _, err = _finish(start_hook("post_tool_use", bash_event(project, "warm", f"warm{n}z"), env))
        spans.append(time.perf_counter() - t0)
        assert code == 0 and err == b""
    span = statistics.median(spans)
    acknowledged, killed, completed = ["warm0z", "warm1z", "warm2z"], 0, 0
    # Kills land where the machine's timing puts them: on a loaded machine fewer hooks are caught, so the
    # rounds go on (up to 3x) until at least half of ROUNDS x LANES died and a tenth of ROUNDS completed.
    rounds = 0
    while rounds < ROUNDS or (killed < ROUNDS * LANES // 2 or completed < ROUNDS // 10) and rounds < 3 * ROUNDS:
        i, rounds = rounds, rounds + 1
        running = []
        for lane in range(LANES):
            marker = f"k{i}x{lane}z"
            if rng.random() < 0.25:
                running.append((marker, start_hook("user_prompt_submit", prompt_event(project, f"s{lane}", marker),
                                                   env)))
            else:
                running.append((marker, start_hook("post_tool_use", bash_event(project, f"s{lane}", marker), env)))
            time.sleep(rng.uniform(0, span / 6))  # staggered, so they overlap at different stages
        # Mostly in the second half of a hook's life, where it opens the database and writes.
        time.sleep(rng.uniform(0.3, 1.2) * span)
        for _, proc in running:
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
        for marker, proc in running:
            code, out, err = _finish(proc)
            if code == -signal.SIGKILL:
                killed += 1
                continue
            assert code == 0 and err == b"", (marker, code, err)
            assert not out.strip() or isinstance(json.loads(out), dict)
            acknowledged.append(marker)
            completed += 1
    found = "\n".join(titles(home, project))
    late = sum(f"k{i}x{lane}z" in found for i in range(rounds) for lane in range(LANES)) - completed
    print(f"hooks: {rounds} rounds, {killed} killed ({late} after their commit), {completed} completed")
    assert killed >= ROUNDS * LANES // 2 and completed >= ROUNDS // 10, (killed, completed, late)

    healthy, repaired = healthy_or_repaired(home, project)
    assert healthy, "doctor --repair could not bring the database back"
    found = "\n".join(titles(home, project))
    lost = [m for m in acknowledged if m not in found]
    assert lost == [], f"acknowledged but not stored: {lost[:10]}"
    assert queue_problems(home, project) == {"duplicate_jobs": 0, "memories_without_job_or_index": 0,
                                             "failed_jobs": 0}
    index = settle_worker(home, project, env)
    assert index["consistent"], index
    assert not repaired, "a killed hook left the database needing a repair"


def test_worker_killed_at_random_points(tmp_path: Path) -> None:
    rng = random.Random(_seed())
    home, project = tmp_path / "data", make_git_project(tmp_path / "app")
    env = crash_env(home)
    os.environ["MEMORY_HOME"] = str(home)  # the library calls below use this data dir
    ws = Workspace.for_dir(str(project), str(home))
    expected: dict[int, str] = {}  # id -> title of every memory saved and not forgotten
    n = 0

    def add(count: int) -> None:
        nonlocal n
        for _ in range(count):
            title = f"note {n}: handler_{n} in module_{n % 37}.py"
            saved = store.save(ws.db, ws.project.key, store.NewMemory(
                title, f"Changed handler_{n} in module_{n % 37}.py because of issue {n * 7 % 1000} in the cache",
                session_id=f"s{n // 25}"), filter_low_value=False)
            assert saved.id is not None
            expected[saved.id] = title
            n += 1

    add(600)
    kills, mid_index = 0, 0
    for _ in range(6):
        worker = spawn_worker(env)
        if rng.random() < 0.5:  # anywhere: while it imports, loads, releases old claims or embeds
            time.sleep(rng.uniform(0.05, 2.5))
        else:  # once it is indexing, at a random moment within its batches
            deadline = time.monotonic() + 30
            start = _ledger(home, project)
            while _ledger(home, project) == start and worker.poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(rng.uniform(0, 0.4))
        add(rng.randint(5, 30))  # work arriving meanwhile
        gone = rng.sample(sorted(expected), 3)
        store.forget(ws.db, gone)
        for mid in gone:
            del expected[mid]
        before = _ledger(home, project)
        worker.send_signal(signal.SIGKILL)
        worker.wait(30)
        kills += 1
        mid_index += 0 < before < n
    print(f"worker: {kills} kills, {mid_index} with the index partly built")
    ws.close()

    healthy, repaired = healthy_or_repaired(home, project)
    assert healthy and not repaired
    db = sqlite3.connect(db_path(home, project))
    stored = {r[0] for r in db.execute("SELECT title FROM memories")}
    db.close()
    assert stored == set(expected.values())
    problems = queue_problems(home, project)
    assert problems["duplicate_jobs"] == 0 and problems["failed_jobs"] == 0, problems
    index = settle_worker(home, project, env)
    assert index["consistent"] and index["memories"] == len(expected), index


def _ledger(home: Path, project: Path) -> int:
    db = sqlite3.connect(db_path(home, project))
    try:
        return int(db.execute("SELECT count(*) FROM memory_index").fetchone()[0])
    finally:
        db.close()
