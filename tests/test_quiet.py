"""Pause (one session) and exclude (a folder): through the real hook processes and the real `memory` CLI."""

from __future__ import annotations

import os
import sqlite3
import sys
import time
from pathlib import Path

import pytest

from memory.base import quiet
from memory.base.event import from_claude
from memory.base.project import identify
from tests.support.helpers import HookRunner, make_git_project
from tests.test_cli import Cli


def _counts(home: Path, project: Path) -> tuple[int, int]:
    """(memories, prompts counted over all sessions) of the project; (0, 0) without a database."""
    path = home / "projects" / identify(str(project)).key / "memory.db"
    if not path.exists():
        return 0, 0
    db = sqlite3.connect(path)
    try:
        return (db.execute("SELECT count(*) FROM memories").fetchone()[0],
                db.execute("SELECT coalesce(sum(prompt_count), 0) FROM sessions").fetchone()[0])
    finally:
        db.close()


def test_a_paused_session_records_and_injects_nothing_until_resumed(home: Path, project: Path,
                                                                    hooks: HookRunner) -> None:
    cli = Cli(home, project)
    cli.jsonl({"title": "Deploys go through the blue-green pipeline", "content": "Deploys go through the "
               "blue-green pipeline; the canary waits ten minutes", "importance": 0.9, "session_id": "old"},
              {"title": "Uploads retry three times", "content": "Uploads retry three times with backoff before "
               "the storage module gives up", "importance": 0.3, "session_id": "old"})
    hooks.session = "s1"
    assert "blue-green" in hooks.start()
    hooks.prompt("rename the greet function to welcome")
    before = _counts(home, project)
    assert before[1] == 1

    assert "paused for session s1" in cli.ok("pause", "--session", "s1")
    assert hooks.prompt("how often do uploads retry in the storage module?") == ""  # nothing injected
    hooks.tool("Bash", {"command": "pytest tests/test_upload.py"}, {"stdout": "1 failed: AssertionError in "
               "upload retry", "stderr": "", "interrupted": False}, failed=None)
    hooks.stop("The upload retry test fails on a timeout.")
    assert _counts(home, project) == before  # no memory, no prompt counted
    resumed = hooks.run("session_start", hooks.event("SessionStart", source="resume"))
    assert resumed["json"] == {"systemMessage": quiet.message(("paused", "s1"))}  # said, nothing injected

    other = HookRunner(project, "s2")  # another session of the project is not paused
    assert "blue-green" in other.start()
    other.prompt("write the release notes for version two")
    assert _counts(home, project)[1] == before[1] + 1

    assert "resumed for session s1" in cli.ok("resume", "--session", "s1")
    assert "Uploads retry three times" in hooks.prompt("how often do uploads retry in the storage module?")
    assert _counts(home, project)[1] == before[1] + 2
    assert "was not paused" in cli.ok("resume", "--session", "s1")


def test_pause_without_a_session_takes_the_projects_latest(home: Path, project: Path, hooks: HookRunner) -> None:
    cli = Cli(home, project)
    r = cli.run("pause")
    assert r.returncode != 0 and "no session recorded" in r.stderr
    hooks.session = "latest-one"
    hooks.start()
    assert "paused for session latest-one" in cli.ok("pause")
    assert quiet.is_paused(str(home), "latest-one")
    assert "resumed for session latest-one" in cli.ok("resume")


def test_an_excluded_project_records_nothing_and_says_so_at_session_start(home: Path, project: Path,
                                                                          hooks: HookRunner) -> None:
    cli = Cli(home, project)
    assert f"excluded {project}" in cli.ok("exclude")  # default: this project
    assert cli.ok("exclude", "--list").strip() == str(project)
    start = hooks.run("session_start", hooks.event("SessionStart", source="startup"))
    assert "this project is excluded" in start["json"]["systemMessage"]
    assert "additionalContext" not in str(start["json"])
    told = home / quiet.TOLD_FILE  # in the data dir itself, not the project's
    assert told.read_text() == f"{time.strftime('%Y-%m-%d')}\t{os.path.realpath(project)}\n"
    for source, session in (("resume", hooks.session), ("clear", "after-clear"), ("startup", "another")):
        other = HookRunner(project, session)
        again = other.run("session_start", other.event("SessionStart", source=source))
        assert again["json"] is None, source  # told once a day, not at every start, resume and /clear
    told.write_text(f"2001-01-01\t{os.path.realpath(project)}\n")  # as if told on an earlier day
    assert "this project is excluded" in hooks.run("session_start", hooks.event(
        "SessionStart", source="startup"))["json"]["systemMessage"]
    assert told.read_text().splitlines() == [f"{time.strftime('%Y-%m-%d')}\t{os.path.realpath(project)}"]
    sub = project / "src"
    sub.mkdir()
    for folder in (project, sub):  # a folder inside the project is excluded too
        hooks.run("user_prompt_submit", {**hooks.event("UserPromptSubmit", prompt="fix the upload retry bug"),
                                         "cwd": str(folder)})
    assert hooks.prompt("fix the flaky upload test in storage") == ""
    hooks.tool("Read", {"file_path": str(project / "app.py")}, {"file": {"content": "x"}})
    hooks.stop("done")
    compact = hooks.run("session_start", hooks.event("SessionStart", source="compact"))
    assert compact["json"] is None  # said once a session: not again after a compaction
    assert not (home / "projects" / identify(str(project)).key).exists()  # not even a database

    elsewhere = make_git_project(project.parent / "other")
    assert "blue" not in HookRunner(elsewhere, "s9").prompt("other projects still record their prompts")
    assert _counts(home, elsewhere)[1] == 1

    assert f"included {project}" in cli.ok("include", str(project))
    hooks.prompt("fix the flaky upload test in storage")
    assert _counts(home, project)[1] == 1
    r = cli.run("include", str(project))
    assert r.returncode != 0 and "is not excluded" in r.stderr


def test_memory_exclude_globs_from_the_environment(home: Path, project: Path, hooks: HookRunner,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_EXCLUDE", f"/nowhere/*:{project.parent}/ap*")
    start = hooks.run("session_start", hooks.event("SessionStart", source="startup"))
    assert f"MEMORY_EXCLUDE {project.parent}/ap*" in start["json"]["systemMessage"]
    hooks.prompt("fix the flaky upload test in storage")
    assert _counts(home, project) == (0, 0)
    assert f"{project.parent}/ap*  (MEMORY_EXCLUDE)" in Cli(home, project).ok("exclude", "--list")
    monkeypatch.setenv("MEMORY_EXCLUDE", f"{project.parent}/zz*")
    hooks.prompt("fix the flaky upload test in storage")
    assert _counts(home, project)[1] == 1


@pytest.mark.parametrize(("pattern", "path", "hit"), [
    ("/w/*", "/w/app", True), ("/w/*", "/w/app/src", False), ("/w/**", "/w/app/src", True),
    ("/w/a?p", "/w/app", True), ("/w/a?p", "/w/a/p", False), ("/w/app", "/w/app", True),
    ("/w/app", "/w/apps", False), ("*/secret-*", "/home/u/secret-x", False), ("**/secret-*", "/home/u/secret-x",
                                                                           True)])
def test_glob_match(pattern: str, path: str, hit: bool) -> None:
    assert quiet.glob_match(pattern, path) is hit


def test_the_check_costs_microseconds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What every hook pays before its handler: nothing paused or excluded, and with an exclusion list."""
    monkeypatch.setenv("MEMORY_HOME", str(tmp_path))
    monkeypatch.delenv("MEMORY_EXCLUDE", raising=False)
    event = from_claude("session_start", {"session_id": "abc-123", "cwd": str(tmp_path)})

    def per_call() -> float:
        n = 2000
        t0 = time.process_time()  # CPU, not wall time: a loaded machine must not fail it
        for _ in range(n):
            quiet.reason(event)
        return (time.process_time() - t0) / n

    assert per_call() < 100e-6  # ~5 us on an idle machine; the bound leaves room for a loaded one
    (tmp_path / quiet.EXCLUDED_FILE).write_text("/somewhere/else\n/another/place\n")
    assert per_call() < 300e-6  # ~20 us: the file read and one realpath
    why = ("excluded", str(tmp_path))
    assert quiet.tell(why, event)  # first today: told, and recorded
    n, t0 = 2000, time.process_time()
    for _ in range(n):
        assert not quiet.tell(why, event)
    assert (time.process_time() - t0) / n < 300e-6  # ~15 us: a realpath and a one-line read


def test_the_mcp_save_tool_saves_nothing_in_an_excluded_project_and_search_records_why(home: Path,
                                                                                     project: Path) -> None:
    import asyncio

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    Cli(home, project).ok("exclude", str(project))
    env = {"MEMORY_HOME": str(home), "CLAUDE_PROJECT_DIR": str(project), "PATH": "/usr/bin:/bin",
           **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"}}

    async def main(tool: str, args: dict[str, str]) -> str:
        params = StdioServerParameters(command=sys.executable, args=["-m", "memory.mcp.server"], env=env,
                                       cwd=str(project))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            result = await s.call_tool(tool, args)
            return "\n".join(getattr(c, "text", "") for c in result.content)

    said = asyncio.run(main("save", {"content": "Run make lint before pushing"}))
    assert said.startswith(f"Not saved: project {project.name} is excluded from memory")
    assert _counts(home, project) == (0, 0)
    cli = Cli(home, project)
    cli.ok("include")
    assert "Saved #1" in asyncio.run(main("save", {"content": "Run make lint before pushing"}))
    assert "#1" in asyncio.run(main("search", {"query": "make lint"}))
    got = cli.json("why", "1")["recalls"]
    assert [r["kind"] for r in got] == ["mcp-search"] and got[0]["parts"]["keyword"] == 1.0
