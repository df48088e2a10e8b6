"""Recall benchmark on LoCoMo (evaluation only: the data is read from ../shared at run time, never shipped).

One memory per dialog turn (title: speaker and turn id; content: the text and any shared photo's
caption; session: the conversation's session; time: the session's date), one project per conversation.
Each question of categories 1-4 is a query; recall@k is the share of its gold turns in the top k. Rows:
BM25 alone (the plugin's keyword search) as the baseline, the neighbour-aware keyword list alone, and
hybrid search with each embedding provider available here, all through the worker's code path.

    .venv/bin/python -m scripts.bench.recall [--providers hashing,sentence-transformers,ollama] [--json]
        [--weights "keyword=0.75,vector=0.25;keyword=0.7,vector=0.3"]

--weights adds a hybrid row per MEMORY_HYBRID_WEIGHTS value (';' between them) on the same index, so a
weight's neighbours are measured without embedding again. MEMORY_LOCAL_EMBED_MODEL picks the local model.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import defaultdict

from memory import store
from memory.base.project import Project
from memory.recall import embed
from memory.recall.hybrid import search as hybrid_search
from memory.recall.search import Filters, keyword_search
from memory.store.workspace import Workspace
from memory.worker import ProjectIndex
from scripts.bench.common import SHARED, machine_line, print_json

LOCOMO = SHARED / "data" / "locomo"
KS = (1, 5, 10, 20)
# Titles must be unique in a project (the store merges same-titled memories).
TITLES = {
    "said": lambda t: f"{t['speaker']} said ({t['doc_id']})",
    "id": lambda t: f"{t['speaker']}, {t['doc_id']}",
    "words": lambda t: f"{t['speaker']}: {' '.join(t['text'].split()[:8])} ({t['doc_id']})",
}


def load() -> tuple[list[dict], list[dict]]:
    turns = [json.loads(line) for line in open(LOCOMO / "locomo10_corpus_turns.jsonl", encoding="utf-8")]
    queries = [json.loads(line) for line in open(LOCOMO / "locomo10_queries.jsonl", encoding="utf-8")]
    queries = [q for q in queries if q["category"] in (1, 2, 3, 4) and q["gold_turn_ids"]]
    return turns, queries


def session_time(date: str) -> float:
    try:
        return time.mktime(time.strptime(date, "%I:%M %p on %d %B, %Y"))
    except (ValueError, TypeError):
        return 0.0


def ingest(home: str, turns: list[dict]) -> dict[str, tuple[Workspace, dict[int, str]]]:
    """Returns conv_id -> (workspace, memory id -> turn id)."""
    spaces: dict[str, tuple[Workspace, dict[int, str]]] = {}
    index_in_session: dict[tuple[str, str], int] = defaultdict(int)
    for t in turns:
        conv = t["conv_id"]
        if conv not in spaces:
            spaces[conv] = (Workspace(Project(conv, conv, f"/locomo/{conv}", None), home), {})
        ws, ids = spaces[conv]
        n = index_in_session[(conv, t["session_id"])]
        index_in_session[(conv, t["session_id"])] += 1
        content = t["text"] + (f" [shares {t['image_caption']}]" if t.get("image_caption") else "")
        saved = store.save(ws.db, conv, store.NewMemory(
            title=TITLES[os.environ.get("BENCH_TITLE", "said")](t), content=content, type="observation",
            session_id=f"{conv}:{t['session_id']}", created_at=session_time(t["date"]) + n,
            source="bench"), filter_low_value=False)
        assert saved.id is not None, t
        ids[saved.id] = t["doc_id"]
    for ws, _ in spaces.values():  # the benchmark indexes directly: no worker process, no queue
        ws.db.execute("DELETE FROM queue")
    return spaces


def score(ranked: list[str], gold: list[str]) -> dict[int, float]:
    g = set(gold)
    return {k: len(g & set(ranked[:k])) / len(g) for k in KS}


def evaluate(name: str, queries: list[dict], run) -> dict[str, object]:
    sums = {k: 0.0 for k in KS}
    by_cat: dict[int, list[float]] = defaultdict(list)
    t0 = time.perf_counter()
    for q in queries:
        s = score(run(q), q["gold_turn_ids"])
        for k in KS:
            sums[k] += s[k]
        by_cat[q["category"]].append(s[10])
    ms = (time.perf_counter() - t0) * 1000 / len(queries)
    row = {"method": name, **{f"recall@{k}": round(sums[k] / len(queries), 3) for k in KS},
           "recall@10 by category": {c: round(sum(v) / len(v), 3) for c, v in sorted(by_cat.items())},
           "ms_per_query": round(ms, 1)}
    print(f"{name:<44} " + "  ".join(f"@{k} {row[f'recall@{k}']:.3f}" for k in KS)
          + f"   cat1-4@10 {list(row['recall@10 by category'].values())}  {ms:.1f} ms/q", flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--providers", default="hashing,sentence-transformers,ollama")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--weights", default="", help="MEMORY_HYBRID_WEIGHTS values to try too, ';' between them")
    args = ap.parse_args()
    if not LOCOMO.is_dir():
        sys.exit(f"scripts.bench.recall: no LoCoMo data in {LOCOMO} (set MEMORY_SHARED_DIR)")
    turns, queries = load()
    home = tempfile.mkdtemp(prefix="bench-recall-")
    os.environ["MEMORY_HOME"] = home
    os.environ["MEMORY_DAILY_LOG"] = "off"
    print(f"LoCoMo: {len(turns)} turns, {len(queries)} questions (categories 1-4); {machine_line()}", flush=True)
    spaces = ingest(home, turns)
    results = []

    def ranked(conv: str, ids: list[int]) -> list[str]:
        mapping = spaces[conv][1]
        return [mapping[i] for i in ids if i in mapping]

    results.append(evaluate("BM25 alone (keyword search)", queries, lambda q: ranked(
        q["conv_id"], [h.id for h in keyword_search(spaces[q["conv_id"]][0].db, q["question"], limit=20)])))
    ran_context = False
    for name in [p.strip() for p in args.providers.split(",") if p.strip()]:
        try:
            e = embed.make(name)
        except embed.NoEmbedder as exc:
            print(f"{name:<44} skipped: {exc}", flush=True)
            continue
        t0 = time.perf_counter()
        indexes = {}
        for conv in spaces:
            p = ProjectIndex(home, conv, e)
            p.check_provider()
            ids = [r[0] for r in p.db.execute("SELECT id FROM memories ORDER BY id")]
            for start in range(0, len(ids), 64):
                p.index(ids[start:start + 64])
            if os.environ.get("MEMORY_WARM_INDEX", "on") != "off":
                p.warm_up(wait=True)  # the warm worker's in-memory lists, as it serves hooks
            indexes[conv] = p
        took = time.perf_counter() - t0
        print(f"  indexed {len(turns)} memories with {embed.key(e)} in {took:.0f} s", flush=True)
        if not ran_context:
            ran_context = True
            results.append(evaluate("keyword + neighbours (no vectors)", queries, lambda q: ranked(
                q["conv_id"], [s.id for s in hybrid_search(spaces[q["conv_id"]][0].db, q["question"], limit=20)])))
        results.append(evaluate(f"hybrid, {embed.key(e)}", queries, lambda q, ix=indexes: ranked(
            q["conv_id"], [s.id for s in ix[q["conv_id"]].search(q["question"], 20, Filters())])))
        results[-1]["index_seconds"] = round(took, 1)
        default_weights = os.environ.get("MEMORY_HYBRID_WEIGHTS")
        for weights in [w.strip() for w in args.weights.split(";") if w.strip()]:
            os.environ["MEMORY_HYBRID_WEIGHTS"] = weights  # read at each search (hybrid.Weights.from_env)
            results.append(evaluate(f"  weights {weights}", queries, lambda q, ix=indexes: ranked(
                q["conv_id"], [s.id for s in ix[q["conv_id"]].search(q["question"], 20, Filters())])))
        if default_weights is None:
            os.environ.pop("MEMORY_HYBRID_WEIGHTS", None)
        else:
            os.environ["MEMORY_HYBRID_WEIGHTS"] = default_weights
        for p in indexes.values():
            p.db.close()
    if args.json:
        print_json(results)


if __name__ == "__main__":
    main()
