"""Self-test of the e2e harness: the real CLI, a probe plugin and the fake Messages API."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.e2e_harness import RunClaude, event_label, hook_timings, make_probe_plugin, probe_events
from tests.support.fake_anthropic import Turns, all_text, is_compaction, text, tool_result_text, tool_results, tool_use

pytestmark = pytest.mark.e2e

SUMMARY = "E2E-SUMMARY the user asked to fix notes.txt; line two was changed."


def _read_then_edit(path: Path) -> Turns:
    return Turns(
        [
            tool_use("Read", {"file_path": str(path)}),
            tool_use("Edit", {"file_path": str(path), "old_string": "line two", "new_string": "line 2"}),
            text("Done. Decision: keep notes short."),
        ],
        summary=SUMMARY,
    )


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "notes.txt").write_text("line one HARNESS-READ-MARKER\nline two\n")
    log = tmp_path / "events.jsonl"
    return {
        "proj": proj,
        "home": tmp_path / "home",
        "plugin": make_probe_plugin(tmp_path / "probe-plugin", log),
        "log": log,
    }


def test_read_edit_roundtrip(run_claude: RunClaude, world: dict[str, Path]) -> None:
    notes = world["proj"] / "notes.txt"
    run = run_claude(
        "Please fix notes.txt",
        cwd=world["proj"],
        home=world["home"],
        plugin_dir=world["plugin"],
        script=_read_then_edit(notes),
    )
    assert run.returncode == 0, run.describe()
    assert run.output and run.output["result"] == "Done. Decision: keep notes short."

    # The edit landed on disk.
    assert notes.read_text() == "line one HARNESS-READ-MARKER\nline 2\n"

    # One turn = three main-loop requests; the Read result reached the model.
    assert len(run.main_requests) == 3
    results = [tool_result_text(b) for b in tool_results(run.main_requests[-1])]
    assert any("HARNESS-READ-MARKER" in r for r in results), results
    assert any("has been updated successfully" in r for r in results), results

    # The probe's SessionStart additionalContext reached the first request.
    assert "PROBE-CONTEXT source=startup" in all_text(run.main_requests[0])
    assert "Please fix notes.txt" in all_text(run.main_requests[0])

    # Every hook fired, in order, with real payloads.
    labels = [event_label(e) for e in probe_events(world["log"])]
    assert labels == [
        "SessionStart:startup",
        "UserPromptSubmit",
        "PreToolUse:Read",
        "PostToolUse:Read",
        "PreToolUse:Edit",
        "PostToolUse:Edit",
        "Stop",
        "SessionEnd",
    ]

    # The transcript records each hook's wall time.
    assert run.transcript is not None and run.transcript.is_file()
    timings = hook_timings(run.transcript, "hooks/log.py")
    print("probe hook timings (ms):", timings)
    names = [name for name, _ in timings]
    assert "SessionStart:startup" in names and "Stop" in names
    assert all(isinstance(ms, int) and ms >= 0 for _, ms in timings), timings


def test_compact_resume_and_new_session(run_claude: RunClaude, world: dict[str, Path]) -> None:
    """How /compact runs non-interactively, which events fire, and where SessionStart context lands."""
    common = {"cwd": world["proj"], "home": world["home"], "plugin_dir": world["plugin"]}
    script = _read_then_edit(world["proj"] / "notes.txt")
    first = run_claude("Please fix notes.txt", script=script, **common)
    assert first.returncode == 0, first.describe()
    session = first.session_id
    assert session
    seen = len(probe_events(world["log"]))

    # `claude -p /compact --resume <id>`: one summary request, no main-loop request.
    compact = run_claude("/compact", resume=session, script=script, **common)
    assert compact.returncode == 0, compact.describe()
    assert compact.session_id == session
    assert (compact.output or {}).get("local_command") == "compact"
    assert len(compact.requests) == 1 and is_compaction(compact.requests[0])
    assert "Please fix notes.txt" in all_text(compact.requests[0])
    events = probe_events(world["log"])[seen:]
    assert [event_label(e) for e in events] == [
        "SessionStart:resume",
        "PreCompact:manual",
        "SessionStart:compact",
        "PostCompact:manual",
        "SessionEnd",
    ]
    assert SUMMARY in str(events[3].get("compact_summary"))
    seen += len(events)

    # The next prompt on that session sees the summary and the compact-time SessionStart context.
    follow = run_claude("What next?", resume=session, script=Turns([text("Nothing.")]), **common)
    assert follow.returncode == 0, follow.describe()
    assert len(follow.main_requests) == 1
    seen_by_model = all_text(follow.main_requests[0])
    assert SUMMARY in seen_by_model
    assert "PROBE-CONTEXT source=compact" in seen_by_model
    assert "What next?" in seen_by_model
    labels = [event_label(e) for e in probe_events(world["log"])[seen:]]
    assert labels == ["SessionStart:resume", "UserPromptSubmit", "Stop", "SessionEnd"]
    seen += len(labels)

    # A run without --resume is a new session: SessionStart source=startup.
    fresh = run_claude("Hello again", script=Turns([text("Hi.")]), **common)
    assert fresh.returncode == 0, fresh.describe()
    assert fresh.session_id != session
    assert "PROBE-CONTEXT source=startup" in all_text(fresh.main_requests[0])
    labels = [event_label(e) for e in probe_events(world["log"])[seen:]]
    assert labels == ["SessionStart:startup", "UserPromptSubmit", "Stop", "SessionEnd"]
