#!/usr/bin/env python3
"""Search and ingest latency at 10,000 and 100,000 memories.

For each size: the memories are written (bench_hooks' synthetic corpus: 400 sessions of 12-60 words from a
130-word vocabulary, so a query matches a quarter of the store: a worst case for BM25), then
  - ingest: a hook's store.save (the row, its FTS entry, its vector job) p50/p95, and the worker's
    indexing throughput (context, embeddings, LanceDB) with the given embedder;
  - the ANN index build (IVF_PQ) once the table is big enough;
  - keyword search as a prompt hook runs it (query time only) p50/p95;
  - hybrid search through a real warm worker process over its unix socket (round trip, what a hook waits
    for) p50/p95/p99, and the same search in process.

    .venv/bin/python scripts/bench_search.py [--sizes 10000,100000] [--queries 200] [--embedder hashing] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_hooks import WORDS, populate  # noqa: E402

from memory import embed, store, worker_client  # noqa: E402
from memory.config import env_int  # noqa: E402
from memory.project import Project  # noqa: E402
from memory.search import Filters, keyword_search  # noqa: E402
from memory.worker import ProjectIndex  # noqa: E402
from memory.workspace import Workspace  # noqa: E402


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def summary(values: list[float]) -> dict[str, float]:
    return {"p50": round(statistics.median(values), 2), "p95": round(pct(values, 95), 2),
            "p99": round(pct(values, 99), 2), "n": len(values)}


def queries(n: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.sample(WORDS, rng.randint(3, 7))) for _ in range(n)]


def run_size(size: int, embedder_name: str, nq: int) -> dict[str, object]:
    home = tempfile.mkdtemp(prefix=f"bench-search-{size}-")
    os.environ["MEMORY_HOME"] = home
    os.environ["MEMORY_DAILY_LOG"] = "off"
    ws = Workspace(Project("bench", "bench", "/bench", None), home)
    out: dict[str, object] = {"memories": size, "embedder": embedder_name}
    t0 = time.perf_counter()
    populate(ws, size)
    out["populate_s"] = round(time.perf_counter() - t0, 1)
    # A hook's save: the row, FTS, dedup checks and the vector job in one transaction.
    saves = []
    for n in range(300):
        t = time.perf_counter()
        store.save(ws.db, "bench", store.NewMemory(f"extra note {n} about the redis cache", f"cache miss rate {n}",
                                                   session_id="bench-extra"), filter_low_value=False)
        saves.append((time.perf_counter() - t) * 1000)
    out["hook_save_ms"] = summary(saves)
    ws.db.execute("DELETE FROM queue")
    e = embed.make(embedder_name)
    p = ProjectIndex(home, "bench", e)
    p.check_provider()
    ids = [r[0] for r in p.db.execute("SELECT id FROM memories ORDER BY session_id, created_at, id")]
    t0 = time.perf_counter()
    for start in range(0, len(ids), 256):
        p.index(ids[start:start + 256])
    took = time.perf_counter() - t0
    out["index_s"] = round(took, 1)
    out["index_per_s"] = round(len(ids) / took)
    t0 = time.perf_counter()
    out["ann_index"] = p.vectors.maintain(force=True)
    out["maintain_s"] = round(time.perf_counter() - t0, 1)
    qs = queries(nq)
    # Keyword search as the prompt hook runs it (query time only, warm page cache).
    kw = []
    for q in qs:
        t = time.perf_counter()
        keyword_search(ws.db, q, limit=5, filters=Filters(exclude_session="live"), min_terms=2,
                       max_candidates=env_int("MEMORY_RECALL_CANDIDATES"))
        kw.append((time.perf_counter() - t) * 1000)
    out["keyword_hook_ms"] = summary(kw)
    inproc = []
    for q in qs:
        t = time.perf_counter()
        p.search(q, 10, Filters())
        inproc.append((time.perf_counter() - t) * 1000)
    out["hybrid_in_process_ms"] = summary(inproc)
    p.db.close()
    # The same search through a warm worker process, as a hook asks for it.
    env = {**os.environ, "MEMORY_HOME": home, "MEMORY_EMBEDDER": embedder_name, "PYTHONPATH": str(ROOT),
           "MEMORY_WORKER_IDLE_SECONDS": "120"}
    proc = subprocess.Popen([sys.executable, "-m", "memory.worker"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while worker_client.ask(home, {"op": "ping"}, timeout=1) is None:
            if time.monotonic() > deadline:
                raise SystemExit("worker did not come up")
            time.sleep(0.2)
        request = {"op": "search", "project": "bench", "limit": 10, "filters": {}}
        # Ready once it answers a search: it loads (and checks) the project's indexes first.
        while worker_client.ask(home, {**request, "query": qs[0]}, timeout=5) is None:
            if time.monotonic() > deadline:
                raise SystemExit("worker did not answer a search")
            time.sleep(0.5)
        for q in qs[:20]:  # warm-up: page cache, index
            worker_client.ask(home, {**request, "query": q}, timeout=5)
        rt, server = [], []
        for q in queries(nq, seed=12):
            t = time.perf_counter()
            answer = worker_client.ask(home, {**request, "query": q}, timeout=5)
            rt.append((time.perf_counter() - t) * 1000)
            if answer:
                server.append(float(answer["ms"]))
        out["hybrid_worker_roundtrip_ms"] = summary(rt)
        out["hybrid_worker_server_ms"] = summary(server)
        out["hook_budget_ms"] = env_int("MEMORY_WORKER_TIMEOUT_MS")
        out["answered_within_budget"] = round(sum(1 for x in rt if x <= env_int("MEMORY_WORKER_TIMEOUT_MS"))
                                              / len(rt), 3)
    finally:
        worker_client.ask(home, {"op": "shutdown"}, timeout=5)
        proc.wait(60)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--embedder", default="hashing")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    print(f"{platform.node()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{time.strftime('%Y-%m-%d')}", flush=True)
    results = []
    for size in (int(s) for s in args.sizes.split(",")):
        r = run_size(size, args.embedder, args.queries)
        results.append(r)
        print(json.dumps(r), flush=True)
    if args.json:
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
