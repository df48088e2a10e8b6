"""A full Read of a large code file returns its outline in the real client, and a following Edit works; a
second full Read returns the file, and a file the client refuses whole gets its outline: on the pinned client
and on each older one (2.1.197 answers a second Read with `file_unchanged`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.e2e_harness import EVERY_CLIENT, REPO, RunClaude, make_git_repo
from tests.support.fake_anthropic import Turns, text, tool_result_text, tool_results, tool_use

# Every test here runs on the pinned client and on each older one: users run many versions.
pytestmark = [pytest.mark.e2e, EVERY_CLIENT]


def big_module(helpers: int = 60) -> tuple[str, int]:
    """A ~600-line Python module (10 lines a helper); returns it and the first line of `target_function`."""
    parts = ['"""A generated module for the outline test."""', "", "import os", "import sys", ""]
    target_line = 0
    for i in range(helpers):
        if i == 41:
            target_line = len(parts) + 1
            parts += ["def target_function(value: int) -> int:", '    """The function the test edits."""',
                      "    result = value * 2  # BODY_MARKER_TARGET", "    return result", "", ""]
            continue
        parts += [f"def helper_{i}(a: int, b: str = 'x') -> str:", f'    """Helper number {i}."""',
                  f"    text = b * a  # BODY_MARKER_{i}", "    for _ in range(3):", "        text = text.strip()",
                  "    if not text:", "        return ''", "    return text", "", ""]
    return "\n".join(parts) + "\n", target_line


def read_range_edit(run_claude: RunClaude, tmp_path: Path, source: str, line: int) -> str:
    """A session that reads `source` whole, then target_function's range, then edits it: checks that the range
    passes through untouched and the edit lands; returns what the model got for the whole Read."""
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
    ranged = tool_result_text(tool_results(main[2])[-1])
    assert "BODY_MARKER_TARGET" in ranged and "outline" not in ranged.lower()
    edit = tool_results(main[3])[-1]
    assert not edit.get("is_error"), tool_result_text(edit)
    assert new in big.read_text() and old not in big.read_text()
    return tool_result_text(tool_results(main[1])[-1])


def test_full_read_gets_the_outline_then_a_range_then_the_edit_lands(run_claude: RunClaude, tmp_path: Path) -> None:
    source, line = big_module()
    full = read_range_edit(run_claude, tmp_path, source, line)
    # What the model got for the full Read: the outline, not the body.
    assert f"[memory plugin] Outline: {len(source.splitlines())} lines" in full and "Read offset+limit" in full
    assert f"{line}-{line + 3} target_function(value: int) -> int" in full  # rows: file lines, signature
    assert "BODY_MARKER_7" not in full and "BODY_MARKER_TARGET" not in full
    assert len(full) < len(source) / 2


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


def one_whole_read(run_claude: RunClaude, tmp_path: Path, source: str, env: dict[str, str] | None = None) -> str:
    """What the model got for one whole Read of `source` (as big.py) in a session run with `env`."""
    project = make_git_repo(tmp_path / "project", {"big.py": source})
    script = Turns([tool_use("Read", {"file_path": str(project / "big.py")}), text("done")])
    run = run_claude("Read big.py", cwd=project, home=tmp_path / "home", plugin_dir=REPO, script=script, env=env)
    assert run.returncode == 0, run.describe()
    return tool_result_text(tool_results(run.main_requests[1])[-1])


def test_outline_off_passes_reads_through(run_claude: RunClaude, tmp_path: Path) -> None:
    body = one_whole_read(run_claude, tmp_path, big_module()[0], {"MEMORY_OUTLINE": "off"})
    assert "BODY_MARKER_7" in body and "[memory plugin] Outline" not in body


def test_a_file_over_the_size_cap_gets_its_outline_then_a_range_then_the_edit(run_claude: RunClaude,
                                                                             tmp_path: Path) -> None:
    source, line = big_module(1300)  # ~13,000 lines, ~300 KB: the client refuses a whole Read over 256 KB
    assert len(source) > 262_144
    full = read_range_edit(run_claude, tmp_path, source, line)  # the Edit works after the ranged Read
    # The deny's reason is what the model gets for the Read: the outline, not the client's size error.
    assert f"[memory plugin] Too large for a whole Read ({len(source) // 1024} KB" in full, full[:500]
    assert "over 256 KB). Its outline: " in full and "Code: Read offset+limit." in full
    assert f"{line}-{line + 3} target_function(value: int) -> int" in full
    assert "exceeds maximum allowed size" not in full and "BODY_MARKER_7" not in full


def test_a_file_over_the_token_cap_gets_its_outline(run_claude: RunClaude, tmp_path: Path) -> None:
    # big_module() is ~18 KB, ~5,000 tokens: over a 2,000-token cap, which the hook inherits from the client.
    source, line = big_module()
    full = one_whole_read(run_claude, tmp_path, source, {"CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS": "2000"})
    assert "over 2000 tokens). Its outline: " in full and f"{line}-{line + 3} target_function(" in full
    assert "exceeds maximum allowed tokens" not in full


def test_a_long_outline_reaches_the_model_whole(run_claude: RunClaude, tmp_path: Path) -> None:
    """2.1.330 caps some hook texts (2,000 characters, 20 lines): not a deny's reason. A 31,500-line file's
    reason (the rows of the part parsed within the hook's budget, a note, then ~32,000 characters of rows
    found by keyword: memory/outline/partial.py) arrives whole: after the note, as many rows as it counts,
    the last on the line where it says the scan stopped."""
    source = "".join(f'class Thing{i}:\n    """Doc {i}."""\n\n    def run_{i}(self, value: int) -> int:\n'
                     + "        value += 1\n" * 15 + "        return value\n\n" for i in range(1500))
    full = one_whole_read(run_claude, tmp_path, source)
    rows = full.splitlines()
    assert len(full) > 32_000 and len(rows) > 1000, (len(full), len(rows))
    assert "class Thing0 # Doc 0" in rows[1]
    notes = [i for i, row in enumerate(rows) if row.startswith("[lines ")]
    assert len(notes) == 1, notes
    note = re.fullmatch(r"\[lines \d+-\d+ not parsed \(over the hook's parse budget\); lines \d+-(\d+): (\d+) "
                        r"definitions found by keyword below, .*; lines (\d+)-\d+ not scanned: Read offset\+limit\]",
                        rows[notes[0]])
    assert note, rows[notes[0]]
    tail = rows[notes[0] + 1:]
    assert len(tail) == int(note[2]) and int(tail[-1].split()[0]) == int(note[1]) == int(note[3]) - 1, tail[-3:]
