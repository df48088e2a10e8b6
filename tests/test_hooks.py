"""The hook processes, driven as Claude Code drives them: real process, JSON on stdin, real SQLite."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from pathlib import Path

import pytest

from memory.base.project import identify
from tests.support.helpers import PAYLOADS, PAYLOADS_NEW, ROOT, HookRunner, all_bytes_under, load_payload

ENTRIES = ["session_start", "user_prompt_submit", "pre_tool_use", "post_tool_use", "pre_compact", "stop",
           "session_end"]


def db_for(home: Path, project: Path) -> sqlite3.Connection:
    db = sqlite3.connect(home / "projects" / identify(str(project)).key / "memory.db")
    db.row_factory = sqlite3.Row
    return db


@pytest.mark.parametrize("payload", sorted(p.name for p in [*PAYLOADS.glob("*.json"), *PAYLOADS_NEW.glob("*.json")]))
def test_every_recorded_payload_exits_0_with_at_most_one_json_object(payload: str, hooks: HookRunner) -> None:
    folder = PAYLOADS_NEW if (PAYLOADS_NEW / payload).exists() else PAYLOADS
    event = json.loads((folder / payload).read_text())
    event["cwd"] = str(hooks.project)
    entry = {"SessionStart": "session_start", "UserPromptSubmit": "user_prompt_submit",
             "PreToolUse": "pre_tool_use", "PostToolUse": "post_tool_use", "PreCompact": "pre_compact",
             "Stop": "stop", "SessionEnd": "session_end"}[event["hook_event_name"]]
    result = hooks.run(entry, event)
    assert result["exit_code"] == 0
    if result["json"] is not None:
        assert result["json"]["hookSpecificOutput"]["hookEventName"] == event["hook_event_name"]


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("garbage", [b"", b"not json", b"[1, 2]", b"{\"hook_event_name\": 5}", b"\xff\xfe\x00",
                                     b"{\"tool_input\": [], \"tool_name\": {}, \"prompt\": 3, \"cwd\": 7}"])
def test_bad_input_never_breaks_the_session(entry: str, garbage: bytes, hooks: HookRunner, home: Path) -> None:
    result = hooks.run(entry, garbage)
    assert result["exit_code"] == 0
    assert result["stderr"] == ""
    assert not result["stdout"].strip() or isinstance(result["json"], dict)


def test_errors_are_logged_in_the_data_dir(hooks: HookRunner, home: Path) -> None:
    hooks.run("post_tool_use", b"{broken")
    log = (home / "logs" / "hooks.log").read_text()
    assert "JSONDecodeError" in log
    assert stat.S_IMODE((home / "logs" / "hooks.log").stat().st_mode) == 0o600


def test_store_schema_wal_and_owner_only_files(hooks: HookRunner, home: Path) -> None:
    hooks.start()
    db = db_for(home, hooks.project)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'trigger')")}
    assert {"memories", "memories_fts", "sessions", "session_state", "handoffs", "access_log", "queue",
            "memories_ai", "memories_ad", "memories_au"} <= tables
    for path in (home / "projects").rglob("*"):
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode & 0o077 == 0, f"{path} is readable by others ({oct(mode)})"


def test_capture_turns_tool_events_into_state_and_observations(hooks: HookRunner, home: Path) -> None:
    p = hooks.project
    hooks.start()
    hooks.prompt("Fix the failing greeting test in app.py")
    hooks.tool("Read", {"file_path": str(p / "app.py")}, {"type": "text", "file": {"filePath": str(p / "app.py"),
                                                                                "content": "x", "numLines": 1}})
    hooks.tool("Bash", {"command": "pytest tests/test_app.py"}, failed="Exit code 1\nE AssertionError: 'hi bob'")
    hooks.tool("Edit", {"file_path": str(p / "app.py"), "old_string": "'hi ' + name", "new_string": "f'hi {name}'"},
               {"filePath": str(p / "app.py")})
    hooks.tool("Bash", {"command": "pytest tests/test_app.py"}, {"stdout": "1 passed", "stderr": "",
                                                                  "interrupted": False})
    hooks.tool("TodoWrite", {"todos": [{"content": "Fix greeting", "status": "completed"},
                                       {"content": "Add docs", "status": "pending"}]},
               {"oldTodos": [{"content": "Fix greeting", "status": "in_progress"}]})
    state = json.loads(next((home / "projects").glob("*/session-state.json")).read_text())
    assert state["task"] == "Fix the failing greeting test in app.py"
    assert state["files_modified"] == [str(p / "app.py")]
    assert str(p / "app.py") in state["files_read"]
    assert state["errors"] == []  # the failure was fixed by the second run
    assert any("pytest tests/test_app.py" in f for f in state["fixed"])
    assert state["todos"][1] == {"content": "Add docs", "status": "pending"}
    assert state["tool_calls"] == 5
    db = db_for(home, p)
    rows = {r["title"]: r for r in db.execute("SELECT * FROM memories")}
    fixed = rows["Fixed: `pytest tests/test_app.py` passes again"]
    assert fixed["type"] == "bugfix" and "AssertionError" in fixed["content"] and "app.py" in fixed["content"]
    # the fix is the passing run's record: no "Ran" observation of that run beside it (issue 26, said once)
    assert not any(t.startswith("Ran `pytest") for t in rows), list(rows)
    assert rows["Modified app.py"]["type"] == "change"
    assert rows["Completed: Fix greeting"]["type"] == "bugfix"
    session = db.execute("SELECT * FROM sessions").fetchone()
    assert session["tool_call_count"] == 5 and session["prompt_count"] == 1


def test_dedup_by_content_and_title_and_low_value_dropped(hooks: HookRunner, home: Path) -> None:
    hooks.start()
    for _ in range(3):
        hooks.tool("Bash", {"command": "ls -la"}, {"stdout": "a b c", "stderr": ""})
    for text in ("first version", "second version"):
        hooks.tool("Edit", {"file_path": str(hooks.project / "app.py"), "old_string": "x", "new_string": text}, {})
    db = db_for(home, hooks.project)
    titles = [r[0] for r in db.execute("SELECT title FROM memories")]
    assert not any(t.startswith("Ran `ls") for t in titles)  # low value
    assert titles.count("Modified app.py") == 1  # same title: one memory, latest content
    content = db.execute("SELECT content FROM memories WHERE title = 'Modified app.py'").fetchone()[0]
    assert "second version" in content


def test_low_value_patterns_extend_from_the_environment(hooks: HookRunner, home: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_LOW_VALUE_PATTERNS", r"^Ran `make lint")
    hooks.tool("Bash", {"command": "make lint"}, {"stdout": "ok", "stderr": ""})
    hooks.tool("Bash", {"command": "make build"}, {"stdout": "built", "stderr": ""})
    titles = [r[0] for r in db_for(home, hooks.project).execute("SELECT title FROM memories")]
    assert "Ran `make build`" in titles and not any("make lint" in t for t in titles)


def test_huge_tool_output_is_capped(hooks: HookRunner, home: Path) -> None:
    big = "line of output\n" * 200_000 + "FINAL ERROR: disk full"
    hooks.tool("Bash", {"command": "make build"}, failed="Exit code 2\n" + big)
    content = db_for(home, hooks.project).execute("SELECT content FROM memories").fetchone()[0]
    assert len(content) < 5000 and "FINAL ERROR: disk full" in content


def test_precompact_handoff_is_injected_after_compaction(hooks: HookRunner) -> None:
    p = hooks.project
    hooks.start()
    hooks.prompt("Migrate the session store to Redis")
    hooks.tool("Edit", {"file_path": str(p / "store.py"), "old_string": "a", "new_string": "b"}, {})
    hooks.stop("Decision: we will use Redis streams instead of lists for the session queue.")
    assert hooks.compact()["json"] is None  # never blocks compaction
    text = hooks.start("compact")
    assert "Handoff" in text
    assert "Task: Migrate the session store to Redis" in text
    assert "store.py" in text
    assert "Redis streams instead of lists" in text
    assert len(text) < 9000


def test_startup_gets_the_previous_sessions_handoff_and_memories(hooks: HookRunner, project: Path) -> None:
    hooks.start()
    hooks.prompt("Add rate limiting to the login endpoint")
    hooks.tool("Bash", {"command": "pytest -q tests/test_login.py"}, failed="Exit code 1\nE   assert 429 == 200")
    hooks.stop("Decision: we will use a token bucket in Redis for rate limiting.")
    hooks.end()
    other = HookRunner(project, session="sess-2")
    other.results = hooks.results
    text = other.start("startup")
    assert "previous session" in text
    assert "Add rate limiting to the login endpoint" in text
    # The assistant's message is the handoff's last action: its memory is not listed again below.
    assert text.count("token bucket in Redis") == 1
    assert "Memories of project" in text and "assert 429 == 200" in text.split("Memories of project")[1]


def test_resume_and_clear_inject_this_sessions_handoff(hooks: HookRunner, project: Path) -> None:
    hooks.start()
    hooks.prompt("Write the CSV exporter")
    hooks.stop("Done with the header row.")
    other = HookRunner(project, session="sess-other")
    other.results = hooks.results
    other.start()
    other.prompt("Unrelated work on the README")
    other.stop("README updated.")
    for source in ("resume", "clear"):
        text = hooks.start(source)
        assert "Write the CSV exporter" in text and "README" not in text.split("Memories of project")[0]


def test_prompt_recall_is_relevant_never_echoes_and_is_silent_when_nothing_matches(
        hooks: HookRunner, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_STARTUP_MEMORIES", "0")  # so that recall, not the startup list, brings it back
    hooks.start()
    hooks.stop("Decision: JWT refresh tokens are stored in httpOnly cookies, never in localStorage.")
    hooks.end()
    # A later session's work leads the next handoff: the message above is not in the startup context.
    worked = HookRunner(project, session="sess-work")
    worked.results = hooks.results
    worked.start()
    worked.prompt("Rename the CSV exporter module")
    worked.tool("Edit", {"file_path": str(project / "export.py"), "old_string": "a", "new_string": "b"}, {})
    worked.stop("Renamed.")
    worked.end()
    later = HookRunner(project, session="sess-2")
    later.results = hooks.results
    later.start()
    assert later.prompt("What is the weather like on Mars today?") == ""
    text = later.prompt("Where should the JWT refresh tokens be stored in the browser?")
    assert "httpOnly cookies" in text
    assert "Where should the JWT refresh tokens be stored" not in text  # no echo of the prompt
    # Shown once per session: asking again does not repeat it.
    assert later.prompt("Where should the JWT refresh tokens be stored, again?") == ""


def test_a_memory_injected_at_startup_is_not_repeated_for_a_prompt(hooks: HookRunner, project: Path) -> None:
    hooks.start()
    hooks.stop("Decision: JWT refresh tokens are stored in httpOnly cookies, never in localStorage.")
    hooks.end()
    later = HookRunner(project, session="sess-2")
    later.results = hooks.results
    assert "httpOnly cookies" in later.start()
    assert "httpOnly cookies" not in later.prompt("Where should the JWT refresh tokens be stored?")


def test_first_prompt_of_an_unseen_session_carries_the_startup_context(hooks: HookRunner, project: Path) -> None:
    hooks.start()
    hooks.prompt("Port the billing module to Stripe")
    hooks.stop("Decision: always use idempotency keys for Stripe charges.")
    fresh = HookRunner(project, session="no-session-start")
    fresh.results = hooks.results
    text = fresh.prompt("Let us continue")
    assert "Port the billing module to Stripe" in text


def test_subagent_events_record_files_but_keep_the_main_thread_state(hooks: HookRunner, home: Path) -> None:
    hooks.start()
    hooks.prompt("Refactor the parser")
    hooks.tool("Read", {"file_path": str(hooks.project / "parser.py")}, {}, agent_id="a1", agent_type="Explore")
    state = json.loads(next((home / "projects").glob("*/session-state.json")).read_text())
    assert str(hooks.project / "parser.py") in state["files_read"]
    assert state["last_action"].startswith("User asked")
    # a Read is the session's context (files_read), not a memory (docs/capture.md)
    assert not db_for(home, hooks.project).execute("SELECT 1 FROM memories WHERE title LIKE 'Read %'").fetchall()
    hooks.tool("Bash", {"command": "make parser"}, {"stdout": "built", "stderr": ""}, agent_id="a1",
               agent_type="Explore")
    tags = db_for(home, hooks.project).execute("SELECT tags FROM memories WHERE title LIKE 'Ran %'").fetchone()[0]
    assert "agent:explore" in tags


def test_session_end_completes_the_session_with_a_summary_and_queues_extraction(hooks: HookRunner,
                                                                                home: Path) -> None:
    hooks.start()
    hooks.prompt("Add a --verbose flag to the CLI")
    hooks.tool("Edit", {"file_path": str(hooks.project / "cli.py"), "old_string": "a", "new_string": "b"}, {})
    hooks.end("prompt_input_exit")
    db = db_for(home, hooks.project)
    s = db.execute("SELECT * FROM sessions").fetchone()
    assert s["status"] == "completed" and s["end_reason"] == "prompt_input_exit"
    assert "Add a --verbose flag" in s["summary"] and "cli.py" in s["summary"]
    job = db.execute("SELECT * FROM queue WHERE kind = 'extract'").fetchone()  # SessionStart queues others
    assert job["kind"] == "extract" and json.loads(job["payload"])["session_id"] == "sess-1"


def test_injection_stays_under_the_cap(hooks: HookRunner, home: Path, project: Path) -> None:
    hooks.start()
    hooks.prompt("x" * 20000 + " long task")
    for i in range(80):
        hooks.stop(f"Decision: we will use approach number {i} " + "because " * 60)
    hooks.end()
    other = HookRunner(project, session="s2")
    other.results = hooks.results
    assert len(other.start()) <= 9000


def test_private_text_and_secrets_never_reach_the_disk(hooks: HookRunner, home: Path) -> None:
    secrets = [b"hunter2-PRIVATE", b"AKIAIOSFODNN7EXAMPLE", b"ghp_abcdefghijklmnopqrstuvwxyz0123456789",
               b"s3cr3t-db-pass", b"MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", b"sk-ant-api03-abcdefghijklmnopqrstuvwx",
               b"nested-PRIVATE", b"unclosed-PRIVATE"]
    hooks.start()
    hooks.prompt("Deploy it <private>hunter2-PRIVATE</private> with key AKIAIOSFODNN7EXAMPLE")
    hooks.prompt("outer <private>a <private>nested-PRIVATE</private> b</private> and <private>unclosed-PRIVATE")
    hooks.tool("Bash", {"command": "psql postgres://admin:s3cr3t-db-pass@db.internal/app"},
               failed="Exit code 1\nconnection to postgres://admin:s3cr3t-db-pass@db.internal failed")
    hooks.tool("Write", {"file_path": str(hooks.project / ".env"), "content": "GITHUB_TOKEN=ghp_abcdefghijklmnopqr"
                         "stuvwxyz0123456789\nANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwx"}, {})
    hooks.tool("Read", {"file_path": str(hooks.project / "key.pem")}, {"type": "text", "file": {
        "content": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----"}})
    hooks.stop("Used token ghp_abcdefghijklmnopqrstuvwxyz0123456789 <private>hunter2-PRIVATE</private>")
    hooks.compact()
    hooks.end()
    hooks.run("post_tool_use", b"{not json hunter2-PRIVATE")
    find = all_bytes_under(home)
    for s in secrets:
        assert find(s) == [], f"{s!r} reached the disk"


def test_project_identity_is_the_git_root_not_the_folder_name(tmp_path: Path, home: Path) -> None:
    from tests.support.helpers import make_git_project

    a = make_git_project(tmp_path / "one" / "app")
    b = make_git_project(tmp_path / "two" / "app")
    (a / "src").mkdir()
    assert identify(str(a / "src")).key == identify(str(a)).key
    assert identify(str(a)).key != identify(str(b)).key
    c = make_git_project(tmp_path / "c1", remote="git@github.com:acme/shop.git")
    d = make_git_project(tmp_path / "c2", remote="https://user:tok@github.com/acme/shop")
    assert identify(str(c)).key == identify(str(d)).key
    assert identify(str(c)).name == "shop"


def test_hooks_fall_back_to_plain_python3_without_the_venv(tmp_path: Path, home: Path, project: Path) -> None:
    """An installed plugin before its venv exists: the launcher runs python3, stdlib-only hooks work."""
    import shutil
    import subprocess

    plugin = tmp_path / "plugin"
    shutil.copytree(ROOT, plugin, ignore=shutil.ignore_patterns(".venv", ".tools", ".git", "tests", "__pycache__"))
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if ".venv" not in p)
    ev = {"session_id": "s", "cwd": str(project), "hook_event_name": "UserPromptSubmit", "prompt": "Build the API"}
    proc = subprocess.run([str(plugin / "hooks" / "run"), "user_prompt_submit"], input=json.dumps(ev).encode(),
                          capture_output=True, env=env, timeout=60)
    assert proc.returncode == 0 and proc.stderr == b""
    assert db_for(home, project).execute("SELECT count(*) FROM memories").fetchone()[0] == 1
    _ = load_payload  # the recorded payloads are exercised above


def test_a_long_session_gets_new_memories_for_each_prompt_and_never_a_repeat(
        hooks: HookRunner, project: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The memories already shown are left out in SQL (memory/recall/inject.py): however many a session has seen,
    each prompt on the same topic brings the next ones, and none twice."""
    from memory import store
    from memory.store.workspace import Workspace

    monkeypatch.setenv("MEMORY_STARTUP_MEMORIES", "0")
    ws = Workspace(identify(str(project)), str(home))
    for n in range(23):
        text = f"Rate limiter bucket {n}: the token refill interval for tenant {n} is {n + 3} seconds"
        store.save(ws.db, ws.project.key, store.NewMemory(text[:50], text, type="discovery", session_id="old",
                                                          created_at=1_700_000_000 + n), filter_low_value=False)
    ws.close()
    hooks.start()
    seen: list[str] = []
    for round_ in range(6):
        text = hooks.prompt(f"what is the token refill interval of the rate limiter bucket? (asked {round_})")
        got = [line.split(":")[0] for line in text.splitlines() if line.startswith("- [discovery]")]
        assert len(got) == (5 if round_ < 4 else 3 if round_ == 4 else 0), (round_, text)
        assert not set(got) & set(seen), (round_, got)
        seen += got
    assert len(set(seen)) == 23
