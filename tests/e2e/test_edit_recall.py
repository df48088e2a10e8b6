"""Recall at the point of action in the real client: a session fixes a failing test by editing limits.py; in the
next session, an Edit of limits.py gets that fix beside it (PreToolUse additional context), and an Edit of an
unrelated file gets nothing; a Bash command that names limits.py gets it too, once."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.e2e_harness import REPO, RunClaude, make_git_repo
from tests.support.fake_anthropic import Turns, all_text, text, tool_use

pytestmark = pytest.mark.e2e

LIMITS = "def apply_limit(amount, cap):\n    if amount > cap:\n        return cap\n    return amount\n"
TEST = "from limits import apply_limit\n\n\ndef test_cap():\n    assert apply_limit(5, 5) == 5\n"
NOTE = "Recorded in past sessions about limits.py"


def _a_session_fixes_limits(run_claude: RunClaude, tmp_path: Path) -> Path:
    project = make_git_repo(tmp_path / "project", {"limits.py": LIMITS, "report.py": "def render():\n    return ''\n",
                                                    "check.sh": "grep -q '>= cap' limits.py || "
                                                                "{ echo 'FAILED test_cap: 5 != 4' >&2; exit 1; }\n"})
    limits = project / "limits.py"
    first = Turns([
        tool_use("Bash", {"command": "sh check.sh"}),
        tool_use("Edit", {"file_path": str(limits), "old_string": "if amount > cap:",
                          "new_string": "if amount >= cap:"}),
        tool_use("Bash", {"command": "sh check.sh"}),
        text("Fixed apply_limit: amounts equal to the cap are capped now."),
    ])
    run = run_claude("The cap check in limits.py is off by one; fix it", cwd=project, home=tmp_path / "home",
                     plugin_dir=REPO, script=first)
    assert run.returncode == 0, run.describe()
    assert ">= cap" in limits.read_text()
    return project


def _second_session(run_claude: RunClaude, tmp_path: Path, prompt: str, *steps: dict) -> list[str]:
    """A next session in the same project; the text of each request the client sent (what the model saw)."""
    run = run_claude(prompt, cwd=tmp_path / "project", home=tmp_path / "home", plugin_dir=REPO,
                     script=Turns([*steps, text("Done.")]))
    assert run.returncode == 0, run.describe()
    assert len(run.main_requests) > len(steps), run.describe()
    return [all_text(m) for m in run.main_requests]


def test_an_edit_gets_what_was_recorded_about_its_file(run_claude: RunClaude, tmp_path: Path) -> None:
    project = _a_session_fixes_limits(run_claude, tmp_path)
    limits, report = project / "limits.py", project / "report.py"
    seen = _second_session(
        run_claude, tmp_path, "Make the report say report, and return ints from apply_limit",
        tool_use("Edit", {"file_path": str(report), "old_string": "return ''", "new_string": "return 'report'"}),
        tool_use("Edit", {"file_path": str(limits), "old_string": "return amount", "new_string": "return int(amount)"}))
    after_report, after_limits = seen[1], seen[2]
    assert NOTE not in after_report  # an unrelated file: nothing
    assert f"{NOTE} (apply_limit)" in after_limits
    note = after_limits[after_limits.index(NOTE):]
    assert "sh check.sh` passes again" in note.split("</recalled-data>")[0]
    assert "int(amount)" in limits.read_text()  # the edit itself went through


def test_a_command_naming_the_file_gets_it_once(run_claude: RunClaude, tmp_path: Path) -> None:
    limits = _a_session_fixes_limits(run_claude, tmp_path) / "limits.py"
    seen = _second_session(
        run_claude, tmp_path, "Where is the cap checked? Then return ints from apply_limit",
        tool_use("Bash", {"command": "grep -n render report.py"}),
        tool_use("Bash", {"command": "grep -n cap limits.py"}),
        tool_use("Edit", {"file_path": str(limits), "old_string": "return amount", "new_string": "return int(amount)"}))
    after_report, after_grep, after_edit = seen[1:4]
    assert NOTE not in after_report  # a file no session recorded anything about: nothing
    assert NOTE in after_grep and "sh check.sh` passes again" in after_grep[after_grep.index(NOTE):]
    assert after_edit.count(NOTE) == after_grep.count(NOTE)  # once per file per session: the Edit is not told again
    assert "int(amount)" in limits.read_text()
