"""The real Qwen Code CLI (npm @qwen-code/qwen-code, pinned in scripts/install-clients) against a fake
OpenAI-compatible API on 127.0.0.1, hooked by `memory install qwen --user` (Claude Code's hook shape in
~/.qwen/settings.json): it is given at its start what an earlier Claude Code session decided, its session runs
a shell command and an edit, the hooks record them under the Qwen host, and the next Claude Code session is
given them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import e2e_harness as e2e
from tests.support.fake_openai import FakeChat

pytestmark = pytest.mark.e2e

QWEN_VERSION = "0.24.4"


def test_a_qwen_session_is_recalled_by_the_next_claude_code_session(
        run_claude: e2e.RunClaude, tmp_path: Path, memory_home: Path) -> None:
    qwen, project, home, claude_after = e2e.host_session("qwen", QWEN_VERSION, run_claude, tmp_path)
    # The user's own settings: the OpenAI-compatible provider (the fake one).
    e2e.gemini_settings(home, ".qwen", "openai", model={"name": "fake-model"})
    billing = str(project / "billing.py")
    # Qwen Code edits only a file read in the session: the read comes first.
    steps = [{"call": "run_shell_command", "arguments": {"command": "grep -c total billing.py",
                                                         "description": "count uses"}},
             {"call": "read_file", "arguments": {"file_path": billing}},
             {"call": "edit", "arguments": {"file_path": billing, "old_string": "def total(amount):",
                                            "new_string": "def total_with_tax(amount):"}},
             {"text": "Renamed total to total_with_tax."}]
    with FakeChat(steps) as fake:
        env = e2e.client_env(home, memory_home, project, OPENAI_API_KEY="dummy", OPENAI_BASE_URL=fake.base_url,
                             OPENAI_MODEL="fake-model", NO_BROWSER="1", QWEN_CODE_SUPPRESS_YOLO_WARNING="1")
        e2e.memory_install("qwen", "--user", project, env)
        e2e.run_client([qwen, "--yolo", "-p", "We decided to rename total to total_with_tax"], project, env)
    main = e2e.renamed(project, fake.requests, 4)
    assert "round to cents with Decimal" in json.dumps(main[0]["messages"])  # Claude Code's decision, given to Qwen
    assert e2e.last_hook(memory_home, "qwen") == "stop"
    db = e2e.project_db(memory_home, project)
    sessions = db.execute("SELECT prompt_count, tool_call_count FROM sessions WHERE host = 'qwen'").fetchall()
    assert sessions == [(1, 3)]  # Qwen's empty UserPromptSubmit after each tool result is no prompt

    claude_after()
