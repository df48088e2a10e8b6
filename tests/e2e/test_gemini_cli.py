"""The real Gemini CLI (npm @google/gemini-cli, pinned in scripts/install-clients) against a fake Gemini API
on 127.0.0.1, hooked by `memory install gemini --user` (its settings.json merged, timeouts in milliseconds):
it is given at its start what an earlier Claude Code session decided, its session runs a shell command and a
replace edit, the hooks record them under the Gemini host, and the next Claude Code session is given them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import e2e_harness as e2e
from tests.support.fake_openai import FakeGemini

pytestmark = pytest.mark.e2e

GEMINI_VERSION = "0.61.0"


def test_a_gemini_session_is_recalled_by_the_next_claude_code_session(
        run_claude: e2e.RunClaude, tmp_path: Path, memory_home: Path) -> None:
    gemini, project, home, claude_after = e2e.host_session("gemini", GEMINI_VERSION, run_claude, tmp_path)
    e2e.gemini_settings(home, ".gemini", "gemini-api-key")  # the user's own: an API key login
    steps = [{"call": "run_shell_command", "arguments": {"command": "grep -c total billing.py",
                                                         "description": "count uses"}},
             {"call": "replace", "arguments": {"file_path": str(project / "billing.py"), "instruction": "rename",
                                               "old_string": "def total(amount):",
                                               "new_string": "def total_with_tax(amount):"}},
             {"text": "Renamed total to total_with_tax."}]
    with FakeGemini(steps) as fake:
        env = e2e.client_env(home, memory_home, project, GEMINI_API_KEY="dummy", NO_BROWSER="1",
                             GOOGLE_GEMINI_BASE_URL=fake.base_url.removesuffix("/v1"))
        e2e.memory_install("gemini", "--user", project, env)
        e2e.run_client([gemini, "--yolo", "-p", "We decided to rename total to total_with_tax"], project, env)
    main = e2e.renamed(project, fake.requests, 3)
    assert "round to cents with Decimal" in json.dumps(main[0].get("contents"))  # Claude Code's, given to Gemini
    assert e2e.last_hook(memory_home, "gemini") in ("session_end", "stop")
    db = e2e.project_db(memory_home, project)
    state = db.execute("SELECT state FROM session_state WHERE session_id IN (SELECT id FROM sessions WHERE host = "
                       "'gemini')").fetchone()[0]
    # Gemini puts SessionStart's context before the prompt (<hook_context>): the task is the person's words.
    assert json.loads(state)["task"] == "We decided to rename total to total_with_tax"
    e2e.imported_as("gemini", home / ".gemini" / "tmp", project, tmp_path)  # its chat file, read by `memory import`

    claude_after()
