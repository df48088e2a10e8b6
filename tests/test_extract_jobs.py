"""Extraction as the plugin runs it: hooks queue a job and a detached worker runs it; one extraction per
session unless the session goes on; `memory import` of past transcripts (idempotent, resumable); the
summaries and learnings coming back at the next session."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from memory.base import worker_client
from memory.learn import importer, run
from memory.recall import inject
from memory.store.workspace import Workspace
from tests.support.helpers import TRANSCRIPTS, HookRunner

MEMORY = Path(sys.executable).parent / "memory"
PLAN = TRANSCRIPTS / "spotter__subagent.jsonl"
NEXT = TRANSCRIPTS / "claude-code-viewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"


def _cli(home: Path, cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "MEMORY_HOME": str(home), **(env or {})}
    return subprocess.run([str(MEMORY), *args], capture_output=True, text=True, cwd=cwd, env=full, timeout=300)


def _counts(ws: Workspace) -> dict[str, int]:
    q = {"memories": "SELECT count(*) FROM memories", "sessions": "SELECT count(*) FROM sessions",
         "extractions": "SELECT count(*) FROM extractions", "queue": "SELECT count(*) FROM queue",
         "prompts": "SELECT coalesce(sum(prompt_count), 0) FROM sessions",
         "tools": "SELECT coalesce(sum(tool_call_count), 0) FROM sessions"}
    return {k: int(ws.db.execute(v).fetchone()[0]) for k, v in q.items()}


def _wait(predicate: Any, timeout: float = 90.0, what: str = "") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}")


# -- hooks and the detached worker -------------------------------------------------------------------


def test_session_end_queues_extraction_that_a_detached_worker_runs(
        offline: pytest.MonkeyPatch, home: Path, project: Path, tmp_path: Path) -> None:
    offline.setenv("MEMORY_WORKER", "on")  # conftest turns it off for the other tests
    path = tmp_path / "transcript.jsonl"
    shutil.copy(PLAN, path)
    hooks = HookRunner(project, session="live-1")
    base = hooks.event
    hooks.event = lambda name, **f: {**base(name, **f), "transcript_path": str(path)}  # type: ignore[method-assign]
    hooks.start()
    hooks.prompt("Plan how to set up credo, dialyxir and mix_audit for the spotter project")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    end = hooks.end()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    took = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    # SessionEnd's whole budget is 1.5 s: the hook's own CPU (the detached worker it starts is not its child)
    assert end["exit_code"] == 0 and took < 1.5, took
    ws = Workspace.for_dir(str(project))
    try:
        _wait(lambda: ws.db.execute("SELECT 1 FROM queue WHERE kind = 'extract' AND status = 'done'").fetchone(),
              what="the worker's extraction job")
        saved = ws.db.execute("SELECT title FROM memories WHERE session_id = 'live-1' AND source = "
                              "'extract:heuristic'").fetchall()
        assert any("Igniter" in r["title"] for r in saved)
        summary = ws.db.execute("SELECT summary FROM sessions WHERE id = 'live-1'").fetchone()[0]
        assert "Learned: No Igniter installers" in summary
        # The next session starts with the learnings (and the handoff, which already says what that session
        # was about: its summary is not repeated under "Recent sessions").
        nxt = HookRunner(project, session="live-2")
        context = nxt.start()
        assert "No Igniter installers" in context and "Handoff" in context
        assert "Recent sessions in this project" not in context
    finally:
        ws.close()
        _wait(lambda: not worker_client.alive(str(home)), 30, "the worker to exit")


def test_pre_compact_then_end_extracts_only_what_came_after(
        offline: pytest.MonkeyPatch, home: Path, project: Path, tmp_path: Path) -> None:
    lines = NEXT.read_text().splitlines(keepends=True)
    cut = len(lines) * 2 // 3
    path = tmp_path / "t.jsonl"
    path.write_text("".join(lines[:cut]))
    ws = Workspace.for_dir(str(project))
    res = importer.import_file(ws, str(NEXT))  # the session row and its observations
    sid = res.session_id
    first = run.extract_session(ws, sid, trigger="compact", transcript_path=str(path), settle=False)
    assert first.status == "empty"  # its one learning, the `npx tsc` fix, the hooks had stored (issue 26)
    good = ws.db.execute("SELECT summary FROM sessions WHERE id = ?", (sid,)).fetchone()[0]
    assert good.startswith("Asked: /orchestrator create TODO app")
    with ws.db:  # what the SessionEnd hook does: a summary from the hooks' state
        ws.db.execute("UPDATE sessions SET summary = 'Asked: from the state' WHERE id = ?", (sid,))
    again = run.extract_session(ws, sid, trigger="end", transcript_path=str(path), settle=False)
    assert again.status == "skipped", again  # the same part is never extracted twice
    # ... and the extractor's summary is put back over the hook's cruder one.
    assert ws.db.execute("SELECT summary FROM sessions WHERE id = ?", (sid,)).fetchone()[0] == good
    path.write_text("".join(lines))  # the session went on
    later = run.extract_session(ws, sid, trigger="end", transcript_path=str(path), settle=False)
    assert later.status in ("ok", "empty"), later
    rows = ws.db.execute("SELECT trigger, offset_from, offset_to FROM extractions WHERE session_id = ? "
                         "ORDER BY id", (sid,)).fetchall()
    assert [r["trigger"] for r in rows] == ["compact", "end"]
    assert rows[1]["offset_from"] == rows[0]["offset_to"] > 0
    assert rows[1]["offset_to"] == path.stat().st_size
    ws.close()


def test_extractor_off_and_job_handler(offline: pytest.MonkeyPatch, project: Path) -> None:
    from memory.learn.job import handle_job

    ws = Workspace.for_dir(str(project))
    sid = importer.import_file(ws, str(PLAN)).session_id
    offline.setenv("MEMORY_EXTRACTOR", "off")
    assert handle_job(ws, {"session_id": sid, "trigger": "end"})["status"] == "off"
    offline.setenv("MEMORY_EXTRACTOR", "heuristic")
    out = handle_job(ws, {"session_id": sid, "trigger": "end", "transcript_path": str(PLAN)})
    assert out["status"] == "ok" and out["provider"] == "heuristic" and out["learnings"] >= 2
    assert handle_job(ws, {})["status"] == "skipped"
    ws.close()


# -- import ---------------------------------------------------------------------------------------


def test_import_cli_is_idempotent(offline: pytest.MonkeyPatch, home: Path, project: Path) -> None:
    r = _cli(home, project, "import", str(TRANSCRIPTS), "--extract", "--json")
    assert r.returncode == 0, r.stderr
    first = json.loads(r.stdout)
    assert first["files"] == 5 and first["sessions_imported"] == 5
    assert first["observations"] > 200 and first["learnings"] >= 8
    ws = Workspace.for_dir(str(project))
    before = _counts(ws)
    ws.close()
    r = _cli(home, project, "import", str(TRANSCRIPTS), "--extract", "--json")
    second = json.loads(r.stdout)
    assert (second["sessions_imported"], second["observations"], second["learnings"]) == (0, 0, 0)
    assert {x["reason"] for x in second["results"]} == {"already imported"}
    ws = Workspace.for_dir(str(project))
    assert _counts(ws) == before  # running it twice adds nothing
    # Imported memories are dated when the session ran, not when it was imported.
    oldest = ws.db.execute("SELECT min(created_at) FROM memories WHERE source = 'import'").fetchone()[0]
    assert oldest < time.time() - 30 * 86400
    ws.close()
    text = _cli(home, project, "stats").stdout
    assert "extraction 5 sessions" in text and "heuristic:5 ok" in text and "token budget 0 of 200,000" in text


def test_import_defaults_to_this_projects_claude_code_folder(offline: pytest.MonkeyPatch, home: Path,
                                                             project: Path, tmp_path: Path) -> None:
    config = tmp_path / "claude-config"
    folder = config / "projects" / str(project).replace("/", "-").replace("_", "-").replace(".", "-")
    folder.mkdir(parents=True)
    shutil.copy(PLAN, folder / "abc.jsonl")
    (folder / "abc").mkdir()  # a session's subagents folder is not a transcript
    r = _cli(home, project, "import", "--no-progress", env={"CLAUDE_CONFIG_DIR": str(config)})
    assert r.returncode == 0, r.stderr
    assert "imported 1 session (" in r.stdout and str(folder) in r.stdout
    empty = _cli(home, tmp_path, "import", env={"CLAUDE_CONFIG_DIR": str(config)})
    assert empty.returncode != 0 and "no transcripts" in empty.stderr and "Traceback" not in empty.stderr


def test_a_killed_import_resumes_where_it_stopped(offline: pytest.MonkeyPatch, project: Path, tmp_path: Path) -> None:
    clean_ws = Workspace.for_dir(str(project), home=str(tmp_path / "clean-home"))
    importer.import_file(clean_ws, str(NEXT))
    expected = _counts(clean_ws)
    clean_ws.close()

    ws = Workspace.for_dir(str(project))
    offline.setattr(importer, "BATCH", 10)
    real = importer._capture_for
    calls = {"n": 0}

    def dying(*args: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 57:
            raise KeyboardInterrupt("killed")  # mid-batch: that batch rolls back, earlier ones are kept
        return real(*args)

    offline.setattr(importer, "_capture_for", dying)
    with pytest.raises(KeyboardInterrupt):
        importer.import_file(ws, str(NEXT))
    row = ws.db.execute("SELECT events_done, status FROM imports").fetchone()
    assert (row["events_done"], row["status"]) == (50, "running")
    offline.setattr(importer, "_capture_for", real)
    res = importer.import_file(ws, str(NEXT))
    assert res.status == "resumed"
    assert _counts(ws) == expected
    assert importer.import_file(ws, str(NEXT)).status == "skipped"
    ws.close()


def test_sessions_recorded_live_are_not_imported_again(offline: pytest.MonkeyPatch, project: Path,
                                                       tmp_path: Path) -> None:
    sid = next(x["sessionId"] for x in map(json.loads, PLAN.read_text().splitlines()) if x.get("sessionId"))
    hooks = HookRunner(project, session=sid)
    hooks.start()
    ws = Workspace.for_dir(str(project))
    res = importer.import_file(ws, str(PLAN))
    assert (res.status, res.reason) == ("skipped", "recorded live by the hooks")
    assert importer.import_file(ws, str(PLAN), force=True).status == "imported"
    ws.close()


# -- what the next session gets ---------------------------------------------------------------------------


def test_next_session_gets_summaries_and_related_learnings(offline: pytest.MonkeyPatch, project: Path) -> None:
    ws = Workspace.for_dir(str(project))
    for path in (NEXT, PLAN):
        importer.import_file(ws, str(path), extract=True)
    text, _ = inject.session_start(ws, "new-session", "startup")
    assert len(text) <= 9000
    assert "Recent sessions in this project" in text
    assert "Asked: /handgemacht:create-beads" in text and "Asked: /orchestrator create TODO app" in text
    offline.setenv("MEMORY_INJECT_MAX_CHARS", "1200")
    small, _ = inject.session_start(ws, "new-session-2", "startup")
    assert 0 < len(small) <= 1200
    recall, _ = inject.prompt_recall(ws, "new-session-3", "How should credo and dialyxir get installed, "
                                     "is there an igniter installer?")
    assert "No Igniter installers exist" in recall
    ws.close()


def test_extract_cli(offline: pytest.MonkeyPatch, home: Path, project: Path) -> None:
    r = _cli(home, project, "import", str(PLAN), "--no-progress")
    assert r.returncode == 0 and "imported 1 session (" in r.stdout, r.stderr
    out = json.loads(_cli(home, project, "extract", "--json").stdout)
    assert out[0]["status"] == "ok" and out[0]["provider"] == "heuristic" and out[0]["learnings"] >= 2
    sid = out[0]["session_id"]
    assert json.loads(_cli(home, project, "extract", sid[:8], "--json").stdout)[0]["status"] == "skipped"
    text = _cli(home, project, "extract", sid, "--force").stdout
    assert text.startswith(sid[:8]) and "No Igniter installers" in text
    assert "Learned: No Igniter installers" in _cli(home, project, "sessions").stdout
    bad = _cli(home, project, "extract", "nope")
    assert bad.returncode != 0 and "no session 'nope'" in bad.stderr and "Traceback" not in bad.stderr


def test_a_session_that_went_on_is_imported_from_where_it_stopped(offline: pytest.MonkeyPatch, project: Path,
                                                                  tmp_path: Path) -> None:
    clean_ws = Workspace.for_dir(str(project), home=str(tmp_path / "clean-home"))
    importer.import_file(clean_ws, str(NEXT))
    expected = _counts(clean_ws)
    clean_ws.close()

    lines = NEXT.read_text().splitlines(keepends=True)
    cut = next(i for i in range(len(lines) * 2 // 3, len(lines))  # the session was left before a prompt
               if '"type":"user"' in lines[i].replace(" ", "") and '"content":"' in lines[i].replace(" ", ""))
    path = tmp_path / NEXT.name
    path.write_text("".join(lines[:cut]))
    ws = Workspace.for_dir(str(project))
    assert importer.import_file(ws, str(path), extract=True).status == "imported"
    path.write_text("".join(lines))  # resumed later: the same file grew
    res = importer.import_file(ws, str(path), extract=True)
    assert res.status == "resumed"
    got = _counts(ws)
    assert {k: got[k] for k in ("sessions", "prompts", "tools")} == {
        k: expected[k] for k in ("sessions", "prompts", "tools")}
    observations = "SELECT count(*) FROM memories WHERE source = 'import'"
    clean_ws = Workspace.for_dir(str(project), home=str(tmp_path / "clean-home"))
    assert ws.db.execute(observations).fetchone()[0] == clean_ws.db.execute(observations).fetchone()[0]
    clean_ws.close()
    rows = ws.db.execute("SELECT offset_from, offset_to FROM extractions WHERE status IN ('ok', 'empty') "
                         "ORDER BY id").fetchall()
    assert len(rows) == 2 and rows[1]["offset_from"] == rows[0]["offset_to"]  # only the new part
    ws.close()
