"""Recall at the point of action in the real client: a session fixes a failing test by editing limits.py; in the
next session, an Edit of limits.py gets that fix beside it (PreToolUse additional context), and an Edit of an
unrelated file gets nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.e2e_harness import REPO, RunClaude, make_git_repo
from tests.support.fake_anthropic import Turns, all_text, text, tool_use

pytestmark = pytest.mark.e2e

LIMITS = "def apply_limit(amount, cap):\n    if amount > cap:\n        return cap\n    return amount\n"
TEST = "from limits import apply_limit\n\n\ndef test_cap():\n    assert apply_limit(5, 5) == 5\n"
NOTE = "Recorded in past sessions about limits.py"


def test_an_edit_gets_what_was_recorded_about_its_file(run_claude: RunClaude, tmp_path: Path) -> None:
    project = make_git_repo(tmp_path / "project", {"limits.py": LIMITS, "report.py": "def render():\n    return ''\n",
                                                    "check.sh": "grep -q '>= cap' limits.py || "
                                                                "{ echo 'FAILED test_cap: 5 != 4' >&2; exit 1; }\n"})
    limits, report = project / "limits.py", project / "report.py"
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

    second = Turns([
        tool_use("Edit", {"file_path": str(report), "old_string": "return ''", "new_string": "return 'report'"}),
        tool_use("Edit", {"file_path": str(limits), "old_string": "return amount", "new_string": "return int(amount)"}),
        text("Done."),
    ])
    run = run_claude("Make the report say report, and return ints from apply_limit", cwd=project,
                     home=tmp_path / "home", plugin_dir=REPO, script=second)
    assert run.returncode == 0, run.describe()
    main = run.main_requests
    assert len(main) >= 3, run.describe()
    after_report, after_limits = all_text(main[1]), all_text(main[2])
    assert NOTE not in after_report  # an unrelated file: nothing
    assert f"{NOTE} (apply_limit)" in after_limits
    note = after_limits[after_limits.index(NOTE):]
    assert "sh check.sh` passes again" in note.split("</recalled-data>")[0]
    assert "int(amount)" in limits.read_text()  # the edit itself went through
