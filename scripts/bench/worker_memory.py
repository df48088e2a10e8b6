"""The worker's memory while it serves a session at --memories memories: the worker and its LanceDB child
(memory/recall/vector_host.py) together, RSS and PSS, and how soon it goes light once the session stops.

The store: scripts/bench/profile.py's (fill.py's prose, vectors written by the hashing stand-in under
all-MiniLM-L6-v2's key and dimension, as `memory reindex` leaves them). Then a real worker (`python -m
memory.worker`, MiniLM on numpy for queries and new memories) is made warm (its in-memory lists built), and
served --rounds rounds of what a session's hooks send: --saves new memories saved as the hooks save them (the
worker embeds and indexes them) and --searches hybrid searches over its socket, a round every --every
seconds. The worker's and its children's VmRSS and PSS (/proc/<pid>/smaps_rollup: shared pages split between
the processes that map them; on a machine where other processes map the same files, PSS is below what
these two alone would hold, so RSS is the figure to compare) are read after each round, and every 50 ms in a
thread: the peak of worker + child in each phase (load: start to warm lists; serving; idle: the flush
and the re-exec when it goes light) is printed, with the searches' wall time at the client, the worker's
CPU per search and the CPU seconds of worker + child. Then nothing: the
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
import threading
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


class Sampler:
    """sample() of the worker every `every` seconds in a thread, each tagged with the phase it was taken in:
    the peak of worker + child between the rounds' samples (LanceDB's load, a flush) is what counts."""

    def __init__(self, pid: int, every: float = 0.05) -> None:
        self.pid, self.every, self.phase = pid, every, "load"
        self.peaks: dict[str, dict[str, int]] = {}
        self.timeline: list[tuple[float, str, int, int]] = []  # (seconds, phase, worker RSS, child RSS)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        t0 = time.monotonic()
        while not self._stop.wait(self.every):
            s = sample(self.pid)
            self.timeline.append((round(time.monotonic() - t0, 2), self.phase, s["worker_rss"], s["child_rss"]))
            peak = self.peaks.setdefault(self.phase, {})
            if s["rss"] > peak.get("rss", -1):  # what made up the peak of the two together
                peak["worker_rss_at_peak"], peak["child_rss_at_peak"] = s["worker_rss"], s["child_rss"]
            for k, v in s.items():
                peak[k] = max(peak.get(k, 0), v)
            peak["samples"] = peak.get("samples", 0) + 1


def cpu_seconds(pid: int) -> float:
    """CPU seconds of the worker and of its children it has waited for (the vector process, each time)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def search(home: Path, query: str, took: list[tuple[float, float]] | None = None) -> dict[str, Any] | None:
    """The worker's answer; `took` gets (wall seconds at the client, the worker's CPU ms for it)."""
    t0 = time.perf_counter()
    answer = worker_client.ask(str(home), {"op": "search", "project": KEY, "query": query, "limit": 10},
                               timeout=10)
    if took is not None:
        took.append((time.perf_counter() - t0, float((answer or {}).get("cpu_ms") or 0.0)))
    return answer


def serve_round(home: Path, ws: Workspace, r: int, saves: int, searches: int,
                took: list[tuple[float, float]]) -> None:
    """What a prompt and its tool calls send: memories saved (the worker indexes them), then searches."""
    for i in range(saves):
        text = f"round {r} note {i}: the retry loop in module m{(r * saves + i) % 13} needed a longer deadline"
        store.save(ws.db, KEY, store.NewMemory(text[:60], text, type="observation", session_id=f"serve-{r}"),
                   filter_low_value=False)
    store.mark_dirty(ws.db, None)
    worker_client.ask(str(home), {"op": "wake"}, timeout=5)
    for q in range(searches):
        search(home, QUERIES[(r * searches + q) % len(QUERIES)], took)


def run(home: Path, checkout: Path, args: argparse.Namespace) -> dict[str, Any]:
    env = {**os.environ, "MEMORY_HOME": str(home), "MEMORY_EMBEDDER": "minilm", "MEMORY_WORKER": "on",
           "MEMORY_WORKER_IDLE_SECONDS": str(max(600, args.idle + 60))}
    env.pop("MEMORY_WORKER_RELEASE_SECONDS", None)  # each checkout's own default
    ws = Workspace(Project(KEY, KEY, str(home / "root"), None), str(home))
    try:
        with worker_process(home, env, checkout) as proc, Sampler(proc.pid) as sampler:
            deadline, loading = time.monotonic() + 600, []
            while time.monotonic() < deadline and not ((a := search(home, "parser token cache", loading))
                                                       and a.get("warm")):
                time.sleep(0.5)
            warm = sample(proc.pid)
            sampler.phase, serving, took, cpu0 = "serving", [], [], cpu_seconds(proc.pid)
            for r in range(args.rounds):
                t0 = time.monotonic()
                serve_round(home, ws, r, args.saves, args.searches, took)
                serving.append(sample(proc.pid))
                time.sleep(max(0.0, args.every - (time.monotonic() - t0)))
            sampler.phase, serve_cpu = "idle", cpu_seconds(proc.pid) - cpu0
            t_idle, light_after = time.monotonic(), None
            while time.monotonic() - t_idle < args.idle:
                if rss_pss(proc.pid)[0] < 40 << 20:
                    light_after = round(time.monotonic() - t_idle, 1)
                    break
                time.sleep(1)
            total_cpu = cpu_seconds(proc.pid)
            return {"checkout": str(checkout), "warm": warm, "serving": serving, "light_after_seconds": light_after,
                    "peaks": sampler.peaks, "timeline": sampler.timeline,
                    "search_ms": [round(t * 1000, 2) for t, _ in took], "search_cpu_ms": [c for _, c in took],
                    "load_searches": len(loading), "serve_cpu_seconds": round(serve_cpu, 2),
                    "total_cpu_seconds": round(total_cpu, 2)}
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
        for phase, p in r["peaks"].items():
            print(f"  peak while {phase} ({p['samples']} samples, every 50 ms): worker + child RSS {mib(p['rss'])} "
                  f"PSS {mib(p['pss'])} MiB (then worker {mib(p['worker_rss_at_peak'])} + child "
                  f"{mib(p['child_rss_at_peak'])}; each one's max {mib(p['worker_rss'])}, {mib(p['child_rss'])})")
        ms, cpu = sorted(r["search_ms"]), sorted(r["search_cpu_ms"])
        print(f"  searches while serving: p50 {statistics.median(ms):.1f} ms, max {ms[-1]:.1f} ms (wall, client "
              f"side), the worker's CPU p50 {statistics.median(cpu):.1f} ms; CPU of worker + child: "
              f"{r['serve_cpu_seconds']} s serving, {r['total_cpu_seconds']} s in all")
        print(f"  light (RSS < 40 MiB) {r['light_after_seconds']} s after the last round"
              if r["light_after_seconds"] is not None else f"  not light within {args.idle} s")

if __name__ == "__main__":
    main()
