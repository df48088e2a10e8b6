"""What the capture keeps of a session, through the real hook processes (JSON on stdin, real SQLite)."""

from __future__ import annotations

import json
import sqlite3
import string
from pathlib import Path

from memory.base.privacy import clean
from memory.base.project import identify
from tests.support.helpers import HookRunner
from tests.support.secrets_corpus import B62, rand


def db_for(home: Path, project: Path) -> sqlite3.Connection:
    db = sqlite3.connect(home / "projects" / identify(str(project)).key / "memory.db")
    db.row_factory = sqlite3.Row
    return db


def _leaked(home: Path, needles: list[str]) -> list[str]:
    blobs = [p.read_bytes() for p in home.rglob("*") if p.is_file()]
    return [n for n in needles if any(n.encode() in b for b in blobs)]


# Provider tokens as a line of their own (a .env or a config a model edits): the filter catches each alone.
TOKENS = ["ghp_" + rand(36), "github_pat_" + rand(22) + "_" + rand(59), "sk-ant-api03-" + rand(93),
          "sk-proj-" + rand(120), "xoxb-" + rand(12, string.digits) + "-" + rand(24), "glpat-" + rand(20),
          "AKIA" + rand(16, string.ascii_uppercase + string.digits), "sk_live_" + rand(24), "npm_" + rand(36),
          "hf_" + rand(34, B62)]


def test_edit_is_stored_as_text_and_a_secret_on_its_own_line_is_filtered(hooks: HookRunner, home: Path) -> None:
    caught = [t for t in TOKENS if t not in clean(f"x = 1\n{t}\n")]
    assert len(caught) >= 8, "the corpus should hold tokens the filter knows"
    path = str(hooks.project / "settings.py")
    new = "x = 1\n" + "\n".join(caught) + "\ny = 2"
    hooks.tool("Edit", {"file_path": path, "old_string": "x = 1", "new_string": new}, {"filePath": path})
    hooks.tool("MultiEdit", {"file_path": path, "edits": [{"old_string": "y = 2", "new_string": f"y = 3\n{t}"}
                                                          for t in caught]}, {"filePath": path})
    assert _leaked(home, caught) == []
    content = db_for(home, hooks.project).execute(
        "SELECT content FROM memories WHERE title = 'Modified settings.py'").fetchone()[0]
    assert "y = 3\n" in content and "\\n" not in content  # real newlines, no repr()


def test_an_edit_is_filtered_before_it_is_cut(hooks: HookRunner, home: Path) -> None:
    token = "ghp_" + rand(36)
    path = str(hooks.project / "app.py")
    # The token straddles the 300th character: cut first, its first part would stay, matching no rule.
    new = "#" * 280 + "\n" + token + "\n"
    hooks.tool("Edit", {"file_path": path, "old_string": "", "new_string": new}, {"filePath": path})
    content = db_for(home, hooks.project).execute("SELECT content FROM memories WHERE title = 'Modified app.py'"
                                                  ).fetchone()[0]
    assert "[REDACTED" in content
    assert _leaked(home, [token, token[:12]]) == []


def test_an_edit_is_labelled_by_its_tool_not_by_its_text(hooks: HookRunner, home: Path) -> None:
    from memory.base.fence import row_label

    path = str(hooks.project / "app.py")
    hooks.tool("Edit", {"file_path": path, "old_string": "return 1", "new_string": "return 2\n" * 40},
               {"filePath": path})
    hooks.tool("Write", {"file_path": str(hooks.project / "new.py"), "content": "x = 1\n"}, {})
    hooks.tool("WebFetch", {"url": "https://docs.example.com/limits", "prompt": "rate limits"}, {"result": "100/s"})
    rows = {r["title"]: r for r in db_for(home, hooks.project).execute("SELECT * FROM memories")}
    assert row_label(rows["Modified app.py"]) == "tool output of Edit"
    assert row_label(rows["Modified new.py"]) == "tool output of Write"
    assert row_label(rows["Looked up https://docs.example.com/limits"]) == \
        "tool output of WebFetch https://docs.example.com/limits"


def _memory_cli(home: Path, project: Path, *args: str) -> str:
    import os
    import subprocess
    import sys

    env = {**os.environ, "MEMORY_HOME": str(home), "MEMORY_WORKER": "off"}
    done = subprocess.run([sys.executable, "-m", "memory", *args], cwd=project, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_two_sessions_editing_one_file_keep_two_change_records(home: Path, project: Path) -> None:
    path = str(project / "app.py")
    for session, (old, new) in (("sess-a", ("return 1", "return 2")), ("sess-b", ("return 2", "return 3"))):
        hooks = HookRunner(project, session=session)
        hooks.start()
        hooks.prompt(f"change the value returned by main in app.py to {new[-1]}")
        hooks.tool("Edit", {"file_path": path, "old_string": old, "new_string": new}, {"filePath": path})
        hooks.end()
    # Within one session, a second edit of the file updates that session's record.
    HookRunner(project, session="sess-b").tool("Edit", {"file_path": path, "old_string": "return 3",
                                                        "new_string": "return 4"}, {"filePath": path})
    rows = db_for(home, project).execute("SELECT session_id, content FROM memories WHERE type = 'change' "
                                         "ORDER BY id").fetchall()
    assert [(r["session_id"], r["content"]) for r in rows] == [
        ("sess-a", "replaced:\nreturn 1\nwith:\nreturn 2"), ("sess-b", "replaced:\nreturn 3\nwith:\nreturn 4")]
    # The same change again in a third session is a duplicate (identical content), not a third record.
    HookRunner(project, session="sess-c").tool("Edit", {"file_path": path, "old_string": "return 3",
                                                        "new_string": "return 4"}, {"filePath": path})
    assert db_for(home, project).execute("SELECT count(*) FROM memories WHERE type = 'change'").fetchone()[0] == 2
    listed = _memory_cli(home, project, "recent", "--type", "change")
    assert listed.count("Modified app.py") == 2, listed


def test_the_plugins_own_output_is_not_captured_again(hooks: HookRunner, home: Path) -> None:
    hooks.start()
    hooks.tool("Bash", {"command": "pytest -q tests/test_app.py"}, {"stdout": "3 passed", "stderr": ""})
    listed = _memory_cli(home, hooks.project, "recent")
    assert "pytest -q tests/test_app.py" in listed
    for command in ("memory recent", "bin/memory recent --type change", ".venv/bin/memory search pytest",
                    "cd src && python -m memory recent | head -20"):
        hooks.tool("Bash", {"command": command}, {"stdout": listed, "stderr": ""})
    hooks.tool("mcp__plugin_memory_memory__search", {"query": "pytest"},
               [{"type": "text", "text": listed}])
    rows = db_for(home, hooks.project).execute("SELECT title, content FROM memories").fetchall()
    assert [r["title"] for r in rows] == ["Ran `pytest -q tests/test_app.py`"]
    state = db_for(home, hooks.project).execute("SELECT state FROM session_state").fetchone()[0]
    assert "memory recent" not in state  # not a command of the work either


def test_slash_commands_of_the_plugin_are_not_requests_of_the_work(hooks: HookRunner, home: Path) -> None:
    hooks.start()
    hooks.prompt("Add rate limiting to api/limits.py")
    hooks.prompt("/memory:search rate limit")
    hooks.prompt("/memory:why 150")
    hooks.prompt("also cover the burst case in tests/test_limits.py")
    hooks.prompt("thanks!")  # nor is a thanks or a greeting: no content of its own
    hooks.stop("Added the burst test.")
    handoff = db_for(home, hooks.project).execute("SELECT content FROM handoffs ORDER BY id DESC").fetchone()[0]
    assert "Task: Add rate limiting to api/limits.py" in handoff
    assert "Later requests: also cover the burst case in tests/test_limits.py\n" in handoff, handoff
    assert "/memory:" not in handoff and "thanks" not in handoff


def test_a_prompt_is_a_memory_only_when_it_carries_content(hooks: HookRunner, home: Path) -> None:
    hooks.start()
    trivial = ["hello 14", "ok", "thanks!", "continue", "yes do it", "Good morning", "go ahead please"]
    meant = ["We decided to keep argparse vendored", "the login fails in auth/session.py",
             "rename getUser to fetch_user", "Migrate the session store to Redis"]
    for text in [*trivial, *meant]:
        hooks.prompt(text)
    db = db_for(home, hooks.project)
    asked = {r[0] for r in db.execute("SELECT content FROM memories WHERE type = 'prompt'")}
    assert asked == set(meant[1:])  # the first is all a decision: that is its memory (tests/test_said_once.py)
    assert db.execute("SELECT 1 FROM memories WHERE type = 'decision' AND content = ?", (meant[0],)).fetchone()
    state = json.loads(db.execute("SELECT state FROM session_state").fetchone()[0])
    assert "go ahead please" in state["prompts"]  # still the session's context
    assert state["task"] == "We decided to keep argparse vendored"  # the first prompt with content
    assert db.execute("SELECT prompt_count FROM sessions").fetchone()[0] == len(trivial) + len(meant)


def test_a_command_is_spelled_once_in_its_memory(hooks: HookRunner, home: Path) -> None:
    long = "grep -rn 'def handle' memory/hook | sort"
    hooks.tool("Bash", {"command": long}, {"stdout": "memory/hook/stop.py:17: def handle(...)", "stderr": ""})
    hooks.tool("Bash", {"command": "make build"}, failed="Exit code 2\nerror: missing header foo.h")
    hooks.tool("Bash", {"command": "make dist"}, {"stdout": "", "stderr": ""})
    rows = {r["title"]: r["content"] for r in db_for(home, hooks.project).execute("SELECT * FROM memories")}
    assert rows[f"Ran `{long}`"] == "memory/hook/stop.py:17: def handle(...)"
    assert rows["Command failed: `make build`"] == "Exit code 2\nerror: missing header foo.h"
    assert rows["Ran `make dist`"] == "`make dist`"  # no output: the command is the text
