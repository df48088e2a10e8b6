"""Concurrency stress: several Claude Code sessions on one project at once.

N driver processes each fire --events hook events (mixed: prompts, tool calls, turn ends, compactions)
through the real hook launcher, in parallel, while a CLI search loop runs beside them (and the background
worker, which the hooks start when they queue work). Events a locked database refused wait in the spool
(memory/hook/spool.py) until a later hook replays them: when the drivers are done, a few more hooks (a next
session) drain it. Then it checks that no event was lost, that no hook failed or logged "database is
locked", that no job is duplicated, and prints hook latency and how many events went through the spool. With --settle
it then waits for the worker to index everything and checks the vector index (LanceDB) against SQLite.

    .venv/bin/python -m scripts.bench.stress [--processes 8] [--events 1000] [--settle] [--keep DIR] [--json]
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from memory.base.project import identify
from scripts.bench.common import ROOT, arguments, machine, machine_line, percentile, print_json

LAUNCHER = str(ROOT / "hooks" / "run")


def _event(kind: int, proc: int, i: int, project: str) -> tuple[str, dict]:
    base = {"session_id": f"stress-{proc}", "transcript_path": "", "cwd": project}
    if kind == 0:
        return "user_prompt_submit", {**base, "hook_event_name": "UserPromptSubmit",
                                      "prompt": f"Implement stress feature {proc}-{i} for the billing queue"}
    if kind in (1, 2, 3):
        return "post_tool_use", {**base, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                                 "tool_input": {"command": f"make target-{proc}-{i}"},
                                 "tool_response": {"stdout": f"built {proc} {i}", "stderr": ""}}
    if kind == 4:
        return "post_tool_use", {**base, "hook_event_name": "PostToolUse", "tool_name": "Edit",
                                 "tool_input": {"file_path": f"{project}/src/file_{proc}_{i}.py",
                                                "old_string": "a", "new_string": f"b{i}"},
                                 "tool_response": {}}
    if kind == 5:
        return "stop", {**base, "hook_event_name": "Stop", "last_assistant_message": f"Done with step {i}."}
    if kind == 6:
        return "session_start", {**base, "hook_event_name": "SessionStart", "source": "startup"}
    return "pre_compact", {**base, "hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": ""}


KINDS = [0, 1, 2, 3, 4, 5, 1, 2, 4, 0, 6, 3, 5, 1, 7, 2]  # a mix weighted like a real session


def driver(proc: int, events: int, project: str, env: dict[str, str], out: multiprocessing.Queue) -> None:
    times, failures, counts = [], [], {"prompts": 0, "bash": 0, "edit": 0, "tools": 0}
    for i in range(events):
        kind = KINDS[i % len(KINDS)]
        entry, payload = _event(kind, proc, i, project)
        start = time.perf_counter()
        p = subprocess.run([LAUNCHER, entry], input=json.dumps(payload).encode(), capture_output=True, env=env)
        times.append((time.perf_counter() - start) * 1000)
        if p.returncode != 0 or p.stderr:
            failures.append(f"{entry}: exit {p.returncode} {p.stderr[:200]!r}")
        counts["prompts"] += kind == 0
        counts["bash"] += kind in (1, 2, 3)
        counts["edit"] += kind == 4
        counts["tools"] += kind in (1, 2, 3, 4)
    out.put({"times": times, "failures": failures, "counts": counts})


def vector_consistency(home: Path, key: str) -> dict:
    """The derived indexes against SQLite: every memory in the ledger and in LanceDB exactly once, nothing
    there that SQLite no longer has, no vector job left pending, running or failed."""
    from memory.recall.vectors import VectorStore

    db = sqlite3.connect(home / "projects" / key / "memory.db")
    try:
        memories = {r[0] for r in db.execute("SELECT id FROM memories")}
        ledger = {r[0] for r in db.execute("SELECT memory_id FROM memory_index")}
        ctx = {r[0] for r in db.execute("SELECT rowid FROM memories_ctx")}
        open_jobs = db.execute("SELECT count(*) FROM queue WHERE kind = 'vector' AND status != 'done'").fetchone()[0]
        meta = db.execute("SELECT value FROM meta WHERE key = 'vectors:provider'").fetchone()
    finally:
        db.close()
    vector_ids: list[int] = []
    if meta:
        vs = VectorStore(str(home / "projects" / key), meta[0], int(meta[0].rsplit(":", 1)[1]))
        vector_ids = vs.table.to_arrow().column("id").to_pylist()
    return {"memories": len(memories), "ledger_missing": len(memories - ledger), "ledger_extra": len(ledger - memories),
            "ctx_missing": len(memories - ctx), "vectors_missing": len(memories - set(vector_ids)),
            "vectors_extra": len(set(vector_ids) - memories),
            "vectors_duplicated": len(vector_ids) - len(set(vector_ids)),
            "vector_jobs_open": open_jobs,
            "consistent": memories == ledger == set(vector_ids) and len(vector_ids) == len(set(vector_ids))
            and not open_jobs}


def settle(home: Path, key: str, env: dict[str, str], timeout: float = 900.0) -> dict:
    """Wait until the worker has indexed every memory (starting one if none runs), then compare."""
    from memory.base import worker_client

    started = time.perf_counter()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not worker_client.alive(str(home)):
            subprocess.run([sys.executable, "-c", "import sys; from memory.base import worker_client; "
                            "worker_client.start(sys.argv[1])", str(home)], env={**env, "PYTHONPATH": str(ROOT)})
        db = sqlite3.connect(home / "projects" / key / "memory.db")
        left = db.execute("SELECT count(*) FROM queue WHERE kind = 'vector' AND status IN ('pending', 'running')"
                          ).fetchone()[0]
        unindexed = db.execute("SELECT count(*) FROM memories m LEFT JOIN memory_index i ON i.memory_id = m.id "
                               "WHERE i.memory_id IS NULL").fetchone()[0]
        db.close()
        if not left and not unindexed:
            break
        time.sleep(1.0)
    return {**vector_consistency(home, key), "settle_seconds": round(time.perf_counter() - started, 1)}


def drain_spool(home: Path, project: str, env: dict[str, str], rounds: int = 200) -> int:
    """Events a locked database refused wait in the spool for the next hook: fire a few (a new session's
    first tool call, as the next session would) until none is left. Returns how many remain."""
    from memory.hook import spool

    folder = str(home / "spool")
    for i in range(rounds):
        if not spool.pending(folder):
            return 0
        _, payload = _event(2, 99, i, project)
        payload["session_id"] = "stress-drain"
        payload["tool_input"] = {"command": f"make drain-{i}"}  # not counted as a driver's command
        subprocess.run([LAUNCHER, "post_tool_use"], input=json.dumps(payload).encode(), capture_output=True, env=env)
    return len(spool.pending(folder))


def run(processes: int, events: int, workdir: Path, *, settle_index: bool = False) -> dict:
    home, project = workdir / "data", workdir / "project"
    (project / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    env = {**os.environ, "MEMORY_HOME": str(home)}
    for name in ("CLAUDE_PLUGIN_DATA", "CLAUDE_PROJECT_DIR", "MEMORY_PROJECT_DIR"):
        env.pop(name, None)
    searches = {"ok": 0, "failed": []}
    stop = threading.Event()

    def search_loop() -> None:
        cli = [str(Path(sys.executable).parent / "memory"), "search", "stress", "billing", "--json"]
        while not stop.is_set():
            p = subprocess.run(cli, capture_output=True, cwd=project, env=env)
            if p.returncode == 0:
                searches["ok"] += 1
            elif b"no memories" not in p.stderr:
                searches["failed"].append(p.stderr[-300:].decode(errors="replace"))
            time.sleep(0.2)

    queue: multiprocessing.Queue = multiprocessing.Queue()
    started = time.perf_counter()
    drivers = [multiprocessing.Process(target=driver, args=(p, events, str(project), env, queue))
               for p in range(processes)]
    searcher = threading.Thread(target=search_loop, daemon=True)
    searcher.start()
    for d in drivers:
        d.start()
    results = [queue.get() for _ in drivers]
    for d in drivers:
        d.join()
    stop.set()
    searcher.join(timeout=30)
    wall = time.perf_counter() - started
    spooled_left = drain_spool(home, str(project), env)

    db = sqlite3.connect(home / "projects" / identify(str(project)).key / "memory.db")
    bash = db.execute("SELECT count(*) FROM memories WHERE title LIKE 'Ran `make target-%'").fetchone()[0]
    edits = db.execute("SELECT count(*) FROM memories WHERE title LIKE 'Modified src/file_%'").fetchone()[0]
    prompts = db.execute("SELECT count(*) FROM memories WHERE title LIKE 'Asked: Implement stress feature%'"
                         ).fetchone()[0]
    tool_calls = db.execute("SELECT coalesce(sum(tool_call_count), 0) FROM sessions WHERE id != 'stress-drain'"
                            ).fetchone()[0]
    dup_jobs = db.execute("SELECT count(*) FROM (SELECT dedup_key FROM queue WHERE dedup_key IS NOT NULL "
                          "GROUP BY dedup_key HAVING count(*) > 1)").fetchone()[0]
    log = home / "logs" / "hooks.log"
    log_text = log.read_text(errors="replace") if log.exists() else ""
    times = [t for r in results for t in r["times"]]
    key = identify(str(project)).key
    index = settle(home, key, env) if settle_index else None
    from memory.base import worker_client

    worker_client.ask(str(home), {"op": "shutdown"}, timeout=5)  # stop the worker this run started
    expected = {k: sum(r["counts"][k] for r in results) for k in ("prompts", "bash", "edit", "tools")}
    drain_calls = db.execute("SELECT coalesce(sum(tool_call_count), 0) FROM sessions WHERE id = 'stress-drain'"
                             ).fetchone()[0]
    return {
        "processes": processes, "events_per_process": events, "events": len(times), "wall_seconds": round(wall, 1),
        "events_per_second": round(len(times) / wall, 1),
        "hook_p50_ms": round(statistics.median(times), 1),
        "hook_p95_ms": round(percentile(times, 0.95), 1), "hook_max_ms": round(max(times), 1),
        "failures": [f for r in results for f in r["failures"]][:10],
        "lost": {"bash": expected["bash"] - bash, "edit": expected["edit"] - edits,
                 "prompts": expected["prompts"] - prompts, "tool_calls": expected["tools"] - tool_calls},
        "locked_in_log": log_text.count("database is locked"), "errors_in_log": log_text.count(" ERROR "),
        "spooled": log_text.count("event spooled as"), "left_in_spool": spooled_left,
        "drain_hooks": drain_calls,
        "duplicate_jobs": dup_jobs, "cli_searches_ok": searches["ok"], "cli_searches_failed": searches["failed"][:5],
        **({"vector_index": index} if index else {}),
    }


def main() -> None:
    ap = arguments(__doc__)
    ap.add_argument("--processes", type=int, default=8)
    ap.add_argument("--events", type=int, default=1000)
    ap.add_argument("--settle", action="store_true", help="Then wait for the worker to index everything and "
                    "check LanceDB against SQLite.")
    ap.add_argument("--keep", metavar="DIR", help="Work in DIR (an empty folder) and keep it: the data dir, its "
                    "logs and the project stay for a look afterwards.")
    args = ap.parse_args()
    if args.keep:
        Path(args.keep).mkdir(parents=True, exist_ok=True)
        result = run(args.processes, args.events, Path(args.keep), settle_index=args.settle)
    else:
        with tempfile.TemporaryDirectory(prefix="bench-stress-") as tmp:
            result = run(args.processes, args.events, Path(tmp), settle_index=args.settle)
    info = machine()
    if args.json:
        print_json(result, info)
        return
    for key, value in result.items():
        print(f"{key:<22} {value}")
    print(f"{'machine':<22} {machine_line(info)}")


if __name__ == "__main__":
    main()
