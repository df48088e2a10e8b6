"""Team memory on the local side, no server: the URL never shown, scopes, the outbox triggers, the
migration of an older database."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memory import store
from memory.store.db import connect
from memory.store.migrations import MIGRATIONS, SCHEMA_VERSION
from memory.team import outbox
from memory.team.config import TeamError, check_url, redact, scrub


def test_redaction_covers_urls_query_passwords_and_encoded_forms() -> None:
    url = "postgresql://alice:p%40ss%2Fw0rd@db.example.com:5432/team?sslmode=require"
    assert redact(url) == "postgresql://alice:***@db.example.com:5432/team?sslmode=require"
    assert redact("postgresql://bob@/x?host=/s&password=hunter22") == "postgresql://bob@/x?host=/s&password=***"
    message = f'invalid connection option in "{url}"; password p@ss/w0rd or p%40ss%2Fw0rd'
    cleaned = scrub(message, url)
    assert "p@ss/w0rd" not in cleaned and "p%40ss%2Fw0rd" not in cleaned and "alice:***@" in cleaned
    for bad in ("mysql://a:b@h/d", "db.example.com", "", "postgresql://alice:pw@/x", "postgresql://h:99999999/x"):
        with pytest.raises(TeamError) as err:
            check_url(bad)
        assert "pw" not in str(err.value).replace("password", "")
    assert check_url("postgres://u@h/d") == "postgres://u@h/d"


def _db(tmp_path: Path) -> sqlite3.Connection:
    return connect(str(tmp_path / "projects" / "k" / "memory.db"))


def test_scopes_follow_the_type_and_only_a_linked_projects_team_changes_reach_the_outbox(tmp_path: Path) -> None:
    db = _db(tmp_path)
    early = store.save(db, "k", store.NewMemory("Chose SQLite", "We decided SQLite stays the hot path",
                                                type="decision"))
    obs = store.save(db, "k", store.NewMemory("ran tests", "pytest ran green on the branch", type="observation"))
    scopes = dict(db.execute("SELECT id, scope FROM memories").fetchall())
    assert scopes == {early.id: "team", obs.id: "personal"}
    assert outbox.outbox_size(db) == 0  # not linked: nothing is queued for a team
    outbox.link(db, "github.com/acme/app", "postgresql://u:***@h/d", ["decision", "bugfix"])
    assert [r["op"] for r in db.execute("SELECT * FROM team_outbox")] == ["upsert"]  # what was learned before
    db.execute("DELETE FROM team_outbox")
    store.save(db, "k", store.NewMemory("Fixed flaky test", "the race in the queue test is fixed", type="bugfix"))
    store.save(db, "k", store.NewMemory("read file", "looked at app.py", type="observation"))
    store.log_access(db, [early.id], "search")  # use is not a change
    assert outbox.outbox_size(db) == 1
    db.execute("UPDATE memories SET content = 'We decided SQLite stays the hot path, WAL on' WHERE id = ?",
               (early.id,))
    assert outbox.outbox_size(db) == 2
    outbox.share(db, [early.id], "personal")  # no longer shared: a tombstone for the others
    assert db.execute("SELECT op FROM team_outbox WHERE uid = (SELECT uid FROM memories WHERE id = ?)",
                      (early.id,)).fetchone()[0] == "delete"
    assert db.execute("SELECT count(*) FROM queue WHERE kind = 'team_sync' AND status = 'pending'").fetchone()[0] == 1
    # The uid of every memory is unique and stable.
    assert db.execute("SELECT count(DISTINCT uid) = count(*) AND min(length(uid)) = 32 FROM memories").fetchone()[0]


def test_pulled_changes_never_echo_and_a_later_local_change_wins(tmp_path: Path) -> None:
    db = _db(tmp_path)
    outbox.link(db, "p", "x", ["decision"])
    row = {"uid": "f" * 32, "type": "decision", "title": "Use uv", "content": "We decided to use uv", "tags": "",
           "files": "", "importance": 0.7, "confidence": 0.5, "source": "cli", "session_id": "s-remote",
           "created_at": 1.0, "updated_at": 1.0, "expires_at": None, "deleted": False, "version": 100.0,
           "machine": "other", "author": "bob"}
    counts = outbox.apply_pulled(db, "k", [row], ("10", 1), "mine", "bob")
    assert counts["inserted"] == 1 and outbox.outbox_size(db) == 0
    assert outbox.apply_pulled(db, "k", [row], ("10", 1), "mine", "bob")["updated"] == 1  # replayed: same row
    assert db.execute("SELECT count(*) FROM memories").fetchone()[0] == 1
    # A local edit made after the remote version stays, and will be pushed (this machine is another of bob's).
    db.execute("UPDATE memories SET content = 'We decided to use uv and pip-tools' WHERE uid = ?", (row["uid"],))
    older = {**row, "content": "We decided to use poetry", "version": 50.0}
    assert outbox.apply_pulled(db, "k", [older], ("11", 2), "mine", "bob")["kept_local"] == 1
    assert db.execute("SELECT content FROM memories").fetchone()[0] == "We decided to use uv and pip-tools"
    newer = {**row, "deleted": True, "version": 4e9}
    assert outbox.apply_pulled(db, "k", [newer], ("12", 3), "mine", "bob")["deleted"] == 1
    assert db.execute("SELECT count(*) FROM memories").fetchone()[0] == 0 and outbox.outbox_size(db) == 0
    assert outbox.cursor(db) == ("12", 3)


def test_a_version_4_database_migrates_with_uids_and_scopes(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = sqlite3.connect(path, isolation_level=None)
    for migration in MIGRATIONS[:4]:
        migration(db)
    db.execute("PRAGMA user_version=4")
    for i, kind in enumerate(("decision", "observation", "bugfix")):
        db.execute("INSERT INTO memories (project, type, title, title_key, content, content_hash, created_at, "
                   "updated_at) VALUES ('k', ?, ?, ?, 'c', ?, 0, 0)", (kind, f"t{i}", f"t{i}", f"h{i}"))
    db.close()
    db = connect(str(path))
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    rows = db.execute("SELECT type, scope, length(uid) FROM memories ORDER BY id").fetchall()
    assert [tuple(r) for r in rows] == [("decision", "team", 32), ("observation", "personal", 32),
                                        ("bugfix", "team", 32)]


def _pulled(**extra: object) -> dict[str, object]:
    return {"uid": "f" * 32, "type": "decision", "title": "Use uv", "content": "We decided to use uv", "tags": "",
            "files": "", "importance": 0.7, "confidence": 0.5, "source": "cli", "session_id": "s-remote",
            "created_at": 1.0, "updated_at": 1.0, "expires_at": None, "deleted": False, "version": 100.0,
            "machine": "other", "author": "bob", **extra}


def test_a_pulled_row_is_admitted_as_data_from_elsewhere() -> None:
    token = "ghp_Zx8Qw2Lm4Np6Rt8Vx0Bz2Dc4Fg6Hj8Kl0Mn2Pq"
    huge = "We decided " + "word " * 100_000 + token
    row = outbox.admit(_pulled(title=f"Token {token}\n\n  spaced", content=huge, tags=f"a,{token}",
                               machine=f"bob's <laptop>\n{token}", type="no-such-type", importance=float("nan"),
                               confidence=9.0, created_at=1e15, updated_at=float("inf"), expires_at=float("nan")),
                       now=1000.0)
    for key in ("title", "content", "tags", "machine"):
        assert token not in str(row[key]), key
    assert len(row["content"]) <= outbox.PULLED_MAX_CHARS + 100 and row["content"].startswith("We decided word")
    assert row["title"] == "Token [REDACTED:github-token] spaced"
    assert set(row["machine"]) <= set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_/@:+")
    assert row["type"] == "observation" and row["importance"] <= 0.5 and row["confidence"] <= 0.3
    assert row["created_at"] == row["updated_at"] == 1000.0 and row["expires_at"] is None
    # A read the pull cut short loses its tail, where half a secret could end it.
    cut = outbox.admit(_pulled(content="x " * 20_000 + token[:20], content_cut=True), now=1000.0)
    assert token[:20] not in cut["content"]


def test_a_pulled_row_whose_author_changed_is_dropped_and_an_unsent_edit_is_kept_as_ours(tmp_path: Path) -> None:
    from memory.store.edit import edit

    db = _db(tmp_path)
    outbox.link(db, "p", "x", ["decision"])
    assert outbox.apply_pulled(db, "k", [_pulled()], ("10", 1), "mine", "alice")["inserted"] == 1
    (mid,) = [r[0] for r in db.execute("SELECT id FROM memories")]
    # carol's row under bob's uid: a server that let her change it. Dropped, counted.
    assert outbox.apply_pulled(db, "k", [_pulled(author="carol", content="We decided poetry", version=200.0)],
                               ("11", 2), "mine", "alice")["dropped"] == 1
    assert db.execute("SELECT author, content FROM memories").fetchall()[0][:] == ("bob", "We decided to use uv")
    assert outbox.status(db)["dropped_author"] == 1
    # alice edits bob's memory here; before her push, bob's own newer edit arrives: both are kept, hers as hers.
    edit(db, mid, "Use uv", "We decided to use uv with a lock file")
    assert outbox.outbox_size(db) == 1
    counts = outbox.apply_pulled(db, "k", [_pulled(content="We decided to use uv 0.5", version=4e9)],
                                 ("12", 3), "mine", "alice")
    assert counts["forked"] == 1
    rows = {r["content"]: (r["author"], r["uid"]) for r in db.execute("SELECT * FROM memories")}
    assert rows["We decided to use uv 0.5"] == ("bob", "f" * 32)
    mine_author, mine_uid = rows["We decided to use uv with a lock file"]
    assert mine_author is None and mine_uid != "f" * 32
    assert [r[0] for r in db.execute("SELECT uid FROM team_outbox")] == [mine_uid]
    assert not db.execute("SELECT 1 FROM team_state WHERE key = 'applying'").fetchone()
    # Deleting bob's memory "for everyone" here deletes it here only.
    (theirs,) = [r[0] for r in db.execute("SELECT id FROM memories WHERE author = 'bob'")]
    gone, kept = outbox.forget_for_everyone(db, [theirs])
    assert gone == [] and kept == {theirs: "bob"}
    assert [r[0] for r in db.execute("SELECT uid FROM team_outbox")] == [mine_uid]
