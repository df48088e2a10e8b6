"""A compaction whose SessionStart(compact) context never reaches the model (issue 13.2), with the real
Claude Code CLI: the plugin is loaded from a copy whose SessionStart hook does not match `compact` or
`resume`, as when Claude Code drops that output. The next prompt of the session carries the handoff, once."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.e2e_harness import REPO, RunClaude, make_git_repo, transcript_entries
from tests.support.fake_anthropic import Turns, all_text, is_compaction, text, tool_use

pytestmark = pytest.mark.e2e

HEADER = "Handoff from the memory plugin (state of the work before the compact"
TASK = "Rename the greeting helper in app.py"
APP = 'def greeting(name):\n    return "Hello, " + name\n'


def _plugin_without_session_start_after_compaction(root: Path) -> Path:
    """The repository's plugin, file for file (symlinks), but SessionStart only on startup and clear."""
    root.mkdir()
    for entry in REPO.iterdir():
        if entry.name not in ("hooks", ".git"):
            os.symlink(entry, root / entry.name)
    (root / "hooks").mkdir()
    for entry in (REPO / "hooks").iterdir():
        if entry.name != "hooks.json":
            os.symlink(entry, root / "hooks" / entry.name)
    config = json.loads((REPO / "hooks" / "hooks.json").read_text())
    for group in config["hooks"]["SessionStart"]:
        group["matcher"] = "startup|clear"
    (root / "hooks" / "hooks.json").write_text(json.dumps(config))
    return root


def _our_session_start_records(path: Path | None) -> list[str]:
    return [str(e["attachment"].get("hookName")) for e in (transcript_entries(path) if path else [])
            if isinstance(e.get("attachment"), dict) and str(e["attachment"].get("hookName", "")).startswith(
                "SessionStart") and "hooks/run" in str(e["attachment"].get("command", ""))]


def test_the_prompt_after_a_lost_session_start_compact_carries_the_handoff_once(
        run_claude: RunClaude, tmp_path: Path, memory_home: Path) -> None:
    project = make_git_repo(tmp_path / "project", {"app.py": APP})
    app = project / "app.py"
    plugin = _plugin_without_session_start_after_compaction(tmp_path / "plugin")
    common = {"cwd": project, "home": tmp_path / "home", "plugin_dir": plugin}
    work = Turns([tool_use("Read", {"file_path": str(app)}),
                  tool_use("Edit", {"file_path": str(app), "old_string": "def greeting", "new_string": "def greet"}),
                  text("Renamed greeting() to greet().")],
                 summary="The user asked to rename the greeting helper; it is now greet().")
    first = run_claude(TASK, script=work, **common)
    assert first.returncode == 0, first.describe()
    session = first.session_id
    assert session and "def greet(" in app.read_text()

    compact = run_claude("/compact", resume=session, script=work, **common)
    assert compact.returncode == 0, compact.describe()
    assert any(is_compaction(r) for r in compact.requests), "no compaction request reached the API"
    assert not [n for n in _our_session_start_records(compact.transcript) if n != "SessionStart:startup"]

    follow = run_claude("Carry on.", resume=session, script=Turns([text("Done.")]), **common)
    assert follow.returncode == 0, follow.describe()
    assert follow.main_requests, "no request after compaction"
    first_after = all_text(follow.main_requests[0])
    assert first_after.count(HEADER) == 1, first_after[-3000:]
    assert TASK in first_after and "app.py" in first_after

    again = run_claude("And the docstring?", resume=session, script=Turns([text("Done.")]), **common)
    assert again.returncode == 0, again.describe()
    assert all_text(again.main_requests[0]).count(HEADER) == 1  # still the one in the history, not a new one
