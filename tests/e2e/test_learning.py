"""Learning extraction in the real Claude Code CLI: a session fixes an error and ends; the detached worker
extracts its learnings (Claude through the same fake Messages API, or the offline heuristic); the next
session, whose prompt is related, gets them in the request the model receives."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from memory.base import worker_client
from tests.support.e2e_harness import REPO, RunClaude, make_git_repo
from tests.support.fake_anthropic import Json, Reply, Turns, all_text, text, tool_names, tool_use

pytestmark = pytest.mark.e2e

CHECK = '''import sys

import settings

if not isinstance(settings.TIMEOUT, int):
    sys.exit(f"ValueError: settings.TIMEOUT must be an int, got {type(settings.TIMEOUT).__name__}")
print("config ok")
'''
LEARNING = {
    "type": "bugfix",
    "title": "settings.TIMEOUT must be an int, not a string",
    "content": "check.py rejects a string TIMEOUT in settings.py (ValueError); write TIMEOUT = 30, not \"30\".",
    "importance": 0.9,
    "files": ["settings.py", "check.py"],
}
PAYLOAD = {"learnings": [LEARNING], "summary": {
    "asked": "Make python3 check.py pass", "done": "settings.TIMEOUT is now an int",
    "learned": "TIMEOUT must be an int", "next": ""}}


def _extractor(body: Json) -> Reply:
    """Side requests: the plugin's extraction call gets the structured learnings, anything else 'ok'."""
    if "record_learnings" in tool_names(body):
        return Reply([{"type": "tool_use", "id": "toolu_extract", "name": "record_learnings", "input": PAYLOAD}])
    return text("ok")


def _learnings(memory_home: Path, session: str) -> list[dict[str, Any]]:
    """The session's extracted learnings, once its extraction is recorded (after all of them are saved)."""
    out: list[dict[str, Any]] = []
    for path in memory_home.glob("projects/*/memory.db"):
        db = sqlite3.connect(path, timeout=5)
        db.row_factory = sqlite3.Row
        try:
            if db.execute("SELECT 1 FROM extractions WHERE session_id = ? AND status = 'ok'", (session,)).fetchone():
                out += [dict(r) for r in db.execute(
                    "SELECT title, content, source FROM memories WHERE session_id = ? AND source LIKE 'extract:%'",
                    (session,))]
        except sqlite3.OperationalError:
            pass  # not migrated yet
        finally:
            db.close()
    return out


def _wait(predicate: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


@pytest.mark.parametrize("extractor", ["anthropic", "heuristic"])
def test_learnings_of_a_session_reach_the_next_related_session(
        run_claude: RunClaude, fake_api: Any, tmp_path: Path, memory_home: Path, extractor: str) -> None:
    project = make_git_repo(tmp_path / "project", {"check.py": CHECK, "settings.py": 'TIMEOUT = "30"\n'})
    settings = project / "settings.py"
    env = {"MEMORY_EXTRACTOR": extractor,
           "MEMORY_EMBEDDER": "hashing", "MEMORY_WORKER_IDLE_SECONDS": "5"}
    common = {"cwd": project, "home": tmp_path / "home", "plugin_dir": REPO, "env": env}
    work = Turns(
        [
            tool_use("Bash", {"command": "python3 check.py", "description": "validate the config"}),
            tool_use("Read", {"file_path": str(settings)}),
            tool_use("Edit", {"file_path": str(settings), "old_string": 'TIMEOUT = "30"',
                              "new_string": "TIMEOUT = 30"}),
            tool_use("Bash", {"command": "python3 check.py", "description": "validate again"}),
            text("Fixed: the issue was that settings.TIMEOUT was the string \"30\"; check.py requires an int."),
        ],
        side=_extractor,
    )
    first = run_claude("Make `python3 check.py` pass", script=work, **common)
    assert first.returncode == 0, first.describe()
    assert settings.read_text() == "TIMEOUT = 30\n"
    session = first.session_id
    assert session

    # SessionEnd queued the job and returned; the detached worker runs it. Bounded wait.
    saved = _wait(lambda: _learnings(memory_home, session), 120, "the worker's extraction")
    assert {m["source"] for m in saved} == {f"extract:{extractor}"}
    if extractor == "anthropic":
        assert any(m["title"] == LEARNING["title"] for m in saved)
        calls = [b for b in fake_api.requests if "record_learnings" in tool_names(b)]
        assert len(calls) == 1
        sent = all_text(calls[0])
        assert "Make `python3 check.py` pass" in sent and "settings.py" in sent
        assert calls[0]["tool_choice"] == {"type": "tool", "name": "record_learnings"}
        expected = LEARNING["title"]
    else:
        # The fix itself ("`python3 check.py` failed with ... - fixed by changing settings.py") is the hooks'
        # record already ("Fixed: `python3 check.py` passes again ..."): not stored twice (issue 26); what the
        # session adds to it is the why.
        fix = next(m for m in saved if "settings.TIMEOUT" in m["content"])
        assert "requires an int" in fix["content"] and "check.py" in fix["content"]
        expected = fix["title"]

    # A new session on a related task: the learning is in what the model receives.
    second = run_claude("Add a RETRIES setting next to TIMEOUT in settings.py and validate it in check.py",
                        script=Turns([text("Noted.")], side=_extractor), **common)
    assert second.returncode == 0, second.describe()
    assert second.main_requests, second.describe()
    seen = all_text(second.main_requests[0])
    assert expected in seen, seen[-4000:]
    _wait(lambda: not worker_client.alive(str(memory_home)), 60, "the worker to exit")
