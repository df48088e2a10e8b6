"""Search and ingest latency at 10,000 and 100,000 memories.

For each size: the memories are written (400 sessions), then
  - ingest: a hook's store.save (the row, its FTS entry, its vector job) p50/p95, and the worker's
    indexing throughput (context, embeddings, LanceDB) with the given embedder;
  - the LanceDB ANN index build (IVF_FLAT, for the CLI) once the table is big enough;
  - keyword search as a prompt hook runs it (query time only) p50/p95;
  - hybrid search through a real warm worker process over its unix socket (round trip, what a hook waits
    for) p50/p95/p99, and the same search in process: through the in-memory lists the warm worker keeps
    (memory/recall/warm_index.py; its build time and size) and through SQLite's FTS5 and LanceDB, interleaved.

Two corpora (--corpus): `vocab` (the default), 12-60 words drawn uniformly from a 100-word developer
vocabulary, so every query word matches a quarter to a half of the store: the worst case for BM25; and
`prose`, scripts/bench/fill.py's runs of real text (the standard library's source words, Zipf-distributed), with
queries of words drawn from the same text.

    .venv/bin/python -m scripts.bench.search [--sizes 10000,100000] [--queries 200] [--embedder hashing]
        [--corpus vocab|prose] [--checkout DIR] [--keyword-only] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

from memory import store
from memory.base import worker_client
from memory.base.config import env_int
from memory.base.project import Project
from memory.recall import embed
from memory.recall.search import Filters, keyword_search
from memory.store.workspace import Workspace
from memory.worker import ProjectIndex
from scripts.bench.common import ROOT, machine_line, print_json, summary
from scripts.bench.fill import corpus_words, populate

WORDS = ("auth token cookie session refresh jwt login logout cache redis postgres migration schema index query "
         "parser lexer tokenizer ast grammar outline signature hook event compaction handoff worker queue lock "
         "embedding vector search rank bm25 fts recall memory store sqlite wal checkpoint vacuum config env "
         "docker build deploy ci test pytest fixture mock timeout retry backoff rate limit api endpoint route "
         "handler middleware react component state props render css layout flexbox grid typescript eslint "
         "webpack vite bundle import export module package version release changelog bug fix error crash").split()


def populate_vocab(ws: Workspace, n: int, seed: int = 7) -> None:
    """The worst case for BM25: every memory is 12-60 words drawn uniformly from WORDS."""
    populate(ws, n, seed, words=lambda rng: rng.choices(WORDS, k=rng.randint(12, 60)), sessions=False)


def queries(n: int, seed: int = 11, corpus: str = "vocab") -> list[str]:
    rng = random.Random(seed)
    if corpus == "prose":
        pool = corpus_words()
        return [" ".join(rng.choice(pool) for _ in range(rng.randint(3, 7))) for _ in range(n)]
    return [" ".join(rng.sample(WORDS, rng.randint(3, 7))) for _ in range(n)]


def run_size(size: int, embedder_name: str, nq: int, corpus: str = "vocab", checkout: str | None = None
             ) -> dict[str, object]:
    home = tempfile.mkdtemp(prefix=f"bench-search-{size}-")
    os.environ["MEMORY_HOME"] = home
    os.environ["MEMORY_DAILY_LOG"] = "off"
    ws = Workspace(Project("bench", "bench", "/bench", None), home)
    out: dict[str, object] = {"memories": size, "embedder": embedder_name, "corpus": corpus}
    t0 = time.perf_counter()
    (populate if corpus == "prose" else populate_vocab)(ws, size)
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
    qs = queries(nq, corpus=corpus)
    # Keyword search as the prompt hook runs it (query time only, warm page cache), with the default bound
    # on the matches it ranks and with the bound before (2,000), interleaved query by query.
    bound = env_int("MEMORY_RECALL_CANDIDATES")
    kw: dict[int, list[float]] = {bound: [], 2000: []}
    for q in qs:
        for b in kw:
            t = time.perf_counter()
            keyword_search(ws.db, q, limit=5, filters=Filters(exclude_session="live"), min_terms=2, max_candidates=b)
            kw[b].append((time.perf_counter() - t) * 1000)
    out["keyword_hook_ms"] = summary(kw[bound])
    if bound != 2000:
        out["keyword_hook_bound_2000_ms"] = summary(kw[2000])
    # The warm worker's in-memory copy of both lists (memory/recall/warm_index.py), built as the worker builds it.
    t0 = time.perf_counter()
    p.warm_up(wait=True)
    out["warm_build_s"] = round(time.perf_counter() - t0, 1)
    out["warm_mib"] = round(p.warm.nbytes() / 2**20) if p.warm is not None else None
    inproc: dict[str, list[float]] = {"warm": [], "sqlite_lancedb": []}
    warm = p.warm
    for q in qs:  # interleaved: the in-memory lists, then SQLite's FTS5 and LanceDB (the path before)
        for name in inproc:
            p.warm = warm if name == "warm" else None
            t = time.perf_counter()
            p.search(q, 10, Filters())
            inproc[name].append((time.perf_counter() - t) * 1000)
    p.warm = warm
    out["hybrid_in_process_ms"] = summary(inproc["warm"])
    out["hybrid_in_process_sqlite_lancedb_ms"] = summary(inproc["sqlite_lancedb"])
    p.db.close()
    # The same search through a warm worker process, as a hook asks for it.
    env = {**os.environ, "MEMORY_HOME": home, "MEMORY_EMBEDDER": embedder_name, "PYTHONPATH": checkout or str(ROOT),
           "MEMORY_WORKER_IDLE_SECONDS": "120"}
    request = {"op": "search", "project": "bench", "limit": 10, "filters": {}}
    proc, warm_after = warm_worker(home, env, {**request, "query": qs[0]}, cwd=checkout or str(ROOT))
    try:
        out["worker_warm_after_s"] = round(warm_after, 1)
        for q in qs[:20]:  # warm-up: page cache, index
            worker_client.ask(home, {**request, "query": q}, timeout=5)
        rt, server, cpu = [], [], []
        for q in queries(nq, seed=12, corpus=corpus):
            t = time.perf_counter()
            answer = worker_client.ask(home, {**request, "query": q}, timeout=5)
            rt.append((time.perf_counter() - t) * 1000)
            if answer:
                server.append(float(answer["ms"]))
                cpu.append(float(answer.get("cpu_ms", 0.0)))
        out["hybrid_worker_roundtrip_ms"] = summary(rt)
        out["hybrid_worker_server_ms"] = summary(server)
        # CPU time of the answering thread: what the search costs, whatever else the machine is running.
        out["hybrid_worker_cpu_ms"] = summary(cpu)
        out["hook_budget_ms"] = env_int("MEMORY_WORKER_TIMEOUT_MS")
        out["answered_within_budget"] = round(sum(1 for x in rt if x <= env_int("MEMORY_WORKER_TIMEOUT_MS"))
                                              / len(rt), 3)
    finally:
        worker_client.ask(home, {"op": "shutdown"}, timeout=5)
        proc.wait(60)
    return out


def keyword_only(size: int, nq: int, corpus: str) -> dict[str, object]:
    """Keyword search alone at one size: the hook's bounded ranking and the full one, CPU beside wall."""
    home = tempfile.mkdtemp(prefix=f"bench-keyword-{size}-")
    os.environ["MEMORY_HOME"] = home
    os.environ["MEMORY_DAILY_LOG"] = "off"
    try:
        ws = Workspace(Project("bench", "bench", "/bench", None), home)
        (populate if corpus == "prose" else populate_vocab)(ws, size)
        bound = env_int("MEMORY_RECALL_CANDIDATES")
        ways: dict[str, int | None] = {"hook": bound, "all_matches": None}
        wall: dict[str, list[float]] = {w: [] for w in ways}
        cpu: dict[str, list[float]] = {w: [] for w in ways}
        same = total = 0
        qs = queries(nq, corpus=corpus)
        for q in qs[:10]:  # warm-up: page cache, statement cache
            keyword_search(ws.db, q, limit=8, filters=Filters(exclude_session="live"), max_candidates=bound)
        for q in qs:
            top: dict[str, set[int]] = {}
            for way, b in ways.items():
                t, c = time.perf_counter(), time.process_time()
                hits = keyword_search(ws.db, q, limit=8, filters=Filters(exclude_session="live"), min_terms=2,
                                      max_candidates=b)
                cpu[way].append((time.process_time() - c) * 1000)
                wall[way].append((time.perf_counter() - t) * 1000)
                top[way] = {h.id for h in hits}
            same += len(top["hook"] & top["all_matches"])
            total += len(top["all_matches"])
        ws.close()
        return {"memories": size, "corpus": corpus, "bound": bound,
                **{f"{way}_wall_ms": summary(wall[way]) for way in ways},
                **{f"{way}_cpu_ms": summary(cpu[way]) for way in ways},
                "hook_top8_in_full_top8": round(same / max(1, total), 3)}
    finally:
        shutil.rmtree(home, ignore_errors=True)


def warm_worker(home: str, env: dict[str, str], search: dict[str, object],
                cwd: str = str(ROOT)) -> tuple[subprocess.Popen[bytes], float]:
    """A worker process for the data dir, returned once it answers `search` from its in-memory lists: it
    loads (and checks) the project's indexes first, then builds the copy in a thread (the answers before
    come from SQLite and LanceDB). Returns it and the seconds from its first answer to its first warm one;
    stop it with {"op": "shutdown"}."""
    proc = subprocess.Popen([sys.executable, "-m", "memory.worker"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, cwd=cwd)  # -m: cwd is first on sys.path
    deadline = time.monotonic() + 300
    while worker_client.ask(home, {"op": "ping"}, timeout=1) is None:
        if time.monotonic() > deadline:
            proc.kill()
            raise SystemExit("worker did not come up")
        time.sleep(0.2)
    up = time.perf_counter()
    while not (worker_client.ask(home, search, timeout=5) or {}).get("warm"):
        if time.monotonic() > deadline:
            worker_client.ask(home, {"op": "shutdown"}, timeout=5)
            raise SystemExit("worker did not answer a search from its warm index")
        time.sleep(0.5)
    return proc, time.perf_counter() - up


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--embedder", default="hashing")
    ap.add_argument("--corpus", choices=("vocab", "prose"), default="vocab")
    ap.add_argument("--checkout", default=None, help="Run the worker from this checkout's code (before/after).")
    ap.add_argument("--keyword-only", action="store_true", help="Only keyword search, in process, CPU beside wall.")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    print(machine_line(), flush=True)
    results = []
    for size in (int(s) for s in args.sizes.split(",")):
        if args.keyword_only:
            r = keyword_only(size, args.queries, args.corpus)
            results.append(r)
            print(json.dumps(r), flush=True)
            continue
        r = run_size(size, args.embedder, args.queries, args.corpus, args.checkout)
        results.append(r)
        print(json.dumps(r), flush=True)
    if args.json:
        print_json(results)


if __name__ == "__main__":
    main()
