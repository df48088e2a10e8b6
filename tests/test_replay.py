"""`memory replay`: recorded hook payloads and real transcripts fed through the real hook processes."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from memory.base.project import identify
from tests.support.helpers import PAYLOADS, PAYLOADS_NEW, ROOT, TRANSCRIPTS, make_git_project

MEMORY = Path(sys.executable).parent / "memory"
HOOKED = {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "PreCompact",
          "Stop", "SessionEnd"}
POST = {"PostToolUse", "PostToolUseFailure"}
FILE_TOOLS = {"Read", "Edit", "MultiEdit", "Write", "NotebookEdit"}
TRANSCRIPT_FILES = sorted(TRANSCRIPTS.glob("*.jsonl"))
# A transcript is replayed up to this many tool calls, plus everything from a compaction on (so that path runs
# too): the long ones cost ~50 ms per hook. MEMORY_REPLAY_FULL=1 replays every transcript whole.
MAX_CALLS = 0 if os.environ.get("MEMORY_REPLAY_FULL") == "1" else 40
RAN_LINE = re.compile(r"^(?P<event>\w+)\s+exit (?P<code>-?\d+)\s+(?P<ms>\d+(?:\.\d+)?) ms  \S")
SKIP_LINE = re.compile(r"^(?P<event>\S+)\s+skipped \(no hook for this event\)$")
SUMMARY = re.compile(r"^(?P<n>\d+) hooks? on (?P<python>.+), p50 \d+(\.\d+)? ms, max \d+(\.\d+)? ms; "
                     r"(data in (?P<home>.+)|scratch data removed \(--keep\))$")


def memory(*args: str, home: Path | None = None, cwd: Path | None = None,
           tmpdir: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("CLAUDE_PLUGIN_DATA", "CLAUDE_PROJECT_DIR", "MEMORY_PROJECT_DIR", "MEMORY_HOME")}
    if home is not None:
        env["MEMORY_HOME"] = str(home)
    if tmpdir is not None:
        env["TMPDIR"] = str(tmpdir)
    return subprocess.run([str(MEMORY), *args], capture_output=True, text=True, env=env, cwd=cwd,
                          stdin=subprocess.DEVNULL, timeout=300)


def check_ran(r: dict[str, Any]) -> None:
    assert r["exit_code"] == 0, r
    assert r["stderr"] == "", r
    assert isinstance(r["ms"], int | float) and 0 < r["ms"] < 30000, r
    assert not r["stdout"].strip() or isinstance(r["output"], dict), r
    if r["output"] is not None:
        assert r["output"]["hookSpecificOutput"]["hookEventName"] == r["event"], r


# --- recorded hook payloads ---------------------------------------------------------------------------


@pytest.fixture
def payload_file(tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    events = [json.loads(p.read_text()) for p in sorted(PAYLOADS_NEW.glob("*.json"))]
    assert len(events) >= 8
    # Events Claude Code has no hook of ours for: a notification, and PreToolUse of a tool other than Read.
    events.insert(3, {"session_id": events[0]["session_id"], "cwd": "/home/user/proj", "transcript_path": "",
                      "hook_event_name": "Notification", "message": "Claude needs your permission"})
    events.insert(5, json.loads((PAYLOADS / "PreToolUse.Bash.json").read_text()))
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path, events


def expected_skip(event: dict[str, Any]) -> bool:
    name = event["hook_event_name"]
    return name not in HOOKED or (name == "PreToolUse" and event.get("tool_name") != "Read")


def test_replay_of_recorded_payloads_prints_each_hook_with_its_duration(payload_file: tuple[Path, list[Any]],
                                                                        project: Path, tmp_path: Path) -> None:
    path, events = payload_file
    home = tmp_path / "replayed"
    r = memory("replay", str(path), "--cwd", str(project), "--home", str(home))
    assert r.returncode == 0, r.stderr
    assert r.stderr == "" and "Traceback" not in r.stdout
    lines = r.stdout.splitlines()
    assert len(lines) == len(events) + 1
    for event, line in zip(events, lines, strict=False):
        if expected_skip(event):
            m = SKIP_LINE.match(line)
            assert m and m["event"] == event["hook_event_name"], line
        else:
            m = RAN_LINE.match(line)
            assert m, line
            assert m["event"] == event["hook_event_name"] and m["code"] == "0" and float(m["ms"]) > 0, line
    summary = SUMMARY.match(lines[-1])
    assert summary, lines[-1]
    assert int(summary["n"]) == sum(not expected_skip(e) for e in events) and summary["home"] == str(home)
    assert (home / "projects" / identify(str(project)).key / "memory.db").is_file()


def test_replay_json_reports_exit_code_and_ms_per_event(payload_file: tuple[Path, list[Any]], project: Path,
                                                        tmp_path: Path) -> None:
    path, events = payload_file
    home = tmp_path / "replayed"
    r = memory("replay", str(path), "--cwd", str(project), "--home", str(home), "--json")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    data = json.loads(r.stdout)
    assert data["home"] == str(home)
    results = data["results"]
    assert [x["event"] for x in results] == [e["hook_event_name"] for e in events]
    for event, res in zip(events, results, strict=True):
        if expected_skip(event):
            assert res["entry"] is None and res["skipped"] == "no hook for this event"
            assert "exit_code" not in res
        else:
            assert res["entry"], res
            check_ran(res)
    assert {x["entry"] for x in results if x["entry"]} >= {"session_start", "user_prompt_submit", "pre_tool_use",
                                                           "post_tool_use", "pre_compact", "stop", "session_end"}
    db = sqlite3.connect(home / "projects" / identify(str(project)).key / "memory.db")
    sessions = {row[0] for row in db.execute("SELECT id FROM sessions")}
    assert events[0]["session_id"] in sessions


def test_replay_without_home_uses_a_fresh_scratch_dir(payload_file: tuple[Path, list[Any]], project: Path,
                                                      home: Path, tmp_path: Path) -> None:
    path, _ = payload_file
    scratch_parent = tmp_path / "tmp"
    scratch_parent.mkdir()
    r = memory("replay", str(path), "--cwd", str(project), "--json", "--keep", home=home, tmpdir=scratch_parent)
    assert r.returncode == 0, r.stderr
    scratch = Path(json.loads(r.stdout)["home"])
    assert scratch.parent == scratch_parent and scratch.name.startswith("memory-replay-")
    assert scratch != home and not home.exists()  # the user's data dir is never touched
    assert (scratch / "projects").is_dir()
    # Without --keep the scratch dir goes at the end (it was left in /tmp after every replay).
    r = memory("replay", str(path), "--cwd", str(project), home=home, tmpdir=scratch_parent)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1].endswith("scratch data removed (--keep)")
    assert [p.name for p in scratch_parent.iterdir()] == [scratch.name]


def test_replay_from_an_installed_plugin_runs_hooks_on_its_venv(payload_file: tuple[Path, list[Any]],
                                                               project: Path, tmp_path: Path) -> None:
    """Run from a terminal (no CLAUDE_PLUGIN_DATA, no checkout .venv), replay finds the data dir's venv as
    hooks/run does inside Claude Code, not python3 from PATH (a pyenv shim there: 332-424 ms a hook)."""
    import shutil

    plugin = tmp_path / "plugin"
    shutil.copytree(ROOT, plugin, ignore=shutil.ignore_patterns(".venv", ".tools", ".git", "tests", "__pycache__"))
    data = tmp_path / "home" / ".claude" / "plugins" / "data" / "memory-memory-local"
    (data / "projects").mkdir(parents=True)
    calls = tmp_path / "venv-calls.log"
    python = data / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    # The venv's python, wrapped so the test sees every process it starts.
    python.write_text(f'#!/bin/sh\necho "$@" >> {calls}\nexec {sys.executable} "$@"\n')
    python.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "MEMORY_"))}
    env.update(HOME=str(tmp_path / "home"), PYTHONPATH=str(plugin))
    r = subprocess.run([str(python), "-m", "memory", "replay", str(payload_file[0]), "--cwd", str(project),
                        "--json"], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["python"] == str(python) and out["home"] is None
    ran = [x for x in out["results"] if x.get("entry")]
    hooks = [line for line in calls.read_text().splitlines() if line.startswith("-S ") and "/hooks/" in line]
    assert len(hooks) == len(ran) > 5, (hooks, ran)
    doctor = subprocess.run([str(python), "-m", "memory", "doctor", "--json", "-p", str(project)],
                            capture_output=True, text=True, env=env, timeout=120)
    report = json.loads(doctor.stdout)
    assert report["data_dir"] == str(data) and report["hook_interpreter"] == str(python), report
    assert report["setup"] == "done"
    # The plugin's own launcher, from a terminal, runs the CLI on that venv too (not python3 from PATH).
    launched = subprocess.run([str(plugin / "bin" / "memory"), "doctor", "--json", "-p", str(project)],
                              capture_output=True, text=True, env=env, timeout=120)
    assert json.loads(launched.stdout)["data_dir"] == str(data), launched.stderr
    assert calls.read_text().splitlines()[-1].startswith("-P -m memory doctor")


# --- real transcripts ---------------------------------------------------------------------------------


def _obj(line: str) -> dict[str, Any]:
    try:
        obj = json.loads(line)
    except ValueError:
        return {}
    return obj if isinstance(obj, dict) else {}


def _tool_uses(obj: dict[str, Any]) -> list[dict[str, Any]]:
    msg = obj.get("message") if isinstance(obj.get("message"), dict) else {}
    if obj.get("type") != "assistant" or not isinstance(msg.get("content"), list):
        return []
    return [b for b in msg["content"] if isinstance(b, dict) and b.get("type") == "tool_use"]


def trimmed(path: Path, dest: Path) -> Path:
    """The transcript's lines up to MAX_CALLS tool calls (their results included), then from its first
    compaction to the end. Whole lines of the real file, in order."""
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
    if not MAX_CALLS:
        return path
    calls, head = 0, len(lines)
    for i, line in enumerate(lines):
        uses = _tool_uses(_obj(line))
        if uses and calls >= MAX_CALLS:
            head = i
            break
        calls += len(uses)
    keep = lines[:head]
    boundary = next((i for i, ln in enumerate(lines) if _obj(ln).get("subtype") == "compact_boundary"), None)
    if boundary is not None and boundary >= head:
        keep += lines[boundary:]
    dest.write_text("".join(keep), encoding="utf-8")
    return dest


def transcript_facts(path: Path) -> dict[str, Any]:
    """What the transcript itself says: its session, its tool calls, the files they touched."""
    session, tools, files, compactions = None, [], set(), 0
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        obj = _obj(line)
        session = session or obj.get("sessionId")
        compactions += obj.get("type") == "system" and obj.get("subtype") == "compact_boundary"
        for block in _tool_uses(obj):
            tools.append(block.get("name"))
            tin = block.get("input") or {}
            if block.get("name") in FILE_TOOLS and (tin.get("file_path") or tin.get("notebook_path")):
                files.add(tin.get("file_path") or tin.get("notebook_path"))
    return {"session": session, "tools": tools, "files": files, "compactions": compactions}


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Every transcript replayed once, in parallel, each into its own data dir and project."""
    assert TRANSCRIPT_FILES, f"no transcripts in {TRANSCRIPTS}"
    base = tmp_path_factory.mktemp("transcripts")

    def one(path: Path) -> tuple[str, dict[str, Any]]:
        stem = path.stem.replace(".", "-")
        project = make_git_project(base / stem / "project")
        home = base / stem / "data"
        replayed_file = trimmed(path, base / stem / path.name)
        r = memory("replay", str(replayed_file), "--cwd", str(project), "--home", str(home), "--json")
        return path.name, {"proc": r, "home": home, "project": project, "facts": transcript_facts(replayed_file)}

    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        return dict(pool.map(one, TRANSCRIPT_FILES))


@pytest.mark.parametrize("transcript", [p.name for p in TRANSCRIPT_FILES])
def test_transcript_replay_runs_every_hook_cleanly(transcript: str, replayed: dict[str, Any]) -> None:
    run = replayed[transcript]
    proc = run["proc"]
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    results = json.loads(proc.stdout)["results"]
    facts = run["facts"]
    ran = [r for r in results if r.get("entry")]
    skipped = [r for r in results if not r.get("entry")]
    for r in ran:
        check_ran(r)
    assert ran[0]["event"] == "SessionStart" and ran[-1]["event"] == "SessionEnd"
    assert {r["event"] for r in skipped} <= {"PreToolUse"}  # only our hook-less events are skipped
    assert all(r["skipped"] == "no hook for this event" for r in skipped)
    # PreToolUse runs for Read only (hooks.json's matcher); every other tool call is reported as skipped.
    reads = sum(1 for t in facts["tools"] if t == "Read")
    assert sum(1 for r in ran if r["event"] == "PreToolUse") == reads
    assert len(skipped) == len(facts["tools"]) - reads
    assert 0 < sum(1 for r in ran if r["event"] in POST) <= len(facts["tools"])
    # A compaction in the transcript is replayed as PreCompact, then SessionStart (source "compact").
    assert sum(1 for r in ran if r["event"] == "PreCompact") == facts["compactions"]
    assert sum(1 for r in ran if r["event"] == "SessionStart") == 1 + facts["compactions"]


@pytest.mark.parametrize("transcript", [p.name for p in TRANSCRIPT_FILES])
def test_transcript_replay_leaves_a_session_with_observations(transcript: str, replayed: dict[str, Any]) -> None:
    run = replayed[transcript]
    results = json.loads(run["proc"].stdout)["results"]
    facts = run["facts"]
    stats = memory("stats", "--project", str(run["project"]), "--json", home=run["home"])
    assert stats.returncode == 0, stats.stderr
    data = json.loads(stats.stdout)
    assert data["project_key"] == identify(str(run["project"])).key
    assert data["sessions"] == {"completed": 1}
    assert data["tool_calls"] == sum(1 for r in results if r["event"] in POST)
    assert data["memories"] > 0 and data["by_type"].get("prompt", 0) >= 1

    db = sqlite3.connect(Path(data["database"]))
    db.row_factory = sqlite3.Row
    session = db.execute("SELECT * FROM sessions").fetchone()
    assert session["id"] == facts["session"]
    assert session["prompt_count"] == sum(1 for r in results if r["event"] == "UserPromptSubmit")
    assert session["status"] == "completed" and session["ended_at"] is not None
    recorded = {f for row in db.execute("SELECT files FROM memories WHERE files != ''")
                for f in row["files"].split("\n")}
    assert recorded <= facts["files"]  # every file recorded came from the transcript's tool calls
    # a Read is the session's context (its files_read), a change a memory too (docs/capture.md)
    state = json.loads(db.execute("SELECT state FROM session_state").fetchone()["state"])
    touched = set(state["files_read"]) | set(state["files_modified"])
    assert touched and touched <= facts["files"], "no file observations"
    titles = [row["title"] for row in db.execute("SELECT title FROM memories")]
    assert not any(t.startswith("Read ") for t in titles), titles
    assert not state["files_modified"] or any(t.startswith("Modified ") for t in titles), titles
    assert set(state["files_read"]) | set(state["files_modified"])
    # One extraction job at the end of the session, one per compaction.
    assert db.execute("SELECT count(*) FROM queue WHERE kind = 'extract'").fetchone()[0] == 1 + facts["compactions"]
    handoffs = dict(db.execute("SELECT trigger, count(*) FROM handoffs GROUP BY trigger").fetchall())
    assert handoffs == {"stop": 1, "end": 1, **({"compact": facts["compactions"]} if facts["compactions"] else {})}


def test_transcript_replay_text_output_and_recorded_cwd(tmp_path: Path) -> None:
    """Without --cwd the events keep the transcript's cwd; a folder missing here records nothing, and says so."""
    path = min(TRANSCRIPT_FILES, key=lambda p: p.stat().st_size)
    cwd = next(json.loads(ln)["cwd"] for ln in path.read_text().splitlines() if '"cwd"' in ln)
    assert not os.path.isdir(cwd), "the test needs a transcript recorded in a folder this machine lacks"
    home = tmp_path / "data"
    r = memory("replay", str(path), "--home", str(home), cwd=tmp_path)
    assert r.returncode == 0 and f"recorded folder {cwd} does not exist here" in r.stderr and "--cwd" in r.stderr
    assert json.loads(memory("projects", "--json", home=home).stdout) == []
    here = tmp_path / "here"
    here.mkdir()
    r = memory("replay", str(path), "--home", str(home), "--cwd", str(here), cwd=tmp_path)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    lines = r.stdout.splitlines()
    ran = [ln for ln in lines if RAN_LINE.match(ln)]
    skipped = [ln for ln in lines if SKIP_LINE.match(ln)]
    assert ran and skipped and len(ran) + len(skipped) == len(lines) - 1
    assert all(RAN_LINE.match(ln)["code"] == "0" for ln in ran)
    assert SUMMARY.match(lines[-1]) and int(SUMMARY.match(lines[-1])["n"]) == len(ran)
    projects = json.loads(memory("projects", "--json", home=home).stdout)
    assert [p["root"] for p in projects] == [os.path.realpath(here)]
