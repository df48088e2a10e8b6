"""/memory:pause and /memory:resume in the real Claude Code CLI (offline, fake Messages API): a paused session
records and is given nothing; resumed, it is again."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.support.e2e_harness import REPO, RunClaude, make_git_repo
from tests.support.fake_anthropic import Turns, all_text, text

pytestmark = pytest.mark.e2e

NOTE = "Uploads retry three times with backoff before the storage module gives up"


def _prompts(memory_home: Path) -> list[str]:
    db = sqlite3.connect(next(memory_home.glob("projects/*/memory.db")))
    try:
        return [r[0] for r in db.execute("SELECT content FROM memories WHERE type = 'prompt' ORDER BY id")]
    finally:
        db.close()


def test_slash_pause_then_resume(run_claude: RunClaude, tmp_path: Path, memory_home: Path) -> None:
    project = make_git_repo(tmp_path / "project", {"upload.py": "def upload():\n    pass\n"})
    subprocess.run([str(REPO / "bin" / "memory"), "save", "--type", "learning", "--importance", "0.3", NOTE],
                   cwd=project, env={**os.environ, "MEMORY_HOME": str(memory_home)}, check=True, capture_output=True)
    common = {"cwd": project, "home": tmp_path / "home", "plugin_dir": REPO}
    reply = Turns([text("Noted.")])

    paused = run_claude("/memory:pause", script=reply, **common)
    assert paused.returncode == 0, paused.describe()
    session = paused.session_id
    assert session and (memory_home / "paused" / session).exists()
    assert f"memory paused for session {session}" in all_text(paused.main_requests[0])

    question = "How often do uploads retry before the storage module gives up?"
    quiet = run_claude(question, resume=session, script=Turns([text("Three times.")]), **common)
    assert quiet.returncode == 0, quiet.describe()
    body = all_text(quiet.main_requests[-1])
    assert "recalled-data" not in body and NOTE not in body  # nothing injected
    assert question not in _prompts(memory_home)  # nothing recorded

    resumed = run_claude("/memory:resume", resume=session, script=reply, **common)
    assert resumed.returncode == 0, resumed.describe()
    assert not (memory_home / "paused" / session).exists()
    assert f"memory resumed for session {session}" in all_text(resumed.main_requests[-1])

    again = run_claude(question + " Tell me again.", resume=session, script=Turns([text("Three.")]), **common)
    assert again.returncode == 0, again.describe()
    assert NOTE in all_text(again.main_requests[-1])  # recalled again
    assert question + " Tell me again." in _prompts(memory_home)
