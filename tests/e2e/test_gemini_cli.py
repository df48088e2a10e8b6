"""The real Gemini CLI (npm @google/gemini-cli, pinned in scripts/install-clients) against a fake Gemini API
on 127.0.0.1, hooked by `memory install gemini --user` (its settings.json merged, timeouts in milliseconds):
it is given at its start what an earlier Claude Code session decided, its session runs a shell command and a
replace edit, the hooks record them under the Gemini host, and the next Claude Code session is given them."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.support.e2e_harness import BILLING, REPO, RunClaude, claude_before_and_after, find_client, make_git_repo
from tests.support.fake_openai import FakeGemini

pytestmark = pytest.mark.e2e

GEMINI_VERSION = "0.61.0"


def test_a_gemini_session_is_recalled_by_the_next_claude_code_session(
        run_claude: RunClaude, tmp_path: Path, memory_home: Path) -> None:
    gemini = find_client("gemini", GEMINI_VERSION)
    project = make_git_repo(tmp_path / "project", BILLING)
    claude_after = claude_before_and_after(run_claude, project, tmp_path)
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    # The user's own settings: an API key login, no folder-trust prompt.
    (home / ".gemini" / "settings.json").write_text(json.dumps(
        {"security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}}}, indent=2))
    steps = [{"call": "run_shell_command", "arguments": {"command": "grep -c total billing.py",
                                                         "description": "count uses"}},
             {"call": "replace", "arguments": {"file_path": str(project / "billing.py"), "instruction": "rename",
                                               "old_string": "def total(amount):",
                                               "new_string": "def total_with_tax(amount):"}},
             {"text": "Renamed total to total_with_tax."}]
    with FakeGemini(steps) as fake:
        strip = ("ANTHROPIC_", "CLAUDE", "GEMINI_", "GOOGLE_", "MEMORY_")
        env = {k: v for k, v in os.environ.items() if not k.startswith(strip)}
        env.update(HOME=str(home), PWD=str(project), MEMORY_HOME=str(memory_home), MEMORY_EMBEDDER="hashing",
                   MEMORY_WORKER_IDLE_SECONDS="15", GEMINI_API_KEY="dummy",
                   GOOGLE_GEMINI_BASE_URL=fake.base_url.removesuffix("/v1"), NO_BROWSER="1", NO_COLOR="1")
        install = subprocess.run([str(REPO / "bin" / "memory"), "install", "gemini", "--user"], cwd=project,
                                 env=env, capture_output=True, timeout=120)
        assert install.returncode == 0, install.stderr.decode()
        run = subprocess.run([str(gemini), "--yolo", "-p", "We decided to rename total to total_with_tax"],
                             cwd=project, env=env, capture_output=True, timeout=300, stdin=subprocess.DEVNULL)
        assert run.returncode == 0, run.stderr.decode()[-3000:]
    assert "total_with_tax" in (project / "billing.py").read_text()
    main = [r for r in fake.requests if r.get("tools")]
    assert len(main) >= 3
    assert "round to cents with Decimal" in json.dumps(main[0].get("contents"))  # Claude Code's, given to Gemini
    assert (memory_home / "hosts" / "gemini").read_text().split()[0] in ("session_end", "stop")

    claude_after()
