"""The warm worker's in-memory copy of the search lists (memory/recall/warm_index.py): its keyword scores are
FTS5's bm25() over memories_ctx, its vectors LanceDB's, it follows the worker's indexing, filters apply
before the cut, nothing indexed during a build is lost, and a real worker answers from it."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from test_hybrid import indexed, load, make_ws

from memory import store
from memory.base import worker_client
from memory.recall.hybrid import BM25_WEIGHTS
from memory.recall.search import Filters, fts_query
from memory.recall.warm_index import WarmIndex
from memory.worker import ProjectIndex
from tests.support.semantic_fixture import QUESTIONS, RUSSIAN, RUSSIAN_QUESTIONS, SESSIONS

ROOT = Path(__file__).resolve().parents[1]

# Words the tokenizer folds (accents, case, Cyrillic, digits) beside the fixture's English and Russian.
EXTRA = {
    "s-mixed": [
        "Café menu service returns HTTP 503 when the Crème brûlée item has no price",
        "Naïve retry loop in the façade hammered the upstream API 40 times a second",
        "Передали обработку ошибок в middleware, 503 больше не появляется",
        "Build 2024.11 pinned numpy 1.26 because 2.0 broke the ABI of the wheels",
    ],
}
QUERIES = [q for q, _, _ in QUESTIONS + RUSSIAN_QUESTIONS] + [
    "cafe creme brulee price", "naive retry facade upstream", "numpy 2.0 ABI wheels", "обработку ошибок middleware",
    "HTTP 503 errors", "postgres", "the", "connections pooling exhausted timeouts",
]


def _fts_bm25(db, query: str, k: int) -> dict[int, float]:
    """FTS5's own ranking of memories_ctx, every match ranked (no bound)."""
    if fts_query(query) is None:  # stop words only: no query at all
        return {}
    return {r[0]: -r[1] for r in db.execute(
        f"SELECT rowid, bm25(memories_ctx, {BM25_WEIGHTS}) AS r FROM memories_ctx WHERE memories_ctx MATCH ? "
        "ORDER BY r LIMIT ?", (fts_query(query), k))}


@pytest.fixture
def warm_project(home: Path) -> tuple[ProjectIndex, dict]:
    ws = make_ws(home)
    ids = load(ws, {**SESSIONS, **RUSSIAN, **EXTRA})
    p = indexed(home, ws)
    p.warm_up(wait=True)
    assert p.warm is not None
    return p, ids


def test_keyword_scores_are_fts5_bm25(warm_project: tuple[ProjectIndex, dict]) -> None:
    p, _ = warm_project
    db = p.reader()
    compared = 0
    for q in QUERIES:
        want = _fts_bm25(db, q, 1000)
        got = p.warm.keyword(q, Filters(), 1000)
        if "_" in q:  # a phrase ("test upload large file"): without positions, every row with all its words
            assert set(want) <= set(got), q
            continue
        assert set(got) == set(want), q
        for i, score in want.items():
            assert got[i] == pytest.approx(score, rel=1e-5), (q, i)
        compared += len(want)
    assert compared > 100


def test_vectors_are_lancedb_vectors(warm_project: tuple[ProjectIndex, dict]) -> None:
    p, _ = warm_project
    for q in QUERIES:
        qv = p.query_vector(q)
        if not any(qv):  # stop words only: every memory ties at 0
            continue
        want = dict(p.vectors.search(qv, 10))
        got = p.warm.vector(qv, Filters(), 10)
        assert len(got) == len(want) == 10
        for i, sim in got.items():  # bfloat16 storage: similarities agree closely, the lists nearly always
            exact = dict(p.vectors.search(qv, 200)).get(i)
            assert exact is not None and sim == pytest.approx(exact, abs=0.01), (q, i)
        assert len(set(got) & set(want)) >= 8, q


def test_hybrid_through_the_warm_index_ranks_as_the_sql_path(warm_project: tuple[ProjectIndex, dict]) -> None:
    p, ids = warm_project
    warm = p.warm
    for q, sid, i in QUESTIONS + RUSSIAN_QUESTIONS:
        p.warm = warm
        fast = [s.id for s in p.search(q, 5, Filters())]
        p.warm = None
        slow = [s.id for s in p.search(q, 5, Filters())]
        assert fast[:3] == slow[:3], q
        assert ids[(sid, i)] in fast, q


def test_it_follows_saves_edits_and_deletes(home: Path, warm_project: tuple[ProjectIndex, dict]) -> None:
    p, ids = warm_project
    ws = make_ws(home)
    new = store.save(ws.db, ws.project.key, store.NewMemory(
        "Kafka consumer lag", "the kafka consumer lag alarm fires at 10,000 messages", session_id="s-kafka"),
        filter_low_value=False)
    p.index([new.id])
    assert new.id in p.warm.keyword("kafka consumer lag", Filters(), 10)
    assert new.id in [s.id for s in p.search("kafka consumer lag alarm", 3, Filters())]
    # An edit: the old words no longer find it, the new ones do; the old slot is dead, not counted.
    ws.db.execute("UPDATE memories SET content = 'the rabbitmq queue depth alarm fires at 5,000', "
                  "updated_at = updated_at + 1 WHERE id = ?", (new.id,))
    ws.db.commit()
    p.index([new.id])
    assert new.id not in p.warm.keyword("messages", Filters(), 100)  # a word only the old text had
    assert new.id in p.warm.keyword("rabbitmq queue depth", Filters(), 10)
    assert p.warm.keyword("kafka consumer lag", Filters(), 10) == pytest.approx(  # the title still says it
        _fts_bm25(p.reader(), "kafka consumer lag", 10), rel=1e-5)
    assert p.warm.dead >= 1
    assert p.warm.keyword("rabbitmq queue depth", Filters(), 10) == pytest.approx(
        _fts_bm25(p.reader(), "rabbitmq queue depth", 10), rel=1e-5)
    store.forget(ws.db, [new.id])
    p.index([new.id])
    assert new.id not in p.warm.keyword("rabbitmq queue depth", Filters(), 10)
    assert new.id not in p.warm.vector(p.query_vector("rabbitmq queue depth"), Filters(), 100)
    assert new.id not in p.warm.slot_of


def test_filters_apply_before_the_cut(home: Path) -> None:
    ws = make_ws(home)
    now = time.time()
    for n in range(40):
        store.save(ws.db, "proj-1", store.NewMemory(f"cache note {n}", f"redis cache eviction note {n}",
                                                    type="observation", session_id="a",
                                                    created_at=now - 86400 * n), filter_low_value=False)
    kept = store.save(ws.db, "proj-1", store.NewMemory("cache decision", "we keep the redis cache small",
                                                       type="decision", session_id="b", created_at=now - 86400 * 3),
                      filter_low_value=False)
    p = indexed(home, ws)
    p.warm_up(wait=True)
    window = Filters(since=now - 86400 * 4, until=now - 86400 * 2)
    for f in (Filters(types=["decision"]), Filters(session_id="b"), window):
        kw = p.warm.keyword("redis cache eviction", f, 5)
        vec = p.warm.vector(p.query_vector("redis cache eviction"), f, 5)
        assert kept.id in kw and kept.id in vec
        if f.types or f.session_id:
            assert set(kw) == set(vec) == {kept.id}
        else:
            assert len(kw) == 3  # days 2, 3 and 4 ago... the 4th day is not before `since`
    assert p.warm.keyword("redis cache eviction", Filters(types=["no-such-type"]), 5) == {}
    assert p.warm.keyword("redis cache eviction", Filters(session_id="nobody"), 5) == {}


def test_work_indexed_during_a_build_is_not_lost(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = make_ws(home)
    load(ws, {"s-pool": SESSIONS["s-pool"]})
    p = indexed(home, ws)
    p.warm_enabled = True
    started, release = threading.Event(), threading.Event()
    real_load = WarmIndex.load

    def slow_load(self: WarmIndex, db, table, pause=lambda: None) -> None:  # noqa: ANN001
        real_load(self, db, table, pause)  # reads the snapshot
        started.set()
        release.wait(30)

    monkeypatch.setattr(WarmIndex, "load", slow_load)
    p.warm_up()
    assert started.wait(30)
    late = store.save(ws.db, "proj-1", store.NewMemory("grpc deadline", "grpc deadline exceeded on the billing call",
                                                       session_id="s-late"), filter_low_value=False)
    gone = ws.db.execute("SELECT id FROM memories WHERE session_id = 's-pool' ORDER BY id LIMIT 1").fetchone()[0]
    store.forget(ws.db, [gone])
    p.index([late.id, gone])
    assert p.warm is None  # still building: the search path is SQLite's
    release.set()
    p._warm_thread.join(30)
    assert p.warm is not None
    assert late.id in p.warm.keyword("grpc deadline billing", Filters(), 5)
    assert gone not in p.warm.slot_of
    assert p.warm.keyword("grpc deadline billing", Filters(), 5) == pytest.approx(
        _fts_bm25(p.reader(), "grpc deadline billing", 5), rel=1e-5)


def test_off_switch_and_a_cli_process_do_not_build_it(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = make_ws(home)
    load(ws, {"s-jwt": SESSIONS["s-jwt"]})
    p = indexed(home, ws)
    p.search("jwt refresh", 3, Filters())
    assert p.warm is None and not p._warm_building  # not the worker: no copy built for one search
    p.warm_enabled = True
    monkeypatch.setenv("MEMORY_WARM_INDEX", "off")
    p.search("jwt refresh", 3, Filters())
    assert p.warm is None and not p._warm_building


def _pending(home: Path) -> int:
    db = sqlite3.connect(home / "projects" / "proj-1" / "memory.db")
    try:
        return db.execute("SELECT count(*) FROM queue WHERE kind = 'vector' AND status IN ('pending', 'running')"
                          ).fetchone()[0]
    finally:
        db.close()


def test_a_real_worker_answers_from_the_warm_index(home: Path) -> None:
    ws = make_ws(home)
    ids = load(ws, {**SESSIONS, **RUSSIAN})
    ws.db.close()
    env = {**os.environ, "MEMORY_HOME": str(home), "MEMORY_EMBEDDER": "hashing", "PYTHONPATH": str(ROOT),
           "MEMORY_WORKER_IDLE_SECONDS": "60"}
    proc = subprocess.Popen([sys.executable, "-m", "memory.worker"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        request = {"op": "search", "project": "proj-1", "limit": 5, "filters": {}}
        answer: dict | None = None
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:  # loads the project, indexes the memories, builds the copy
            answer = worker_client.ask(str(home), {**request, "query": QUESTIONS[0][0]}, timeout=5)
            if answer and answer.get("ok") and answer.get("warm") and not _pending(home):
                break
            time.sleep(0.3)
        assert answer and answer.get("warm"), answer
        for q, sid, i in QUESTIONS:
            answer = worker_client.ask(str(home), {**request, "query": q}, timeout=5)
            assert answer and answer["warm"]
            assert ids[(sid, i)] in [h["id"] for h in answer["hits"]], q
    finally:
        worker_client.ask(str(home), {"op": "shutdown"}, timeout=5)
        proc.wait(30)
    assert b"warm index of" in proc.stderr.read()
