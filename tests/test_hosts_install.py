"""`memory install HOST` / `memory uninstall HOST` on a fake HOME holding a user's own config for each host:
their entries kept, a backup and a diff, installing twice changes nothing, uninstalling leaves every file
of theirs byte-identical and removes every file the install made; the hook command written runs for real."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from memory.cli import cli
from memory.present import hosts as setup

# Each host: its scope, and the user's own files before the install (odd formatting on purpose: a rewrite
# would show). Paths starting with ~/ are in the fake HOME, others in the project.
USER_FILES: dict[str, tuple[str, dict[str, str]]] = {
    "codex": ("--user", {
        "~/.codex/hooks.json": '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}}',
        "~/.codex/config.toml": 'model = "gpt-5"\n\n[mcp_servers.other]\ncommand = "other-mcp"\n'}),
    "gemini": ("--user", {
        "~/.gemini/settings.json": '{\n    "theme": "Dracula",\n    "hooks": {"AfterTool": [{"matcher": "write_file",'
                                   ' "hooks": [{"type": "command", "command": "./lint.sh", "timeout": 5000}]}]},\n'
                                   '    "mcpServers": {"github": {"command": "gh-mcp"}}\n}\n'}),
    "antigravity": ("--user", {"~/.gemini/settings.json": '{"general": {"vimMode": true}}'}),
    "qwen": ("--user", {"~/.qwen/settings.json": '{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": '
                                                 '[{"type": "command", "command": "guard.sh"}]}]}}'}),
    "cursor": ("--project", {
        ".cursor/hooks.json": '{"version": 1, "hooks": {"afterFileEdit": [{"command": "./format.sh"}]}}',
        ".cursor/mcp.json": '{"mcpServers": {"db": {"url": "http://localhost:9000/mcp"}}}'}),
    "copilot": ("--project", {
        ".github/hooks/security.json": '{"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "./x"}]}}',
        "~/.copilot/mcp-config.json": '{"mcpServers": {"other": {"type": "local", "command": "o"}}}',
        "AGENTS.md": "# Agents\n\nUse tabs.\n"}),
    "cline": ("--project", {".clinerules/hooks/PostToolUse": "#!/bin/sh\necho '{}'\n",
                            ".clinerules/style.md": "Prefer small functions.\n"}),
    "opencode": ("--project", {
        "opencode.json": '{"$schema": "https://opencode.ai/config.json", "mcp": {"x": {"type": "local", '
                         '"command": ["x"]}}}',
        "AGENTS.md": "# Rules\n"}),
}


@pytest.fixture
def fake_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path, project: Path) -> Path:
    user = tmp_path / "userhome"
    user.mkdir()
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.chdir(project)
    return user


def _where(name: str, user: Path, project: Path) -> Path:
    return user / name[2:] if name.startswith("~/") else project / name


def _snapshot(*roots: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for r in roots for p in sorted(r.rglob("*"))
            if p.is_file() and ".git" not in p.parts}


def _invoke(*args: str) -> str:
    res = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res.output


@pytest.mark.parametrize("host", sorted(USER_FILES))
def test_install_merges_is_idempotent_and_uninstall_restores_bytes(
        host: str, fake_home: Path, project: Path) -> None:
    scope, files = USER_FILES[host]
    for name, text in files.items():
        path = _where(name, fake_home, project)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    before = _snapshot(fake_home, project)

    dry = _invoke("install", host, scope, "--dry-run")
    assert "dry run: nothing written" in dry and "+++" in dry
    assert _snapshot(fake_home, project) == before

    out = _invoke("install", host, scope)
    after = _snapshot(fake_home, project)
    assert after != before and "+++" in out  # a printed diff
    for name, text in files.items():  # every file of the user's still holds their own entries
        path = _where(name, fake_home, project)
        now = path.read_text()
        if path.suffix == ".json":
            mine, theirs = json.loads(now), json.loads(text)
            assert _contains(mine, theirs), (name, now)
        else:
            assert text.strip() in now, (name, now)
        if now != text:
            assert (Path(str(path) + setup.BACKUP)).read_text() == text  # the backup is the file as it was
    commands = [c for p, b in after.items() if p not in before for c in [b.decode(errors="replace")]]
    commands += [b.decode() for p, b in after.items() if p in before and b != before[p]]
    assert any("--host" in c and host in c and setup.MARK in c for c in commands)

    again = _invoke("install", host, scope)
    assert _snapshot(fake_home, project) == after, again  # idempotent
    assert "already installed" in again

    _invoke("uninstall", host)
    assert _snapshot(fake_home, project) == before  # byte-identical, every file made removed


def _contains(big: object, small: object) -> bool:
    """Every entry of `small` is in `big` (lists: each item of small is in big)."""
    if isinstance(small, dict):
        return isinstance(big, dict) and all(k in big and _contains(big[k], v) for k, v in small.items())
    if isinstance(small, list):
        return isinstance(big, list) and all(any(_contains(b, s) for b in big) for s in small)
    return big == small


def test_gemini_timeouts_are_milliseconds_and_cline_keeps_the_users_hook(fake_home: Path, project: Path) -> None:
    _invoke("install", "gemini", "--user")
    doc = json.loads((fake_home / ".gemini" / "settings.json").read_text())
    ours = [h for groups in doc["hooks"].values() for g in groups for h in g["hooks"]]
    assert {h["timeout"] for h in ours} == {setup.TIMEOUT_S * 1000}
    assert doc["mcpServers"]["memory"]["args"] == ["mcp"]
    user_hook = project / ".clinerules" / "hooks" / "PostToolUse"
    user_hook.parent.mkdir(parents=True)
    user_hook.write_text("#!/bin/sh\necho '{}'\n")
    out = _invoke("install", "cline")
    assert "PostToolUse exists and is not ours" in out and user_hook.read_text() == "#!/bin/sh\necho '{}'\n"
    task_start = project / ".clinerules" / "hooks" / "TaskStart"
    assert os.access(task_start, os.X_OK) and "--host cline" in task_start.read_text()


def test_codex_offers_the_rules_fallback_and_says_which_it_did(fake_home: Path, project: Path) -> None:
    out = _invoke("install", "codex")
    assert "memory install codex --rules" in out and not (project / "AGENTS.md").exists()
    out = _invoke("install", "codex", "--rules")
    assert "AGENTS.md now tells the agent" in out
    assert setup.RULES_BEGIN in (project / "AGENTS.md").read_text()
    _invoke("uninstall", "codex")
    assert not (project / "AGENTS.md").exists() and not (project / ".codex").exists()


def test_the_installed_hook_command_runs_and_doctor_sees_the_host(fake_home: Path, project: Path, home: Path) -> None:
    _invoke("install", "codex", "--project")
    doc = json.loads((project / ".codex" / "hooks.json").read_text())
    command = doc["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    event = {"session_id": "cx-1", "cwd": str(project), "hook_event_name": "SessionStart", "source": "startup",
             "transcript_path": ""}
    proc = subprocess.run(command, shell=True, input=json.dumps(event).encode(), capture_output=True, timeout=60)
    assert proc.returncode == 0 and (not proc.stdout.strip() or isinstance(json.loads(proc.stdout), dict))
    out = _invoke("doctor")
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("codex:"))
    assert "hooks installed" in line and "last event: session_start at" in line
