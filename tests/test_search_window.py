"""Keyword search past its candidate bound: BM25 with the window's statistics (memory/search.py
window_bm25) against FTS5's own bm25() over the same window, on a real store; filters, expiry, Russian
prefixes and the hybrid keyword list on memories_ctx."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from memory import embed, hybrid, search, store
from memory.project import Project
from memory.search import Filters, keyword_search, phrases, window_bm25
from memory.worker import ProjectIndex
from memory.workspace import Workspace

TOPICS = {
    "auth": "jwt refresh token cookie login session expiry clock skew leeway claims",
    "db": "postgres migration lock table column default backfill index vacuum",
    "cache": "redis cache invalidation stale price product key event publish",
    "ci": "flaky test fixture tmpfs upload pytest runner timeout retry",
    "build": "docker image stage wheel toolchain deploy size layer",
}


@pytest.fixture(autouse=True)
def window_on_small_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """The window path serves tables of 25,000+ rows; these tests' stores are smaller."""
    monkeypatch.setattr(search, "WINDOW_MIN_ROWS", 0)


def make_ws(home: Path) -> Workspace:
    return Workspace(Project("proj-w", "proj", "/nowhere/proj", None), str(home))


def fill(ws: Workspace, n: int, seed: int = 3) -> None:
    rng = random.Random(seed)
    t0 = time.time() - 86400
    names = list(TOPICS)
    for i in range(n):
        topic = names[i % len(names)]
        words = TOPICS[topic].split()
        body = " ".join(rng.choice(words) for _ in range(rng.randint(6, 30)))
        store.save(ws.db, ws.project.key, store.NewMemory(
            title=f"{topic} note {i}: {' '.join(rng.sample(words, 3))}", content=f"{body} (case {i})",
            type="bugfix" if i % 4 == 0 else "observation", session_id=f"s-{topic}-{i // 100}", created_at=t0 + i),
            filter_low_value=False)


def exact_window(ws: Workspace, query: str, lo: int, limit: int) -> list[int]:
    """FTS5's bm25() over the same window: the reference (its document counts span the whole table)."""
    match = " OR ".join(phrases(query))
    return [r[0] for r in ws.db.execute(
        "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? AND rowid >= ? "
        "ORDER BY bm25(memories_fts, 3.0, 1.0, 0.5) LIMIT ?", (match, lo, limit))]


def test_window_ranking_is_as_precise_as_bm25_over_the_window(home: Path) -> None:
    ws = make_ws(home)
    fill(ws, 1500)
    queries = {"postgres migration lock on the users table": "db", "stale redis cache price": "cache",
               "jwt refresh token expires: clock skew": "auth", "flaky pytest upload on tmpfs": "ci",
               "docker image too big for deploy": "build"}

    def precision(ids: list[int], topic: str) -> float:
        rows = ws.db.execute(f"SELECT title FROM memories WHERE id IN ({','.join(map(str, ids))})").fetchall()
        return sum(r[0].startswith(topic) for r in rows) / len(ids)

    mine_p = ref_p = 0.0
    for q, topic in queries.items():
        match = " OR ".join(phrases(q))
        lo = ws.db.execute("SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rowid DESC "
                           "LIMIT 1 OFFSET 149", (match,)).fetchone()[0]
        got = window_bm25(ws.db, "memories_fts", phrases(q), (3.0, 1.0, 0.5), lo, 40, content="memories",
                          id_column="id", columns=("title", "content", "tags"))
        assert got and min(got) >= lo and len(got) == 40
        mine = sorted(got, key=lambda i: -got[i])[:10]
        ref = exact_window(ws, q, lo, 10)
        mine_p += precision(mine, topic) / len(queries)
        ref_p += precision(ref, topic) / len(queries)
        # Through keyword_search, bounded: the same window; its order differs only by the importance boost.
        hits = keyword_search(ws.db, q, limit=10, max_candidates=150)
        assert hits and all(h.id >= lo for h in hits) and hits[0].id in mine[:5]
    assert mine_p >= 0.9 and mine_p >= ref_p - 0.05, (mine_p, ref_p)


def test_bounded_search_applies_filters_and_skips_expired(home: Path) -> None:
    ws = make_ws(home)
    fill(ws, 800)
    q = "redis cache invalidation"
    hits = keyword_search(ws.db, q, limit=10, max_candidates=100, filters=Filters(types=["bugfix"]))
    assert hits and all(h.type == "bugfix" for h in hits)
    hits = keyword_search(ws.db, q, limit=10, max_candidates=100, filters=Filters(exclude_session="s-cache-7"))
    assert hits and all(h.session_id != "s-cache-7" for h in hits)
    best = keyword_search(ws.db, q, limit=1, max_candidates=100)[0]
    ws.db.execute("UPDATE memories SET expires_at = ? WHERE id = ?", (time.time() - 5, best.id))
    assert best.id not in [h.id for h in keyword_search(ws.db, q, limit=10, max_candidates=100)]
    # Unbounded (no window): FTS5's bm25(), as before.
    assert keyword_search(ws.db, q, limit=5) and len(keyword_search(ws.db, q, limit=5)) == 5


def test_small_tables_rank_the_window_with_bm25(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = make_ws(home)
    fill(ws, 400)
    monkeypatch.setattr(search, "WINDOW_MIN_ROWS", 25_000)
    q = "postgres migration lock"
    match = " OR ".join(phrases(q))
    lo = ws.db.execute("SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rowid DESC "
                       "LIMIT 1 OFFSET 49", (match,)).fetchone()[0]
    hits = keyword_search(ws.db, q, limit=5, max_candidates=50)
    assert {h.id for h in hits} <= set(exact_window(ws, q, lo, 50)) and all(h.id >= lo for h in hits)


def test_bounded_search_counts_russian_prefix_matches(home: Path) -> None:
    ws = make_ws(home)
    fill(ws, 300)
    t0 = time.time()
    for i in range(60):
        text = ["очистка", "очистку", "очистке"][i % 3] + " кэша" if i % 3 == 0 else "запись на сервер"
        store.save(ws.db, ws.project.key, store.NewMemory(
            f"заметка {i}", f"{text} после деплоя, номер {i}", session_id="ru", created_at=t0 + i),
            filter_low_value=False)
    assert [p for p in phrases("очистки сервера") if p.endswith("*")]  # long non-ASCII words: prefixes
    # The window: the 10 newest matches (every memory matches "деплоя"); three of them hold a form of
    # "очистка", which the query's prefix finds, so they lead.
    hits = keyword_search(ws.db, "очистки после деплоя", limit=5, max_candidates=10)
    assert len(hits) == 5 and all("очист" in h.content for h in hits[:3])
    assert not any("очист" in h.content for h in hits[3:])


def test_hybrid_keyword_list_past_its_bound(home: Path) -> None:
    ws = make_ws(home)
    fill(ws, 600)
    p = ProjectIndex(str(home), ws.project.key, embed.make("hashing"))
    p.check_provider()
    ids = [r[0] for r in ws.db.execute("SELECT id FROM memories ORDER BY id")]
    for s in range(0, len(ids), 128):
        p.index(ids[s:s + 128])
    ws.db.execute("DELETE FROM queue")  # indexed here, not by a worker: nothing is pending
    old = hybrid.LEX_BOUND
    try:
        hybrid.LEX_BOUND = 100  # the window path on a small store
        lex = hybrid.keyword_candidates(ws.db, "postgres migration lock", Filters(), 80)
        typed = hybrid.keyword_candidates(ws.db, "postgres migration lock", Filters(types=["bugfix"]), 80)
    finally:
        hybrid.LEX_BOUND = old
    assert 60 <= len(lex) <= 80 and all(s > 0 for s in lex.values())
    best = max(lex, key=lambda i: lex[i])
    assert "db note" in ws.db.execute("SELECT title FROM memories WHERE id = ?", (best,)).fetchone()[0]
    types = {r[0] for r in ws.db.execute(f"SELECT type FROM memories WHERE id IN ({','.join(map(str, typed))})")}
    assert typed and types == {"bugfix"}
    p.db.close()
