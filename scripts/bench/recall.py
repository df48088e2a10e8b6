"""Recall benchmark on LoCoMo and the LongMemEval_S development split (evaluation only: the data is read from
../shared at run time, never shipped).

LoCoMo: one memory per dialog turn (title: speaker and turn id; content: the text and any shared photo's
caption), one project per conversation, questions of categories 1-4. LongMemEval: one memory per user turn
(title: its first line, as `memory save --jsonl` makes it), one project per question (its own haystack of
about 50 sessions); evidence turns are the user turns marked has_answer. Every turn keeps its session and
the session's date. Memories go in through the store's save, one connection per project, as `memory save
--jsonl` does, and are indexed by the worker's ProjectIndex, as `memory reindex` has the worker do.

Rows, all in the same run over the same turns: plain SQLite FTS5 bm25 (a bare FTS5 table, porter
tokenizer, the query's words OR-ed: no project code) as the baseline; the project's keyword mode
(keyword_search, what `memory search` answers without a worker); the neighbour-aware keyword list
(hybrid search without vectors); hybrid search with each provider asked for, through the worker's code
path. Measures: evidence-turn recall@1/5/10 (the share of a question's evidence turns in the top k),
evidence-session recall@10, the share of the top 5 taken by its most frequent session, per question type,
paired bootstrap 95% intervals of the differences between rows (seeded), questions better/worse, and
indexing throughput per provider.

    nice .venv/bin/python -m scripts.bench.recall [--dataset locomo|longmemeval|both]
        [--providers hashing,sentence-transformers,ollama] [--questions N] [--limit-haystack M] [--json]
        [--weights "keyword=0.75,vector=0.25;keyword=0.7,vector=0.3"] [--embed-cache DIR]
        [--windows text,mean,none]

--questions N keeps N questions per dataset spread over its question types; --limit-haystack M keeps at
most M turns per project (the evidence sessions first, then the others in order, whole sessions). --weights
adds a hybrid row per MEMORY_HYBRID_WEIGHTS value (';' between them) on the same index, paired with the
provider's default row. Every question is asked at its own time (`memory search --as-of`): LongMemEval's
question_date, and for LoCoMo (no question dates) the conversation's last turn, so "last week" or "in March"
in a question counts from there. --windows indexes again under each window rule (memory/recall/context.py)
and compares each with the first.
MEMORY_LOCAL_EMBED_MODEL picks the local model. --embed-cache DIR keeps every vector under DIR by provider,
model and text hash (scripts/bench/embed_cache.py) and reuses it in later runs: then the throughput says how
many vectors came from the cache, and is no embedding throughput. One BLAS thread, as in the worker, unless
OPENBLAS_NUM_THREADS says otherwise.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads: the worker's setting

import gzip  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import sqlite3  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections import Counter, defaultdict  # noqa: E402
from collections.abc import Callable, Iterator  # noqa: E402
from contextlib import contextmanager  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402

from memory import store  # noqa: E402
from memory.base.project import Project  # noqa: E402
from memory.recall import context, embed  # noqa: E402
from memory.recall.hybrid import search as hybrid_search  # noqa: E402
from memory.recall.search import Filters, keyword_search  # noqa: E402
from memory.store.workspace import Workspace  # noqa: E402
from memory.worker import ProjectIndex  # noqa: E402
from scripts.bench.common import SHARED, arguments, keyword_variant, machine, machine_line, print_json  # noqa: E402
from scripts.bench.embed_cache import CachedEmbedder  # noqa: E402

LOCOMO = SHARED / "data" / "locomo"
LONGMEMEVAL = SHARED / "data" / "longmemeval" / "longmemeval_s_dev120.jsonl.gz"
DATASETS = ("locomo", "longmemeval")
DEPTH = 10  # the deepest rank any measure reads
MEASURES = ("r@1", "r@5", "r@10", "session r@10")
BASELINES = ("plain FTS5 bm25", "keyword mode")
CONTEXT_ROW = "keyword + neighbours (no vectors)"
INDEX_BATCH = 256
# LoCoMo titles must be unique in a project (the store merges same-titled memories).
TITLES = {
    "said": lambda t: f"{t['speaker']} said ({t['doc_id']})",
    "id": lambda t: f"{t['speaker']}, {t['doc_id']}",
    "words": lambda t: f"{t['speaker']}: {' '.join(t['text'].split()[:8])} ({t['doc_id']})",
}


@dataclass
class Turn:
    doc: str  # unique in its project
    session: str
    at: float
    title: str
    content: str


@dataclass
class Question:
    qid: str
    project: str
    text: str
    kind: str
    gold_turns: list[str]
    gold_sessions: list[str]
    as_of: float | None = None  # when it is asked: "last week" in it counts from there


@dataclass
class Dataset:
    name: str
    projects: dict[str, list[Turn]] = field(default_factory=dict)
    questions: list[Question] = field(default_factory=list)

    @property
    def turns(self) -> int:
        return sum(len(t) for t in self.projects.values())


# -- loading ------------------------------------------------------------------------------------------


def locomo_time(date: str) -> float:
    try:
        return time.mktime(time.strptime(date, "%I:%M %p on %d %B, %Y"))
    except (ValueError, TypeError):
        return 0.0


def longmemeval_time(date: str) -> float:
    """'2023/04/25 (Tue) 04:07' as a unix time."""
    try:
        return time.mktime(time.strptime(re.sub(r"\s*\(\w+\)\s*", " ", date), "%Y/%m/%d %H:%M"))
    except (ValueError, TypeError):
        return 0.0


def load_locomo() -> Dataset:
    ds = Dataset("locomo")
    title = TITLES[os.environ.get("BENCH_TITLE", "said")]
    position: Counter[tuple[str, str]] = Counter()
    with open(LOCOMO / "locomo10_corpus_turns.jsonl", encoding="utf-8") as fh:
        for line in fh:
            t = json.loads(line)
            key = (t["conv_id"], t["session_id"])
            position[key] += 1
            content = t["text"] + (f" [shares {t['image_caption']}]" if t.get("image_caption") else "")
            ds.projects.setdefault(t["conv_id"], []).append(Turn(
                t["doc_id"], t["session_id"], locomo_time(t["date"]) + position[key], title(t), content))
    with open(LOCOMO / "locomo10_queries.jsonl", encoding="utf-8") as fh:
        for line in fh:
            q = json.loads(line)
            if q["category"] in (1, 2, 3, 4) and q["gold_turn_ids"]:
                # asked after the conversation: its last turn's time (LoCoMo gives no question date)
                ds.questions.append(Question(q["qid"], q["conv_id"], q["question"], q["category_name"],
                                             q["gold_turn_ids"], q.get("gold_session_ids") or [],
                                             max(t.at for t in ds.projects[q["conv_id"]])))
    return ds


def load_longmemeval() -> Dataset:
    ds = Dataset("longmemeval")
    with gzip.open(LONGMEMEVAL, "rt", encoding="utf-8") as fh:
        for line in fh:
            q = json.loads(line)
            turns, gold = [], []
            for sid, date, session in zip(q["haystack_session_ids"], q["haystack_dates"], q["haystack_sessions"],
                                          strict=True):
                at = longmemeval_time(date)
                for n, t in enumerate(session):
                    if t["role"] != "user" or not t["content"].strip():
                        continue
                    doc = f"{sid}#{n}"
                    text = t["content"].strip()
                    turns.append(Turn(doc, sid, at + n, text.splitlines()[0][:120], text))
                    if t.get("has_answer"):
                        gold.append(doc)
            ds.projects[q["question_id"]] = turns
            ds.questions.append(Question(q["question_id"], q["question_id"], q["question"], q["question_type"],
                                         gold, list(q["answer_session_ids"]),
                                         longmemeval_time(q.get("question_date", "")) or None))
    return ds


def subset(ds: Dataset, questions: int | None, limit_haystack: int | None) -> Dataset:
    """At most `questions` questions, taken in turn from each question type (so every type stays), and at
    most `limit_haystack` turns per project: the evidence sessions first, then the others, whole sessions."""
    qs = ds.questions
    if questions and questions < len(qs):
        by_kind: dict[str, list[Question]] = defaultdict(list)
        for q in qs:
            by_kind[q.kind].append(q)
        quota: Counter[str] = Counter()
        while sum(quota.values()) < questions:  # in turn from each type that has questions left
            for kind in sorted(by_kind):
                if quota[kind] < len(by_kind[kind]) and sum(quota.values()) < questions:
                    quota[kind] += 1
        # evenly spaced within a type, so the projects (LoCoMo's conversations) are spread too
        picked = {id(v[j * len(v) // quota[k]]) for k, v in by_kind.items() for j in range(quota[k])}
        qs = [q for q in qs if id(q) in picked]
    out = Dataset(ds.name, questions=qs)
    for key in dict.fromkeys(q.project for q in qs):
        turns = ds.projects[key]
        if limit_haystack and len(turns) > limit_haystack:
            wanted = {s for q in qs if q.project == key for s in q.gold_sessions}
            wanted |= {t.session for t in turns if t.doc in {d for q in qs if q.project == key for d in q.gold_turns}}
            sizes = Counter(t.session for t in turns)
            keep: set[str] = set()
            total = 0
            for s in [*[s for s in sizes if s in wanted], *[s for s in sizes if s not in wanted]]:
                if total + sizes[s] > limit_haystack and keep:
                    continue
                keep.add(s)
                total += sizes[s]
            turns = [t for t in turns if t.session in keep]
        out.projects[key] = turns
    return out


# -- ingestion ----------------------------------------------------------------------------------------


class Space:
    """One project: its workspace, memory id -> the turns it stands for (the store merges same-titled
    memories), and the plain FTS5 table of the same turns."""

    def __init__(self, home: str, key: str, turns: list[Turn]) -> None:
        self.key = key
        self.ws = Workspace(Project(key, key, f"/bench/{key}", None), home)
        self.docs: dict[int, list[str]] = defaultdict(list)
        self.merged = 0
        for t in turns:
            saved = store.save(self.ws.db, key, store.NewMemory(
                title=t.title, content=t.content, type="observation", session_id=t.session, created_at=t.at,
                source="cli"), filter_low_value=False)
            assert saved.id is not None, t
            self.merged += saved.action != "inserted"
            self.docs[saved.id].append(t.doc)
        self.ws.db.execute("DELETE FROM queue")  # indexed below, directly: no worker process, no queue
        self.ws.db.commit()
        self.session_of = {t.doc: t.session for t in turns}
        self.plain = plain_index(turns)

    def ranked(self, ids: list[int]) -> list[str]:
        out: list[str] = []
        for i in ids:
            out += self.docs.get(i, [])
        return out[:DEPTH]


def plain_index(turns: list[Turn]) -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE turns USING fts5(doc UNINDEXED, text, "
               "tokenize='porter unicode61 remove_diacritics 2')")
    db.executemany("INSERT INTO turns (doc, text) VALUES (?, ?)", [(t.doc, t.content) for t in turns])
    return db


def plain_bm25(db: sqlite3.Connection, query: str) -> list[str]:
    words = list(dict.fromkeys(re.findall(r"\w+", query.lower())))
    if not words:
        return []
    match = " OR ".join(f'"{w}"' for w in words)
    return [r[0] for r in db.execute("SELECT doc FROM turns WHERE turns MATCH ? ORDER BY bm25(turns) LIMIT ?",
                                     (match, DEPTH))]


# -- measures -----------------------------------------------------------------------------------------


def measure(q: Question, ranked: list[str], session_of: dict[str, str]) -> dict[str, float | None]:
    """Recall of the evidence turns at 1, 5, 10 (None without evidence turns), of the evidence sessions at
    10, and the share of the top 5 its most frequent session takes."""
    out: dict[str, float | None] = {}
    gold = set(q.gold_turns)
    for k in (1, 5, 10):
        out[f"r@{k}"] = len(gold & set(ranked[:k])) / len(gold) if gold else None
    sessions = {session_of[d] for d in ranked[:10]}
    out["session r@10"] = (len(set(q.gold_sessions) & sessions) / len(set(q.gold_sessions))
                           if q.gold_sessions else None)
    top5 = [session_of[d] for d in ranked[:5]]
    out["top-5 one session"] = Counter(top5).most_common(1)[0][1] / len(top5) if top5 else None
    return out


def mean(values: list[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return round(sum(vals) / len(vals), 3) if vals else None


def paired(a: list[float | None], b: list[float | None], seed: int, rounds: int = 2000) -> dict[str, object]:
    """Mean of a - b over the questions both measure, its 95% paired-bootstrap interval (resampling
    questions, seeded), and how many questions are better and worse."""
    import numpy as np

    d = np.array([x - y for x, y in zip(a, b, strict=True) if x is not None and y is not None])
    if not len(d):
        return {"diff": None, "ci": None, "better": 0, "worse": 0, "n": 0}
    idx = np.random.default_rng(seed).integers(0, len(d), (rounds, len(d)))
    means = d[idx].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return {"diff": round(float(d.mean()), 3), "ci": [round(float(lo), 3), round(float(hi), 3)],
            "better": int((d > 1e-9).sum()), "worse": int((d < -1e-9).sum()), "n": len(d)}


class Table:
    """Per method, per question: the measures."""

    def __init__(self, ds: Dataset) -> None:
        self.ds = ds
        self.rows: dict[str, dict[str, dict[str, float | None]]] = {}
        self.ms: dict[str, list[float]] = defaultdict(list)
        self.extra: dict[str, dict[str, object]] = defaultdict(dict)
        self.references: list[str] = []  # rows the others are compared with, beside BASELINES

    def add(self, method: str, q: Question, sp: Space, p: ProjectIndex | None, how: Method) -> None:
        """Answers q with `how` on project sp (its index p) and records the measures and the time taken."""
        t0 = time.perf_counter()
        ranked = how(sp, p, q)
        self.ms[method].append((time.perf_counter() - t0) * 1000)
        self.rows.setdefault(method, {})[q.qid] = measure(q, ranked, sp.session_of)

    def column(self, method: str, m: str) -> list[float | None]:
        return [self.rows[method][q.qid][m] for q in self.ds.questions]

    def summary(self, seed: int) -> dict[str, object]:
        kinds = sorted({q.kind for q in self.ds.questions})
        methods: dict[str, object] = {}
        for method in self.rows:
            row: dict[str, object] = {m: mean(self.column(method, m)) for m in (*MEASURES, "top-5 one session")}
            row["by type"] = {kind: {"n": sum(q.kind == kind for q in self.ds.questions),
                                     **{m: mean([self.rows[method][q.qid][m] for q in self.ds.questions
                                                 if q.kind == kind]) for m in MEASURES}} for kind in kinds}
            row["ms per query"] = round(sum(self.ms[method]) / max(1, len(self.ms[method])), 2)
            row.update(self.extra.get(method, {}))
            methods[method] = row
        pairs = [(a, b) for a in self.rows for b in BASELINES if a != b and b in self.rows
                 and not (a in BASELINES and BASELINES.index(a) < BASELINES.index(b))]
        # a --weights row against the provider's row with the default weights, on the same index
        pairs += [(a, b) for a in self.rows for b in self.rows if a.startswith("  ") and a.strip().startswith(f"{b}, ")]
        # another window rule's rows against the first rule's (--windows), with the same weights
        pairs += [(a, b) for b in self.references for a in self.rows
                  if a.startswith("hybrid") and a != b]
        diffs = {f"{a.strip()} - {b}": {m: paired(self.column(a, m), self.column(b, m), seed) for m in MEASURES}
                 for a, b in pairs}
        # keyword mode (and its --keyword-weights rows) against plain BM25 in each question type
        for a in [m for m in self.rows if m.strip().startswith(BASELINES[1])]:
            if BASELINES[0] in self.rows:
                diffs[f"{a.strip()} - {BASELINES[0]}"]["by type"] = {  # type: ignore[assignment]
                    kind: {m: paired(*[[self.rows[r][q.qid][m] for q in self.ds.questions if q.kind == kind]
                                       for r in (a, BASELINES[0])], seed) for m in ("r@5", "r@10")}
                    for kind in kinds}
        return {"questions": len(self.ds.questions), "projects": len(self.ds.projects), "turns": self.ds.turns,
                "methods": methods, "differences": diffs}


def print_summary(name: str, s: dict[str, object]) -> None:
    print(f"\n{name}: {s['questions']} questions, {s['projects']} projects, {s['turns']} turns")
    print(f"{'method':<40} {'r@1':>6} {'r@5':>6} {'r@10':>6} {'sess@10':>8} {'top5 1s':>8} {'ms/q':>7}")
    for method, row in s["methods"].items():  # type: ignore[attr-defined]
        cells = [row[m] for m in (*MEASURES, "top-5 one session")]
        print(f"{method:<40} " + " ".join(f"{'-' if v is None else f'{v:.3f}':>{w}}"
                                         for v, w in zip(cells, (6, 6, 6, 8, 8), strict=True))
              + f" {row['ms per query']:>7}")
    print("by type, r@5 / r@10:")
    for method, row in s["methods"].items():  # type: ignore[attr-defined]
        parts = [f"{k[:18]} {v['r@5'] if v['r@5'] is not None else '-'}/{v['r@10'] if v['r@10'] is not None else '-'}"
                 for k, v in row["by type"].items()]
        print(f"  {method:<38} " + "; ".join(parts))
    print("differences (95% paired bootstrap CI; questions better/worse):")
    for pair, ms in s["differences"].items():  # type: ignore[attr-defined]
        cells = []
        for m in ("r@5", "r@10"):
            d = ms[m]
            if d["diff"] is not None:
                cells.append(f"{m} {d['diff']:+.3f} [{d['ci'][0]:+.3f}, {d['ci'][1]:+.3f}] {d['better']}/{d['worse']}")
        print(f"  {pair:<56} " + "   ".join(cells))


# -- the run ------------------------------------------------------------------------------------------


@contextmanager
def environment(**values: str) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


Method = Callable[["Space", "ProjectIndex | None", Question], list[str]]


def plain_method(sp: Space, p: ProjectIndex | None, q: Question) -> list[str]:
    return plain_bm25(sp.plain, q.text)


def keyword_method(sp: Space, p: ProjectIndex | None, q: Question) -> list[str]:
    return sp.ranked([h.id for h in keyword_search(sp.ws.db, q.text, limit=DEPTH)])


def context_method(sp: Space, p: ProjectIndex | None, q: Question) -> list[str]:
    return sp.ranked([s.id for s in hybrid_search(sp.ws.db, q.text, limit=DEPTH, filters=Filters(as_of=q.as_of))])


def hybrid_method(sp: Space, p: ProjectIndex | None, q: Question) -> list[str]:
    """As `memory search --as-of` asks the worker: relative dates in the question count from its date."""
    assert p is not None
    return sp.ranked([s.id for s in p.search(q.text, DEPTH, Filters(as_of=q.as_of))])


def index_and_ask(ds: Dataset, table: Table, spaces: dict[str, Space], by_project: dict[str, list[Question]],
                  e: embed.Embedder, rule: str, label: str, weights: list[str], home: str,
                  embed_cache: str | None) -> None:
    """Index every project with embedder e under a window rule, as the worker does, and ask the questions."""
    took = cpu = 0.0
    hits = misses = 0
    for key, sp in spaces.items():
        c0, w0 = time.process_time(), time.perf_counter()
        h0, m0 = getattr(e, "hits", 0), getattr(e, "misses", 0)
        p = ProjectIndex(home, sp.ws.project.key, e, window=rule)
        p.check_provider()
        ids = [r[0] for r in p.db.execute("SELECT id FROM memories ORDER BY id")]
        for start in range(0, len(ids), INDEX_BATCH):
            p.index(ids[start:start + INDEX_BATCH])
        p.warm_up(wait=True)  # the warm worker's in-memory lists, as it serves searches
        took += time.perf_counter() - w0
        cpu += time.process_time() - c0
        hits += getattr(e, "hits", 0) - h0
        misses += getattr(e, "misses", 0) - m0
        for q in by_project[key]:
            if q.qid not in table.rows.get(CONTEXT_ROW, {}):
                table.add(CONTEXT_ROW, q, sp, p, context_method)
            table.add(label, q, sp, p, hybrid_method)
            for w in weights:
                with environment(MEMORY_HYBRID_WEIGHTS=w):  # read at each search (hybrid.Weights.from_env)
                    table.add(f"  {label}, weights {w}", q, sp, p, hybrid_method)
        p.close()
    cached = f", {hits} of {hits + misses} vectors from the cache" if embed_cache else ""
    table.extra[label] = {"index seconds": round(took, 1), "index cpu seconds": round(cpu, 1),
                          "memories per second": round(ds.turns / took, 1) if took else None,
                          "memories per cpu second": round(ds.turns / cpu, 1) if cpu else None}
    if embed_cache:
        table.extra[label]["vectors from cache"] = {"hits": hits, "embedded": misses}
    print(f"{ds.name}: indexed {ds.turns} memories with {label[8:]} in {took:.1f} s wall, {cpu:.1f} s CPU "
          f"({ds.turns / took if took else 0:.0f}/s wall, {ds.turns / cpu if cpu else 0:.1f}/CPU-s{cached})",
          flush=True)


def evaluate(ds: Dataset, providers: list[str], weights: list[str], seed: int, home: str,
             embed_cache: str | None = None, windows: list[str] | None = None,
             keyword_weights: list[str] | None = None) -> dict[str, object]:
    keyword_weights = keyword_weights or []
    windows = windows or [context.WINDOW_RULE]
    table = Table(ds)
    by_project: dict[str, list[Question]] = defaultdict(list)
    for q in ds.questions:
        by_project[q.project].append(q)
    t0 = time.perf_counter()
    spaces = {key: Space(home, f"{ds.name}-{key}", turns) for key, turns in ds.projects.items()}
    saved_in = time.perf_counter() - t0
    for key, sp in spaces.items():
        for q in by_project[key]:
            table.add(BASELINES[0], q, sp, None, plain_method)
            table.add(BASELINES[1], q, sp, None, keyword_method)
            for v in keyword_weights:  # --keyword-weights as "weights=T,C,G", and --keyword-variants
                with keyword_variant(v):
                    table.add(f"  {BASELINES[1]}, {v}", q, sp, None, keyword_method)
    for name in providers:
        try:
            e = embed.make(name)
        except embed.NoEmbedder as exc:
            print(f"{ds.name}: {name} skipped: {exc}", flush=True)
            continue
        if embed_cache:
            e = CachedEmbedder(e, embed_cache)
        for rule in windows:
            label = f"hybrid, {context.index_key(embed.key(e), rule)}"
            if len(windows) > 1 and rule == windows[0]:
                table.references.append(label)  # the other rules' differences are taken against it
            index_and_ask(ds, table, spaces, by_project, e, rule, label, weights, home, embed_cache)
    out = table.summary(seed)
    out["save seconds"] = round(saved_in, 1)
    out["merged by title"] = sum(sp.merged for sp in spaces.values())
    for sp in spaces.values():
        sp.ws.db.close()
        sp.plain.close()
    return out


def run(datasets: list[str], providers: list[str], *, questions: int | None = None,
        limit_haystack: int | None = None, weights: list[str] | None = None, seed: int = 16,
        quiet: bool = False, embed_cache: str | None = None, windows: list[str] | None = None,
        projects: list[str] | None = None, keyword_weights: list[str] | None = None) -> dict[str, object]:
    """The benchmark; returns {dataset: summary}. Runs in a scratch data dir it removes afterwards.
    `projects`: only these (LoCoMo conversations, LongMemEval question ids), of those the subset keeps."""
    import shutil

    home = tempfile.mkdtemp(prefix="bench-recall-")
    out: dict[str, object] = {}
    try:
        with environment(MEMORY_HOME=home, MEMORY_DAILY_LOG="off", MEMORY_WORKER="off"):
            for name in datasets:
                ds = subset(load_locomo() if name == "locomo" else load_longmemeval(), questions, limit_haystack)
                if projects:
                    ds = Dataset(ds.name, {k: v for k, v in ds.projects.items() if k in projects},
                                 [q for q in ds.questions if q.project in projects])
                out[name] = evaluate(ds, providers, weights or [], seed, home, embed_cache, windows, keyword_weights)
                if not quiet:
                    print_summary(name, out[name])  # type: ignore[arg-type]
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return out


def main() -> None:
    ap = arguments(__doc__)
    ap.add_argument("--dataset", choices=(*DATASETS, "both"), default="both")
    ap.add_argument("--providers", default="hashing,sentence-transformers,ollama",
                    help="embedding providers for the hybrid rows, ',' between them ('' for none)")
    ap.add_argument("--questions", type=int, help="at most N questions per dataset, spread over the types")
    ap.add_argument("--limit-haystack", type=int, help="at most M turns per project (evidence sessions kept)")
    ap.add_argument("--weights", default="", help="MEMORY_HYBRID_WEIGHTS values to try too, ';' between them")
    ap.add_argument("--keyword-weights", default="", help="keyword mode's title,content,tags bm25() weights to "
                    "try too, ';' between them (\"1,1,1;0,1,0\")")
    ap.add_argument("--keyword-variants", default="", help="keyword mode with some of its additions taken away, "
                    "';' between variants, '+' within one (\"importance=off;query=words\": scripts/bench/common.py "
                    "keyword_variant)")
    ap.add_argument("--seed", type=int, default=16, help="the bootstrap's seed")
    ap.add_argument("--windows", default=context.WINDOW_RULE,
                    help=f"window rules to index with, ',' between them ({', '.join(context.WINDOW_RULES)}); "
                         "the others are compared with the first")
    ap.add_argument("--projects", default="", help="only these projects of the subset, ',' between them (LoCoMo "
                    "conversations, LongMemEval question ids): to split a run or fill an embedding cache in parts")
    ap.add_argument("--embed-cache", metavar="DIR", help="keep and reuse vectors under DIR (off by default)")
    args = ap.parse_args()
    datasets = list(DATASETS) if args.dataset == "both" else [args.dataset]
    missing = [p for p, d in ((LOCOMO, "locomo"), (LONGMEMEVAL, "longmemeval")) if d in datasets and not p.exists()]
    if missing:
        sys.exit(f"scripts.bench.recall: no data at {', '.join(map(str, missing))} (set MEMORY_SHARED_DIR)")
    print(f"recall benchmark: {', '.join(datasets)}; {machine_line()}", flush=True)
    results = run(datasets, [p.strip() for p in args.providers.split(",") if p.strip()],
                  questions=args.questions, limit_haystack=args.limit_haystack,
                  weights=[w.strip() for w in args.weights.split(";") if w.strip()], seed=args.seed,
                  keyword_weights=[f"weights={w.strip()}" for w in args.keyword_weights.split(";") if w.strip()]
                  + [v.strip() for v in args.keyword_variants.split(";") if v.strip()],
                  embed_cache=args.embed_cache, windows=[w.strip() for w in args.windows.split(",") if w.strip()],
                  projects=[k.strip() for k in args.projects.split(",") if k.strip()])
    if args.json:
        print_json(results, machine())


if __name__ == "__main__":
    main()
