"""The real Codex CLI (npm @openai/codex, pinned in scripts/install-clients) against a fake Responses API on
127.0.0.1, hooked by `memory install codex --user`: it is given at its start what an earlier Claude Code
session decided, its session runs a shell command and an apply_patch edit, the hooks record them under the
Codex host, and a following Claude Code session (the real CLI, the plugin's own hooks) is given them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import e2e_harness as e2e
from tests.support.fake_openai import FakeResponses

pytestmark = pytest.mark.e2e

CODEX_VERSION = "0.169.0"
CHECK = "grep -q 'def total_with_tax' billing.py && echo 'invoice check passed' || echo 'invoice check FAILED'"
PATCH = ("*** Begin Patch\n*** Update File: billing.py\n@@\n-def total(amount):\n+def total_with_tax(amount):\n"
         "*** End Patch\n")
# Codex's own model list comes from its servers: a local catalog gives the fake model the apply_patch tool.
CATALOG = {"models": [{"slug": "fake-codex", "display_name": "fake", "apply_patch_tool_type": "freeform",
                       "base_instructions": "You are a coding agent.", "supported_reasoning_levels": [],
                       "shell_type": "shell_command", "visibility": "list", "supported_in_api": True,
                       "priority": 1, "support_verbosity": False,
                       "truncation_policy": {"mode": "bytes", "limit": 10000}, "experimental_supported_tools": []}]}


def test_a_codex_session_is_recalled_by_the_next_claude_code_session(
        run_claude: e2e.RunClaude, tmp_path: Path, memory_home: Path) -> None:
    codex, project, home, claude_after = e2e.host_session("codex", CODEX_VERSION, run_claude, tmp_path)
    (home / ".codex").mkdir(parents=True)
    catalog = tmp_path / "catalog.json"
    catalog.write_text(json.dumps(CATALOG))
    env = e2e.client_env(home, memory_home, project, FAKE_CODEX_KEY="dummy")
    steps = [{"call": "exec_command", "arguments": {"cmd": CHECK}},
             {"call": "apply_patch", "arguments": PATCH, "custom": True},
             {"call": "exec_command", "arguments": {"cmd": CHECK}},
             {"text": "Renamed total to total_with_tax; the invoice check passes."}]
    with FakeResponses(steps) as fake:
        # The user's own config first (a provider on the fake server), then the install merges into it.
        (home / ".codex" / "config.toml").write_text(
            f'model = "fake-codex"\nmodel_provider = "fake"\nmodel_catalog_json = "{catalog}"\n\n'
            f'[model_providers.fake]\nname = "fake"\nbase_url = "{fake.base_url}"\nwire_api = "responses"\n'
            'env_key = "FAKE_CODEX_KEY"\n')
        e2e.memory_install("codex", "--user", project, env)
        e2e.run_client([codex, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
                        "--dangerously-bypass-hook-trust",
                        "We decided to rename total to total_with_tax in billing.py for the invoices"], project, env)
    asked = e2e.renamed(project, fake.requests, 4, key="input")
    assert "round to cents with Decimal" in json.dumps(asked[0]["input"])  # Claude Code's decision, given to Codex
    assert e2e.last_hook(memory_home, "codex") == "stop"
    e2e.imported_as("codex", home / ".codex" / "sessions", project, tmp_path)  # its rollout, read by `memory import`

    claude_after()
