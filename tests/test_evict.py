"""Size cap and LRU eviction, expiry, the cheap check that queues an eviction, and `memory cleanup`."""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memory import store
from memory.store import ctx_rows, evict, limits
from memory.store.db import Tx
from memory.store.workspace import Workspace
from tests.support.helpers import ROOT, make_git_project

WORDS = "alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega".split()


def fill(ws: Workspace, n: int, *, session: str | None = None, type_: str = "learning", prefix: str = "note",
         seed: int = 1) -> list[int]:
    rnd = random.Random(seed)
    ids = []
    for i in range(n):
        body = " ".join(f"{rnd.choice(WORDS)}{rnd.randint(0, 9999)}" for _ in range(120))
        saved = store.save(ws.db, ws.project.key, store.NewMemory(
            title=f"{prefix} {i}", content=body, type=type_, session_id=session), filter_low_value=False)
        ids.append(saved.id)
    return ids


def settled(home: Path, *spaces: Workspace) -> int:
    """The data dir's size once the WAL and free pages are given back (what eviction measures against)."""
    for w in spaces:
        evict.reclaim(w.db)
    return evict.usage(str(home))["bytes"]


def start_session(ws: Workspace, sid: str, *, active: bool = True, last_event: float | None = None) -> None:
    now = time.time()
    ws.db.execute("INSERT INTO sessions (id, project, status, started_at, last_event_at) VALUES (?, ?, ?, ?, ?)",
                  (sid, ws.project.key, "active" if active else "completed", now, last_event or now))


@pytest.fixture
def ws(home: Path, project: Path) -> Workspace:
    w = Workspace.for_dir(str(project))
    yield w
    w.close()


def test_parse_size() -> None:
    assert limits.parse_size("500MB") == 500 * 1024**2
    assert limits.parse_size("1.5g") == int(1.5 * 1024**3)
    assert limits.parse_size("2048") == 2048
    assert limits.parse_size(" 64 KiB ") == 64 * 1024
    with pytest.raises(ValueError, match="e.g. 500MB"):
        limits.parse_size("lots")


def test_eviction_over_a_small_cap(ws: Workspace, home: Path) -> None:
    decisions = fill(ws, 40, type_="decision", prefix="decision")
    start_session(ws, "live")
    start_session(ws, "old", active=False)
    live = fill(ws, 40, session="live", prefix="live", seed=2)
    old = fill(ws, 900, session="old", prefix="old", seed=3)
    touched = old[:50]  # used recently: they outlive the never-used ones
    store.log_access(ws.db, touched, "get")
    cap = int(settled(home, ws) * 0.5)

    report = evict.run(str(home), max_bytes=cap)

    after = evict.usage(str(home))["bytes"]
    on_disk = sum(p.stat().st_size for p in (home / "projects").rglob("*") if p.is_file()
                  and not p.name.endswith("-shm"))  # SQLite's index of the WAL while a connection is open
    assert after == on_disk and after < 0.85 * cap, report
    assert report["freed_bytes"] > 0 and report["evicted_for_bytes"] > 0
    left = {r[0] for r in ws.db.execute("SELECT id FROM memories")}
    assert set(decisions) <= left and set(live) <= left  # never decisions, never an active session
    assert set(touched) <= left  # least recently used go first
    gone = set(old) - left
    assert gone and min(gone) < max(left - set(decisions) - set(live))  # oldest first among the unused
    # FTS rows went with their memories.
    fts = {r[0] for r in ws.db.execute("SELECT rowid FROM memories_fts")}
    assert fts == left
    assert ws.db.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'old'").fetchone()[0] == \
        ws.db.execute("SELECT count(*) FROM memories WHERE title LIKE 'old %'").fetchone()[0]
    assert ws.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    ws.db.execute("INSERT INTO memories_fts(memories_fts) VALUES ('integrity-check')")
    # Space went back to the filesystem: incremental vacuum from now on.
    assert ws.db.execute("PRAGMA auto_vacuum").fetchone()[0] == 2
    assert ws.db.execute("PRAGMA freelist_count").fetchone()[0] == 0


def test_vectors_go_with_their_memories(ws: Workspace, home: Path) -> None:
    start_session(ws, "old", active=False)
    ids = fill(ws, 400, session="old")
    ws.db.execute("DELETE FROM queue")  # the saves queued their embeddings; only the deletes matter here
    cap = int(settled(home, ws) * 0.5)
    report = evict.run(str(home), max_bytes=cap)
    gone = set(ids) - {r[0] for r in ws.db.execute("SELECT id FROM memories")}
    assert gone and report["vectors"] in ("deleted", "queued")
    # The worker deletes a vector when it runs the job of a memory that no longer exists (memory/recall/vectors.py
    # queues `vector` jobs; without a vector store evict queues `delete_vectors` jobs of at most 100 ids).
    queued: set[int] = set()
    for kind, payload in ws.db.execute("SELECT kind, payload FROM queue WHERE kind IN ('vector', 'delete_vectors')"):
        data = json.loads(payload)
        queued |= {data["id"]} if kind == "vector" else set(data["ids"])
        assert kind == "vector" or len(data["ids"]) <= evict.BATCH
    assert queued >= gone


def test_vector_files_count_towards_the_cap_without_over_evicting(ws: Workspace, home: Path) -> None:
    ids = fill(ws, 600)
    vec = Path(ws.dir) / evict.VECTOR_DIR / "data"
    vec.mkdir(parents=True)
    (vec / "fragment.lance").write_bytes(b"\0" * 3_000_000)  # ~5 KB a memory, like 384-d vectors with overhead
    with Tx(ws.db):  # the worker's neighbour rows, with the ledger's copy of what they index
        for mid, title, content, tags in ws.db.execute("SELECT id, title, content, tags FROM memories").fetchall():
            ws.db.execute("INSERT INTO memory_index (memory_id, created_at, provider, text_hash, indexed_at, doc) "
                          "VALUES (?, 0, 'p', '', 0, ?)", (mid, ctx_rows.insert(ws.db, mid, (title, content, tags,
                                                                                             content))))
    total = settled(home, ws)
    assert evict.usage(str(home))["vectors"] == 3_000_000
    cap = int(total * 0.7)
    report = evict.run(str(home), max_bytes=cap)
    left = ws.db.execute("SELECT count(*) FROM memories").fetchone()[0]
    after = evict.usage(str(home))
    expected = after["databases"] + 3_000_000 * left / len(ids)
    assert expected < 0.85 * cap, report
    assert left > len(ids) * 0.35, report  # the vector files did not shrink yet: that is no reason to evict all
    assert "vector files shrink" in report["note"]
    # The neighbour-aware index rows of evicted memories went with them.
    assert ws.db.execute("SELECT count(*) FROM memories_ctx").fetchone()[0] == left
    gone = ws.db.execute("SELECT memory_id FROM memory_index WHERE memory_id NOT IN (SELECT id FROM memories)")
    assert all(ctx_rows.get(ws.db, g) is None for (g,) in gone)  # removed with the values they were indexed with
    ws.db.execute("INSERT INTO memories_ctx (memories_ctx) VALUES ('integrity-check')")


def test_the_cap_spans_projects_and_takes_the_least_recently_used_first(home: Path, tmp_path: Path) -> None:
    a = Workspace.for_dir(str(make_git_project(tmp_path / "a")))
    b = Workspace.for_dir(str(make_git_project(tmp_path / "b")))
    old = fill(a, 300, prefix="a-old")
    time.sleep(0.01)
    new = fill(b, 300, prefix="b-new", seed=5)
    cap = int(settled(home, a, b) * 0.6)
    report = evict.run(str(home), max_bytes=cap)
    assert evict.usage(str(home))["bytes"] < 0.85 * cap
    assert report["by_project"].get("a", 0) > report["by_project"].get("b", 0)
    a_left = a.db.execute("SELECT count(*) FROM memories").fetchone()[0]
    b_left = b.db.execute("SELECT count(*) FROM memories").fetchone()[0]
    assert a_left < len(old) and b_left > a_left and len(new) >= b_left
    a.close()
    b.close()


def test_count_limit_per_project(ws: Workspace, home: Path) -> None:
    ids = fill(ws, 120)
    report = evict.run(str(home), max_memories=100, max_bytes=10**12)
    assert report["evicted_for_count"] == 120 - 85
    left = [r[0] for r in ws.db.execute("SELECT id FROM memories ORDER BY id")]
    assert left == ids[-85:]


def test_nothing_to_evict_when_all_is_protected(ws: Workspace, home: Path) -> None:
    fill(ws, 200, type_="decision")
    cap = int(settled(home, ws) * 0.5)
    report = evict.run(str(home), max_bytes=cap)
    assert ws.db.execute("SELECT count(*) FROM memories").fetchone()[0] == 200
    assert "protected" in report["note"]


def test_a_session_silent_for_a_day_is_no_longer_protected(ws: Workspace, home: Path) -> None:
    start_session(ws, "stale", last_event=time.time() - 2 * 86400)  # never ended: killed, not active
    ids = fill(ws, 200, session="stale")
    evict.run(str(home), max_memories=50, max_bytes=10**12)
    assert ws.db.execute("SELECT count(*) FROM memories").fetchone()[0] == int(50 * 0.85)
    assert set(ids[-42:]) == {r[0] for r in ws.db.execute("SELECT id FROM memories")}


def test_dry_run_changes_nothing(ws: Workspace, home: Path) -> None:
    fill(ws, 300)
    cap = int(settled(home, ws) * 0.5)
    before = sorted(p.stat().st_size for p in (home / "projects").rglob("*.db"))
    report = evict.run(str(home), max_bytes=cap, dry_run=True)
    assert report["dry_run"] and report["evicted_for_bytes"] > 0 and report["sample"]
    assert ws.db.execute("SELECT count(*) FROM memories").fetchone()[0] == 300
    assert sorted(p.stat().st_size for p in (home / "projects").rglob("*.db")) == before


def test_expired_memories_are_hidden_then_removed_by_cleanup(ws: Workspace, home: Path) -> None:
    from memory.recall.search import keyword_search

    gone = store.save(ws.db, ws.project.key, store.NewMemory(
        title="Temporary staging password rotation", content="staging rotation until friday",
        expires_at=time.time() - 1), filter_low_value=False).id
    kept = store.save(ws.db, ws.project.key, store.NewMemory(
        title="Staging rotation runbook", content="staging rotation happens monthly",
        expires_at=time.time() + 3600), filter_low_value=False).id
    assert [h.id for h in keyword_search(ws.db, "staging rotation")] == [kept]
    report = evict.run(str(home))
    assert report["expired"] == 1
    ids = {r[0] for r in ws.db.execute("SELECT id FROM memories")}
    assert gone not in ids and kept in ids


def test_store_save_queues_an_eviction_when_a_limit_may_be_passed(ws: Workspace,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    fill(ws, 5)
    assert ws.db.execute("SELECT count(*) FROM queue WHERE kind = 'evict'").fetchone()[0] == 0
    monkeypatch.setenv("MEMORY_MAX_BYTES", "64K")
    fill(ws, 3, prefix="more")
    jobs = ws.db.execute("SELECT kind, status, payload FROM queue WHERE kind = 'evict'").fetchall()
    assert len(jobs) == 1 and jobs[0]["status"] == "pending" and json.loads(jobs[0]["payload"])["reason"] == "bytes"
    monkeypatch.setenv("MEMORY_MAX_BYTES", "500MB")
    monkeypatch.setenv("MEMORY_MAX_MEMORIES", "10")
    ws.db.execute("DELETE FROM queue")
    fill(ws, 5, prefix="again")
    jobs = ws.db.execute("SELECT payload FROM queue WHERE kind = 'evict'").fetchall()
    assert [json.loads(j[0])["reason"] for j in jobs] == ["memories"]
    # The worker's entry point runs the eviction for the whole data dir.
    result = evict.handle_job(ws, json.loads(jobs[0][0]))
    assert result["evicted_for_count"] == 13 - 8


def test_cleanup_command_reports_what_it_freed(home: Path, project: Path) -> None:
    ws = Workspace.for_dir(str(project))
    fill(ws, 400)
    ws.close()
    env = {**os.environ, "MEMORY_HOME": str(home)}
    total = evict.usage(str(home))["bytes"]
    cap = f"{total // 2048}K"
    dry = subprocess.run([sys.executable, "-m", "memory", "cleanup", "--dry-run", "--max-bytes", cap], cwd=project,
                         env=env, capture_output=True, text=True, check=True).stdout
    assert "to remove" in dry and "note " in dry
    out = subprocess.run([sys.executable, "-m", "memory", "cleanup", "--max-bytes", cap, "--json"], cwd=project,
                         env=env, capture_output=True, text=True, check=True).stdout
    data = json.loads(out)
    assert data["freed_bytes"] > 0 and data["after"]["bytes"] < 0.85 * limits.parse_size(cap)
    text = subprocess.run([sys.executable, "-m", "memory", "cleanup", "--max-bytes", cap], cwd=project, env=env,
                          capture_output=True, text=True, check=True).stdout
    assert "freed" in text and "removed: 0" in text
    bad = subprocess.run([sys.executable, "-m", "memory", "cleanup", "--max-bytes", "huge"], cwd=project, env=env,
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "500MB" in bad.stderr


def test_save_expires_on_the_command_line(home: Path, project: Path) -> None:
    env = {**os.environ, "MEMORY_HOME": str(home)}
    run = [str(ROOT / "bin" / "memory"), "save", "--expires", "30d", "Feature flag X is temporary"]
    subprocess.run(run, cwd=project, env=env, check=True, capture_output=True)
    db = sqlite3.connect(next(home.glob("projects/*/memory.db")))
    (expires,) = db.execute("SELECT expires_at FROM memories").fetchone()
    assert abs(expires - (time.time() + 30 * 86400)) < 60
    bad = subprocess.run([*run[:2], "--expires", "yesterday-ish", "x"], cwd=project, env=env, capture_output=True,
                         text=True)
    assert bad.returncode != 0 and "30d" in bad.stderr


def test_cold_callers_pass_the_vector_delete_and_others_queue_a_job(ws: Workspace,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """evict.py is hot and cannot import memory/recall/vectors.py: the worker's evict job (and `memory cleanup`,
    the MCP delete tool) pass its delete in; without one, a `delete_vectors` job is queued for the worker."""
    from memory.worker import HANDLERS

    ids = fill(ws, 4)
    ws.db.execute("DELETE FROM queue")
    assert evict.remove(ws, ids[:2]) == (2, "queued")
    jobs = ws.db.execute("SELECT payload FROM queue WHERE kind = 'delete_vectors'").fetchall()
    assert [json.loads(j[0])["ids"] for j in jobs] == [ids[:2]]
    module, _, name = HANDLERS["evict"].partition(":")
    handler = getattr(__import__(module, fromlist=(name,)), name)
    result = handler(ws, {"reason": "memories"})
    assert result["vectors"] == "none"  # under the limits: nothing to delete
    monkeypatch.setenv("MEMORY_MAX_MEMORIES", "1")  # 2 left, over the limit: evicted down to its 85%, none
    result = handler(ws, {"reason": "memories"})
    assert result["evicted_for_count"] == 2 and result["vectors"] == "deleted"


def test_pinned_memories_are_never_evicted(ws: Workspace, home: Path) -> None:
    """A pin (the viewer's action, memory/store/edit.py) keeps the oldest, least used memories too."""
    from memory.store import edit

    ids = fill(ws, 120)
    for mid in ids[:10]:
        edit.set_pinned(ws.db, mid, True)
    evict.run(str(home), max_memories=100, max_bytes=10**12)
    left = {r[0] for r in ws.db.execute("SELECT id FROM memories")}
    assert set(ids[:10]) <= left and len(left) == 85
    edit.set_pinned(ws.db, ids[0], False)
    assert ws.db.execute("SELECT tags FROM memories WHERE id = ?", (ids[0],)).fetchone()[0] == ""
