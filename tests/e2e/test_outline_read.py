"""A full Read of a large code file returns its outline in the real client, and a following Edit works."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.e2e_harness import REPO, RunClaude, make_git_repo
from tests.support.fake_anthropic import Turns, text, tool_result_text, tool_results, tool_use

pytestmark = pytest.mark.e2e


def big_module() -> tuple[str, int]:
    """A ~600-line Python module; returns it and the first line of `target_function`."""
    parts = ['"""A generated module for the outline test."""', "", "import os", "import sys", ""]
    target_line = 0
    for i in range(60):
        if i == 41:
            target_line = len(parts) + 1
            parts += ["def target_function(value: int) -> int:", '    """The function the test edits."""',
                      "    result = value * 2  # BODY_MARKER_TARGET", "    return result", "", ""]
            continue
        parts += [f"def helper_{i}(a: int, b: str = 'x') -> str:", f'    """Helper number {i}."""',
                  f"    text = b * a  # BODY_MARKER_{i}", "    for _ in range(3):", "        text = text.strip()",
                  "    if not text:", "        return ''", "    return text", "", ""]
    return "\n".join(parts) + "\n", target_line


def test_full_read_gets_the_outline_then_a_range_then_the_edit_lands(run_claude: RunClaude, tmp_path: Path) -> None:
    source, line = big_module()
    project = make_git_repo(tmp_path / "project", {"big.py": source})
    big = project / "big.py"
    old, new = "    result = value * 2  # BODY_MARKER_TARGET", "    result = value * 3  # tripled"
    script = Turns([
        tool_use("Read", {"file_path": str(big)}),
        tool_use("Read", {"file_path": str(big), "offset": line, "limit": 4}),
        tool_use("Edit", {"file_path": str(big), "old_string": old, "new_string": new}),
        text("Tripled the value in target_function."),
    ])
    run = run_claude("Make target_function in big.py triple its input", cwd=project, home=tmp_path / "home",
                     plugin_dir=REPO, script=script)
    assert run.returncode == 0, run.describe()
    main = run.main_requests
    assert len(main) >= 4, run.describe()
    # What the model got for the full Read: the outline, not the body.
    full = tool_result_text(tool_results(main[1])[-1])
    assert f"[memory plugin] Outline: {len(source.splitlines())} lines" in full and "Read offset+limit" in full
    assert f"{line}-{line + 3} target_function(value: int) -> int" in full  # rows: file lines, signature
    assert "BODY_MARKER_7" not in full and "BODY_MARKER_TARGET" not in full
    assert len(full) < len(source) / 2
    # The range read passes through untouched.
    ranged = tool_result_text(tool_results(main[2])[-1])
    assert "BODY_MARKER_TARGET" in ranged and "outline" not in ranged.lower()
    # The edit succeeds and lands on disk.
    edit = tool_results(main[3])[-1]
    assert not edit.get("is_error"), tool_result_text(edit)
    assert new in big.read_text() and old not in big.read_text()


def test_a_second_full_read_returns_the_whole_file(run_claude: RunClaude, tmp_path: Path) -> None:
    source, _ = big_module()
    project = make_git_repo(tmp_path / "project", {"big.py": source})
    big = project / "big.py"
    script = Turns([tool_use("Read", {"file_path": str(big)}), tool_use("Read", {"file_path": str(big)}),
                    text("Read it twice.")])
    run = run_claude("Read big.py", cwd=project, home=tmp_path / "home", plugin_dir=REPO, script=script)
    assert run.returncode == 0, run.describe()
    main = run.main_requests
    first, second = (tool_result_text(tool_results(main[i])[-1]) for i in (1, 2))
    assert "[memory plugin] Outline: " in first and "BODY_MARKER_7" not in first
    assert "BODY_MARKER_7" in second and "[memory plugin] Outline" not in second


def test_outline_off_passes_reads_through(run_claude: RunClaude, tmp_path: Path) -> None:
    source, _ = big_module()
    project = make_git_repo(tmp_path / "project", {"big.py": source})
    script = Turns([tool_use("Read", {"file_path": str(project / "big.py")}), text("done")])
    run = run_claude("Read big.py", cwd=project, home=tmp_path / "home", plugin_dir=REPO, script=script,
                     env={"MEMORY_OUTLINE": "off"})
    assert run.returncode == 0, run.describe()
    body = tool_result_text(tool_results(run.main_requests[1])[-1])
    assert "BODY_MARKER_7" in body and "[memory plugin] Outline" not in body
