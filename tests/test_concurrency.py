"""Several sessions on one project at once: nothing lost, nothing locked, no duplicate jobs."""

from __future__ import annotations

from pathlib import Path

from scripts.bench.stress import run


def test_parallel_sessions_lose_nothing(tmp_path: Path) -> None:
    result = run(processes=6, events=24, workdir=tmp_path)
    assert result["failures"] == []
    assert result["lost"] == {"bash": 0, "edit": 0, "prompts": 0, "tool_calls": 0}
    assert result["locked_in_log"] == 0 and result["errors_in_log"] == 0
    assert result["duplicate_jobs"] == 0
    assert result["cli_searches_failed"] == []


def test_events_a_locked_database_refuses_go_through_the_spool(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # A busy timeout far below the time other sessions hold the write lock: many hooks are refused it.
    monkeypatch.setenv("MEMORY_BUSY_TIMEOUT_MS", "5")
    monkeypatch.setenv("MEMORY_WORKER", "off")
    result = run(processes=6, events=24, workdir=tmp_path)
    assert result["failures"] == []
    assert result["spooled"] > 0, "the lock was never refused: the test proves nothing"
    assert result["left_in_spool"] == 0
    assert result["lost"] == {"bash": 0, "edit": 0, "prompts": 0, "tool_calls": 0}
    assert result["errors_in_log"] == 0 and result["duplicate_jobs"] == 0
