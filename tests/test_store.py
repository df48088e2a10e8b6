"""The store at library level: migrations, FTS5 sync, dedup, filters, search, timeline, corruption, queue.

Real SQLite files in tmp dirs; concurrency with real processes."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory import store
from memory.base.classify import TYPES
from memory.recall import search
from memory.recall.search import EXACT_UP_TO, Filters, keyword_search, timeline
from memory.store import NewMemory, queue
from memory.store.db import BUSY_TIMEOUT_MS, DatabaseCorrupt, apply_migrations, connect, schema_version
from memory.store.migrations import MIGRATIONS
from memory.store.workspace import Workspace
from tests.support.helpers import ROOT, HookRunner

P = "proj-a"
GARBAGE = b"this is certainly not an SQLite database\x00\xff\xfe" * 400


@pytest.fixture
def db(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    conn = connect(str(tmp_path / "data" / "memory.db"))
    yield conn
    conn.close()


@pytest.fixture
def ws(home: Path, project: Path) -> Iterator[Workspace]:
    w = Workspace.for_dir(str(project), home=str(home))
    yield w
    w.close()


def add(db: sqlite3.Connection, title: str, content: str | None = None, project: str = P, **kw: object) -> int:
    saved = store.save(db, project, NewMemory(title=title, content=content or title, **kw))  # type: ignore[arg-type]
    assert saved.action == "inserted", (title, saved)
    assert saved.id is not None
    return saved.id


def fts_ids(db: sqlite3.Connection, query: str) -> set[int]:
    return {r[0] for r in db.execute("SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?", (query,))}


def fts_integrity(db: sqlite3.Connection) -> None:
    db.execute("INSERT INTO memories_fts(memories_fts) VALUES('integrity-check')")
    # rank=1 also compares the index with the content table (the plain form does not, for external content).
    db.execute("INSERT INTO memories_fts(memories_fts, rank) VALUES('integrity-check', 1)")


def titles(hits: list) -> list[str]:
    return [h.title for h in hits]


# --- migrations and connection settings ---------------------------------------------------------------


def test_fresh_db_is_fully_migrated_and_rerunning_is_a_noop(tmp_path: Path) -> None:
    path = str(tmp_path / "x" / "memory.db")
    db = connect(path)
    assert schema_version(db) == len(MIGRATIONS)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
    assert {"memories", "memories_fts", "sessions", "queue", "access_log", "handoffs"} <= tables
    schema = sorted(r[0] for r in db.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL"))
    assert apply_migrations(db) == 0
    db.close()
    again = connect(path)  # a second open applies nothing either
    assert schema_version(again) == len(MIGRATIONS)
    assert apply_migrations(again) == 0
    assert sorted(r[0] for r in again.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL")) == schema


def test_connection_uses_wal_and_a_busy_timeout(db: sqlite3.Connection) -> None:
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT_MS
    assert BUSY_TIMEOUT_MS >= 1000


_MIGRATE_CHILD = r"""
import os, sys, time
from memory.store.db import apply_migrations, connect, schema_version
path, go, ready = sys.argv[1], sys.argv[2], sys.argv[3]
open(ready, "w").close()
while not os.path.exists(go):
    time.sleep(0.001)
db = connect(path, migrate=False)
applied = apply_migrations(db)
print(applied, schema_version(db), db.execute("PRAGMA journal_mode").fetchone()[0])
"""


def test_concurrent_first_open_migrates_exactly_once(tmp_path: Path) -> None:
    path = tmp_path / "data" / "memory.db"
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", _MIGRATE_CHILD, str(path), str(go), str(tmp_path / f"ready{i}")],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) for i in range(6)]
    deadline = time.time() + 30
    while not all((tmp_path / f"ready{i}").exists() for i in range(6)) and time.time() < deadline:
        time.sleep(0.005)
    go.touch()  # all six start opening the fresh database at once
    outs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0] * 6, [e.decode() for _, e in outs]
    assert all(e == b"" for _, e in outs), [e.decode() for _, e in outs]
    rows = [o.decode().split() for o, _ in outs]
    assert sum(int(r[0]) for r in rows) == len(MIGRATIONS)  # each migration ran in exactly one process
    assert {(r[1], r[2]) for r in rows} == {(str(len(MIGRATIONS)), "wal")}
    db = connect(str(path))
    assert schema_version(db) == len(MIGRATIONS)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


# --- FTS5 content-sync triggers -----------------------------------------------------------------------


def test_fts_follows_insert_update_and_delete(db: sqlite3.Connection) -> None:
    a = add(db, "Kafka consumer lag", "the consumer group rebalances too often")
    b = add(db, "Nginx upstream timeouts", "raise proxy_read_timeout for the reporting endpoint")
    assert fts_ids(db, "rebalances") == {a}
    assert fts_ids(db, "proxy_read_timeout") == {b}

    db.execute("UPDATE memories SET title = 'Zookeeper session expiry', content = 'heartbeat interval too low' "
               "WHERE id = ?", (a,))
    assert fts_ids(db, "zookeeper") == {a} and fts_ids(db, "heartbeat") == {a}
    assert fts_ids(db, "kafka") == set() and fts_ids(db, "rebalances") == set()

    # The store's own update path (same title, new content) keeps FTS in sync too.
    assert store.save(db, P, NewMemory(title="nginx upstream timeouts", content="switched to keepalive pools",
                                       tags=["infra"])).action == "updated"
    assert fts_ids(db, "keepalive") == {b} and fts_ids(db, "proxy_read_timeout") == set()
    assert fts_ids(db, "tags:infra") == {b}

    db.execute("UPDATE memories SET access_count = access_count + 5 WHERE id = ?", (b,))  # not an FTS column
    assert fts_ids(db, "keepalive") == {b}

    db.execute("DELETE FROM memories WHERE id = ?", (a,))
    assert fts_ids(db, "zookeeper") == set() and fts_ids(db, "heartbeat") == set()
    assert [h.id for h in keyword_search(db, "zookeeper heartbeat")] == []
    fts_integrity(db)


def test_doctor_notices_an_fts_index_out_of_sync_with_the_table(tmp_path: Path) -> None:
    from memory.present.doctor import check_db

    path = str(tmp_path / "memory.db")
    db = connect(path)
    add(db, "alpha", "bravo charlie")
    db.execute("DROP TRIGGER memories_au")  # simulate a write that bypassed the sync trigger
    db.execute("UPDATE memories SET content = 'delta echo'")
    db.close()
    assert check_db(path)["fts_ok"] is False


# --- dedup --------------------------------------------------------------------------------------------


def test_same_content_modulo_whitespace_and_case_is_a_duplicate(db: sqlite3.Connection) -> None:
    first = add(db, "Retry policy", "Use exponential backoff\nwith jitter for the uploader.")
    again = store.save(db, P, NewMemory(title="  retry   POLICY ", content="use  EXPONENTIAL backoff with jitter "
                                                                            "for the   uploader."))
    assert (again.id, again.action) == (first, "duplicate")
    assert db.execute("SELECT count(*) FROM memories").fetchone()[0] == 1


def test_same_title_updates_the_content(db: sqlite3.Connection) -> None:
    first = add(db, "Database choice", "We use MySQL.", tags=["db"], importance=0.8)
    upd = store.save(db, P, NewMemory(title="  DATABASE choice ", content="We moved to PostgreSQL 16.",
                                      tags=["ops"], importance=0.3, type="decision"))
    assert (upd.id, upd.action) == (first, "updated")
    row = store.get_many(db, [first])[0]
    assert row["content"] == "We moved to PostgreSQL 16."
    assert row["title"] == "Database choice"  # the original spelling stays
    assert row["type"] == "decision"
    assert row["tags"] == "db,ops"  # merged
    assert row["importance"] == 0.8  # never lowered by an update
    assert db.execute("SELECT count(*) FROM memories").fetchone()[0] == 1


def test_distinct_projects_in_one_db_do_not_dedup_each_other(db: sqlite3.Connection) -> None:
    a = add(db, "Build command", "make build", project="proj-a")
    b = add(db, "Build command", "make build", project="proj-b")
    c = store.save(db, "proj-b", NewMemory(title="Build command", content="make all"))
    assert a != b and (c.id, c.action) == (b, "updated")
    assert store.get_many(db, [a])[0]["content"] == "make build"


def test_a_different_title_content_split_is_not_a_duplicate(db: sqlite3.Connection) -> None:
    add(db, "Deploy to staging", "then run smoke tests")
    other = store.save(db, P, NewMemory(title="Deploy to", content="staging then run smoke tests"))
    assert other.action == "inserted"


# --- low-value filter and types -----------------------------------------------------------------------


def test_low_value_observations_are_dropped_unless_asked(db: sqlite3.Connection) -> None:
    assert store.save(db, P, NewMemory(title="Ran `ls` (ok)", content="a b c")).action == "dropped"
    assert store.save(db, P, NewMemory(title="Ran `git status` (ok)", content="clean")).action == "dropped"
    # Titles claim no outcome now (memory/capture/tools.py _shell): the same commands are as low in value.
    assert store.save(db, P, NewMemory(title="Ran `ls -la`", content="a b c")).action == "dropped"
    assert store.save(db, P, NewMemory(title="Ran `git log -3`", content="abc1234 fix")).action == "dropped"
    assert store.save(db, P, NewMemory(title="Asked: thanks!", content="thanks!")).action == "dropped"
    assert store.save(db, P, NewMemory(title="Ran `make lint` (ok)", content="ok")).action == "inserted"
    assert store.save(db, P, NewMemory(title="Ran `ls` (failed)", content="No such file")).action == "inserted"
    kept = store.save(db, P, NewMemory(title="Ran `ls` (ok)", content="a b c"), filter_low_value=False)
    assert kept.action == "inserted"
    assert sorted(r[0] for r in db.execute("SELECT title FROM memories")) == [
        "Ran `ls` (failed)", "Ran `ls` (ok)", "Ran `make lint` (ok)"]


_LOW_VALUE_CHILD = r"""
import sys
from memory.store.db import connect
from memory.store import NewMemory, save
db = connect(sys.argv[1])
print(" ".join(save(db, "p", NewMemory(title=t, content="ok")).action for t in sys.argv[2:]))
"""


def test_low_value_patterns_extend_from_the_environment(tmp_path: Path) -> None:
    # The patterns are read once per process (as a hook reads them), so the setting is tried in a fresh one.
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MEMORY_LOW_VALUE_PATTERNS": "^Ran `make fmt\n[unbalanced\n"
                                                                                "^Ran `npm run lint"}
    titles = ["Ran `make fmt` (ok)", "Ran `npm run lint` (ok)", "Ran `ls` (ok)", "Ran `make build` (ok)"]
    r = subprocess.run([sys.executable, "-c", _LOW_VALUE_CHILD, str(tmp_path / "memory.db"), *titles],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0 and r.stderr == "", r.stderr  # a bad user pattern is skipped, not fatal
    assert r.stdout.split() == ["dropped", "dropped", "dropped", "inserted"]


def test_unknown_type_raises_a_helpful_error(db: sqlite3.Connection) -> None:
    with pytest.raises(ValueError) as err:
        store.save(db, P, NewMemory(title="x", content="y", type="gossip"))
    assert "gossip" in str(err.value) and all(t in str(err.value) for t in TYPES)
    assert db.execute("SELECT count(*) FROM memories").fetchone()[0] == 0


# --- privacy ------------------------------------------------------------------------------------------


def test_private_text_and_secrets_are_never_stored(ws: Workspace) -> None:
    secrets = ["hunter2-PRIV", "AKIAIOSFODNN7EXAMPLE", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "tag-PRIV",
               "file-PRIV", "s3cr3t-db-pass", "sk-ant-api03-abcdefghijklmnopqrstuvwx"]
    saved = store.save(ws.db, ws.project.key, NewMemory(
        title="Deploy <private>hunter2-PRIV</private> with AKIAIOSFODNN7EXAMPLE",
        content="token ghp_abcdefghijklmnopqrstuvwxyz0123456789 and postgres://admin:s3cr3t-db-pass@db/app\n"
                "ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwx <private>unclosed hunter2-PRIV",
        tags=["deploy", "<private>tag-PRIV</private>ops", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"],
        files=["/srv/app/<private>file-PRIV</private>config.py"]))
    assert saved.action == "inserted"
    row = store.get_many(ws.db, [saved.id])[0]
    stored = " ".join(str(row[k]) for k in row.keys())
    for s in secrets:
        assert s.lower() not in stored.lower(), s
    assert row["title"].startswith("Deploy") and "[REDACTED:aws-access-key]" in row["title"]
    assert "deploy" in row["tags"].split(",") and "ops" in row["tags"].split(",")
    ws.close()
    raw = Path(ws.db_path).read_bytes() + (Path(ws.db_path + "-wal").read_bytes()
                                           if os.path.exists(ws.db_path + "-wal") else b"")
    for s in secrets:
        assert s.lower().encode() not in raw.lower(), s


def test_a_wholly_private_tag_leaves_no_empty_tag(db: sqlite3.Connection) -> None:
    mid = add(db, "T", "c", tags=["<private>x</private>", "Foo"])
    assert store.get_many(db, [mid])[0]["tags"] == "foo"


# --- keyword search -----------------------------------------------------------------------------------


def test_search_filters_by_type_time_session_and_expiry(db: sqlite3.Connection) -> None:
    now = time.time()
    old = add(db, "Redis eviction policy", "allkeys-lru for the redis cache", type="decision",
              created_at=now - 30 * 86400, session_id="s1")
    mid = add(db, "Redis connection pool", "pool size 20 for redis", type="discovery",
              created_at=now - 3 * 86400, session_id="s2")
    new = add(db, "Redis cluster failover", "redis sentinel promoted a replica", type="bugfix",
              created_at=now - 60, session_id="s2")
    gone = add(db, "Redis temporary password rotation", "redis rotated yesterday", expires_at=now - 1)
    later = add(db, "Redis maintenance window", "redis upgrade next week", expires_at=now + 3600)

    def ids(**kw: object) -> set[int]:
        return {h.id for h in keyword_search(db, "redis", limit=50, filters=Filters(**kw))}  # type: ignore[arg-type]

    assert ids() == {old, mid, new, later}
    assert ids(include_expired=True) == {old, mid, new, gone, later}
    assert ids(types=["decision", "bugfix"]) == {old, new}
    assert ids(since=now - 7 * 86400) == {mid, new, later}
    assert ids(until=now - 7 * 86400) == {old}
    assert ids(since=now - 7 * 86400, until=now - 3600) == {mid}
    assert ids(session_id="s2") == {mid, new}
    assert ids(exclude_session="s2") == {old, later}  # no session counts as "not s2"
    assert ids(project="other") == set()


def test_max_candidates_ranks_every_match_of_a_small_store(db: sqlite3.Connection) -> None:
    old = add(db, "Redis eviction policy", "allkeys-lru for the redis cache")
    newer = [add(db, f"Redis note {i}", f"redis detail number {i}") for i in range(3)]
    assert {h.id for h in keyword_search(db, "redis", max_candidates=3)} == {old, *newer}  # 4 <= EXACT_UP_TO x 3


def test_max_candidates_ranks_the_newest_matches_when_the_rare_words_match_few(db: sqlite3.Connection,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    common_only = add(db, "Redis eviction policy", "allkeys-lru for the redis cache")
    rare = add(db, "Decoder crash", "the utf decoder crashed on redis payloads")
    newer = [add(db, f"Redis note {i}", f"redis detail number {i}") for i in range(5 * EXACT_UP_TO)]
    for i in range(40):  # redis in under half the rows: a word with weight
        add(db, f"Vacuum note {i}", f"postgres vacuum run {i}")
    bounded = keyword_search(db, "redis decoder", limit=50, max_candidates=3)
    # the same list unbounded: a search without a bound also fuses plain BM25's list (search.KEYWORD_FUSION)
    monkeypatch.setattr(search, "KEYWORD_FUSION", "")
    full = keyword_search(db, "redis decoder", limit=50)
    assert {h.id for h in bounded} == {rare, *newer[-3:]}  # the old one with only the common word is not ranked
    assert common_only in {h.id for h in full}
    # The older row's score over both words is exact (rare AND all, less rare), as in the full ranking.
    assert bounded[0].id == full[0].id == rare
    scores = {h.id: h.parts["keyword"] for h in full if h.parts}
    for h in bounded:
        assert h.parts and h.parts["keyword"] == pytest.approx(scores[h.id], rel=1e-9)


def test_max_candidates_ranks_every_match_of_the_rare_words_and_no_window(db: sqlite3.Connection) -> None:
    """When the rare words match enough rows, the newest matches of the common words are not ranked too:
    the top of the full ranking is in the rare words' matches."""
    decoder = [add(db, f"Decoder crash {i}", f"the utf decoder crashed on payload {i}") for i in range(25)]
    for i in range(170):
        add(db, f"Redis note {i}", f"redis detail number {i}")
    for i in range(200):
        add(db, f"Vacuum note {i}", f"postgres vacuum run {i}")
    ranked = search._rank(db, "memories_fts", search.KEYWORD_WEIGHTS, search.fts_phrases("redis decoder"), "", [],
                          20, 40, join=False)
    assert len(ranked) == 20 and {i for i, _ in ranked} <= set(decoder)
    full = dict(search._rank(db, "memories_fts", search.KEYWORD_WEIGHTS, search.fts_phrases("redis decoder"), "",
                             [], 400, None, join=False))
    assert all(r == pytest.approx(full[i], rel=1e-9) for i, r in ranked)


def test_max_candidates_leaves_out_a_word_in_half_the_rows(db: sqlite3.Connection) -> None:
    """A word in at least half the rows has no weight in FTS5's BM25 (IDF 1e-6): a hook's ranking leaves it
    out of its query, so the rows only it matches (scored ~0) do not fill the list; alone it still answers."""
    rare = add(db, "Decoder crash", "the utf decoder crashed on redis payloads")
    others = [add(db, f"Redis note {i}", f"redis detail number {i}") for i in range(5 * EXACT_UP_TO)]
    bounded = keyword_search(db, "redis decoder", limit=50, max_candidates=3)
    full = keyword_search(db, "redis decoder", limit=50)
    assert [h.id for h in bounded] == [rare] and full[0].id == rare
    assert len(full) == 1 + len(others)  # the full ranking still lists them, at a score of ~0
    assert all(h.score < 1e-5 for h in full[1:])
    assert bounded[0].parts and full[0].parts and bounded[0].parts["keyword"] == full[0].parts["keyword"] == 1.0
    assert {h.id for h in keyword_search(db, "redis", limit=50, max_candidates=3)} == set(others[-3:])  # the newest


def test_max_candidates_counts_only_matches_the_filters_keep(db: sqlite3.Connection) -> None:
    old = add(db, "Redis eviction policy", "allkeys-lru for the redis cache", session_id="earlier")
    for i in range(3):
        add(db, f"Redis note {i}", f"redis detail number {i}", session_id="current")
    hits = keyword_search(db, "redis", filters=Filters(exclude_session="current"), max_candidates=3)
    assert [h.id for h in hits] == [old]


@pytest.mark.parametrize("query", [
    '"', '""', '"unbalanced', "*", "redis*", "NEAR(", "NEAR(redis cache, 2)", "AND OR NOT", "redis AND OR NOT",
    "title:redis", "content:", "tags:*", "((redis", "redis))", ")(", "^redis", "-redis", "+", "redis + cache",
    "🎉🚀", "redis 🎉", "", "   ", "\x00", "a_b", "___", "'; DROP TABLE memories; --", "{title content}: redis",
    "\\", "%", "ẞtraße", "日本語のテキスト",
])
def test_fts_syntax_in_a_query_never_raises(db: sqlite3.Connection, query: str) -> None:
    rid = add(db, "Redis cache settings", "the redis cache uses allkeys-lru")
    hits = keyword_search(db, query)
    assert all(h.id == rid for h in hits)
    assert db.execute("SELECT count(*) FROM memories").fetchone()[0] == 1


def test_arbitrary_text_as_a_query_never_raises(tmp_path: Path) -> None:
    db = connect(str(tmp_path / "memory.db"))
    add(db, "Redis cache settings", "the redis cache uses allkeys-lru")

    @settings(max_examples=300, deadline=None, derandomize=True)
    @given(st.text(alphabet=st.characters(exclude_categories=["Cs"])))
    def check(query: str) -> None:
        keyword_search(db, query)

    check()


def test_a_title_cut_from_the_content_does_not_outrank_the_answer(db: sqlite3.Connection) -> None:
    """A title is mostly its content's first line (capture, `save --jsonl`): counted over the content (weight 3),
    its words counted four times and the memory that told the answer further down came second
    (KEYWORD_WEIGHTS). A word only in a title still finds its memory."""
    plans = add(db, "Hiking trip plans", "Hiking trip plans: gear list, trail maps, campsite booking, snacks, water, "
                "first aid kit and a headlamp.")
    told = add(db, "Weekend recap", "Last weekend was busy: groceries on Saturday morning, then my sister came over "
               "and we drove to the coast for the hiking trip she had talked about for months.")
    add(db, "Unrelated", "nothing to see here at all")
    hits = keyword_search(db, "Where did my sister and I go on the hiking trip?")
    assert [h.id for h in hits] == [told, plans]
    assert hits[0].score > hits[1].score > 0
    assert [h.id for h in keyword_search(db, "recap")] == [told]


def test_russian_memory_is_found_by_another_word_form(db: sqlite3.Connection) -> None:
    ru = add(db, "Авторизация", "настроили авторизацию через токены")
    add(db, "Деплой", "выкатили новую версию на стейджинг")
    add(db, "Auth", "configured auth with cookies")
    assert [h.id for h in keyword_search(db, "авторизация токенов")] == [ru]
    assert [h.id for h in keyword_search(db, "токенов")] == [ru]  # content only, a different case ending


# --- timeline, get_many, forget, log_access -----------------------------------------------------------


def test_timeline_order_and_bounds(db: sqlite3.Connection) -> None:
    t0 = time.time() - 1000
    ids = [add(db, f"step {i} of the migration", created_at=t0 + i * 10) for i in range(10)]
    tie = add(db, "same second as step 5", created_at=t0 + 50)  # a tie on created_at: ordered by id
    add(db, "other project at step 5", project="proj-b", created_at=t0 + 50)
    rows = timeline(db, ids[5], before=2, after=3)
    assert [r["id"] for r in rows] == [ids[3], ids[4], ids[5], tie, ids[6], ids[7]]
    assert [r["id"] for r in timeline(db, ids[0], before=5, after=1)] == [ids[0], ids[1]]
    assert [r["id"] for r in timeline(db, ids[9], before=1, after=5)] == [ids[8], ids[9]]
    assert [r["id"] for r in timeline(db, ids[4], before=0, after=0)] == [ids[4]]
    assert timeline(db, 99999) == []


def test_get_many_keeps_the_order_asked_and_skips_unknown(db: sqlite3.Connection) -> None:
    a, b, c = (add(db, f"memory {n}") for n in ("one", "two", "three"))
    assert [r["id"] for r in store.get_many(db, [c, 424242, a, b])] == [c, a, b]
    assert store.get_many(db, []) == []


def test_forget_removes_the_memory_its_index_and_its_access_log(db: sqlite3.Connection) -> None:
    a = add(db, "Flaky websocket test", "the websocket test times out on CI")
    b = add(db, "Websocket reconnect", "reconnect with backoff")
    store.log_access(db, [a, b], "search", "s1", "websocket")
    assert store.forget(db, [a, 77777]) == [a]
    assert store.get_many(db, [a]) == []
    assert fts_ids(db, "flaky") == set()
    assert [h.id for h in keyword_search(db, "websocket")] == [b]
    assert db.execute("SELECT count(*) FROM access_log WHERE memory_id = ?", (a,)).fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM access_log WHERE memory_id = ?", (b,)).fetchone()[0] == 1
    fts_integrity(db)


def test_log_access_counts_uses_and_cleans_the_query(db: sqlite3.Connection) -> None:
    a = add(db, "Cache key format", "tenant:user:resource")
    assert store.get_many(db, [a])[0]["access_count"] == 0
    store.log_access(db, [a], "search", "s1", "cache key ghp_abcdefghijklmnopqrstuvwxyz0123456789")
    store.log_access(db, [a], "get")
    row = store.get_many(db, [a])[0]
    assert row["access_count"] == 2 and row["accessed_at"] is not None
    logged = [tuple(r) for r in db.execute("SELECT kind, session_id, query FROM access_log ORDER BY id")]
    assert logged[0][:2] == ("search", "s1") and "ghp_" not in logged[0][2]
    assert logged[1] == ("get", None, None)


# --- corruption ---------------------------------------------------------------------------------------


def test_corrupt_database_is_moved_aside_and_replaced(tmp_path: Path) -> None:
    path = tmp_path / "proj" / "memory.db"
    db = connect(str(path))
    add(db, "before corruption")
    db.close()
    path.write_bytes(GARBAGE)
    with pytest.raises(DatabaseCorrupt) as err:
        connect(str(path))
    assert not path.exists()
    moved = [p for p in path.parent.iterdir() if ".corrupt-" in p.name and not p.name.endswith(("-wal", "-shm"))]
    assert len(moved) == 1 and moved[0].name.startswith("memory.db.corrupt-")
    assert moved[0].read_bytes() == GARBAGE  # kept, not deleted
    assert str(moved[0]) in str(err.value)
    fresh = connect(str(path))
    assert schema_version(fresh) == len(MIGRATIONS)
    assert store.save(fresh, P, NewMemory(title="after", content="a fresh database works")).action == "inserted"


def test_quarantine_never_overwrites_an_earlier_corrupt_copy(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    now = time.time()
    earlier = {}
    for dt in range(-1, 4):  # copies as they would be named for the seconds around this test
        name = f"{path}.corrupt-{time.strftime('%Y%m%d-%H%M%S', time.localtime(now + dt))}"
        Path(name).write_bytes(f"earlier corrupt copy {dt}".encode())
        earlier[name] = Path(name).read_bytes()
    path.write_bytes(GARBAGE)
    with pytest.raises(DatabaseCorrupt):
        connect(str(path))
    for name, data in earlier.items():
        assert Path(name).read_bytes() == data, f"{name} was overwritten"


def test_a_hook_on_a_corrupt_database_exits_0_and_the_next_one_works(hooks: HookRunner, home: Path) -> None:
    hooks.start()
    folder = next((home / "projects").iterdir())
    (folder / "memory.db").write_bytes(GARBAGE)
    for suffix in ("-wal", "-shm"):
        (folder / f"memory.db{suffix}").unlink(missing_ok=True)
    result = hooks.run("user_prompt_submit", hooks.event("UserPromptSubmit", prompt="Add retries to the uploader"))
    assert result["exit_code"] == 0 and result["stderr"] == ""
    assert any(".corrupt-" in p.name for p in folder.iterdir())
    told = result["json"]["systemMessage"]  # the user is told by this prompt's answer, with the command
    assert "corrupt" in told and "`memory doctor --repair`" in told
    hooks.prompt("Add exponential backoff to the uploader")
    db = sqlite3.connect(folder / "memory.db")
    assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    stored = [r[0] for r in db.execute("SELECT content FROM memories")]
    assert any("exponential backoff" in c for c in stored)


# --- queue --------------------------------------------------------------------------------------------


def test_enqueue_with_a_dedup_key_keeps_one_row(db: sqlite3.Connection) -> None:
    queue.enqueue(db, "extract", {"session_id": "s1", "n": 1}, dedup_key="extract:s1")
    queue.enqueue(db, "extract", {"session_id": "s1", "n": 2}, dedup_key="extract:s1")
    queue.enqueue(db, "extract", {"session_id": "s2"}, dedup_key="extract:s2")
    rows = db.execute("SELECT dedup_key, payload FROM queue ORDER BY id").fetchall()
    assert [r["dedup_key"] for r in rows] == ["extract:s1", "extract:s2"]
    assert json.loads(rows[0]["payload"]) == {"session_id": "s1", "n": 2}  # the latest payload wins
    assert queue.counts(db) == {"pending": 2}


def test_enqueue_returns_the_id_of_the_deduplicated_job(db: sqlite3.Connection) -> None:
    first = queue.enqueue(db, "extract", {}, dedup_key="a")
    queue.enqueue(db, "extract", {}, dedup_key="b")
    assert queue.enqueue(db, "extract", {"again": True}, dedup_key="a") == first


def test_claim_is_exclusive_between_two_connections(tmp_path: Path) -> None:
    path = str(tmp_path / "memory.db")
    one, two = connect(path), connect(path)
    queue.enqueue(one, "extract", {"n": 1})
    got = queue.claim(one, "worker-1")
    assert got is not None and got["status"] == "running" and got["locked_by"] == "worker-1"
    assert queue.claim(two, "worker-2") is None  # running and within its lease
    queue.finish(one, got["id"])
    assert queue.claim(two, "worker-2") is None
    assert one.execute("SELECT status FROM queue").fetchone()[0] == "done"


_CLAIM_CHILD = r"""
import os, sys, time
from memory.store import queue
from memory.store.db import connect
path, go, ready, name = sys.argv[1:5]
db = connect(path)
open(ready, "w").close()
while not os.path.exists(go):
    time.sleep(0.001)
got = []
while True:
    job = queue.claim(db, name)
    if job is None:
        break
    got.append(job["id"])
    queue.finish(db, job["id"])
print(" ".join(map(str, got)))
"""


def test_two_worker_processes_never_claim_the_same_job(tmp_path: Path) -> None:
    path = str(tmp_path / "memory.db")
    db = connect(path)
    ids = [queue.enqueue(db, "embed", {"n": i}) for i in range(60)]
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", _CLAIM_CHILD, path, str(go), str(tmp_path / f"r{i}"), f"w{i}"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) for i in range(2)]
    deadline = time.time() + 30
    while not all((tmp_path / f"r{i}").exists() for i in range(2)) and time.time() < deadline:
        time.sleep(0.005)
    go.touch()
    outs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [e.decode() for _, e in outs]
    claimed = [[int(x) for x in o.split()] for o, _ in outs]
    assert sorted(claimed[0] + claimed[1]) == sorted(ids)  # every job once, none twice
    assert queue.counts(db) == {"done": 60}
    assert db.execute("SELECT max(attempts) FROM queue").fetchone()[0] == 1


def test_a_stale_running_job_is_claimed_again(tmp_path: Path) -> None:
    path = str(tmp_path / "memory.db")
    one, two = connect(path), connect(path)
    jid = queue.enqueue(one, "extract", {"session_id": "s1"})
    assert queue.claim(one, "dead-worker")["id"] == jid
    assert queue.claim(two, "worker-2") is None
    one.execute("UPDATE queue SET locked_at = ? WHERE id = ?", (time.time() - queue.LEASE_SECONDS - 5, jid))
    again = queue.claim(two, "worker-2")
    assert again is not None and again["id"] == jid
    assert again["locked_by"] == "worker-2" and again["attempts"] == 2


def test_finish_with_retry_requeues_and_without_it_records_the_outcome(db: sqlite3.Connection) -> None:
    jid = queue.enqueue(db, "extract", {})
    assert queue.claim(db)["id"] == jid
    queue.finish(db, jid, error="provider timed out", retry_in=3600)
    row = db.execute("SELECT * FROM queue WHERE id = ?", (jid,)).fetchone()
    assert row["status"] == "pending" and row["error"] == "provider timed out" and row["run_after"] > time.time()
    assert queue.claim(db) is None  # not before run_after
    db.execute("UPDATE queue SET run_after = 0 WHERE id = ?", (jid,))
    job = queue.claim(db)
    assert job["id"] == jid and job["attempts"] == 2
    queue.finish(db, jid, error="x" * 2000)
    row = db.execute("SELECT * FROM queue WHERE id = ?", (jid,)).fetchone()
    assert row["status"] == "failed" and len(row["error"]) == 500 and row["finished_at"] is not None
    assert queue.claim(db) is None


def test_being_listed_at_session_start_is_no_use(db: sqlite3.Connection) -> None:
    a = add(db, "Use WAL mode", "SQLite runs in WAL mode for concurrent readers")
    store.log_access(db, [a], "inject-start", "s1", text="startup")
    row = store.get_many(db, [a])[0]
    assert row["access_count"] == 0 and row["accessed_at"] is not None  # shown, not used
    store.log_access(db, [a], "inject-prompt", "s1", "why wal", text="recall")
    assert store.get_many(db, [a])[0]["access_count"] == 1
