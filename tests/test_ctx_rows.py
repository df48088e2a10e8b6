"""The contentless neighbour index (memories_ctx) and the ledger's copy of what it indexed: migration m014
sets an older store's rows aside (memories_ctx_old) whatever its size, a hook does no conversion, the worker
converts them (same ranking, no text kept in the index), nothing set aside comes back twice, and rows go
with exactly their words."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from test_hybrid import indexed, make_ws

from memory import store
from memory.base import worker_client
from memory.base.project import identify
from memory.recall.hybrid import BM25_WEIGHTS, keyword_candidates
from memory.recall.search import Filters
from memory.store import ctx_rows, evict
from memory.store.db import connect
from memory.store.migrations import MIGRATIONS, SCHEMA_VERSION
from memory.store.workspace import Workspace
from tests.support.helpers import ROOT, HookRunner

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


def schema_13(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    for m in MIGRATIONS[:13]:
        m(db)
    db.execute("PRAGMA user_version=13")
    return db


def old_store(path: Path, orphan: bool) -> sqlite3.Connection:
    """A store at schema 13: memories_ctx holding its text, every row in the ledger but (orphan) the last."""
    db = schema_13(path)
    for i, (title, content, tags, ctx) in enumerate(TEXTS, start=1):
        db.execute("INSERT INTO memories_ctx (rowid, title, content, tags, ctx) VALUES (?, ?, ?, ?, ?)",
                   (i, title, content, tags, ctx))
        if not orphan or i < len(TEXTS):
            db.execute("INSERT INTO memory_index (memory_id, session_id, created_at, provider, text_hash, "
                       "indexed_at) VALUES (?, 's', ?, 'p', 'h', 0)", (i, float(i)))
    return db


def count(db: sqlite3.Connection, table: str) -> int:
    return db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_m014_sets_the_rows_aside_and_their_conversion_keeps_every_score(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    db = old_store(path, orphan=False)
    before = {q: ranks(db, q) for q in QUERIES}
    db.close()
    assert SCHEMA_VERSION == len(MIGRATIONS) >= 14
    db = connect(str(path))
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert count(db, "memories_ctx") == 0 and count(db, ctx_rows.OLD) == len(TEXTS)  # nothing converted
    assert ctx_rows.get(db, 2) == TEXTS[1]  # audit and redaction read a row not converted yet
    assert ctx_rows.convert(db, batch=2) == len(TEXTS)  # three transactions, then the empty table dropped
    assert not ctx_rows.has_table(db, ctx_rows.OLD)
    assert {q: ranks(db, q) for q in QUERIES} == before  # the same tokens in the same columns
    assert before["pool"] and not before["zebracorn"]
    assert tuple(db.execute("SELECT title, content, tags, ctx FROM memories_ctx WHERE rowid = 1").fetchone()) == (
        None, None, None, None)
    for i, values in enumerate(TEXTS, start=1):
        assert ctx_rows.get(db, i) == values
    sql = db.execute("SELECT sql FROM sqlite_master WHERE name = 'memories_ctx'").fetchone()[0]
    assert "content=''" in sql
    assert ctx_rows.convert(db) == 0
    db.close()


def test_m014_of_a_store_without_rows_leaves_nothing_to_convert(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    schema_13(path).close()
    db = connect(str(path))
    assert not ctx_rows.has_table(db, ctx_rows.OLD) and ctx_rows.has_table(db)
    db.close()


def test_m014_leaves_a_row_the_ledger_does_not_know_to_the_worker(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    old_store(path, orphan=True).close()
    db = connect(str(path))
    assert {i for i, _ in ranks(db, "pool")} == set()
    assert ctx_rows.convert(db) == len(TEXTS) - 1
    assert {i for i, _ in ranks(db, "pool")} == {1, 2}  # 5 is gone: the worker's sweep indexes it again
    assert ctx_rows.get(db, len(TEXTS)) is None
    db.close()


def downgrade(path: str) -> None:
    """A store the current code wrote, turned into what schema 13 kept: memories_ctx with its text (from the
    ledger's copy) and a ledger without it."""
    db = sqlite3.connect(path, isolation_level=None)
    rows = [(mid, *ctx_rows.unpack(doc)) for mid, doc in db.execute("SELECT memory_id, doc FROM memory_index")]
    db.execute("DROP TABLE memories_ctx")
    db.execute("CREATE VIRTUAL TABLE memories_ctx USING fts5(title, content, tags, ctx, "
               "tokenize='porter unicode61 remove_diacritics 2')")  # as m003 made it
    db.executemany("INSERT INTO memories_ctx (rowid, title, content, tags, ctx) VALUES (?, ?, ?, ?, ?)", rows)
    db.execute("ALTER TABLE memory_index DROP COLUMN doc")
    db.execute("PRAGMA user_version=13")
    db.close()


def fill(ws: Workspace, n: int) -> list[int]:
    words = ["pool", "cache", "retry", "deadline", "parser", "token", "socket", "schema", "index", "queue"]
    return [store.save(ws.db, ws.project.key, store.NewMemory(
        f"note {i}: {words[i % 10]} and {words[i * 7 % 10]}",
        f"the {words[i % 10]} of module_{i % 89} met the {words[i * 3 % 10]} issue {i * 13 % 997}",
        session_id=f"s{i // 25}", created_at=1_700_000_000 + i), filter_low_value=False).id for i in range(n)]


def test_a_hook_converts_nothing_and_the_worker_converts_everything(home: Path, project: Path,
                                                                    hooks: HookRunner) -> None:
    ws = Workspace(identify(str(project)), str(home))
    n = len(fill(ws, 3000))
    indexed(home, ws).close()
    ws.db.execute("DELETE FROM queue")  # all indexed: the worker has nothing to do but the conversion
    ws.db.close()
    downgrade(ws.db_path)
    db = sqlite3.connect(ws.db_path)
    before = {q: ranks(db, q) for q in ("pool", "retry deadline", "module_7 socket", "issue 13")}
    db.close()
    hooks.start()  # the worker is off (tests/conftest.py): this process migrates, and converts nothing
    db = sqlite3.connect(ws.db_path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert count(db, ctx_rows.OLD) == n and count(db, "memories_ctx") == 0
    old = keyword_candidates(db, "retry deadline", Filters(), 8)  # the old rows still answer meanwhile
    assert old and set(old) <= {i for i, _ in before["retry deadline"]}
    db.close()
    env = {**os.environ, "MEMORY_WORKER": "on", "MEMORY_EMBEDDER": "hashing", "PYTHONPATH": str(ROOT),
           "MEMORY_WORKER_IDLE_SECONDS": "60"}
    proc = subprocess.Popen([sys.executable, "-m", "memory.worker"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        db = sqlite3.connect(ws.db_path)
        deadline = time.monotonic() + 180  # a bound on waiting for an event, not on its speed
        while ctx_rows.has_table(db, ctx_rows.OLD) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        assert not ctx_rows.has_table(db, ctx_rows.OLD)
        assert {q: ranks(db, q) for q in before} == before
        assert count(db, "memories_ctx") == n == db.execute(
            "SELECT count(*) FROM memory_index WHERE doc IS NOT NULL").fetchone()[0]
        db.close()
    finally:
        worker_client.ask(str(home), {"op": "shutdown"}, timeout=5)
        proc.wait(30)
    assert f"{n} neighbour rows converted".encode() in proc.stderr.read()


def test_a_row_evicted_or_indexed_again_before_its_conversion_comes_back_once(home: Path) -> None:
    ws = make_ws(home)
    ids = fill(ws, 60)
    indexed(home, ws).close()
    ws.db.close()
    downgrade(ws.db_path)
    ws = make_ws(home)  # migrates: every row set aside
    assert count(ws.db, ctx_rows.OLD) == 60
    gone, edited = ids[10], ids[30]
    assert evict.remove(ws, [gone])[0] == 1
    title = ws.db.execute("SELECT title FROM memories WHERE id = ?", (edited,)).fetchone()[0]
    assert store.save(ws.db, ws.project.key, store.NewMemory(  # the same title: the same memory, edited
        title, "the zebracorn replaced the pool", session_id="s1", created_at=1_700_000_030),
        filter_low_value=False).id == edited
    p = indexed(home, ws)  # the worker's index of the edited memory (and of its neighbours)
    p.convert_ctx()
    assert not ctx_rows.has_table(ws.db, ctx_rows.OLD)
    assert count(ws.db, "memories_ctx") == 59 == ws.db.execute(
        "SELECT count(*) FROM memory_index WHERE doc IS NOT NULL").fetchone()[0]
    assert [i for i, _ in ranks(ws.db, "content:zebracorn")] == [edited]  # its neighbours: in ctx
    assert gone not in {i for i, _ in ranks(ws.db, "pool OR cache OR retry")}
    ws.db.execute("INSERT INTO memories_ctx (memories_ctx) VALUES ('integrity-check')")
    p.close()
    ws.db.close()


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


def test_a_salvage_before_the_conversion_keeps_the_rows_set_aside(tmp_path: Path) -> None:
    from memory.present.doctor import _salvage

    path = tmp_path / "memory.db"
    db = old_store(path, orphan=False)
    before = {q: ranks(db, q) for q in QUERIES}
    db.close()
    connect(str(path)).close()  # migrated, not converted
    fresh = connect(_salvage(str(path)))
    assert {q: ranks(fresh, q) for q in QUERIES} == before
    assert count(fresh, "memory_index") == len(TEXTS)
    fresh.close()


def test_audit_redacts_a_row_not_converted_yet(tmp_path: Path) -> None:
    from memory.present.audit import Report, audit_database

    path = tmp_path / "memory.db"
    secret = "ghp_R4nd0mT0kenV4lu3xYz1234567890abcdEF"
    db = old_store(path, orphan=False)
    db.execute("UPDATE memories_ctx SET ctx = ? WHERE rowid = 3", (f"pushed with {secret} today",))
    db.close()
    connect(str(path)).close()  # migrated: the row waits in memories_ctx_old
    report = Report()
    audit_database(str(path), redact=True, report=report)
    assert report.redacted_values >= 1
    db = connect(str(path))
    assert secret not in "".join(ctx_rows.get(db, 3) or ())
    assert "REDACTED" in (ctx_rows.get(db, 3) or ("",) * 4)[3]
    assert not db.execute(f"SELECT rowid FROM {ctx_rows.OLD} WHERE {ctx_rows.OLD} MATCH ?", (f'"{secret}"',)).fetchall()
    ctx_rows.convert(db)
    assert secret not in ctx_rows.get(db, 3)[3]  # type: ignore[index]
    db.close()
    assert secret.encode() not in path.read_bytes()
