"""The `memory` console script, run as a real process against a scratch data dir, cwd = a git project."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from memory.base.project import identify
from memory.store.migrations import MIGRATIONS
from tests.support.helpers import HookRunner, make_git_project

MEMORY = Path(sys.executable).parent / "memory"
# origin, flags: issue 14; mode, why (what answered the search): issue 16
LAYER1 = {"id", "title", "type", "score", "date", "origin", "flags", "mode", "why"}


class Cli:
    def __init__(self, home: Path, cwd: Path) -> None:
        self.home = home
        self.cwd = cwd

    def run(self, *args: str, stdin: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "MEMORY_HOME": str(self.home)}
        for name in ("CLAUDE_PLUGIN_DATA", "CLAUDE_PROJECT_DIR", "MEMORY_PROJECT_DIR"):
            env.pop(name, None)
        return subprocess.run([str(MEMORY), *args], input=stdin if stdin is not None else "", text=True,
                              capture_output=True, cwd=cwd or self.cwd, env=env, timeout=60)

    def ok(self, *args: str, stdin: str | None = None, cwd: Path | None = None) -> str:
        r = self.run(*args, stdin=stdin, cwd=cwd)
        assert r.returncode == 0, (args, r.stdout, r.stderr)
        assert "Traceback" not in r.stderr
        return r.stdout

    def json(self, *args: str, stdin: str | None = None, cwd: Path | None = None) -> Any:
        return json.loads(self.ok(*args, "--json", stdin=stdin, cwd=cwd))

    def jsonl(self, *objects: dict[str, Any]) -> list[int]:
        out = self.ok("save", "--jsonl", stdin="".join(json.dumps(o) + "\n" for o in objects))
        return [int(line.split("\t")[0]) for line in out.splitlines()]

    def count(self) -> int:
        return int(self.json("stats")["memories"])


def assert_error(r: subprocess.CompletedProcess[str], *needles: str) -> str:
    """Non-zero exit, one `Error:` line on stderr (click may add its Usage/Try lines), no traceback."""
    assert r.returncode != 0, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout, r.stderr
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("Error:")]
    assert len(errors) == 1, r.stderr
    others = [ln for ln in r.stderr.splitlines() if ln.strip() and not ln.startswith(("Error:", "Usage:", "Try "))]
    assert others == [], r.stderr
    for needle in needles:
        assert needle in errors[0], (needle, errors[0])
    return errors[0]


@pytest.fixture
def cli(home: Path, project: Path) -> Cli:
    return Cli(home, project)


# --- save ---------------------------------------------------------------------------------------------


def test_save_from_arguments_with_type_importance_and_tags(cli: Cli) -> None:
    first = cli.json("save", "Use", "uv", "for", "the", "lockfile", "--type", "decision", "--importance", "0.9",
                     "--tag", "Build", "--tag", "ci")
    assert set(first) == {"id", "action"} and first["action"] == "inserted"
    row = cli.json("get", str(first["id"]))[0]
    assert row["content"] == "Use uv for the lockfile" and row["title"] == "Use uv for the lockfile"
    assert row["type"] == "decision" and row["importance"] == 0.9
    assert row["tags"] == "build,ci" and row["source"] == "cli"
    assert row["project"] == identify(str(cli.cwd)).key
    assert cli.ok("save", "Use  uv for the LOCKFILE", "--type", "decision") == f"saved #{first['id']} (duplicate)\n"
    again = cli.json("save", "--title", "Use uv for the lockfile", "Use uv for the lockfile, pinned to 0.5")
    assert again == {"id": first["id"], "action": "updated"}
    assert cli.count() == 1


def test_save_from_stdin_keeps_every_line(cli: Cli) -> None:
    text = "Flaky upload test\nThe S3 mock returns 503 under load.\nRetrying with backoff fixes it.\n"
    out = cli.ok("save", "--type", "bugfix", stdin=text)
    assert out.startswith("saved #") and out.endswith("(inserted)\n")
    mid = out.split("#")[1].split()[0]
    shown = cli.ok("get", mid)
    assert shown.startswith(f"#{mid} [bugfix] Flaky upload test\n")
    assert "The S3 mock returns 503 under load.\nRetrying with backoff fixes it." in shown


def test_save_keeps_private_text_and_secrets_out(cli: Cli) -> None:
    mid = cli.json("save", "Deploy with <private>hunter2-PRIV</private> key AKIAIOSFODNN7EXAMPLE")["id"]
    content = cli.json("get", str(mid))[0]["content"]
    assert "hunter2-PRIV" not in content and "AKIAIOSFODNN7EXAMPLE" not in content
    assert "[REDACTED:aws-access-key]" in content
    assert_error(cli.run("save", "<private>all of it is private</private>"), "nothing left to save")
    assert_error(cli.run("save", stdin=""), "nothing to save")
    assert cli.count() == 1


def test_save_jsonl_saves_many_and_prints_ids_in_order(cli: Cli, tmp_path: Path) -> None:
    other = make_git_project(tmp_path / "other")
    lines = [
        {"title": "Cache TTL", "content": "The product cache TTL is 300 s.", "type": "fact"},
        {"content": "Payments go through the queue worker\nnever inline"},
        {"title": "Old note", "content": "Logged in 2020", "created_at": "2020-01-02T03:04:05"},
        {"title": "Epoch note", "content": "A timestamp", "created_at": 1_600_000_000, "tags": ["a", "B"]},
        {"title": "Elsewhere", "content": "Belongs to the other project", "project": str(other)},
    ]
    stdin = "\n".join(json.dumps(o) for o in lines[:2]) + "\n\n" + "\n".join(json.dumps(o) for o in lines[2:]) + "\n"
    out = cli.ok("save", "--jsonl", stdin=stdin)
    rows = [ln.split("\t") for ln in out.splitlines()]
    assert [r[1] for r in rows] == ["inserted"] * 5
    ids = [int(r[0]) for r in rows]
    here = cli.json("get", *map(str, ids[:4]))
    assert [r["title"] for r in here] == ["Cache TTL", "Payments go through the queue worker", "Old note", "Epoch note"]
    assert [r["type"] for r in here] == ["fact", "observation", "observation", "observation"]
    assert here[1]["content"] == "Payments go through the queue worker\nnever inline"
    assert time.strftime("%Y-%m-%d", time.localtime(here[2]["created_at"])) == "2020-01-02"
    assert here[3]["created_at"] == 1_600_000_000 and here[3]["tags"] == "a,b"
    assert cli.json("get", str(ids[4]), "--project", str(other))[0]["title"] == "Elsewhere"
    assert cli.count() == 4
    again = cli.json("save", "--jsonl", stdin=stdin)  # --json: line numbers of the input (a blank line skipped)
    assert [r["line"] for r in again] == [1, 2, 4, 5, 6]
    assert [r["id"] for r in again] == ids and {r["action"] for r in again} == {"duplicate"}


@pytest.mark.parametrize(("bad", "needle"), [
    ("{not json", "not JSON"),
    ("[1, 2]", "content"),
    ('{"title": 5, "content": 7}', "content"),
    ('{"content": "x", "type": "gossip"}', "type must be one of"),
])
def test_save_jsonl_with_a_bad_line_saves_nothing(cli: Cli, bad: str, needle: str) -> None:
    stdin = '{"title": "first", "content": "first line is fine"}\n' + bad + '\n{"content": "third is fine"}\n'
    assert_error(cli.run("save", "--jsonl", stdin=stdin), "line 2", needle)
    assert cli.count() == 0


@pytest.mark.parametrize("bad", [
    '{"content": "x", "importance": "high"}',
    '{"content": "x", "created_at": "yesterday"}',
    '{"content": "x", "project": "no-such-project"}',
])
def test_save_jsonl_with_a_bad_value_saves_nothing(cli: Cli, bad: str) -> None:
    stdin = '{"title": "first", "content": "first line is fine"}\n' + bad + "\n"
    assert_error(cli.run("save", "--jsonl", stdin=stdin), "line 2")
    assert cli.count() == 0


def test_save_jsonl_with_a_string_tag_is_one_tag_or_an_error(cli: Cli) -> None:
    r = cli.run("save", "--jsonl", "--json", stdin='{"content": "x y z", "tags": "deploy"}\n')
    if r.returncode == 0:
        assert cli.json("get", str(json.loads(r.stdout)[0]["id"]))[0]["tags"] == "deploy"
    else:
        assert_error(r, "line 1")


# --- search -------------------------------------------------------------------------------------------


@pytest.fixture
def searchable(cli: Cli) -> dict[str, int]:
    now = time.time()
    ids = cli.jsonl(
        {"title": "Redis eviction policy", "content": "allkeys-lru for the redis cache", "type": "decision",
         "created_at": now - 30 * 86400},
        {"title": "Redis connection pool", "content": "pool size 20 for redis", "type": "discovery",
         "created_at": now - 3 * 86400},
        {"title": "Redis failover", "content": "redis sentinel promoted a replica", "type": "bugfix",
         "created_at": now - 60},
        {"title": "Postgres vacuum", "content": "autovacuum settings for the orders table", "type": "fact"},
    )
    return dict(zip(["old", "mid", "new", "pg"], ids, strict=True))


def test_search_json_is_layer_1(cli: Cli, searchable: dict[str, int]) -> None:
    hits = cli.json("search", "redis")
    assert {h["id"] for h in hits} == {searchable["old"], searchable["mid"], searchable["new"]}
    for h in hits:
        assert set(h) == LAYER1
        assert isinstance(h["score"], float) and h["score"] >= 0
        assert len(h["date"]) == 10 and h["date"][4] == "-"
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    old = next(h for h in hits if h["id"] == searchable["old"])
    assert old["date"] == time.strftime("%Y-%m-%d", time.localtime(time.time() - 30 * 86400))
    rare = cli.json("search", "failover")  # a rare term: a positive BM25 score
    assert [h["id"] for h in rare] == [searchable["new"]] and rare[0]["score"] > 0
    text = cli.ok("search", "redis", "failover")
    assert text.splitlines()[0].startswith(f"#{searchable['new']}") and "Redis failover" in text.splitlines()[0]


def test_search_limit_type_since_until(cli: Cli, searchable: dict[str, int]) -> None:
    def ids(*args: str) -> set[int]:
        return {h["id"] for h in cli.json("search", "redis", *args)}

    assert len(cli.json("search", "redis", "--limit", "2")) == 2
    assert ids("--type", "bugfix") == {searchable["new"]}
    assert ids("--type", "bugfix", "--type", "decision") == {searchable["new"], searchable["old"]}
    assert ids("--since", "7d") == {searchable["mid"], searchable["new"]}
    assert ids("--since", "1h") == {searchable["new"]}
    week_ago = time.strftime("%Y-%m-%d", time.localtime(time.time() - 7 * 86400))
    assert ids("--since", week_ago) == {searchable["mid"], searchable["new"]}
    assert ids("--until", week_ago) == {searchable["old"]}
    assert ids("--since", f"{week_ago}T00:00", "--until", "1h") == {searchable["mid"]}


def test_search_without_results_says_so(cli: Cli, searchable: dict[str, int]) -> None:
    assert cli.ok("search", "kubernetes", "helm") == "no memories match\n"
    assert cli.json("search", "kubernetes") == []
    assert cli.ok("search", "the", "and", "of") == "no memories match\n"  # only stop words


def test_search_with_a_bad_date_says_what_to_use(cli: Cli) -> None:
    msg = assert_error(cli.run("search", "redis", "--since", "last tuesday"), "last tuesday")
    assert "2026-11-01" in msg and "7d" in msg
    assert_error(cli.run("search", "redis", "--until", "soon"), "7d")


# --- timeline, get, forget ----------------------------------------------------------------------------


def test_timeline_marks_the_anchor(cli: Cli) -> None:
    t0 = time.time() - 3600
    ids = cli.jsonl(*({"title": f"Step {i} of the release", "content": f"step {i}", "created_at": t0 + i * 60}
                      for i in range(7)))
    rows = cli.json("timeline", str(ids[3]))
    assert [r["id"] for r in rows] == ids
    assert [r["anchor"] for r in rows] == [i == 3 for i in range(7)]
    assert set(rows[0]) == {"id", "title", "type", "date", "session_id", "anchor"}
    narrow = cli.json("timeline", str(ids[3]), "--before", "1", "--after", "2")
    assert [r["id"] for r in narrow] == ids[2:6]
    lines = cli.ok("timeline", str(ids[3]), "--before", "1", "--after", "1").splitlines()
    assert len(lines) == 3 and lines[1].startswith(f"> #{ids[3]}") and not lines[0].startswith(">")
    assert_error(cli.run("timeline", "99999"), "no memory #99999", "memory search")


def test_get_shows_the_full_content(cli: Cli) -> None:
    body = "Root cause: the retry loop\n" + "\n".join(f"detail line {i}" for i in range(40)) + "\nEND OF NOTE"
    mid = cli.json("save", "--title", "Retry loop root cause", "--tag", "retry", body)["id"]
    out = cli.ok("get", str(mid))
    assert out.startswith(f"#{mid} [learning] Retry loop root cause\n")
    assert body in out and "tags: retry" in out
    assert cli.json("get", str(mid))[0]["content"] == body
    r = cli.run("get", str(mid), "424242")
    assert body in r.stdout
    assert_error(r, "no memory with id 424242")
    assert_error(cli.run("get", "424242"), "424242")


def test_forget_then_search_no_longer_finds_it(cli: Cli) -> None:
    keep, drop = cli.jsonl({"title": "Webhook secret rotation", "content": "rotate webhook signing keys monthly"},
                           {"title": "Webhook retries", "content": "webhook retries use a dead letter queue"})
    assert {h["id"] for h in cli.json("search", "webhook")} == {keep, drop}
    assert cli.ok("forget", str(drop)) == f"forgot #{drop}\n"
    assert [h["id"] for h in cli.json("search", "webhook")] == [keep]
    assert cli.json("search", "dead", "letter") == []
    assert_error(cli.run("get", str(drop)), str(drop))
    assert_error(cli.run("forget", str(drop)), f"no memory with id {drop}")


# --- stats, sessions, projects, doctor ----------------------------------------------------------------


def test_stats_text_and_json(cli: Cli, project: Path) -> None:
    cli.jsonl({"content": "fact one", "type": "fact"}, {"content": "fact two", "type": "fact"},
              {"content": "we decided on gRPC", "type": "decision"})
    data = cli.json("stats")
    assert data["memories"] == 3 and data["by_type"] == {"fact": 2, "decision": 1}
    assert data["project_key"] == identify(str(project)).key and data["root"] == os.path.realpath(project)
    assert Path(data["database"]).is_file() and data["database_bytes"] > 0
    # Each saved memory queues one embedding job for the worker (which the tests do not run).
    assert data["sessions"] == {} and data["queue"] == {"pending": 3} and data["tool_calls"] == 0
    text = cli.ok("stats")
    assert "memories  3" in text and "fact:2" in text and "decision:1" in text and "queue     pending:3" in text


def test_sessions_after_running_hooks(cli: Cli, project: Path) -> None:
    assert cli.ok("sessions").startswith("no memory for project app yet")
    runner = HookRunner(project, session="sess-cli-1")
    runner.start()
    runner.prompt("Add pagination to the orders endpoint")
    runner.tool("Edit", {"file_path": str(project / "orders.py"), "old_string": "a", "new_string": "b"}, {})
    runner.end("prompt_input_exit")
    assert all(r["exit_code"] == 0 for r in runner.results)
    rows = cli.json("sessions")
    assert len(rows) == 1
    s = rows[0]
    assert s["id"] == "sess-cli-1" and s["status"] == "completed" and s["end_reason"] == "prompt_input_exit"
    assert s["prompt_count"] == 1 and s["tool_call_count"] == 1
    assert "pagination" in s["summary"]
    text = cli.ok("sessions")
    assert text.startswith("sess-cli") and "completed" in text and "prompts:1" in text and "tools:1" in text
    assert cli.json("stats")["sessions"] == {"completed": 1}


def test_projects_lists_every_project_with_a_database(cli: Cli, project: Path, tmp_path: Path) -> None:
    assert cli.json("projects") == []
    other = make_git_project(tmp_path / "billing", remote="git@github.com:acme/billing.git")
    cli.ok("save", "note in app")
    cli.ok("save", "note in billing", cwd=other)
    rows = cli.json("projects")
    assert {r["key"] for r in rows} == {identify(str(project)).key, identify(str(other)).key}
    billing = next(r for r in rows if r["name"] == "billing")
    assert billing["remote"] == "github.com/acme/billing" and billing["root"] == os.path.realpath(other)
    text = cli.ok("projects")
    assert os.path.realpath(project) in text and os.path.realpath(other) in text


def test_doctor_reports_a_healthy_database(cli: Cli, home: Path) -> None:
    cli.ok("save", "something worth remembering")
    data = cli.json("doctor")
    db = data["database"]
    assert db["ok"] is True and db["exists"] is True and db["integrity"] == "ok" and db["fts_ok"] is True
    assert db["schema_version"] == db["schema_latest"] == len(MIGRATIONS)
    assert db["memories"] == 1
    assert data["data_dir"] == str(home) and data["projects_known"] == 1
    assert data["providers"]["keyword recall (FTS5)"] is True


def test_doctor_on_a_corrupt_database_fails(cli: Cli, project: Path, home: Path) -> None:
    cli.ok("save", "something")
    db_path = home / "projects" / identify(str(project)).key / "memory.db"
    db_path.write_bytes(b"garbage, not sqlite" * 100)
    r = cli.run("doctor", "--json")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    report = json.loads(r.stdout)["database"]
    assert report["ok"] is False and "corrupt" in report["problem"]


def test_a_corrupt_database_is_replaced_with_a_warning(cli: Cli, project: Path, home: Path) -> None:
    cli.ok("save", "before the corruption")
    folder = home / "projects" / identify(str(project)).key
    (folder / "memory.db").write_bytes(b"garbage, not sqlite" * 100)
    r = cli.run("search", "corruption")
    assert r.returncode == 0 and r.stdout == "no memories match\n"
    warning, answered = r.stderr.splitlines()  # the warning, then what answered the search
    assert "corrupt" in warning and "moved to" in warning and answered.startswith("memory: keyword results")
    assert any(".corrupt-" in p.name for p in folder.iterdir())
    cli.ok("save", "after the corruption")
    assert cli.count() == 1


# --- --project, entry points, error paths -------------------------------------------------------------


def test_project_option_takes_a_folder_a_name_or_a_key(cli: Cli, project: Path, tmp_path: Path) -> None:
    mid = cli.json("save", "Orders are sharded by tenant")["id"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    key = identify(str(project)).key
    for value in (str(project), str(project / "."), "app", key):
        hits = cli.json("search", "sharded", "--project", value, cwd=elsewhere)
        assert [h["id"] for h in hits] == [mid], value
    assert cli.json("search", "sharded", cwd=elsewhere) == []  # its own project there
    assert_error(cli.run("search", "sharded", "--project", "no-such-project", cwd=elsewhere),
                 "no-such-project", "memory projects")


def test_python_dash_m_memory_works() -> None:
    r = subprocess.run([sys.executable, "-m", "memory", "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stderr == ""
    for command in ("search", "timeline", "get", "save", "forget", "stats", "sessions", "projects", "replay",
                    "doctor"):
        assert command in r.stdout
    v = subprocess.run([str(MEMORY), "--version"], capture_output=True, text=True, timeout=60)
    assert v.returncode == 0 and v.stdout.startswith("memory ")


@pytest.mark.parametrize(("args", "needles"), [
    (["get", "999"], ["999"]),
    (["get", "abc"], ["abc"]),
    (["timeline", "999"], ["999"]),
    (["forget", "999"], ["999"]),
    (["search"], ["QUERY"]),
    (["search", "x", "--since", "yesterday"], ["yesterday"]),
    (["search", "x", "--type", "gossip"], ["gossip"]),
    (["search", "x", "--limit", "0"], ["0"]),
    (["save", "x", "--importance", "2"], ["2"]),
    (["save", "x", "--type", "gossip"], ["gossip"]),
    (["stats", "--project", "no-such-project"], ["no-such-project"]),
    (["replay", "/no/such/file.jsonl"], ["/no/such/file.jsonl"]),
    (["frobnicate"], ["frobnicate"]),
    (["team", "share", "99999999999999999999"], ["99999999999999999999"]),  # once an OverflowError
    (["team", "share", "--personal", "5"], ["no memory with id 5"]),
])
def test_every_error_is_one_clear_message(cli: Cli, args: list[str], needles: list[str]) -> None:
    r = cli.run(*args)
    assert_error(r, *needles)
    assert r.stdout == ""


def test_sharing_on_an_unlinked_project_says_only_the_scope_changed(cli: Cli) -> None:
    (mid,) = cli.jsonl({"title": "ran tests", "content": "pytest ran green on the branch"})
    r = cli.run("team", "share", str(mid))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"shared: #{mid}"
    assert "scope set to team; this project is not linked to a team server, so nothing is sent" in r.stderr
    assert "memory team init URL" in r.stderr
    db = sqlite3.connect(next(cli.home.glob("projects/*/memory.db")))
    assert db.execute("SELECT scope FROM memories WHERE id = ?", (mid,)).fetchone()[0] == "team"
    assert db.execute("SELECT count(*) FROM team_outbox").fetchone()[0] == 0  # nothing queued to send


def test_stats_report_injected_sizes_in_tokens(cli: Cli, project: Path) -> None:
    cli.jsonl({"content": "we decided on gRPC for the billing service", "type": "decision"})
    runner = HookRunner(project, session="sess-tokens")
    runner.start()
    assert all(r["exit_code"] == 0 for r in runner.results)
    data = cli.json("stats")["injected_tokens"]["inject-start"]
    assert data["count"] == 1 and 10 < data["median_tokens"] == data["max_tokens"] < 1000
    assert "injected  inject-start: 1 time, median" in cli.ok("stats")
