"""The real GitHub Copilot CLI (npm @github/copilot, pinned in scripts/install-clients), offline, its own model
provider (BYOK) pointed at a fake OpenAI-compatible API on 127.0.0.1, hooked by `memory install copilot
--project` (.github/hooks/memory.json, camelCase events): its session runs a shell command and an edit, the
hooks record them under the Copilot host; Copilot reads no context from its hooks, so the AGENTS.md section the
install wrote reaches its model instead; and the next Claude Code session is given what Copilot did."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import e2e_harness as e2e
from tests.support.fake_openai import FakeChat

pytestmark = pytest.mark.e2e

COPILOT_VERSION = "1.0.102"


def test_a_copilot_session_is_recalled_by_the_next_claude_code_session(
        run_claude: e2e.RunClaude, tmp_path: Path, memory_home: Path) -> None:
    copilot, project, home, claude_after = e2e.host_session("copilot", COPILOT_VERSION, run_claude, tmp_path)
    home.mkdir()
    steps = [{"call": "bash", "arguments": {"command": "grep -c total billing.py", "description": "count uses"}},
             {"call": "edit", "arguments": {"path": str(project / "billing.py"), "old_str": "def total(amount):",
                                           "new_str": "def total_with_tax(amount):"}},
             {"text": "Renamed total to total_with_tax."}]
    with FakeChat(steps) as fake:
        # COPILOT_OFFLINE: no GitHub sign-in, no telemetry, no update check; the model is the BYOK provider's.
        env = e2e.client_env(home, memory_home, project, COPILOT_OFFLINE="true", COPILOT_AUTO_UPDATE="false",
                             COPILOT_PROVIDER_BASE_URL=fake.base_url, COPILOT_PROVIDER_API_KEY="dummy",
                             COPILOT_MODEL="fake-model")
        e2e.memory_install("copilot", "--project", project, env)
        e2e.run_client([copilot, "-p", "We decided to rename total to total_with_tax", "--allow-all-tools",
                        "--trust-folder", "--no-auto-update"], project, env)
    main = e2e.renamed(project, fake.requests, 3)
    assert "This project keeps a memory shared by every coding agent" in json.dumps(main[0]["messages"])
    assert any(t["function"]["name"].startswith("memory-") for t in main[0]["tools"])  # the MCP server, installed
    assert e2e.last_hook(memory_home, "copilot") == "session_end"
    db = e2e.project_db(memory_home, project)
    assert db.execute("SELECT prompt_count, tool_call_count FROM sessions WHERE host = 'copilot'").fetchall() \
        == [(1, 2)]

    claude_after()
