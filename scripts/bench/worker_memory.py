"""The worker's memory while it serves a session at --memories memories: the worker and its LanceDB child
(memory/recall/vector_host.py) together, RSS and PSS, and how soon it goes light once the session stops.

The store: scripts/bench/profile.py's (fill.py's prose, vectors written by the hashing stand-in under
all-MiniLM-L6-v2's key and dimension, as `memory reindex` leaves them). Then a real worker (`python -m
memory.worker`, MiniLM on numpy for queries and new memories) is made warm (its in-memory lists built), and
served --rounds rounds of what a session's hooks send: --saves new memories saved as the hooks save them (the
worker embeds and indexes them) and --searches hybrid searches over its socket, a round every --every
seconds. The worker's and its children's VmRSS and PSS (/proc/<pid>/smaps_rollup: shared pages split between
the processes that map them; on a machine where other processes map the same files, PSS is below what
these two alone would hold, so RSS is the figure to compare) are read after each round. Then nothing: the
seconds until the worker's RSS drops under 40 MiB (it re-executes itself light after
MEMORY_WORKER_RELEASE_SECONDS). claude-mem's worker is quoted beside it (100-110 MB RSS, measured in
issue 27 on the same kind of machine; not re-measured here). --checkout DIR runs the worker from another
checkout on a copy of the same store: before and after a change in one run.

    .venv/bin/python -m scripts.bench.worker_memory [--memories 10000] [--rounds 12] [--saves 4]
        [--searches 3] [--every 5] [--idle 150] [--checkout DIR] [--json]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from memory import store
from memory.base import worker_client
from memory.base.project import Project
from memory.store.workspace import Workspace
from scripts.bench.common import ROOT, arguments, machine, machine_line, print_json
from scripts.bench.profile import QUERIES, children, storage, worker_process

KEY = "bench-profile"  # profile.storage's project
CLAUDE_MEM_MB = (100, 110)  # issue 27: claude-mem 13.25.3's worker, serving, RSS


def rss_pss(pid: int) -> tuple[int, int]:
    """(RSS, PSS) bytes of one process; (0, 0) once it is gone."""
    rss = pss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Rss:"):
                    rss = int(line.split()[1]) * 1024
                elif line.startswith("Pss:"):
                    pss = int(line.split()[1]) * 1024
    except OSError:
        pass
    return rss, pss


def sample(pid: int) -> dict[str, int]:
    w_rss, w_pss = rss_pss(pid)
    kids = [rss_pss(c) for c in children(pid)]
    c_rss, c_pss = sum(k[0] for k in kids), sum(k[1] for k in kids)
    return {"worker_rss": w_rss, "worker_pss": w_pss, "child_rss": c_rss, "child_pss": c_pss,
            "rss": w_rss + c_rss, "pss": w_pss + c_pss, "child_up": int(bool(kids))}


def search(home: Path, query: str) -> dict[str, Any] | None:
    return worker_client.ask(str(home), {"op": "search", "project": KEY, "query": query, "limit": 10}, timeout=10)


def serve_round(home: Path, ws: Workspace, r: int, saves: int, searches: int) -> None:
    """What a prompt and its tool calls send: memories saved (the worker indexes them), then searches."""
    for i in range(saves):
        text = f"round {r} note {i}: the retry loop in module m{(r * saves + i) % 13} needed a longer deadline"
        store.save(ws.db, KEY, store.NewMemory(text[:60], text, type="observation", session_id=f"serve-{r}"),
                   filter_low_value=False)
    store.mark_dirty(ws.db, None)
    worker_client.ask(str(home), {"op": "wake"}, timeout=5)
    for q in range(searches):
        search(home, QUERIES[(r * searches + q) % len(QUERIES)])


def run(home: Path, checkout: Path, args: argparse.Namespace) -> dict[str, Any]:
    env = {**os.environ, "MEMORY_HOME": str(home), "MEMORY_EMBEDDER": "minilm", "MEMORY_WORKER": "on",
           "MEMORY_WORKER_IDLE_SECONDS": str(max(600, args.idle + 60))}
    env.pop("MEMORY_WORKER_RELEASE_SECONDS", None)  # each checkout's own default
    ws = Workspace(Project(KEY, KEY, str(home / "root"), None), str(home))
    try:
        with worker_process(home, env, checkout) as proc:
            deadline = time.monotonic() + 600
            while time.monotonic() < deadline and not ((a := search(home, "parser token cache")) and a.get("warm")):
                time.sleep(0.5)
            warm = sample(proc.pid)
            serving = []
            for r in range(args.rounds):
                t0 = time.monotonic()
                serve_round(home, ws, r, args.saves, args.searches)
                serving.append(sample(proc.pid))
                time.sleep(max(0.0, args.every - (time.monotonic() - t0)))
            t_idle, light_after = time.monotonic(), None
            while time.monotonic() - t_idle < args.idle:
                if rss_pss(proc.pid)[0] < 40 << 20:
                    light_after = round(time.monotonic() - t_idle, 1)
                    break
                time.sleep(1)
            return {"checkout": str(checkout), "warm": warm, "serving": serving, "light_after_seconds": light_after}
    finally:
        ws.close()


def mib(n: float) -> str:
    return f"{n / 2**20:.0f}"


def main() -> None:
    ap = arguments(__doc__)
    ap.add_argument("--memories", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--saves", type=int, default=4, help="Memories saved per round.")
    ap.add_argument("--searches", type=int, default=3, help="Searches per round.")
    ap.add_argument("--every", type=float, default=5.0, help="Seconds from one round to the next.")
    ap.add_argument("--idle", type=int, default=150, help="Seconds to wait for the worker to go light.")
    ap.add_argument("--checkout", type=Path, default=None, help="Also run the worker from this checkout first.")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-worker-memory-"))
    results = []
    try:
        os.environ["MEMORY_WORKER"] = "off"  # storage() writes through the library: no worker of its own
        built = storage(args.memories, "minilm", base / "store", stand_in=True)
        os.environ.pop("MEMORY_WORKER", None)
        for checkout in [c for c in (args.checkout, ROOT) if c is not None]:
            home = base / f"run-{len(results)}"
            shutil.copytree(base / "store", home)
            results.append(run(home, checkout.resolve(), args))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    info = machine()
    if args.json:
        print_json({"store": built, "results": results, "claude_mem_mb": CLAUDE_MEM_MB}, info)
        return
    print(f"{machine_line(info)} (load at the end); {args.memories:,} memories, MiniLM on numpy; serving: "
          f"{args.rounds} rounds of {args.saves} saves and {args.searches} searches, one every {args.every:g} s")
    print(f"claude-mem 13.25.3's worker, serving (issue 27, not re-measured): {CLAUDE_MEM_MB[0]}-{CLAUDE_MEM_MB[1]} MB")
    for r in results:
        s, w = r["serving"], r["warm"]
        print(f"{r['checkout']}: warm worker {mib(w['worker_rss'])} MiB RSS (child {mib(w['child_rss'])})")
        rss, pss = [x["rss"] for x in s], [x["pss"] for x in s]
        print(f"  serving, worker + child: RSS median {mib(statistics.median(rss))} / max {mib(max(rss))} MiB, "
              f"PSS median {mib(statistics.median(pss))} / max {mib(max(pss))} MiB; worker alone RSS max "
              f"{mib(max(x['worker_rss'] for x in s))} MiB; child up in {sum(x['child_up'] for x in s)} of "
              f"{len(s)} samples (RSS max {mib(max(x['child_rss'] for x in s))})")
        print(f"  light (RSS < 40 MiB) {r['light_after_seconds']} s after the last round"
              if r["light_after_seconds"] is not None else f"  not light within {args.idle} s")


if __name__ == "__main__":
    main()
