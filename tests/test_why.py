"""Why a memory was recalled: real hooks record each injection with its score parts, `memory why` shows them."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from memory.base.project import identify
from tests.support.helpers import HookRunner
from tests.test_cli import Cli


def _db(home: Path, project: Path) -> sqlite3.Connection:
    db = sqlite3.connect(home / "projects" / identify(str(project)).key / "memory.db")
    db.row_factory = sqlite3.Row
    return db


def test_prompt_and_startup_injections_record_their_score_parts(home: Path, project: Path,
                                                                  hooks: HookRunner) -> None:
    cli = Cli(home, project)
    memory_id, other = cli.jsonl(
        {"title": "Deploys go through the blue-green pipeline", "content": "Deploys go through the blue-green "
         "pipeline on Fridays; the canary waits 10 minutes", "type": "decision", "importance": 0.3,
         "session_id": "old"},
        {"title": "Release notes live in CHANGELOG.md", "content": "Release notes live in CHANGELOG.md, one "
         "entry per version", "type": "decision", "importance": 0.9, "session_id": "old"})
    hooks.session = "new-1"
    start = hooks.start()
    assert f"#{other})" in start and f"#{memory_id})" not in start  # below the startup importance bar
    recall = hooks.prompt("how do deploys work with the blue-green pipeline and the canary?")
    assert f"#{memory_id})" in recall

    why = cli.json("why", str(memory_id))
    assert [r["kind"] for r in why["recalls"]] == ["inject-prompt"]
    prompt = why["recalls"][0]
    assert prompt["session_id"] == "new-1" and prompt["mode"] == "keyword" and prompt["rank"] == 1
    assert prompt["query"].startswith("how do deploys work") and prompt["of"] == 1
    assert set(prompt["parts"]) == {"keyword", "importance"} and prompt["parts"]["importance"] == 0.3
    assert 0 < prompt["score"] <= 1 and prompt["parts"]["keyword"] == 1.0  # the best match of its query
    startup = cli.json("why", str(other))["recalls"]
    assert [r["kind"] for r in startup] == ["inject-start"] and startup[0]["mode"] == "startup"
    assert set(startup[0]["parts"]) == {"importance", "recency", "use"}

    # The exact text each hook gave the model is kept with the injection.
    db = _db(home, project)
    texts = [r["text"] for r in db.execute("SELECT text FROM injections WHERE session_id = 'new-1' ORDER BY id")]
    assert len(texts) == 2 and texts[0] in start and texts[1] in recall

    text = cli.ok("why", str(memory_id), "--session", "new")  # a session id's start names it
    assert "injected for a prompt" in text and "keyword 1.00 · importance 0.30" in text
    assert cli.json("why", str(memory_id), "--session", "new-1")["recalls"] == why["recalls"]


def test_search_records_parts_and_why_says_when_never_recalled(home: Path, project: Path) -> None:
    cli = Cli(home, project)
    ids = cli.jsonl({"title": "Redis eviction policy is allkeys-lru", "content": "Redis eviction policy is "
                     "allkeys-lru in production"}, {"title": "Postgres vacuum runs nightly", "content":
                     "Postgres vacuum runs nightly at 03:00"})
    assert "never injected or found by a search" in cli.ok("why", str(ids[0]))
    cli.ok("search", "redis", "eviction", "--mode", "keyword")
    got = cli.json("why", str(ids[0]))["recalls"]
    assert len(got) == 1 and got[0]["kind"] == "search" and got[0]["rank"] == 1 and got[0]["of"] == 1
    assert got[0]["parts"]["keyword"] == 1.0 and got[0]["session_id"] is None
    r = cli.run("why", "999")
    assert r.returncode != 0 and "no memory #999" in r.stderr


def test_hybrid_parts_come_from_the_ranking() -> None:
    from memory.recall.hybrid import Weights, fuse

    rows = {1: ("s1", 0.5), 2: ("s1", 0.9), 3: ("s2", 0.5)}
    scored = fuse({1: 4.0, 3: 2.0}, {1: 0.8, 2: 0.6}, rows, Weights(0.75, 0.25, 0.25, 0.5))
    parts = {s.id: s.parts for s in scored}
    assert parts[1]["keyword"] == 1.0 and parts[3]["keyword"] == 0.5 and parts[1]["vector"] == 0.8
    assert parts[2]["session"] == 0.25  # no keyword hit of its own: lifted by memory 1, same session
    assert parts[2]["importance"] == 0.9
    assert any("diversity" in p for p in parts.values())  # the second hit of s1 keeps half its score
    assert all(p["score"] == s.score for s, p in zip(scored, parts.values(), strict=True))
    assert json.loads(json.dumps(scored[0].as_dict()))["parts"]["score"] == round(scored[0].score, 4)


def test_a_hybrid_search_records_its_vector_and_session_parts(home: Path, project: Path) -> None:
    """The CLI's in-process hybrid search (a hashing index, as the worker would use) fills the parts."""
    cli = Cli(home, project)
    ids = cli.jsonl({"title": "The parser uses tree-sitter for outlines", "content": "The parser uses tree-sitter "
                     "for outlines", "session_id": "a"},
                    {"title": "Grammars are loaded lazily", "content": "Grammars are loaded lazily from their "
                     "files", "session_id": "a"})
    cli.ok("reindex", "--embedder", "hashing")
    hits = cli.json("search", "tree-sitter", "parser", "--mode", "hybrid")
    assert hits and hits[0]["mode"] == "hybrid"
    got = cli.json("why", str(ids[0]))["recalls"][0]
    assert got["mode"] == "hybrid" and {"keyword", "vector", "importance"} <= set(got["parts"])
    # No word of the query in its own text: found through its neighbour's (memories_ctx) and its session.
    neighbour = cli.json("why", str(ids[1]))["recalls"][0]["parts"]
    from memory.recall.hybrid import Weights

    session = Weights.from_env("hashing").session  # the best keyword hit of its session is 1.0
    assert neighbour["session"] == session and neighbour["keyword"] < got["parts"]["keyword"] == 1.0


def test_a_forgotten_memory_leaves_no_text_in_the_recorded_injections(home: Path, project: Path,
                                                                      hooks: HookRunner) -> None:
    cli = Cli(home, project)
    keep, gone = cli.jsonl(
        {"title": "Release notes live in CHANGELOG.md", "content": "Release notes live in CHANGELOG.md",
         "type": "decision", "importance": 0.9, "session_id": "old"},
        {"title": "The staging password rotates monthly", "content": "The staging password rotates monthly via "
         "the vault job", "type": "decision", "importance": 0.9, "session_id": "old"})
    hooks.session = "s1"
    start = hooks.start()
    assert f"#{keep})" in start and f"#{gone})" in start
    cli.ok("forget", str(gone))
    text = _db(home, project).execute("SELECT text FROM injections").fetchone()[0]
    assert "staging password" not in text and f"- (memory #{gone}, deleted since)" in text
    assert f"#{keep})" in text


def test_cleanup_drops_old_injected_texts_and_keeps_the_parts(home: Path, project: Path) -> None:
    import time

    from memory import store
    from memory.store import evict
    from memory.store.workspace import Workspace

    ws = Workspace.for_dir(str(project))
    mid = store.save(ws.db, ws.project.key, store.NewMemory("Deploys use blue-green", "Deploys use blue-green")).id
    old = store.log_access(ws.db, [mid], "inject-prompt", "s1", "deploys?", parts={mid: {"keyword": 1.0}},
                           text="- [observation] Deploys use blue-green (recorded, 2026-10-01, #1)")
    new = store.log_access(ws.db, [mid], "inject-prompt", "s2", "deploys?", parts={mid: {"keyword": 1.0}},
                           text="recent")
    ws.db.execute("UPDATE injections SET at = ? WHERE id = ?", (time.time() - 31 * 86400, old))
    ws.db.commit()
    ws.close()
    assert evict.run(str(home))["injected_texts_dropped"] == 1
    db = _db(home, project)
    assert [tuple(r) for r in db.execute("SELECT id, text FROM injections ORDER BY id")] == [(old, None),
                                                                                             (new, "recent")]
    assert db.execute("SELECT count(*) FROM access_log WHERE parts IS NOT NULL").fetchone()[0] == 2
