"""Embedding throughput per provider on LongMemEval user turns (evaluation data, read from ../shared).

Two measures, CPU seconds beside wall seconds (CPU is the one to compare on a shared machine):
- turns: the turns alone, per length bucket (characters), each bucket one embed() call, as the worker's
  batches come; memories/s = turns per CPU second;
- worker: what the worker embeds per memory (memory/worker/index.py ProjectIndex._embed) under the window rule
  (memory/recall/context.py WINDOW_RULE): with "mean", its own text alone (the window vector is the mean
  of the neighbours' own vectors); "worker, window text" beside it, the rule before: its own text and its
  window with MEMORY_CONTEXT_NEIGHBOURS (2) neighbours of the same session on each side, both through
  one embed() call per batch.

    .venv/bin/python -m scripts.bench.embed [--providers minilm,hashing] [--memories 256] [--batch 64]

One BLAS thread unless OPENBLAS_NUM_THREADS says otherwise, as in the worker (memory/worker/process.py main()).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads: the worker's setting

import argparse  # noqa: E402
import gzip  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

from memory.recall import embed  # noqa: E402
from memory.recall.context import WINDOW_RULE, Document  # noqa: E402
from scripts.bench.common import SHARED, machine, print_json  # noqa: E402

LONGMEMEVAL = SHARED / "data" / "longmemeval" / "longmemeval_s_dev120.jsonl.gz"
BUCKETS = ((0, 200), (200, 500), (500, 1_000_000))  # characters


def sessions(limit: int, seed: int = 1) -> list[list[str]]:
    """Distinct sessions' user turns (haystacks share sessions), shuffled with a fixed seed."""
    seen: dict[str, list[str]] = {}
    with gzip.open(LONGMEMEVAL, "rt", encoding="utf-8") as fh:
        for line in fh:
            q = json.loads(line)
            for sid, sess in zip(q["haystack_session_ids"], q["haystack_sessions"], strict=True):
                turns = [t["content"] for t in sess if t["role"] == "user" and t["content"].strip()]
                if turns:
                    seen.setdefault(sid, turns)
    out = list(seen.values())
    random.Random(seed).shuffle(out)
    total = 0
    for i, s in enumerate(out):
        total += len(s)
        if total >= limit:
            return out[:i + 1]
    return out


def documents(sess: list[list[str]], radius: int = 2) -> list[Document]:
    """The worker's documents (own text and window) for every turn, neighbours from its session."""
    docs = []
    for turns in sess:
        rows = [{"id": i, "title": "", "content": t, "tags": "", "type": "context", "expires_at": None}
                for i, t in enumerate(turns)]
        for i, row in enumerate(rows):
            docs.append(Document(row, rows[max(0, i - radius):i], rows[i + 1:i + 1 + radius], "bench"))  # type: ignore[arg-type]
    return docs


def timed(fn: Any) -> tuple[float, float]:
    c0, t0 = time.process_time(), time.perf_counter()
    fn()
    return time.perf_counter() - t0, time.process_time() - c0


def rate(n: int, wall: float, cpu: float) -> dict[str, float]:
    return {"n": n, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
            "per_cpu_s": round(n / cpu, 1) if cpu else float("inf"), "per_wall_s": round(n / wall, 1)}


def measure(e: embed.Embedder, docs: list[Document], batch: int) -> dict[str, Any]:
    e.embed(["warm up the model"])
    turns = [d.own for d in docs]
    out: dict[str, Any] = {"turns": {}, "worker": {}}
    for lo, hi in BUCKETS:
        picked = [t for t in turns if lo <= len(t) < hi]
        if picked:
            wall, cpu = timed(lambda p=picked: [e.embed(p[i:i + batch]) for i in range(0, len(p), batch)])
            out["turns"][f"{lo}-{hi if hi < 1_000_000 else ''} chars"] = rate(len(picked), wall, cpu)
    wall, cpu = timed(lambda: [e.embed(turns[i:i + batch]) for i in range(0, len(turns), batch)])
    out["turns"]["all"] = {**rate(len(turns), wall, cpu), "mean_chars": round(sum(map(len, turns)) / len(turns))}

    def worker(rule: str) -> None:
        for i in range(0, len(docs), batch):
            parts = (lambda d: (d.own, d.window)) if rule == "text" else (lambda d: (d.own,))
            e.embed(list(dict.fromkeys(t for d in docs[i:i + batch] for t in parts(d))))
    for rule in dict.fromkeys(("text", WINDOW_RULE)):  # "mean" and "none" embed the own text alone
        wall, cpu = timed(lambda r=rule: worker(r))
        out["worker" if rule == WINDOW_RULE else f"worker, window {rule}"] = {
            **rate(len(docs), wall, cpu), "window": rule,
            "mean_window_chars": round(sum(len(d.window) for d in docs) / len(docs))}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--providers", default="minilm,hashing")
    ap.add_argument("--memories", type=int, default=256, help="user turns measured (whole sessions)")
    ap.add_argument("--batch", type=int, default=32, help="memories per embed() call (the worker's batch)")
    args = ap.parse_args()
    docs = documents(sessions(args.memories))
    results: dict[str, Any] = {"memories": len(docs), "batch": args.batch,
                               "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"), "providers": {}}
    for name in args.providers.split(","):
        try:
            e = embed.make(name.strip())
        except embed.NoEmbedder as exc:
            results["providers"][name] = {"skipped": str(exc)}
            continue
        results["providers"][embed.key(e)] = measure(e, docs, args.batch)
    print_json(results, machine())


if __name__ == "__main__":
    main()
