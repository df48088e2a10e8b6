"""Keyword recall (BM25 over FTS5) and the 3-layer search API: compact hits, timeline, full details."""

from __future__ import annotations

import sqlite3
import time

from memory.base import clock
from memory.base.words import WordChars

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from collections.abc import Iterable, Sequence
    from typing import Any

STOPWORDS = frozenset(
    """a an the and or not no of to in on at by for from with without into onto over under about as is are was
    were be been being am do does did doing have has had having it its it's this that these those there here
    i me my we our you your he she they them their his her what which who whom whose when where why how
    can could should would will shall may might must just also too very so than then now please pls thanks
    hi hello ok okay yes let's lets get got make made use using want need like some any all each more most
    other such only own same again further once up down out off if else but because while until again
    и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по только ее мне было вот
    от меня еще нет о из ему теперь когда даже ну вдруг ли если уже или ни быть был него до вас нибудь опять
    уж вам ведь там потом себя ничего ей может они тут где есть надо ней для мы тебя их чем была сам чтоб без
    будто чего раз тоже себе под будет ж тогда кто этот того потому этого какой совсем ним здесь этом один""".split()
)

# Regex `\w`, as _sre defines it: str.isalnum() or "_".
_WORD = WordChars(lambda ch: ch.isalnum() or ch == "_")


def words(text: str) -> list[str]:
    """re.findall(r"\\w+", text)."""
    return text.translate(_WORD).split()


def terms(text: str, limit: int = 24) -> list[str]:
    """Content words of a text, lower-cased, stop words and 1-character tokens dropped, in order."""
    out: list[str] = []
    for w in words(text.lower()):
        if len(w) < 2 or w in STOPWORDS or w.isdigit() and len(w) < 3:
            continue
        if w not in out:
            out.append(w)
        if len(out) >= limit:
            break
    return out


def query_words(text: str) -> list[tuple[str, bool]]:
    """The words a query searches for, each with whether it is a prefix: non-ASCII words longer than 5
    letters match on a shortened stem, since the porter stemmer is English-only."""
    out = []
    for t in terms(text):
        if not t.isascii() and len(t) > 5:
            out.append((t[: max(4, len(t) - 2)], True))
        else:
            out.append((t, False))
    return out


def fts_phrases(text: str) -> list[str]:
    """User text turned into safe FTS5 phrases: every word of query_words quoted (no syntax errors)."""
    return [f'"{w}"*' if prefix else f'"{w}"' for w, prefix in query_words(text)]


def fts_query(text: str) -> str | None:
    """fts_phrases OR-ed."""
    return " OR ".join(fts_phrases(text)) or None


# The parts of a hit's score a ranking fills in Hit.parts, for "why was this recalled" (`memory why`, the
# access_log rows of memory/store log_access): keyword (BM25 relative to the best match, 0-1), vector (cosine
# similarity), session (the boost from the best keyword hit of the same session: its neighbours), time (the
# boost of a hit recorded in the span of time the query names), importance, recency and use (SessionStart's
# blend), diversity (the share of its score a hit keeps after others of its session ranked above it), and
# score (the result).
# A ranking fills those it has; a new part is a new key.
PARTS = ("keyword", "vector", "session", "time", "importance", "recency", "use", "diversity", "score")


class Hit:
    __slots__ = ("id", "title", "type", "score", "created_at", "session_id", "content", "importance", "project",
                 "parts")

    def __init__(self, id: int, title: str, type: str, score: float, created_at: float, session_id: str | None,
                 content: str, importance: float, project: str, parts: dict[str, float] | None = None) -> None:
        self.id, self.title, self.type, self.score = id, title, type, score
        self.created_at, self.session_id, self.content = created_at, session_id, content
        self.importance, self.project = importance, project
        self.parts = parts  # PARTS by name, as the ranking that found the hit filled them

    def compact(self) -> dict[str, object]:
        return {"id": self.id, "title": self.title, "type": self.type, "score": round(self.score, 3),
                "date": time.strftime("%Y-%m-%d", time.localtime(self.created_at))}


class Filters:
    def __init__(self, types: list[str] | None = None, since: float | None = None, until: float | None = None,
                 session_id: str | None = None, exclude_session: str | None = None, project: str | None = None,
                 include_expired: bool = False, not_shown_in: str | None = None, as_of: float | None = None) -> None:
        self.types, self.since, self.until = types, since, until
        self.session_id, self.exclude_session = session_id, exclude_session
        self.project, self.include_expired = project, include_expired
        self.not_shown_in = not_shown_in  # a session: leaves out the memories injected into it (SQL only)
        self.as_of = as_of  # not a filter: the time "yesterday" or "last week" in a query counts from (None: now)

    def sql(self, alias: str = "m") -> tuple[str, list[object]]:
        where: list[str] = []
        args: list[object] = []
        if self.types:
            where.append(f"{alias}.type IN ({','.join('?' * len(self.types))})")
            args += self.types
        if self.since is not None:
            where.append(f"{alias}.created_at >= ?")
            args.append(self.since)
        if self.until is not None:
            where.append(f"{alias}.created_at < ?")
            args.append(self.until)
        if self.session_id:
            where.append(f"{alias}.session_id = ?")
            args.append(self.session_id)
        if self.exclude_session:
            where.append(f"({alias}.session_id IS NULL OR {alias}.session_id != ?)")
            args.append(self.exclude_session)
        if self.project:
            where.append(f"{alias}.project = ?")
            args.append(self.project)
        if not self.include_expired:
            where.append(f"({alias}.expires_at IS NULL OR {alias}.expires_at > ?)")
            args.append(clock.now())
        if self.not_shown_in:  # one index range on access_log_session, materialised once by SQLite
            where.append(f"{alias}.id NOT IN (SELECT memory_id FROM access_log WHERE session_id = ? "
                         "AND kind LIKE 'inject%')")
            args.append(self.not_shown_in)
        return (" AND " + " AND ".join(where)) if where else "", args


def hit_from_row(row: sqlite3.Row, score: float, parts: dict[str, float] | None = None) -> Hit:
    return Hit(row["id"], row["title"], row["type"], score, row["created_at"], row["session_id"],
               row["content"], row["importance"], row["project"], parts)


# bm25() weights of title, content and tags in keyword mode. A title is mostly cut from its content (capture
# takes a decision's or a reply's first 150 characters, "Asked: " and a prompt's first line; `save --jsonl`
# the first line) and tags name what the content says, so their words are counted in the content already:
# weighted 3 and 0.5, a title's words counted four times, and a memory whose first line named the query's
# words outranked the one that told the answer further down. On the LongMemEval development split that put
# keyword mode below plain FTS5 BM25 over the content alone (recall@10 -0.020; on the held-out half recall@5
# -0.030). At a quarter each: recall@1/5/10 .351/.804/.860 against plain BM25's .316/.782/.859 (3/1/0.5:
# .290/.791/.839); LoCoMo, whose titles are speaker labels, moves by at most 0.001 at any of 0-3 (the title
# weight) and stays .074 over plain BM25 at recall@5 (docs/benchmarks.md, 2026-12-07).
KEYWORD_WEIGHTS = "0.25, 1.0, 0.25"


def keyword_search(db: sqlite3.Connection, query: str, *, limit: int = 10, filters: Filters | None = None,
                   min_terms: int = 1, max_candidates: int | None = None) -> list[Hit]:
    """BM25 (content, with its title and tags at a quarter: KEYWORD_WEIGHTS) of the query's content words (fused
    with plain BM25's list where KEYWORD_FUSION says so: off by default), filters applied before the cut, then a
    gentle boost for importance. `min_terms` drops hits that share fewer distinct content words with the query;
    a query none of whose content words matches answers nothing (its stop words alone are no evidence).

    `max_candidates` bounds the work for a hook: BM25 costs ~1-2 us a matching row, so with common words
    over 100,000 memories ranking every match takes 40-120 ms (bounded_rank says what is ranked then); a hook
    ranks the content words' list alone."""
    phrases = fts_phrases(query)
    if not phrases:
        return []
    k = max(limit * 4, 20)
    ranked = bounded_rank(db, "memories_fts", KEYWORD_WEIGHTS, phrases, filters or Filters(), k, max_candidates)
    if not ranked:
        return []
    if KEYWORD_FUSION and max_candidates is None:  # not in a hook: see KEYWORD_FUSION
        every = [f'"{w}"' for w in dict.fromkeys(words(query.lower()))]
        ranked = fused(ranked, bounded_rank(db, "memories_fts", "1.0, 1.0, 1.0", every, filters or Filters(), k,
                                            max_candidates), KEYWORD_FUSION)
    rank = dict(ranked)
    rows = db.execute(f"SELECT * FROM memories m WHERE id IN ({','.join('?' * len(rank))})", list(rank)).fetchall()
    qterms = terms(query)
    hits = []
    # FTS5's BM25 clamps the IDF of a word found in over half the rows to 1e-6, so in a small store every
    # raw score rounds to 0.00: scores are relative to the best match instead, as in hybrid search.
    top = max((-r for _, r in ranked), default=0.0) or 1.0
    for row in rows:
        if min_terms > 1 and _shared_terms(qterms, f"{row['title']} {row['content']} {row['tags']}") < min_terms:
            continue
        match = -rank[row["id"]] / top
        score = relevance(match, row["importance"])
        hits.append(hit_from_row(row, score, {"keyword": match, "importance": row["importance"], "score": score}))
    hits.sort(key=lambda h: (-h.score, rank[h.id]))
    return hits[:limit]


# How keyword mode's list (content words, KEYWORD_WEIGHTS) may be fused with plain BM25's (every word of the
# query, FTS5's own weights): "sum" adds each list's scores relative to its best, "rrf" their reciprocal ranks
# (k 60), "" keeps keyword mode's list alone. Off: "sum" won one question each on cobra and click at the history
# benchmark's prompt at 150 commits (a commit subject's stop words, "can be customized", are rare in a code
# history and are evidence), but at 300 commits it lost 3 of 27 on cobra and 1 of 7 on express and tied click
# and ripgrep, and moved LoCoMo and LongMemEval's development split by +.005 and +.010 recall@5 (intervals across
# 0): not a rule that wins on every dataset (docs/benchmarks.md, "Keyword mode fused with plain BM25", 2026-12-07).
# The variants stay for the benchmarks (`--keyword-variants fusion=sum`). Never in a hook (a search with
# max_candidates): plain BM25's list walks every match of the query's stop words to find their IDF, 11 ms CPU
# at p50 over 10,000 memories of prose.
KEYWORD_FUSION = ""


def fused(ours: list[tuple[int, float]], plain: list[tuple[int, float]], how: str) -> list[tuple[int, float]]:
    """Two bm25 lists (negative: lower is better) as one: each score relative to its list's best, summed ("sum"),
    or reciprocal ranks ("rrf"); negative again, best first. A row in one list only gets that list's share."""
    total: dict[int, float] = {}
    for ranked in (ours, plain):
        top = max((-r for _, r in ranked), default=0.0) or 1.0
        for place, (i, r) in enumerate(ranked):
            total[i] = total.get(i, 0.0) + (1 / (61 + place) if how == "rrf" else -r / top)
    return sorted(((i, -v) for i, v in total.items()), key=lambda x: x[1])


EXACT_UP_TO = 4  # bounds of matches (counted per phrase) up to which bounded_rank ranks every match


def bounded_rank(db: sqlite3.Connection, table: str, weights: str, phrases: list[str], filters: Filters,
                 k: int, bound: int | None = None) -> list[tuple[int, float]]:
    """The best `k` rows of an FTS5 table (rowid = memories.id) for the OR of `phrases` by bm25 (negative:
    lower is better), the filters applied before the cut.

    With `bound`, FTS5's own ranking is left to a bounded set of rows: every match of the query's rarest
    phrases (those whose matches together are at most `bound`, each counted no further), and only when those
    are fewer than k, the newest `bound` matches of any phrase too. A memory only common words match is not
    ranked. Finding a phrase's IDF walks all its matches, once per ranking query: the newest matches were a
    second walk of every common phrase for 1% of the top 8 (100,000 memories of prose: 52.5% agreement with
    the full ranking without them, 53.3% with; 98.3% at 10,000 either way), and the 100,000 row's query is
    now within 2x of the 10,000 row's (scripts/bench/search.py --keyword-only). A phrase in at least half
    the rows is left out (_weighted). Scores are exact: BM25 is a sum over phrases (each with its own IDF,
    the row's length the same), so a row's score over all phrases is its score under `rare AND all`, which
    counts the rare phrases twice, less its score under the rare ones.

    Filters that drop few rows (expiry, a session left out, those already shown) are checked on the ranked
    rows, not joined to every match (half the cost): 2k + 16 are ranked, and as many more as the session
    left out holds memories; in the rare case that fewer than k of them pass, the ranking runs again with
    the join."""
    where, args = filters.sql()
    if not (filters.types or filters.since is not None or filters.until is not None or filters.session_id
            or filters.project):
        want = 2 * k + 16 + _left_out(db, filters)
        # The memories already shown leave in SQL, by rowid (a set SQLite builds once): a long session's
        # prompts were shown hundreds.
        shown, shown_args = ((f" AND {table}.rowid NOT IN (SELECT memory_id FROM access_log WHERE session_id = ? "
                              "AND kind LIKE 'inject%')", [filters.not_shown_in]) if filters.not_shown_in else ("", []))
        fetched = _rank(db, table, weights, phrases, shown, shown_args, want, bound, join=False)
        if not fetched:
            return []
        ids = [i for i, _ in fetched]
        keep = {r[0] for r in db.execute(f"SELECT m.id FROM memories m WHERE m.id IN ({','.join('?' * len(ids))})"
                                         f"{where}", [*ids, *args])}
        passed = [x for x in fetched if x[0] in keep]
        if len(passed) >= k or len(fetched) < want:
            return passed[:k]
    return _rank(db, table, weights, phrases, where, args, k, bound, join=True)


def _left_out(db: sqlite3.Connection, filters: Filters) -> int:
    """How many memories the excluded session's filter can leave out at most: its own (an index range)."""
    if not filters.exclude_session:
        return 0
    return min(4000, db.execute("SELECT count(*) FROM memories WHERE session_id = ?",
                                (filters.exclude_session,)).fetchone()[0])


def _rank(db: sqlite3.Connection, table: str, weights: str, phrases: list[str], where: str, args: Sequence[object],
          k: int, bound: int | None, join: bool) -> list[tuple[int, float]]:
    """bounded_rank's ranking, with the filters joined to every match (`join`) or none."""
    rare, total = phrases, 0
    if bound:
        # Each phrase's matches, counted no further than the bound; whether they add up to at most
        # EXACT_UP_TO bounds, up to where ranking them all costs less than the bounded way's queries.
        counted = _counted(db, table, phrases, bound)
        if not _at_most(db, table, counted, EXACT_UP_TO * bound, bound):
            counted = _weighted(db, table, counted)
            phrases, rare = [p for _, p, _ in counted], []
            for n, p, _ in counted:
                if total + n > bound:
                    break
                rare.append(p)
                total += n
    match = " OR ".join(phrases)
    joined = f"JOIN memories m ON m.id = {table}.rowid" if join else ""
    ranked = f"""SELECT {table}.rowid, bm25({table}, {weights}) AS rank FROM {table} {joined}
        WHERE {table} MATCH ? {where}"""
    if not bound or len(rare) == len(phrases):
        return _scores(db.execute(f"{ranked} ORDER BY rank LIMIT ?", [match, *args, k]))
    out: list[tuple[int, float]] = []
    older, low_args = "", []
    if total < k:  # the rare phrases match too few rows: the newest matches of any phrase as well
        edge = db.execute(  # with the join, the filters apply here too: excluded rows do not fill the window
            f"""SELECT {table}.rowid FROM {table} {joined} WHERE {table} MATCH ? {where}
                ORDER BY {table}.rowid DESC LIMIT 1 OFFSET ?""", [match, *args, bound - 1]).fetchone()
        low = edge[0] if edge else -(2 ** 63)
        out = db.execute(f"{ranked} AND {table}.rowid >= ? ORDER BY rank LIMIT ?", [match, *args, low, k]).fetchall()
        if edge is None or not rare:  # every match ranked, or no rare phrase: the newest only
            return _scores(out)
        older, low_args = f" AND {table}.rowid < ?", [low]
    either = " OR ".join(rare)
    # The subtraction and the cut in SQL: two materialised lists joined by rowid (an automatic index).
    named = ranked.replace(f"{table}.rowid,", f"{table}.rowid AS id,")
    rows = db.execute(f"""WITH both AS MATERIALIZED ({named}{older}),
        own AS MATERIALIZED (SELECT rowid AS id, bm25({table}, {weights}) AS rank FROM {table}
                             WHERE {table} MATCH ?{older})
        SELECT both.id, both.rank - own.rank AS score FROM both JOIN own USING (id) ORDER BY score LIMIT ?""",
                      [f"({either}) AND ({match})", *args, *low_args, either, *low_args, k]).fetchall()
    if out:
        rows = sorted([*out, *rows], key=lambda x: x[1])[:k]
    return _scores(rows)


def _scores(rows: Iterable[Sequence[Any]]) -> list[tuple[int, float]]:
    return [(int(i), float(r)) for i, r in rows]


def _counted(db: sqlite3.Connection, table: str, phrases: list[str], bound: int) -> list[tuple[int, str, bool]]:
    """Each phrase with its matches counted no further than `bound` + 1, rarest first, and whether they fill
    at least half the rowids its first matches span (a word that may be in half the table's rows)."""
    counted = []
    for p in phrases:
        n, first, last = db.execute(f"SELECT count(*), min(rowid), max(rowid) FROM (SELECT rowid FROM {table} "
                                    f"WHERE {table} MATCH ? LIMIT ?)", (p, bound + 1)).fetchone()
        counted.append((n, p, n > bound and 2 * n >= last - first + 1))
    return sorted(counted)


def _weighted(db: sqlite3.Connection, table: str, counted: list[tuple[int, str, bool]]) -> list[tuple[int, str, bool]]:
    """The counted phrases less those found in at least half the table's rows: FTS5's bm25() gives them an
    IDF of 1e-6 (log((N - n + 0.5) / (n + 0.5)) is not positive), so they change no score by more than 3e-6
    and rank nothing, while finding that IDF walks all their matches, once per ranking query (a word in every
    memory of 50,000: ~1.7 ms CPU, twice), and their newest matches would fill the window. Only a dense
    phrase (_counted) is counted that far. All are kept when no other phrase matches; keyword_search's
    min_terms still counts them."""
    rows = 0
    kept = []
    for n, p, dense in counted:
        if dense:
            rows = rows or _fts_rows(db, table)
            if 2 * _count(db, table, p, (rows + 1) // 2) >= rows:
                continue
        kept.append((n, p, dense))
    return kept if any(n for n, _, _ in kept) else counted


def _count(db: sqlite3.Connection, table: str, phrase: str, limit: int) -> int:
    """A phrase's matches, counted no further than `limit`."""
    return int(db.execute(f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {table} MATCH ? LIMIT ?)",
                          (phrase, limit)).fetchone()[0])


def _at_most(db: sqlite3.Connection, table: str, counted: list[tuple[int, str, bool]], cap: int, bound: int) -> bool:
    """Whether the phrases' matches add up to at most `cap`, those counted past `bound` counted further only
    as far as what is left of it."""
    left = cap - sum(n for n, _, _ in counted if n <= bound)
    for n, p, _ in counted:
        if n <= bound:
            continue
        if left <= bound:
            return False
        n = _count(db, table, p, left + 1)
        if n > left:
            return False
        left -= n
    return True


def _fts_rows(db: sqlite3.Connection, table: str) -> int:
    """The row count FTS5's bm25() uses: the first varint of the table's averages record (id 1)."""
    row = db.execute(f"SELECT block FROM {table}_data WHERE id = 1").fetchone()
    n = 0
    for i, byte in enumerate(row[0][:9] if row else b""):
        if i == 8:  # SQLite's varint: a ninth byte gives all its 8 bits
            return (n << 8) | byte
        n = (n << 7) | (byte & 0x7F)
        if byte < 0x80:
            break
    return n


def relevance(match: float, importance: float | None) -> float:
    """A hit's score from 0 to 1, the same in keyword and hybrid search: how well it matches (0-1, relative
    to the best match of the query) with a gentle boost for importance (a 0.5 memory at the best match
    scores 0.8, a 1.0 memory 1.0), so between two equally relevant memories the important one leads."""
    return match * (0.75 + 0.5 * (0.5 if importance is None else importance)) / 1.25


def _shared_terms(qterms: list[str], text: str) -> int:
    found = set(words(text.lower()))
    stems = {w[:5] for w in found}
    return sum(1 for t in qterms if t in found or t[:5] in stems)


def timeline(db: sqlite3.Connection, anchor_id: int, before: int = 5, after: int = 5) -> list[sqlite3.Row]:
    """Memories recorded around one memory in the same project, oldest first."""
    anchor = db.execute("SELECT * FROM memories WHERE id = ?", (anchor_id,)).fetchone()
    if anchor is None:
        return []
    earlier = db.execute(
        """SELECT * FROM memories WHERE project = ? AND (created_at < ? OR (created_at = ? AND id < ?))
           ORDER BY created_at DESC, id DESC LIMIT ?""",
        (anchor["project"], anchor["created_at"], anchor["created_at"], anchor_id, before),
    ).fetchall()
    later = db.execute(
        """SELECT * FROM memories WHERE project = ? AND (created_at > ? OR (created_at = ? AND id > ?))
           ORDER BY created_at, id LIMIT ?""",
        (anchor["project"], anchor["created_at"], anchor["created_at"], anchor_id, after),
    ).fetchall()
    return [*reversed(earlier), anchor, *later]


def useful_memories(db: sqlite3.Connection, project: str, limit: int, *,
                    exclude_types: tuple[str, ...] = ("prompt",)) -> list[Hit]:
    """The project's most useful memories for a fresh session: importance, recency and use, blended.

    Candidates come from two indexed cuts (most important, most recent) so the cost does not grow with
    the table. They are scored on a few columns and only the best `limit` are read whole: reading all 400
    candidates' rows, content included, was ~4 ms of SessionStart's CPU at 50,000 memories."""
    now = clock.now()
    marks = ",".join("?" * len(exclude_types))
    scores: dict[int, float] = {}
    parts: dict[int, tuple[float, float, float]] = {}
    for order in ("importance DESC, created_at DESC", "created_at DESC"):
        for mid, importance, created, updated, used in db.execute(
            f"""SELECT id, importance, created_at, updated_at, access_count FROM memories WHERE project = ?
                AND type NOT IN ({marks}) AND (expires_at IS NULL OR expires_at > ?) ORDER BY {order} LIMIT 200""",
            (project, *exclude_types, now),
        ):
            age_days = max(0.0, (now - (updated or created)) / 86400)
            recency = 1.0 / (1.0 + age_days / 7)
            use = min(1.0, (used or 0) / 10)
            scores[mid] = 0.55 * importance + 0.3 * recency + 0.15 * use
            parts[mid] = (importance, recency, use)
    best = sorted(scores, key=lambda i: -scores[i])[:limit]  # stable: ties keep the candidates' order
    if not best:
        return []
    rows = {r["id"]: r for r in db.execute(f"SELECT * FROM memories WHERE id IN ({','.join('?' * len(best))})",
                                           best)}
    return [hit_from_row(rows[i], scores[i], dict(zip(("importance", "recency", "use", "score"),
                                                      (*parts[i], scores[i]), strict=True)))
            for i in best if i in rows]
