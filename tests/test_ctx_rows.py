"""The contentless neighbour index (memories_ctx) and the ledger's copy of what it indexed: migration m014
converts a store in place (same ranking, no text kept in the index), and rows go with exactly their words."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memory.recall.hybrid import BM25_WEIGHTS
from memory.store import ctx_rows
from memory.store.db import connect
from memory.store.migrations import MIGRATIONS, SCHEMA_VERSION

QUERIES = ("pool", "retry deadline", "cache", "token parser", "zebracorn")
TEXTS = [("pool exhausted", "the connection pool ran out at 400 rps", "db", "retry with a longer deadline"),
         ("retry loop", "the retry loop needed a longer deadline", "", "pool exhausted at 400 rps"),
         ("token cache", "the parser keeps a token cache per file", "parser", "retry loop deadline"),
         ("cache miss", "every cache miss reads the file again", "", "token cache per file"),
         ("unindexed", "a row the ledger does not know of: pool cache", "", "")]


def ranks(db: sqlite3.Connection, query: str) -> list[tuple[int, float]]:
    return [(r[0], round(r[1], 9)) for r in db.execute(
        f"SELECT rowid, bm25(memories_ctx, {BM25_WEIGHTS}) FROM memories_ctx WHERE memories_ctx MATCH ? "
        "ORDER BY 2, 1", (query,))]


def old_store(path: Path, orphan: bool) -> sqlite3.Connection:
    """A store at schema 13: memories_ctx holding its text, every row in the ledger but (orphan) the last."""
    db = sqlite3.connect(path, isolation_level=None)
    for m in MIGRATIONS[:13]:
        m(db)
    db.execute("PRAGMA user_version=13")
    for i, (title, content, tags, ctx) in enumerate(TEXTS, start=1):
        db.execute("INSERT INTO memories_ctx (rowid, title, content, tags, ctx) VALUES (?, ?, ?, ?, ?)",
                   (i, title, content, tags, ctx))
        if not orphan or i < len(TEXTS):
            db.execute("INSERT INTO memory_index (memory_id, session_id, created_at, provider, text_hash, "
                       "indexed_at) VALUES (?, 's', ?, 'p', 'h', 0)", (i, float(i)))
    return db


def test_m014_converts_in_place_with_the_same_scores_and_no_text(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    db = old_store(path, orphan=False)
    before = {q: ranks(db, q) for q in QUERIES}
    db.close()
    assert SCHEMA_VERSION == len(MIGRATIONS) >= 14
    db = connect(str(path))
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert {q: ranks(db, q) for q in QUERIES} == before  # the same tokens in the same columns
    assert before["pool"] and not before["zebracorn"]
    assert tuple(db.execute("SELECT title, content, tags, ctx FROM memories_ctx WHERE rowid = 1").fetchone()) == (
        None, None, None, None)
    for i, values in enumerate(TEXTS, start=1):
        assert ctx_rows.get(db, i) == values
    sql = db.execute("SELECT sql FROM sqlite_master WHERE name = 'memories_ctx'").fetchone()[0]
    assert "content=''" in sql
    db.close()


def test_m014_leaves_a_row_the_ledger_does_not_know_to_the_worker(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    old_store(path, orphan=True).close()
    db = connect(str(path))
    assert {i for i, _ in ranks(db, "pool")} == {1, 2}  # 5 is gone: the worker's sweep indexes it again
    assert ctx_rows.get(db, len(TEXTS)) is None
    db.close()


def test_a_dropped_row_takes_exactly_its_words_and_a_new_one_replaces_it(tmp_path: Path) -> None:
    db = connect(str(tmp_path / "memory.db"))
    for i, values in enumerate(TEXTS, start=1):
        db.execute("INSERT INTO memory_index (memory_id, created_at, provider, text_hash, indexed_at, doc) "
                   "VALUES (?, 0, 'p', 'h', 0, ?)", (i, ctx_rows.insert(db, i, values)))
    assert {i for i, _ in ranks(db, "pool")} == {1, 2, 5}
    assert ctx_rows.drop(db, [1, 5, 99]) == 2  # 99: no ledger row, nothing to remove
    assert {i for i, _ in ranks(db, "pool")} == {2}
    assert ctx_rows.get(db, 1) is None and db.execute("SELECT count(*) FROM memories_ctx").fetchone()[0] == 3
    new = ("pool sizing", "raised the pool to 64", "", "")
    db.execute("UPDATE memory_index SET doc = ? WHERE memory_id = 1", (ctx_rows.insert(db, 1, new),))
    assert {i for i, _ in ranks(db, "pool")} == {1, 2} and [i for i, _ in ranks(db, "exhausted")] == [2]
    db.execute("INSERT INTO memories_ctx (memories_ctx) VALUES ('integrity-check')")
    ctx_rows.clear(db)
    assert db.execute("SELECT count(*) FROM memories_ctx").fetchone()[0] == 0 and not ranks(db, "cache")
    assert db.execute("SELECT count(*) FROM memory_index WHERE doc IS NOT NULL").fetchone()[0] == 0
    db.close()


def test_a_salvaged_database_indexes_the_ledgers_rows_again(tmp_path: Path) -> None:
    from memory.present.doctor import _salvage

    path = tmp_path / "memory.db"
    db = connect(str(path))
    for i, values in enumerate(TEXTS[:3], start=1):
        db.execute("INSERT INTO memory_index (memory_id, created_at, provider, text_hash, indexed_at, doc) "
                   "VALUES (?, 0, 'p', 'h', 0, ?)", (i, ctx_rows.insert(db, i, values)))
    db.execute("INSERT INTO memory_index (memory_id, created_at, provider, text_hash, indexed_at) "
               "VALUES (9, 0, 'p', 'h', 0)")  # no values kept: forgotten, the worker indexes it again
    before = {q: ranks(db, q) for q in QUERIES}
    db.close()
    fresh = connect(_salvage(str(path)))
    assert {q: ranks(fresh, q) for q in QUERIES} == before
    assert [r[0] for r in fresh.execute("SELECT memory_id FROM memory_index ORDER BY 1")] == [1, 2, 3]
    fresh.execute("INSERT INTO memories_ctx (memories_ctx) VALUES ('integrity-check')")
    fresh.close()
