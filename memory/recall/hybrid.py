"""Hybrid search: BM25 over each memory with its session neighbours, plus vector similarity, fused.

Measured on LoCoMo (scripts/bench/recall.py): plain RRF of BM25 and a small dense model does not beat
BM25 (0.617 vs 0.627 recall@10). What does: (1) the lexical list searches memories_ctx, where each memory
carries its neighbours as a down-weighted `ctx` column; (2) the vector of a memory mixes its own embedding
with the embedding of its neighbour window; (3) scores, not ranks, are fused (max-normalised BM25,
min-max-normalised similarity, weighted), since ranks throw away how far ahead the best hits are; (4) a
hit's score is raised by the best keyword score in its session, so a session that matches strongly lifts
its other turns. Filters are applied inside both lists before the cut; expired memories never appear.

Runs in the worker (warm model, open LanceDB table) or in a CLI process; never in a hook.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, replace
from typing import Any

from memory.base import clock
from memory.base.config import env, env_int
from memory.base.timeparse import DAY, query_span
from memory.recall import layers
from memory.recall.search import (
    KEYWORD_WEIGHTS,
    Filters,
    Hit,
    bounded_rank,
    fts_phrases,
    fts_query,
    hit_from_row,
    relevance,
)
from memory.store import ctx_rows
from memory.store.workspace import Workspace

CANDIDATES = 200  # per list; the fused top-k is taken from their union (100: -1.5 points recall@10)
# title, content, tags, ctx (the neighbours). The neighbours' weight was 0.5, chosen on LoCoMo alone; on the
# LongMemEval split it sank hybrid recall@5 below the keyword mode (0.703 against 0.791): a memory's
# neighbours outranked the evidence from other sessions. At 0.1 hybrid beats or ties both baselines on
# both datasets (docs/benchmarks.md, 2026-11-24; 0.25 and 0.15 still lose at LongMemEval's recall@5).
# Title and tags at a quarter, as in keyword mode and for its reason (search.py KEYWORD_WEIGHTS): at 3 and
# 0.5 this list's recall@1/5/10 on LongMemEval was .292/.794/.857, at a quarter .306/.812/.875; LoCoMo
# .354/.629/.711 and .354/.629/.710 (docs/benchmarks.md, 2026-12-07).
BM25_WEIGHTS = "0.25, 1.0, 0.25, 0.1"
CAP_TOP = 5  # the places Weights.cap spreads over sessions: the prompt hook injects the first few hits
LEX_BOUND = 1000  # keyword matches ranked at most (the rarest words'): scripts/bench/search.py, 100,000 memories
# A question that counts, sums or compares ("how many", "the total", "my previous status", "which came
# first, A or B") asks about several things, usually told in several sessions; the session lift assumes one
# matching session and fills its top 5 with that session's other memories. Such questions are ranked with
# the session lift `tally` (default 0): on the LongMemEval split +.030 recall@5, LoCoMo unchanged
# (docs/benchmarks.md, 2026-11-24, night). Russian "сколько" (how many, how much): the same, not measured.
TALLY = re.compile(r"\b(how many|how much|total|in all|altogether|combined|average|previous|previously|compared"
                   r"|than|between)\b|\bfirst\b.*\bor\b|сколько", re.I)


# TIME_LIFT. "Last weekend" in a question names when something happened, but a memory's time is when it was
# told: a question asked on Monday about "last weekend" may be about an event told weeks before, about an
# earlier weekend. The lift used to be added to every memory recorded in the span (0.25 of the most the lists
# can give), so a memory that merely happened to be recorded then rose over evidence that matched better: on
# the held-out half of LongMemEval it pushed evidence out of the top 5. Now a hit in the span gains a share
# of its own score (`time`, still 0.25): it passes hits that match about as well, and a memory with no
# evidence of its own gains nothing. On the development data (neighbour-aware keyword list, 2026-12-07):
# LongMemEval r@5/r@10 unchanged, LoCoMo -0.004/-0.006 against the added lift, +0.005/+0.007 over none;
# a share of 0.1 was lower on both (docs/benchmarks.md).


@dataclass
class Weights:
    keyword: float = 0.75
    vector: float = 0.25
    session: float = 0.25
    repeat: float = 0.0  # each further hit of a session already ranked keeps (1 - repeat) of its score
    time: float = 0.25  # the share of its score a hit recorded in the span the query names gains (TIME_LIFT)
    later: float = 0.0  # added to those recorded after that span, up to the time asked at (told afterwards)
    cap: float = 0.0  # places one session may take in the top CAP_TOP (0: no cap); the others move down
    tally: float = 0.0  # the session lift for a question that counts, sums or compares (TALLY)

    @classmethod
    def from_env(cls, provider: str | None = None) -> Weights:
        """MEMORY_HYBRID_WEIGHTS, over defaults measured per provider: the hashing embedder is lexical too, so
        its list earns less weight (0.15) than a neural model's (0.25), chosen on LoCoMo; and its session
        boost is 0.15, chosen on LoCoMo and LongMemEval at once: at 0.25 one session's turns crowd
        LongMemEval's top 5 and hybrid r@5 fell .003 below keyword mode; 0.15 is .003 above it and still
        .179/.186 above plain bm25 on LoCoMo (docs/benchmarks.md, 2026-11-24, evening). MiniLM keeps 0.25:
        0.15 cost it LoCoMo r@5 .007 and gained nothing on LongMemEval."""
        w = cls(0.85, 0.15, 0.15) if provider == "hashing" else cls()
        for part in env("MEMORY_HYBRID_WEIGHTS").split(","):
            name, _, value = part.partition("=")
            try:
                if name.strip() in ("keyword", "vector", "session", "repeat", "time", "later", "cap", "tally"):
                    setattr(w, name.strip(), float(value))
            except ValueError:
                continue
        return w

    def for_query(self, query: str) -> Weights:
        """These weights, with the session lift `tally` when the query counts, sums or compares (TALLY)."""
        return replace(self, session=self.tally) if TALLY.search(query) else self


class Why:
    """What one fuse knew, to give any of its hits' score parts (memory/recall/search.py PARTS) when asked:
    building them for every candidate cost the worker's search ~1 us a candidate (0.8 ms of 1.8 ms at 700),
    and only the few hits shown are ever explained."""

    __slots__ = ("lex", "top", "vec", "boost", "rows", "dated", "time", "scores", "before")

    def __init__(self, lex: dict[int, float], vec: dict[int, float], boost: dict[int, float], rows: dict[int, Any],
                 dated: dict[int, float] | None, time: float, scores: dict[int, float],
                 before: dict[int, float]) -> None:
        self.lex, self.vec, self.boost, self.rows = lex, vec, boost, rows
        self.top = max(lex.values(), default=0.0) or 1.0
        self.dated, self.time, self.scores, self.before = dated, time, scores, before

    def parts(self, i: int) -> dict[str, float]:
        s = self.scores[i]
        parts = {"keyword": self.lex[i] / self.top if i in self.lex else None, "vector": self.vec.get(i),
                 "session": self.boost.get(i), "time": self.dated.get(i) if self.dated else None,
                 "importance": self.rows[i][1], "score": s,
                 "diversity": s / self.before[i] if self.before is not self.scores and self.before[i] else None}
        return {k: v for k, v in parts.items() if v is not None}


@dataclass(slots=True)
class Scored:
    id: int
    score: float
    keyword: float | None  # raw BM25
    vector: float | None  # cosine similarity
    why: Why | None = None

    @property
    def parts(self) -> dict[str, float] | None:
        """The score's parts (memory/recall/search.py PARTS), for `memory why`."""
        return self.why.parts(self.id) if self.why is not None else None

    def as_dict(self) -> dict[str, object]:
        return {"id": self.id, "score": round(self.score, 4),
                "keyword": None if self.keyword is None else round(self.keyword, 4),
                "vector": None if self.vector is None else round(self.vector, 4),
                "parts": {k: round(v, 4) for k, v in (self.parts or {}).items()}}


def pending_ids(db: sqlite3.Connection) -> list[int]:
    """Memories whose indexing the worker has not done yet (they are not in memories_ctx or out of date)."""
    return [int(r[0]) for r in db.execute(
        "SELECT CAST(json_extract(payload, '$.id') AS INTEGER) FROM queue "
        "WHERE kind = 'vector' AND status IN ('pending', 'running') LIMIT 2000") if r[0] is not None]


def keyword_candidates(db: sqlite3.Connection, query: str, filters: Filters, k: int = CANDIDATES,
                       lexical: Callable[[str, Filters, int], dict[int, float]] | None = None) -> dict[int, float]:
    """BM25 over memories_ctx (memory + neighbours), and over memories_fts for memories not indexed yet.
    Scores are positive, larger is better. As in a hook's keyword search, a big store's matches are ranked
    within LEX_BOUND (search.bounded_rank: every match of the rare words): BM25 costs ~2-5 us
    a matching row (these rows carry their neighbours' text), and a common word matches tens of thousands of
    rows in a big store. Older memories still come in through the vector list, which has no such bound.
    `lexical(query, filters, k)`, the warm worker's in-memory
    copy of memories_ctx (memory/recall/warm_index.py), replaces that SQL and ranks every match."""
    match = fts_query(query)
    if not match:
        return {}
    where, args = filters.sql("m")
    out = lexical(query, filters, k) if lexical else _ctx_candidates(db, query, filters, k)
    pending = set(pending_ids(db))
    if pending:
        # The pending memories picked here, not by `rowid IN (...)`: with 500 ids bound that cost 64 ms of CPU
        # a query at 10,000 memories (the search's whole budget, during every first index), the range and a
        # set 0.5 ms. They are mostly the newest, so the range skips most of the match list.
        found = 0
        for row in db.execute(
            f"""SELECT memories_fts.rowid AS id, bm25(memories_fts, {KEYWORD_WEIGHTS}) AS rank
                FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid
                WHERE memories_fts MATCH ? AND memories_fts.rowid >= ? {where} ORDER BY rank""",
            [match, min(pending), *args],
        ):
            if row["id"] in pending:
                out[row["id"]] = max(out.get(row["id"], 0.0), -row["rank"])
                found += 1
                if found == k:
                    break
    return out


def _ctx_candidates(db: sqlite3.Connection, query: str, filters: Filters, k: int) -> dict[int, float]:
    """The best k of memories_ctx, bounded as a hook's keyword search is (search.bounded_rank), and of the
    rows a pre-m014 store keeps in memories_ctx_old until the worker has converted them (ctx_rows)."""
    out: dict[int, float] = {}
    tables = ["memories_ctx", *([ctx_rows.OLD] if ctx_rows.has_table(db, ctx_rows.OLD) else [])]
    for table in tables:
        for i, r in bounded_rank(db, table, BM25_WEIGHTS, fts_phrases(query), filters, k, max(k, LEX_BOUND)):
            out[i] = max(out.get(i, 0.0), -r)
    return out


def fuse(lex: dict[int, float], vec: dict[int, float], rows: dict[int, Any], weights: Weights,
         method: str = "weighted", rrf_k: int = 60, limit: int | None = None,
         dated: dict[int, float] | None = None) -> list[Scored]:
    """Fused scores for the candidates still in `rows` (the filtered, unexpired ones): {id: (session_id,
    importance)} or rows with those columns. The best `limit` (default all), best first."""
    lex = {i: s for i, s in lex.items() if i in rows}
    vec = {i: s for i, s in vec.items() if i in rows}
    ids = set(lex) | set(vec)
    if not ids:
        return []
    boost: dict[int, float] = {}  # the session part of each score (weighted fusion)
    if method == "rrf":
        lrank = {i: r for r, i in enumerate(sorted(lex, key=lambda i: -lex[i]), start=1)}
        vrank = {i: r for r, i in enumerate(sorted(vec, key=lambda i: -vec[i]), start=1)}
        base = {i: (weights.keyword / (rrf_k + lrank[i]) if i in lrank else 0.0)
                + (weights.vector / (rrf_k + vrank[i]) if i in vrank else 0.0) for i in ids}
    else:
        top = max(lex.values(), default=0.0) or 1.0
        ln = {i: s / top for i, s in lex.items()}
        if weights.session and ln:
            best: dict[str, float] = {}
            for i, s in ln.items():
                sid = rows[i][0]
                if sid:
                    best[sid] = max(best.get(sid, 0.0), s)
            boosted = {i: ln.get(i, 0.0) + weights.session * best.get(rows[i][0] or "", 0.0)
                       for i in ids}
            boost = {i: b - ln.get(i, 0.0) for i, b in boosted.items()}
            top = max(boosted.values()) or 1.0
            ln = {i: s / top for i, s in boosted.items()}
        lo, hi = min(vec.values(), default=0.0), max(vec.values(), default=0.0)
        span = (hi - lo) or 1.0
        vn = {i: (s - lo) / span for i, s in vec.items()}
        base = {i: weights.keyword * ln.get(i, 0.0) + weights.vector * vn.get(i, 0.0) for i in ids}
    # Shown as a score from 0 to 1 as keyword search shows its own: the fused value over the most it can
    # be with the lists that answered (keyword alone when there are no vectors yet gives keyword's scale).
    most = (weights.keyword if lex else 0.0) + (weights.vector if vec else 0.0)
    if method == "rrf":
        most /= rrf_k + 1
    if dated:  # {id: the time weight it earns}: a share of the hit's own score (TIME_LIFT)
        for i in dated.keys() & ids:
            base[i] *= 1 + dated[i]
        most *= 1 + max(dated.values())
    most = most or 1.0
    # The same gentle boost keyword search gives: between two equally relevant memories, the important one.
    scores = {i: relevance(base[i] / most, rows[i][1]) for i in ids}
    before = dict(scores) if weights.repeat > 0 else scores
    session = {i: rows[i][0] for i in ids}
    best_first = cap_top(diversify(scores, session, weights.repeat), session, int(weights.cap))
    why = Why(lex, vec, boost, rows, dated, weights.time, scores, before)  # parts on demand (`memory why`)
    return [Scored(i, scores[i], lex.get(i), vec.get(i), why) for i in best_first[:limit]]


def diversify(scores: dict[int, float], session: dict[int, str | None], repeat: float) -> list[int]:
    """The ids best first, where each hit of a session already ranked above counts (1 - repeat) times
    its score, so one session does not take every place unless its hits are that much better. Greedy,
    lazily re-scored on a heap: O(n log n). `scores` is updated to the discounted values."""
    order = sorted(scores, key=lambda i: (-scores[i], -i))
    if repeat <= 0:
        return order
    import heapq

    keep = 1.0 - repeat
    seen: dict[str, int] = {}
    heap = [(-scores[i], -i, 0) for i in order]  # (-score, -id, the session count the score assumed)
    out: list[int] = []
    while heap:
        neg, nid, assumed = heapq.heappop(heap)
        sid = session.get(-nid)
        count = seen.get(sid, 0) if sid else 0
        if count != assumed:
            heapq.heappush(heap, (-scores[-nid] * keep ** count, nid, count))
            continue
        if sid:
            seen[sid] = count + 1
        scores[-nid] = -neg
        out.append(-nid)
    return out


def cap_top(order: list[int], session: dict[int, str | None], cap: int, top: int | None = None) -> list[int]:
    """`order` with at most `cap` places of the first `top` (CAP_TOP) held by one session: a further hit of
    a session that has its share waits just below them, ahead of the rest. Reorders the head only, so the
    top 10 keeps what it had unless the top 10 was mostly one session."""
    top = CAP_TOP if top is None else top
    if cap <= 0:
        return order
    head: list[int] = []
    held: list[int] = []
    count: dict[str, int] = {}
    for i in order:
        if len(head) == top:
            break
        sid = session.get(i)
        if sid and count.get(sid, 0) >= cap:
            held.append(i)
            continue
        if sid:
            count[sid] = count.get(sid, 0) + 1
        head.append(i)
    return head + held + order[len(head) + len(held):]


def search(db: sqlite3.Connection, query: str, *, limit: int = 10, filters: Filters | None = None,
           vector_search: Callable[[str, int, Filters], dict[int, float]] | None = None,
           weights: Weights | None = None, method: str | None = None, k: int = CANDIDATES,
           pool: Executor | None = None,
           lexical: Callable[[str, Filters, int], dict[int, float]] | None = None,
           info: Callable[[list[int]], dict[int, tuple[str | None, float]]] | None = None) -> list[Scored]:
    """The hybrid top `limit`. `vector_search(query, k, filters)` gives {id: similarity}; without it (no
    vectors yet) the result is the neighbour-aware keyword list alone. With a `pool`, the vector list is
    searched while SQLite ranks the keyword list. With `info(ids)` ({id: (session_id, importance)}, the
    warm index's copy) the candidates are fused first and only the best are checked against SQLite for
    existence, expiry and filters (a few rows rather than every candidate)."""
    filters = filters or Filters()
    weights = (weights or Weights.from_env()).for_query(query)
    method = method or env("MEMORY_FUSION")
    k = max(k, limit * 3)
    pending = pool.submit(vector_search, query, k, filters) if pool and vector_search else None
    lex = keyword_candidates(db, query, filters, k, lexical)
    if pending is not None:
        vec = pending.result()
    else:
        vec = vector_search(query, k, filters) if vector_search else {}
    if not lex:
        # No memory shares a word with the query: only those close in meaning answer it, so that a query about
        # nothing stored answers "no match" rather than the least distant memories (fusion ranks, and its
        # scores are relative: the best of unrelated memories would score as high as a real match).
        floor = float(env("MEMORY_RECALL_MIN_SIMILARITY"))
        vec = {i: sim for i, sim in vec.items() if sim >= floor}
    ids = list(set(lex) | set(vec))
    if not ids:
        return []
    where, args = filters.sql("m")
    dated = None
    if weights.time or weights.later:
        as_of = clock.now() if filters.as_of is None else filters.as_of
        dated = time_weights(db, ids, query_span(query, as_of), as_of, weights)
    if info is not None:
        known = info(ids)
        known.update(_rows(db, [i for i in ids if i not in known], where, args))  # not in the copy yet
        fused = fuse(lex, vec, known, weights, method, env_int("MEMORY_RRF_K"), dated=dated)
        out: list[Scored] = []
        step = max(2 * limit, 20)
        for start in range(0, len(fused), step):  # the source of truth has the last word
            chunk = fused[start:start + step]
            valid = _rows(db, [s.id for s in chunk], where, args)
            out += [s for s in chunk if s.id in valid][:limit - len(out)]
            if len(out) >= limit:
                break
        return out
    # The source of truth has the last word on filters and expiry.
    return fuse(lex, vec, _rows(db, ids, where, args), weights, method, env_int("MEMORY_RRF_K"), limit, dated)


def time_weights(db: sqlite3.Connection, ids: list[int], span: tuple[float, float] | None, as_of: float,
                 weights: Weights) -> dict[int, float] | None:
    """{id: weight} for those of `ids` recorded in `span` (start, end): `time`, and after it up to `as_of`
    (an event is often told after it happened): `later`. None without a span."""
    if span is None:
        return None
    out: dict[int, float] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        for i, at in db.execute(f"SELECT id, created_at FROM memories WHERE id IN ({','.join('?' * len(chunk))}) "
                                "AND created_at >= ?", [*chunk, span[0]]):
            w = weights.time if at < span[1] else weights.later if at <= as_of + DAY else 0.0
            if w:
                out[i] = w
    return out or None


def _rows(db: sqlite3.Connection, ids: list[int], where: str, args: list[object]
          ) -> dict[int, tuple[str | None, float | None]]:
    """{id: (session_id, importance)} of those memories that exist and pass the filters."""
    rows: dict[int, tuple[str | None, float | None]] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        for r in db.execute(f"SELECT m.id, m.session_id, m.importance FROM memories m "
                            f"WHERE m.id IN ({','.join('?' * len(chunk))}){where}", [*chunk, *args]):
            rows[r[0]] = (r[1], r[2])
    return rows


def in_process(ws: Workspace, query: str, limit: int, filters: Filters) -> list[tuple[Hit, dict[str, Any]]]:
    """The hybrid search without a worker, for the CLI (memory/recall/layers.py's `in_process`): loads the
    embedder and the vector table in this process (seconds with a model)."""
    from memory.recall import context, embed
    from memory.recall.vectors import VectorStore, is_index_damage, where_clause

    e = embed.choose()
    vector_search = None
    try:
        if layers.indexed_provider(ws) == context.index_key(embed.key(e)):
            vs = VectorStore(ws.dir, context.index_key(embed.key(e)), e.dim)

            def vector_search(q: str, k: int, f: Filters) -> dict[int, float]:
                where = where_clause(f.types, f.since, f.until, f.session_id)
                return dict(vs.search(e.embed_query(q), k, where))

        scored = search(ws.db, query, limit=limit, filters=filters, vector_search=vector_search,
                        weights=Weights.from_env(e.name))
    except Exception as exc:
        if not is_index_damage(exc):
            raise
        raise layers.KeywordOnly(_rebuild_later(ws)) from exc
    rows = layers.rows_by_id(ws.db, [s.id for s in scored])
    return [(hit_from_row(rows[s.id], s.score, s.parts), s.as_dict()) for s in scored if s.id in rows]


def _rebuild_later(ws: Workspace) -> str:
    """A damaged vector store met by a search in this process: moved aside when no worker holds the lock
    (the worker rebuilds it from SQLite when it starts), else left to the running worker, which meets the
    damage itself. Returns why the search answers with keywords."""
    import fcntl

    from memory.base import worker_client
    from memory.recall import vectors

    fd = os.open(worker_client.lock_path(ws.home), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return "the semantic index is damaged: the worker is rebuilding it from SQLite"
        vectors.set_aside(ws.dir)
        vectors.forget_index(ws.db)
    finally:
        os.close(fd)
    if worker_client.enabled():
        worker_client.start(ws.home)
        return "the semantic index was damaged: moved aside, the worker is rebuilding it from SQLite"
    return "the semantic index was damaged: moved aside; `memory reindex` rebuilds it"
