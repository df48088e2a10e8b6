"""Searches while a first index builds: a real worker embeds the last share of a store with the real model
while searches are sent over its socket, one after another; how each was answered and how long it took.

The store: --memories memories (scripts/bench/fill.py's prose), all but the last --pending of them indexed
beforehand with vectors of MiniLM's key and dimension from the hashing embedder (scripts/bench/profile.py's
stand-in; the model takes an hour for 10,000 here), their ledger rows for the rest removed, so the worker's
sweep queues them and embeds them with all-MiniLM-L6-v2 on numpy, as a first index at 90-99% does. Once the
worker answers from its in-memory lists (its start: the model, the lists' build), --searches searches. Each
search: the wall time the client waited (at most --timeout), and whether it came back hybrid (hits), keyword
(with the worker's reason), "loading" or not at all; the worker's time and CPU for it, and the worker's CPU
seconds over the whole run beside.
--checkout DIR runs the worker from another checkout on a copy of the same store: before and after a change
in one run.

    .venv/bin/python -m scripts.bench.indexing_search [--memories 10000] [--pending 500] [--timeout 5]
        [--searches 30] [--every 1.0] [--checkout DIR] [--json]

Each checkout runs twice on copies of the store: fully indexed (the same searches with nothing to index: the
machine's own figure at its load) and with --pending memories to index.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from memory.base import worker_client
from memory.base.project import Project
from memory.recall import embed
from memory.store.workspace import Workspace
from scripts.bench.common import ROOT, arguments, machine, machine_line, percentile, print_json
from scripts.bench.fill import populate
from scripts.bench.profile import QUERIES, StandIn, worker_process

KEY = "bench-indexing"


def prepare(home: Path, n: int) -> list[int]:
    """n memories, all indexed with stand-in vectors; their ids."""
    from memory.worker import ProjectIndex

    ws = Workspace(Project(KEY, KEY, str(home / "root"), None), str(home))
    populate(ws, n)
    ids = [r[0] for r in ws.db.execute("SELECT id FROM memories ORDER BY id")]
    p = ProjectIndex(str(home), KEY, StandIn(embed.make("minilm")))
    p.check_provider()
    for at in range(0, len(ids), 1024):
        p.index(ids[at:at + 1024])
    p.close()
    ws.close()
    return ids


def forget_last(home: Path, ids: list[int], pending: int) -> None:
    """The ledger rows of the last `pending` memories removed: the worker's sweep queues them again."""
    db = sqlite3.connect(home / "projects" / KEY / "memory.db")
    with db:
        db.execute("DELETE FROM memory_index WHERE memory_id > ?", (ids[len(ids) - pending - 1],))
    db.close()


def left(home: Path) -> int:
    db = sqlite3.connect(home / "projects" / KEY / "memory.db")
    try:
        return int(db.execute("SELECT (SELECT count(*) FROM memories) - (SELECT count(*) FROM memory_index)")
                   .fetchone()[0])
    finally:
        db.close()


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process and its waited-for children, from /proc (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def kind(answer: dict[str, Any] | None) -> str:
    if answer is None:
        return "no answer"
    if answer.get("ok") and isinstance(answer.get("hits"), list):
        return "hybrid"
    if answer.get("ok"):
        return "keyword"
    return "loading" if answer.get("loading") else "error"


def run(home: Path, checkout: Path, timeout: float, n: int, every: float) -> dict[str, Any]:
    env = {**os.environ, "MEMORY_HOME": str(home), "MEMORY_EMBEDDER": "minilm", "MEMORY_WORKER": "on",
           "MEMORY_WORKER_IDLE_SECONDS": "600", "MEMORY_WORKER_RELEASE_SECONDS": "0"}
    searches: list[dict[str, Any]] = []
    with worker_process(home, env, checkout) as proc:
        t_warm = time.monotonic()  # first the worker's start: the model, the vector process, the lists' build
        while time.monotonic() - t_warm < 600 and proc.poll() is None:
            answer = worker_client.ask_raw(str(home), {"op": "search", "project": KEY, "query": "warm", "limit": 1},
                                           timeout)
            if answer and answer.get("warm"):
                break
            time.sleep(0.5)
        warm_seconds = round(time.monotonic() - t_warm, 1)
        pending_at_start = left(home)
        cpu_at_start = cpu_seconds(proc.pid)
        t_start = time.monotonic()
        while len(searches) < n and proc.poll() is None:
            todo = left(home)
            t0 = time.monotonic()
            answer = worker_client.ask_raw(str(home), {"op": "search", "project": KEY, "limit": 10,
                                                       "query": QUERIES[len(searches) % len(QUERIES)]}, timeout)
            wall = time.monotonic() - t0
            searches.append({"left": todo, "kind": kind(answer), "wall_ms": round(wall * 1000, 1),
                             "worker_ms": (answer or {}).get("ms"), "worker_cpu_ms": (answer or {}).get("cpu_ms"),
                             "why": (answer or {}).get("keyword") or (answer or {}).get("error")})
            time.sleep(max(0.0, every - wall))
        return {"checkout": str(checkout), "pending": pending_at_start, "left_at_end": left(home),
                "seconds": round(time.monotonic() - t_start, 1), "warm_seconds": warm_seconds,
                "worker_cpu_seconds": round(cpu_seconds(proc.pid) - cpu_at_start, 1),
                "searches": searches}


def summary(r: dict[str, Any], timeout: float) -> dict[str, Any]:
    s = r["searches"]
    walls = sorted(x["wall_ms"] for x in s)
    worker = [x["worker_ms"] for x in s if x["worker_ms"] is not None]
    cpu = [x["worker_cpu_ms"] for x in s if x["worker_cpu_ms"] is not None]
    answered = [x for x in s if x["kind"] in ("hybrid", "keyword")]
    return {"searches": len(s), "hybrid": sum(x["kind"] == "hybrid" for x in s),
            "keyword": sum(x["kind"] == "keyword" for x in s), "loading": sum(x["kind"] == "loading" for x in s),
            "no_answer": sum(x["kind"] == "no answer" for x in s),
            "answered_within_40ms": sum(x["wall_ms"] <= 40 for x in answered),
            f"answered_within_{timeout:g}s": len(answered),
            "wall_ms_p50": percentile(walls, 0.5) if walls else None,
            "wall_ms_p95": percentile(walls, 0.95) if walls else None,
            "worker_ms_p50": percentile(worker, 0.5) if worker else None,
            "worker_cpu_ms_p50": percentile(cpu, 0.5) if cpu else None}


def main() -> None:
    ap = arguments(__doc__)
    ap.add_argument("--memories", type=int, default=10000)
    ap.add_argument("--pending", type=int, default=500, help="Memories the worker embeds while it is searched.")
    ap.add_argument("--timeout", type=float, default=5.0, help="Seconds a search waits for the worker.")
    ap.add_argument("--searches", type=int, default=30, help="Searches per run, one every --every seconds.")
    ap.add_argument("--every", type=float, default=1.0)
    ap.add_argument("--checkout", type=Path, default=None, help="Also run the worker from this checkout first.")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-indexing-"))
    results = []
    try:
        ids = prepare(base / "store", args.memories)
        for checkout in [c for c in (args.checkout, ROOT) if c is not None]:
            for pending in (0, args.pending):  # the same searches without indexing: the machine's own figure
                home = base / f"run-{len(results)}"
                shutil.copytree(base / "store", home)
                if pending:
                    forget_last(home, ids, pending)
                r = run(home, checkout.resolve(), args.timeout, args.searches, args.every)
                results.append({**r, "summary": summary(r, args.timeout)})
    finally:
        shutil.rmtree(base, ignore_errors=True)
    info = machine()
    if args.json:
        print_json({"results": results}, info)
        return
    print(f"{machine_line(info)} (load at the end); {args.memories:,} memories, the last {args.pending:,} indexed "
          "by the worker (all-MiniLM-L6-v2 on numpy) while searched")
    for r in results:
        s = r["summary"]
        print(f"{r['checkout']}, {r['pending']} to index: {s['searches']} searches in {r['seconds']} s "
              f"({r['pending'] - r['left_at_end']} memories indexed meanwhile, worker CPU "
              f"{r['worker_cpu_seconds']} s): hybrid "
              f"{s['hybrid']}, keyword {s['keyword']}, loading {s['loading']}, no answer within "
              f"{args.timeout:g} s {s['no_answer']}; answered within 40 ms {s['answered_within_40ms']}; wall "
              f"p50 / p95 {s['wall_ms_p50']} / {s['wall_ms_p95']} ms; in the worker p50 {s['worker_ms_p50']} ms, "
              f"CPU {s['worker_cpu_ms_p50']} ms")
        whys = sorted({x["why"] for x in r["searches"] if x["why"]})
        if whys:
            print(f"  keyword because: {'; '.join(whys)}")


if __name__ == "__main__":
    main()
