"""The real OpenCode CLI (npm opencode-ai, pinned in scripts/install-clients) against a fake OpenAI-compatible
API on 127.0.0.1, hooked by `memory install opencode`: its plugin hands a bash call and an edit to the hook
process, which records them under the OpenCode host; OpenCode reads no context from plugins' hooks, so the
AGENTS.md section the install wrote reaches its model instead; and a following Claude Code session (the real
CLI) is given what OpenCode did."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import e2e_harness as e2e
from tests.support.fake_openai import FakeChat

pytestmark = pytest.mark.e2e

OPENCODE_VERSION = "1.18.33"


def test_an_opencode_session_is_recalled_by_the_next_claude_code_session(
        run_claude: e2e.RunClaude, tmp_path: Path, memory_home: Path) -> None:
    opencode, project, home, claude_after = e2e.host_session("opencode", OPENCODE_VERSION, run_claude, tmp_path)
    config = home / ".config"
    env = e2e.client_env(home, memory_home, project, XDG_CONFIG_HOME=str(config), XDG_DATA_HOME=str(home / "data"),
                         XDG_CACHE_HOME=str(home / "cache"), XDG_STATE_HOME=str(home / "state"),
                         OPENCODE_DISABLE_AUTOUPDATE="1", OPENCODE_DISABLE_MODELS_FETCH="1")
    e2e.memory_install("opencode", "--project", project, env)
    assert (project / ".opencode" / "plugins" / "memory.js").is_file()
    steps = [{"call": "bash", "arguments": {"command": "grep -c total billing.py", "description": "count uses"}},
             {"call": "edit", "arguments": {"filePath": str(project / "billing.py"), "oldString": "def total(amount):",
                                           "newString": "def total_with_tax(amount):"}},
             {"text": "Renamed total to total_with_tax."}]
    with FakeChat(steps) as fake:
        (config / "opencode").mkdir(parents=True)
        (config / "opencode" / "opencode.json").write_text(json.dumps({
            "$schema": "https://opencode.ai/config.json", "model": "fake/fake-model", "autoupdate": False,
            "share": "disabled", "permission": {"edit": "allow", "bash": "allow"},
            "provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "Fake",
                                  "options": {"baseURL": fake.base_url, "apiKey": "dummy"},
                                  "models": {"fake-model": {"name": "Fake", "tool_call": True}}}}}))
        e2e.run_client([opencode, "run", "We decided to rename total to total_with_tax in billing.py"], project, env)
    main = e2e.renamed(project, fake.requests, 3)
    assert "This project keeps a memory shared by every coding agent" in json.dumps(main[0]["messages"])
    assert e2e.last_hook(memory_home, "opencode") in ("stop", "post_tool_use")

    claude_after()
