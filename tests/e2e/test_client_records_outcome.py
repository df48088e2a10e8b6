"""The pinned Claude Code CLI records a Bash call's outcome as the transcript reader expects: `is_error` on
every Bash result, true (content headed "Exit code N") only for a non-zero exit; so a log read back with
"FAILED" lines is no failure and makes no bugfix learning, and the check that exited 1 is one."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory.capture import transcript
from memory.learn import heuristic
from tests.support.e2e_harness import RunClaude, make_git_repo, make_probe_plugin, transcript_entries
from tests.support.fake_anthropic import Turns, text, tool_use

pytestmark = pytest.mark.e2e

CHECK = 'import sys\n\nimport settings\n\nif settings.RETRIES < 0:\n    sys.exit("ValueError: RETRIES < 0")\n' \
        'print("config ok")\n'
LOG = "12:FAILED tests/test_invoice.py::test_total - KeyError: 'tax'\n13:1 failed in 0.12s\nerror: build 41 failed\n"
REPORT = 'print("Traceback (most recent call last):")\nprint("TimeoutError: the artifact store did not answer")\n'


def test_exit_status_not_output_words_decides_a_failure(run_claude: RunClaude, tmp_path: Path) -> None:
    project = make_git_repo(tmp_path / "project", {"check.py": CHECK, "settings.py": "RETRIES = -1\n",
                                                   "ci.log": LOG, "report.py": REPORT})
    settings = project / "settings.py"
    script = Turns([
        tool_use("Bash", {"command": "python3 check.py", "description": "validate"}),
        tool_use("Bash", {"command": "grep -n -i failed ci.log", "description": "old failures"}),
        tool_use("Bash", {"command": "python3 report.py", "description": "last report"}),
        tool_use("Edit", {"file_path": str(settings), "old_string": "RETRIES = -1", "new_string": "RETRIES = 3"}),
        tool_use("Bash", {"command": "python3 check.py", "description": "validate again"}),
        text("Fixed: check.py rejects a negative `RETRIES`, so settings.py now sets 3."),
    ])
    run = run_claude("Make `python3 check.py` pass", cwd=project, home=tmp_path / "home",
                     plugin_dir=make_probe_plugin(tmp_path / "probe", tmp_path / "probe.log"), script=script)
    assert run.returncode == 0 and run.transcript, run.describe()
    assert settings.read_text() == "RETRIES = 3\n"

    results = [b for e in transcript_entries(run.transcript) if e.get("type") == "user"
               for b in (e.get("message") or {}).get("content") or [] if isinstance(b, dict)
               and b.get("type") == "tool_result" and "is_error" in b]
    assert len(results) >= 4  # the four Bash calls (the Edit's result carries none when it succeeds)
    assert sum(1 for b in results if b["is_error"] is True) == 1

    d = transcript.read(str(run.transcript))
    bash = [c for c in d.calls if c.name == "Bash"]
    assert [(c.command, c.marked, c.failed) for c in bash] == [
        ("python3 check.py", True, True), ("grep -n -i failed ci.log", True, False),
        ("python3 report.py", True, False), ("python3 check.py", True, False)]
    assert bash[0].result.startswith("Exit code 1")

    ex = heuristic.extract(d)
    fixes = [lr for lr in ex.learnings if lr.type == "bugfix"]
    assert len(fixes) == 1 and "`python3 check.py`" in fixes[0].title and "settings.py" in fixes[0].content
    assert not any("report.py" in lr.title or "TimeoutError" in lr.content for lr in ex.learnings)
