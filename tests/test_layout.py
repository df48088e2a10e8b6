"""The plugin's files as Claude Code reads them."""

from __future__ import annotations

import json
import os
import stat

from tests.support.helpers import ROOT


def test_plugin_json_is_identical_to_the_one_claude_code_reads() -> None:
    assert (ROOT / "plugin.json").read_bytes() == (ROOT / ".claude-plugin" / "plugin.json").read_bytes()
    assert json.loads((ROOT / "plugin.json").read_text())["name"] == "memory"


def test_hooks_json_uses_exec_form_and_existing_entrypoints() -> None:
    config = json.loads((ROOT / "hooks" / "hooks.json").read_text())
    events = config["hooks"]
    assert {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PreCompact", "Stop",
            "SessionEnd"} <= set(events)
    assert events["PreToolUse"][0]["matcher"] == "Read"
    for groups in events.values():
        for group in groups:
            for hook in group["hooks"]:
                assert hook["type"] == "command"
                assert hook["command"] == "${CLAUDE_PLUGIN_ROOT}/hooks/run"
                (entry,) = hook["args"]
                assert (ROOT / "hooks" / f"{entry}.py").is_file()
                assert (ROOT / "memory" / "hook" / f"{entry}.py").is_file()
    launcher = ROOT / "hooks" / "run"
    assert os.stat(launcher).st_mode & stat.S_IXUSR


def test_marketplace_lists_the_plugin_from_this_folder() -> None:
    market = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    (entry,) = market["plugins"]
    assert entry["name"] == "memory" and entry["source"] == "./"
    assert market["owner"]["name"]


def test_schema_version_constant_matches_the_migrations() -> None:
    from memory.store.db import SCHEMA_VERSION
    from memory.store.migrations import MIGRATIONS

    assert SCHEMA_VERSION == len(MIGRATIONS)


def test_test_files_have_unique_names() -> None:
    """pytest imports test files by their base name (no __init__.py in tests/): two of the same name stop the
    whole run at collection ('import file mismatch'), as tests/e2e/test_install_flow.py once did."""
    names = [p.name for p in (ROOT / "tests").rglob("test_*.py") if "fixtures" not in p.parts]
    assert len(names) == len(set(names)), sorted(n for n in set(names) if names.count(n) > 1)
