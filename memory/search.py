"""Keyword recall (BM25 over FTS5) and the 3-layer search API: compact hits, timeline, full details."""

from __future__ import annotations

import math
import re
import sqlite3
import time

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

_WORD = re.compile(r"\w+", re.UNICODE)


def terms(text: str, limit: int = 24) -> list[str]:
    """Content words of a text, lower-cased, stop words and 1-character tokens dropped, in order."""
    out: list[str] = []
    for w in _WORD.findall(text.lower()):
        if len(w) < 2 or w in STOPWORDS or w.isdigit() and len(w) < 3:
            continue
        if w not in out:
            out.append(w)
        if len(out) >= limit:
            break
    return out


def phrases(text: str) -> list[str]:
    """User text as safe FTS5 phrases: every term quoted (no syntax errors).

    Non-ASCII words get a prefix match on a shortened stem, since the porter stemmer is English-only.
    """
    parts = []
    for t in terms(text):
        if not t.isascii() and len(t) > 5:
            parts.append(f'"{t[: max(4, len(t) - 2)]}"*')
        else:
            parts.append(f'"{t}"')
    return parts


def fts_query(text: str) -> str | None:
    """The phrases of a text OR-ed into one FTS5 query, or None when it has no content word."""
    return " OR ".join(phrases(text)) or None


# BM25 as FTS5's bm25() computes it (k1, b; a phrase's frequency is the column-weighted sum of its hits,
# a document's length its token count over all columns).
K1, B = 1.2, 0.75
# Tables of at least this many rows rank a bounded window with window_bm25 rather than bm25(), whose
# whole-table document counts grow with the table (below it, bm25() over the window is the faster).
WINDOW_MIN_ROWS = 25_000


def big_table(db: sqlite3.Connection, table: str) -> bool:
    top = db.execute(f"SELECT rowid FROM {table} ORDER BY rowid DESC LIMIT 1").fetchone()
    return bool(top) and top[0] >= WINDOW_MIN_ROWS


def _varints(blob: bytes) -> list[int]:
    out, i = [], 0
    while i < len(blob):
        v = 0
        for j in range(9):
            c = blob[i]
            i += 1
            if j == 8:
                v = (v << 8) | c
                break
            v = (v << 7) | (c & 0x7F)
            if not c & 0x80:
                break
        out.append(v)
    return out


def _avg_length(db: sqlite3.Connection, table: str) -> float | None:
    """Average tokens per row of an FTS5 table, from its averages record (row 1 of <table>_data: the row
    count, then each column's token total, as varints). None if it cannot be read."""
    try:
        row = db.execute(f"SELECT block FROM {table}_data WHERE id = 1").fetchone()
        nums = _varints(row[0]) if row and row[0] else []
    except sqlite3.Error:
        return None
    return sum(nums[1:]) / nums[0] if len(nums) > 1 and nums[0] else None


def _doc_sizes(db: sqlite3.Connection, table: str, ids: list[int]) -> dict[int, int]:
    """Tokens per row as FTS5 counted them (<table>_docsize: a varint per column); {} if unreadable."""
    try:
        return {r[0]: sum(_varints(r[1])) for r in db.execute(
            f"SELECT id, sz FROM {table}_docsize WHERE id IN ({','.join('?' * len(ids))})", ids) if r[1]}
    except sqlite3.Error:
        return {}


def window_bm25(db: sqlite3.Connection, table: str, parts: list[str], weights: tuple[float, ...], lo: int, want: int,
                where: str = "", args: list[object] | None = None, *, content: str, id_column: str,
                columns: tuple[str, ...], rest: int = 0) -> dict[int, float]:
    """BM25 over the rows of an FTS5 table from rowid `lo` on (the newest matches), without bm25().

    FTS5's bm25() counts each phrase's documents over the whole table before it ranks a single row: with
    common words in 100,000 memories that alone takes ~20 ms, whatever bounds the rows ranked. Here the
    document frequencies come from the window itself (each phrase's matches from `lo` on, C-speed rowid
    scans), so the cost follows the window, not the table. Rows are pre-ranked by the IDF of the phrases
    they contain (their BM25 but for term frequencies and lengths); the best `want` that pass `where` (a
    condition on `memories m`) are read from `content` (its `columns`, in the FTS table's order) and
    scored. FTS5 said which phrases each row holds; their counts come from the text with a light stemmer
    (highlight() would be exact but costs ~1 ms a row on long doclists). With `rest`, the next candidates
    up to that many in all come too, their pre-rank scaled by the scored rows' median ratio of BM25 to
    pre-rank: an estimate for a fused list's lower ranks. Returns {rowid: score}, larger is better, on
    the scale of -bm25()."""
    args = args or []
    top = db.execute(f"SELECT rowid FROM {table} ORDER BY rowid DESC LIMIT 1").fetchone()
    found: list[set[int]] = []
    prescore: dict[int, float] = {}
    idf: list[float] = []
    for phrase in parts:
        ids = [r[0] for r in db.execute(f"SELECT rowid FROM {table} WHERE {table} MATCH ? AND rowid >= ?",
                                        (phrase, lo))]
        size = max(len(ids), (top[0] if top else lo) - lo + 1)
        w = max(1e-6, math.log((size - len(ids) + 0.5) / (len(ids) + 0.5)))
        idf.append(w)
        found.append(set(ids))
        get = prescore.get
        for i in ids:
            prescore[i] = get(i, 0.0) + w
    if not prescore:
        return {}
    order = sorted(prescore, key=lambda i: (-prescore[i], -i))
    chosen: list[int] = []
    total = max(want, rest)
    for start in range(0, len(order), max(total, 50)):
        chunk = order[start:start + max(total, 50)]
        if where:
            ok = {r[0] for r in db.execute(f"SELECT m.id FROM memories m WHERE m.id IN ({','.join('?' * len(chunk))})"
                                           f"{where}", [*chunk, *args])}
            chunk = [i for i in chunk if i in ok]
        chosen += chunk[:total - len(chosen)]
        if len(chosen) >= total:
            break
    if not chosen:
        return {}
    chosen, others = chosen[:want], chosen[want:]
    avgdl = _avg_length(db, table)
    bare = [_stem(p.strip('"*')) for p in parts]
    prefix = [p.endswith("*") for p in parts]
    # A word whose stem is a phrase's starts with that stem: a literal-prefix regex per phrase finds the
    # candidates at C speed, and only they are stemmed (once each).
    pats = [re.compile(re.escape(b) + r"\w*") if b else None for b in bare]
    stems: dict[str, str] = {}
    cells = {r[0]: r[1:] for r in db.execute(
        f"SELECT {id_column}, {', '.join(columns)} FROM {content} WHERE {id_column} IN ({','.join('?' * len(chosen))})",
        chosen)}
    sizes = _doc_sizes(db, table, chosen)
    out: dict[int, float] = {}
    lengths: dict[int, int] = {}
    freqs: dict[int, dict[int, float]] = {}
    for i, row in cells.items():
        have = [n for n, ids in enumerate(found) if i in ids]
        freq = dict.fromkeys(have, 0.0)
        length = sizes.get(i, 0)
        for w, cell in zip(weights, row, strict=False):
            if not cell:
                continue
            low = cell.lower()
            if i not in sizes:
                length += len(_WORD.findall(low))
            if not w:
                continue
            for n in have:
                pat = pats[n]
                if pat is None:
                    continue
                for m in pat.finditer(low):
                    at = m.start()
                    if at and low[at - 1].isalnum():
                        continue  # inside a word
                    word = m.group()
                    if prefix[n] or _same_stem(word, bare[n], stems):
                        freq[n] += w
        lengths[i], freqs[i] = length, freq
    if not avgdl:
        avgdl = sum(lengths.values()) / max(1, len(lengths)) or 1.0
    for i, freq in freqs.items():
        norm = K1 * (1 - B + B * lengths[i] / avgdl)
        # A row FTS5 matched counts each of its phrases at least once, whatever our tokenizing missed.
        out[i] = sum(idf[n] * f * (K1 + 1) / (f + norm) for n, f in ((n, f or 1.0) for n, f in freq.items()))
    if others and out:
        ratios = sorted(out[i] / prescore[i] for i in out)
        scale = ratios[len(ratios) // 2]
        for i in others:
            out[i] = prescore[i] * scale
    return out


def _stem(word: str) -> str:
    """A light English stem, close enough to porter's for counting a phrase's hits in a text FTS5 matched:
    plural, past and gerund endings off, a final e or y dropped."""
    if word.isascii() and len(word) > 4:
        for suffix in ("ingly", "edly", "ing", "ies", "ied", "es", "ed", "ly", "s"):
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                word = word[: -len(suffix)]
                break
    if len(word) > 3 and word[-1] in "ey":
        word = word[:-1]
    return word


def _same_stem(word: str, stem: str, stems: dict[str, str]) -> bool:
    got = stems.get(word)
    if got is None:
        got = stems[word] = _stem(word)
    return got == stem


class Hit:
    __slots__ = ("id", "title", "type", "score", "created_at", "session_id", "content", "importance", "project")

    def __init__(self, id: int, title: str, type: str, score: float, created_at: float, session_id: str | None,
                 content: str, importance: float, project: str) -> None:
        self.id, self.title, self.type, self.score = id, title, type, score
        self.created_at, self.session_id, self.content = created_at, session_id, content
        self.importance, self.project = importance, project

    def compact(self) -> dict[str, object]:
        return {"id": self.id, "title": self.title, "type": self.type, "score": round(self.score, 3),
                "date": time.strftime("%Y-%m-%d", time.localtime(self.created_at))}


class Filters:
    def __init__(self, types: list[str] | None = None, since: float | None = None, until: float | None = None,
                 session_id: str | None = None, exclude_session: str | None = None, project: str | None = None,
                 include_expired: bool = False) -> None:
        self.types, self.since, self.until = types, since, until
        self.session_id, self.exclude_session = session_id, exclude_session
        self.project, self.include_expired = project, include_expired

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
            args.append(time.time())
        return (" AND " + " AND ".join(where)) if where else "", args


def _hit(row: sqlite3.Row, score: float) -> Hit:
    return Hit(row["id"], row["title"], row["type"], score, row["created_at"], row["session_id"],
               row["content"], row["importance"], row["project"])


def keyword_search(db: sqlite3.Connection, query: str, *, limit: int = 10, filters: Filters | None = None,
                   min_terms: int = 1, max_candidates: int | None = None) -> list[Hit]:
    """BM25 (title weighted over content over tags), filters applied before the cut, then a gentle boost
    for importance. `min_terms` drops hits that share fewer distinct content words with the query.

    `max_candidates` bounds the work for a hook: with more matches than that, only the newest N are ranked
    (finding the N-th newest match costs no ranking: FTS5 walks its rowids in order); in a big table by
    window_bm25, whose cost does not grow with the table as bm25()'s does."""
    parts = phrases(query)
    if not parts:
        return []
    match = " OR ".join(parts)
    where, args = (filters or Filters()).sql()
    want = max(limit * 4, 20)
    ranked: list[tuple[sqlite3.Row, float]] = []
    edge = None
    if max_candidates:
        edge = db.execute(  # the filters apply here too, or excluded rows could fill the window
            f"""SELECT memories_fts.rowid FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid
                WHERE memories_fts MATCH ? {where} ORDER BY memories_fts.rowid DESC LIMIT 1 OFFSET ?""",
            [match, *args, max_candidates - 1],
        ).fetchone()
    if edge and big_table(db, "memories_fts"):
        # More matches than the bound in a big table: BM25 with the window's statistics, no bm25().
        scores = window_bm25(db, "memories_fts", parts, (3.0, 1.0, 0.5), edge[0], want, where, args,
                             content="memories", id_column="id", columns=("title", "content", "tags"))
        rows = {r["id"]: r for r in db.execute(
            f"SELECT * FROM memories WHERE id IN ({','.join('?' * len(scores))})", list(scores))}
        ranked = [(rows[i], s) for i, s in scores.items() if i in rows]
    else:
        if edge:
            where += " AND memories_fts.rowid >= ?"
            args.append(edge[0])
        ranked = [(row, -row["rank"]) for row in db.execute(
            f"""SELECT m.*, bm25(memories_fts, 3.0, 1.0, 0.5) AS rank
                FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid
                WHERE memories_fts MATCH ? {where}
                ORDER BY rank LIMIT ?""",
            [match, *args, want],
        )]
    qterms = terms(query)
    hits = []
    for row, bm25 in ranked:
        if min_terms > 1 and _shared_terms(qterms, f"{row['title']} {row['content']} {row['tags']}") < min_terms:
            continue
        hits.append(_hit(row, bm25 * (0.75 + 0.5 * row["importance"])))
    hits.sort(key=lambda h: -h.score)
    return hits[:limit]


def _shared_terms(qterms: list[str], text: str) -> int:
    words = set(_WORD.findall(text.lower()))
    stems = {w[:5] for w in words}
    return sum(1 for t in qterms if t in words or t[:5] in stems)


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
    the table."""
    now = time.time()
    marks = ",".join("?" * len(exclude_types))
    cand: dict[int, sqlite3.Row] = {}
    for order in ("importance DESC, created_at DESC", "created_at DESC"):
        for row in db.execute(
            f"""SELECT * FROM memories WHERE project = ? AND type NOT IN ({marks})
                AND (expires_at IS NULL OR expires_at > ?) ORDER BY {order} LIMIT 200""",
            (project, *exclude_types, now),
        ):
            cand[row["id"]] = row
    hits = []
    for row in cand.values():
        age_days = max(0.0, (now - (row["updated_at"] or row["created_at"])) / 86400)
        recency = 1.0 / (1.0 + age_days / 7)
        use = min(1.0, (row["access_count"] or 0) / 10)
        score = 0.55 * row["importance"] + 0.3 * recency + 0.15 * use
        hits.append(_hit(row, score))
    hits.sort(key=lambda h: -h.score)
    return hits[:limit]
