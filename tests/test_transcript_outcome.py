"""A Bash call's outcome in a transcript is the client's marker (`is_error`, an exit code), not the words of
its output: a successful `grep FAILED` or `cat` of a log is no failure and makes no bugfix learning, a
non-zero exit is one; words decide only where the client recorded no status for the command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memory.capture import transcript
from memory.learn import heuristic

HOSTS = Path(__file__).parent / "fixtures" / "transcripts"
CWD = "/home/u/shop"
_SEQ = iter(range(1, 1000))


def _line(kind: str, content: Any, **extra: Any) -> dict[str, Any]:
    """A line shaped as Claude Code 2.1 writes it (spotter__ae4a77f8 in shared/data/claude-code)."""
    return {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": CWD, "sessionId": "s-1",
            "version": "2.1.39", "gitBranch": "main", "type": kind, "message": {"role": kind, "content": content},
            "uuid": f"u-{next(_SEQ)}", "timestamp": "2026-12-07T22:00:00.000Z", **extra}


def _bash(call_id: str, command: str, output: str, exit_code: int = 0) -> list[dict[str, Any]]:
    """A Bash call and its result: `is_error` on every result, "Exit code N" heading a non-zero exit's."""
    use = _line("assistant", [{"type": "tool_use", "id": call_id, "name": "Bash",
                               "input": {"command": command, "description": "run"}}])
    if exit_code:
        text = f"Exit code {exit_code}\n{output}"
        return [use, _line("user", [{"type": "tool_result", "content": text, "is_error": True,
                                     "tool_use_id": call_id}], toolUseResult=f"Error: {text}")]
    result = {"stdout": output, "stderr": "", "interrupted": False, "isImage": False, "noOutputExpected": False}
    return [use, _line("user", [{"tool_use_id": call_id, "type": "tool_result", "content": output,
                                 "is_error": False}], toolUseResult=result)]


def _edit(call_id: str, path: str) -> list[dict[str, Any]]:
    return [_line("assistant", [{"type": "tool_use", "id": call_id, "name": "Edit",
                                 "input": {"file_path": f"{CWD}/{path}", "old_string": "a", "new_string": "b"}}]),
            _line("user", [{"tool_use_id": call_id, "type": "tool_result", "content": "The file was updated."}])]


FAILING_TEST = ("F...\n=================================== FAILURES ===================================\n"
                "FAILED tests/test_invoice.py::test_total - KeyError: 'tax'\n1 failed in 0.12s")
LOG_LINES = ("logs/ci.log:12:FAILED tests/test_invoice.py::test_total - KeyError: 'tax'\n"
             "logs/ci.log:13:1 failed in 0.12s\nlogs/ci.log:40:error: build 41 failed")
CHANGELOG = ("# Changelog\n\n## 1.2\nFAILED builds are retried once.\n- The importer no longer reports "
             "3 errors on an empty file.\nerror: lines of the CI log are kept whole.")
OLD_TRACE = ("Report of build 41:\nTraceback (most recent call last):\n  File \"ci/fetch.py\", line 9, in pull\n"
             "TimeoutError: the artifact store did not answer\nerror: build 41 failed")


def _session() -> list[dict[str, Any]]:
    """Fix a failing test: the test fails (exit 1), the agent reads old logs full of failure words, edits,
    the test fails again behind a pipe (its status is tail's), then passes."""
    return [
        _line("user", "the invoice test fails, fix billing.py"),
        *_bash("t1", "pytest -q tests/test_invoice.py", FAILING_TEST, exit_code=1),
        *_bash("t2", "grep -rn -i failed logs/", LOG_LINES),
        *_bash("t3", "cat CHANGELOG.md", CHANGELOG),
        *_bash("t4", "python scripts/ci_report.py --build 41", OLD_TRACE),
        *_edit("t5", "billing.py"),
        *_bash("t6", "pytest -q tests/test_invoice.py 2>&1 | tail -3", FAILING_TEST),
        *_bash("t7", "python scripts/ci_report.py --build 42", "Report of build 42: all green"),
        *_edit("t8", "billing.py"),
        *_bash("t9", "pytest -q tests/test_invoice.py", "....\n4 passed in 0.10s"),
        _line("assistant", [{"type": "text", "text": "The test failed because `total()` read the missing 'tax' "
                                                     "key; billing.py now defaults it to 0."}]),
    ]


def test_output_words_of_a_successful_command_are_no_failure() -> None:
    d = transcript.from_lines(_session())
    outcome = {c.id: c.failed for c in d.calls if c.name == "Bash"}
    assert outcome == {"t1": True, "t2": False, "t3": False, "t4": False, "t6": True, "t7": False, "t9": False}
    assert all(c.marked for c in d.calls if c.name == "Bash")


def test_a_log_read_back_makes_no_bugfix_and_a_real_failure_does() -> None:
    ex = heuristic.extract(transcript.from_lines(_session()))
    bugfixes = [lr for lr in ex.learnings if lr.type == "bugfix"]
    assert len(bugfixes) == 1
    fix = bugfixes[0]
    assert "`pytest`" in fix.title and "KeyError: 'tax'" in fix.title
    assert "2 times" in fix.content and "billing.py" in fix.files
    assert not any("ci_report" in lr.title or "grep" in lr.title or "cat" in lr.title for lr in ex.learnings)
    text = "\n".join(f"{lr.title}\n{lr.content}" for lr in ex.learnings)
    assert "build 41" not in text and "TimeoutError" not in text and "ci.log" not in text
    assert "FAILED builds" not in text
    assert "fixed `pytest`;" in ex.summary.done  # fixed: nothing else
    assert not ex.summary.next


@pytest.mark.parametrize(("command", "whole"), [
    ("pytest -q", True),
    ("cd app && npm test", True),
    ("grep -rn 'a|b; c' logs/", True),
    ("grep -rn a\\|b logs/", True),
    ("make test \\\n  -j4", True),
    ("pytest -q | tail -3", False),
    ("mix test 2>&1 | tail -30", False),
    ("pytest; echo done", False),
    ("pytest || true", False),
    ("pytest -q\necho $?", False),
])
def test_whether_the_exit_status_speaks_for_every_step(command: str, whole: bool) -> None:
    assert transcript.status_is_whole(command) is whole


def _codex(output: str) -> list[dict[str, Any]]:
    """The Codex fixture with its first command and that command's output replaced."""
    lines = [json.loads(raw) for raw in (HOSTS / "codex-0.169.0-rollout.jsonl").read_text().splitlines()]
    for ln in lines:
        p = ln.get("payload") or {}
        if p.get("type") == "function_call" and p.get("call_id") == "call_1":
            p["arguments"] = json.dumps({"cmd": "python scripts/ci_report.py"})
        if p.get("type") == "function_call_output" and p.get("call_id") == "call_1":
            p["output"] = output
    return lines


def _first_bash(lines: list[dict[str, Any]]) -> transcript.ToolCall:
    return next(c for c in transcript.from_lines(lines).calls if c.name == "Bash")


@pytest.mark.parametrize(("output", "marked", "failed"), [
    ("Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 0\nOutput:\nFAILED: 3 of 9 (old log)\n",
     True, False),
    ("Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 1\nOutput:\nno match\n", True, True),
    ("Output:\nFAILED: 3 of 9\n", False, True),  # no exit code written: the words are all there is
])
def test_codex_exit_code_is_the_marker_and_words_only_without_one(output: str, marked: bool,
                                                                    failed: bool) -> None:
    call = _first_bash(_codex(output))
    assert (call.marked, call.failed) == (marked, failed)


def test_gemini_shell_success_records_no_exit_status_so_words_decide() -> None:
    lines = [json.loads(raw) for raw in (HOSTS / "gemini-cli-0.61.0-session.jsonl").read_text().splitlines()]
    call = _first_bash(lines)
    assert not call.marked and not call.failed  # "Output: 1": nothing reports a failure
    for ln in lines:
        for tc in ln.get("toolCalls") or []:
            if tc.get("name") == "run_shell_command":
                tc["result"][0]["functionResponse"]["response"]["output"] = (
                    "Output: Traceback (most recent call last):\nKeyError: 'tax'\nExit Code: 1")
    assert _first_bash(lines).failed
