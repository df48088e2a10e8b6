"""Claude Code accepts the plugin: strict validation, and install through the marketplace."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from e2e_harness import REPO

pytestmark = pytest.mark.e2e


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "CLAUDE", "MEMORY_"))}
    env.update(HOME=str(home), CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
    return env


def test_claude_plugin_validate_strict_passes(claude_bin: Path, tmp_path: Path) -> None:
    proc = subprocess.run([str(claude_bin), "plugin", "validate", "--strict", str(REPO)], capture_output=True,
                          text=True, env=_env(tmp_path), timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Validation passed" in proc.stdout + proc.stderr


def test_marketplace_add_then_install(claude_bin: Path, tmp_path: Path) -> None:
    # A clean copy of the plugin as a user would have it (no venv, no tools, no git history).
    market = tmp_path / "memory-plugin"
    shutil.copytree(REPO, market, ignore=shutil.ignore_patterns(".venv", ".tools", ".git", "__pycache__",
                                                                 ".pytest_cache", ".ruff_cache", "*.egg-info"))
    env = _env(tmp_path / "home")
    (tmp_path / "home").mkdir()
    add = subprocess.run([str(claude_bin), "plugin", "marketplace", "add", str(market)], capture_output=True,
                         text=True, env=env, timeout=120)
    assert add.returncode == 0, add.stdout + add.stderr
    install = subprocess.run([str(claude_bin), "plugin", "install", "memory@memory-local"], capture_output=True,
                             text=True, env=env, timeout=120)
    assert install.returncode == 0, install.stdout + install.stderr
    listing = subprocess.run([str(claude_bin), "plugin", "list", "--json"], capture_output=True, text=True,
                             env=env, timeout=120)
    assert listing.returncode == 0, listing.stderr
    plugins = json.loads(listing.stdout)
    assert any("memory@memory-local" in json.dumps(p) for p in plugins), listing.stdout
