"""Issue 13.13's small CLI items, through real processes: `memory` as a subprocess, hooks with JSON on stdin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import ROOT, HookRunner, make_git_project, on_a_terminal

MEMORY = Path(sys.executable).parent / "memory"


def memory(*args: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    # This checkout's code, whichever checkout the venv's editable install points at.
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([str(MEMORY), *args], input=stdin, text=True, capture_output=True, cwd=cwd, env=env,
                          timeout=120)


def ok(*args: str, cwd: Path, stdin: str = "") -> str:
    r = memory(*args, cwd=cwd, stdin=stdin)
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    return r.stdout


def error(*args: str, cwd: Path) -> str:
    """A clear error: non-zero exit, one `Error:` line, no traceback, nothing on stdout."""
    r = memory(*args, cwd=cwd)
    assert r.returncode != 0, (args, r.stdout)
    assert "Traceback" not in r.stderr and r.stdout == "", (r.stdout, r.stderr)
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("Error:")]
    assert len(lines) == 1, r.stderr
    return lines[0]


# --- handoff --session --------------------------------------------------------------------------------


def _session(project: Path, sid: str, task: str) -> None:
    hooks = HookRunner(project, session=sid)
    hooks.start()
    hooks.prompt(task)
    hooks.tool("Edit", {"file_path": str(project / "app.py"), "old_string": "hi", "new_string": "hello"}, {})
    hooks.stop("Done.")
    for r in hooks.results:
        assert r["exit_code"] == 0, r


def test_handoff_session_by_id_prefix_ambiguous_or_unknown(home: Path, project: Path) -> None:
    _session(project, "abc11111-aaaa", "Rename the greet helper to welcome")
    _session(project, "abd22222-bbbb", "Add a --verbose flag to the CLI")
    HookRunner(project, session="abe33333-cccc").start()  # a known session without a handoff

    # A unique prefix resolves to that session's handoff, not the project's latest.
    out = ok("handoff", "--session", "abc1", cwd=project)
    assert "Rename the greet helper" in out and "--verbose" not in out
    assert json.loads(ok("handoff", "--session", "abc11111-aaaa", "--json", cwd=project))["session_id"] == \
        "abc11111-aaaa"

    # An ambiguous prefix lists the candidates.
    err = error("handoff", "--session", "ab", cwd=project)
    assert all(s in err for s in ("abc11111-aaaa", "abd22222-bbbb", "abe33333-cccc")), err

    # An unknown id is an error, never another session's handoff.
    err = error("handoff", "--session", "zzz-unknown", cwd=project)
    assert "no session 'zzz-unknown'" in err and "memory sessions" in err

    # A known session without a handoff says so, and shows no other session's.
    out = ok("handoff", "--session", "abe3", cwd=project)
    assert "abe33333-cccc has no handoff yet" in out and "--verbose" not in out and "Rename" not in out
    assert ok("handoff", "--session", "abe3", "--json", cwd=project).strip() == "null"

    # /memory:handoff in a session without a handoff yet: the project's latest, labelled with its session.
    out = ok("slash", "handoff", "--session", "abe33333-cccc", cwd=project)
    assert "Handoff of session abd22222" in out and "--verbose" in out
    out = ok("slash", "handoff", "--session", "abc11111-aaaa", cwd=project)
    assert "Handoff of this session" in out and "Rename the greet helper" in out


# --- read-only commands create nothing ------------------------------------------------------------------


READ_ONLY = [
    (["search", "retry"], None), (["search", "retry", "--json"], []), (["recent"], None), (["recent", "--json"], []),
    (["stats"], None), (["sessions"], None), (["sessions", "--json"], []), (["handoff"], None),
    (["handoff", "--json"], None), (["handoff", "--session", "abc"], None), (["worker", "status"], None),
    (["doctor"], None), (["slash", "stats"], None), (["slash", "handoff"], None), (["slash", "recent"], None),
]


@pytest.mark.parametrize("args,empty_json", READ_ONLY, ids=[" ".join(a) for a, _ in READ_ONLY])
def test_read_only_commands_create_nothing(args: list[str], empty_json: Any, home: Path, tmp_path: Path) -> None:
    for folder in (tmp_path / "plain-folder", make_git_project(tmp_path / "repo")):
        folder.mkdir(exist_ok=True)
        out = ok(*args, cwd=folder)
        assert not (home / "projects").exists(), list(home.rglob("*"))
        if "--json" in args:
            assert json.loads(out) == empty_json
        elif args[0] in ("worker", "doctor"):
            assert "no memory for this project yet" in out, out
        else:
            assert f"no memory for project {folder.name} yet" in out, out


@pytest.mark.parametrize("args", [["get", "1"], ["timeline", "1"], ["forget", "1"]])
def test_commands_on_ids_without_a_database_fail_clearly_and_create_nothing(args: list[str], home: Path,
                                                                           tmp_path: Path) -> None:
    err = error(*args, cwd=tmp_path)
    assert "no memory" in err and "yet" in err
    assert not (home / "projects").exists()


def test_stats_json_without_a_database(home: Path, tmp_path: Path) -> None:
    data = json.loads(ok("stats", "--json", cwd=tmp_path))
    assert data["memories"] == 0 and data["database"] is None and data["root"] == str(tmp_path)
    assert not home.exists() or not (home / "projects").exists()


def test_read_only_commands_still_read_an_existing_project(home: Path, project: Path) -> None:
    ok("save", "Retry uploads with exponential backoff", cwd=project)
    assert "Retry uploads" in ok("search", "backoff", cwd=project)
    assert "Retry uploads" in ok("recent", cwd=project)
    assert json.loads(ok("stats", "--json", cwd=project))["memories"] == 1


# --- search scores --------------------------------------------------------------------------------------


def _scores(out: str) -> list[float]:
    return [float(line.split()[3]) for line in out.splitlines()]


def test_search_shows_real_scores_on_one_scale_in_both_modes(home: Path, project: Path) -> None:
    # "tree-sitter" is in two of three memories: FTS5 clamps its IDF to 1e-6, which made every score 0.00.
    ok("save", "--importance", "0.7", "The parser uses tree-sitter for outlines", cwd=project)
    ok("save", "--importance", "0.7", "Postgres vector search with pgvector", cwd=project)
    ok("save", "--importance", "0.3", "tree-sitter grammar for the parser in rust", cwd=project)
    by_mode = {}
    for mode in ("keyword", "hybrid"):
        if mode == "hybrid":
            ok("reindex", "--embedder", "hashing", cwd=project)  # a vector index the CLI can search in-process
        hits = json.loads(ok("search", "tree-sitter", "parser", "--mode", mode, "--json", cwd=project))
        r = memory("search", "tree-sitter", "parser", "--mode", mode, cwd=project)
        assert "no semantic index answered" not in r.stderr
        scores = [h["score"] for h in hits]
        assert len(hits) >= 2 and all(0 < s <= 1 for s in scores[:2]), hits
        assert scores == sorted(scores, reverse=True)
        assert _scores(r.stdout) == [round(s, 2) for s in scores]  # the text shows what --json gives
        by_mode[mode] = hits
    # The best match at importance 0.7 scores 0.88 in both modes (0.8 at importance 0.5, 1.0 at 1.0).
    assert by_mode["keyword"][0]["score"] == pytest.approx(0.88, abs=0.005)
    assert by_mode["hybrid"][0]["id"] == by_mode["keyword"][0]["id"]
    assert by_mode["hybrid"][0]["score"] == pytest.approx(0.88, abs=0.005)
    everywhere = json.loads(ok("search", "tree-sitter", "--all-projects", "--json", cwd=project))
    assert all(0 < h["score"] <= 1 for h in everywhere) and everywhere[0]["score"] >= 0.5


# --- the failure line of a bugfix memory -----------------------------------------------------------------


NPM_BANNER = """npm notice
npm notice New minor version of npm available! 10.2.4 -> 10.9.0
npm notice Changelog: https://github.com/npm/cli/releases/tag/v10.9.0
npm notice To update run: npm install -g npm@10.9.0
npm notice
"""
FAILURES = [
    # mocha: no error word at all; the banner was the last line, so it became "the failure"
    ("npm test", "Exit code 1\n\n> app@1.0.0 test\n> mocha\n\n  1) adds numbers\n\n  0 passing (5ms)\n  1 failing\n\n"
     "  1) sum\n       adds numbers:\n      expected 3 to equal 4\n" + NPM_BANNER, "expected 3 to equal 4"),
    ("npm test", "Exit code 1\nnode:assert:125\n  throw new AssertionError(obj);\n  ^\n\nAssertionError "
     "[ERR_ASSERTION]: Expected values to be strictly equal:\n\n3 !== 4\n\n" + NPM_BANNER,
     "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:"),
    ("pytest -q", "Exit code 1\n=================================== FAILURES ===================================\n"
     "___ test_x ___\n\n    def test_x():\n>       assert add(1, 2) == 4\nE       assert 3 == 4\n\n"
     "tests/test_x.py:5: AssertionError\n=== short test summary info ===\n"
     "FAILED tests/test_x.py::test_x - assert 3 == 4\n"
     "[notice] A new release of pip is available: 23.0 -> 24.0\n", "assert 3 == 4"),
    ("python app.py", "Exit code 1\nWARNING: Running pip as the 'root' user can result in broken permissions\n"
     "Traceback (most recent call last):\n  File \"app.py\", line 3, in <module>\n    raise ValueError('bad config')\n"
     "ValueError: bad config\n", "ValueError: bad config"),
    ("cargo build", "Exit code 101\n   Compiling app v0.1.0\nerror[E0308]: mismatched types\n --> src/main.rs:2:18\n",
     "error[E0308]: mismatched types"),
    ("npm run lint", "Exit code 1\n" + NPM_BANNER, "Exit code 1"),
]


@pytest.mark.parametrize("command,error,line", FAILURES, ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(FAILURES)])
def test_a_fixed_command_remembers_its_real_failure_line(command: str, error: str, line: str, hooks: HookRunner,
                                                         project: Path) -> None:
    hooks.start()
    hooks.prompt("Make the tests pass")
    hooks.tool("Bash", {"command": command}, failed=error)
    hooks.tool("Edit", {"file_path": str(project / "app.py"), "old_string": "hi", "new_string": "hello"}, {})
    hooks.tool("Bash", {"command": command}, {"stdout": "all good", "stderr": "", "interrupted": False})
    fixed = json.loads(ok("recent", "--type", "bugfix", "--json", cwd=project))
    titles = [f["title"] for f in fixed]
    assert f"Fixed: `{command}` passes again" in titles, titles
    memory_id = fixed[titles.index(f"Fixed: `{command}` passes again")]["id"]
    content = json.loads(ok("get", str(memory_id), "--json", cwd=project))[0]["content"]
    assert content.startswith(f"`{command}` passes again after changes to app.py. It failed with: {line}"), content
    assert "npm notice" not in content and "[notice]" not in content and "WARNING" not in content


# --- cleanup --dry-run ------------------------------------------------------------------------------------


def _fill(project: Path, n: int) -> None:
    import random

    rnd = random.Random(7)
    words = "alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega".split()
    lines = [json.dumps({"title": f"note {i}", "content": " ".join(f"{rnd.choice(words)}{rnd.randint(0, 9999)}"
                                                                 for _ in range(120))}) for i in range(n)]
    ok("save", "--jsonl", cwd=project, stdin="\n".join(lines) + "\n")


def _cleanup(project: Path, *args: str) -> dict[str, Any]:
    return json.loads(ok("cleanup", *args, "--json", cwd=project))


def test_cleanup_dry_run_estimates_what_a_cleanup_leaves(home: Path, project: Path, tmp_path: Path) -> None:
    _fill(project, 400)
    # Under every limit: the same size before and after, however often it is asked (the run's own open
    # connections made a 32 KiB -shm file that counted as growth: "290.2 KiB -> about 322.2 KiB").
    first, second = _cleanup(project, "--dry-run"), _cleanup(project, "--dry-run")
    assert first["after"]["bytes"] == first["before"]["bytes"] == second["before"]["bytes"]
    text = ok("cleanup", "--dry-run", cwd=project).splitlines()[0]
    assert "now, the same after this cleanup" in text and "->" not in text, text

    # Over a limit: the dry run's estimate is what the real cleanup then measures, within 15%.
    import shutil

    for args in (["--max-memories", "100"], ["--max-bytes", f"{first['before']['bytes'] // 2048}K"]):
        copy = tmp_path / "copy"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(home, copy)
        dry = _cleanup(project, "--dry-run", *args)
        assert dry["after"]["bytes"] < dry["before"]["bytes"]
        real = json.loads(ok("--home", str(copy), "cleanup", *args, "--json", cwd=project))
        assert real["before"]["bytes"] == dry["before"]["bytes"]
        assert abs(real["after"]["bytes"] - dry["after"]["bytes"]) <= 0.15 * real["after"]["bytes"], (dry, real)
        assert abs(real["memories_after"] - dry["memories_after"]) <= 0.15 * real["memories_after"], (dry, real)
        text = ok("cleanup", "--dry-run", *args, cwd=project).splitlines()[0]
        assert " now, about " in text and "after this cleanup" in text, text


# --- reindex progress -------------------------------------------------------------------------------------


def test_reindex_draws_its_progress_bar_once(home: Path, project: Path) -> None:
    _fill(project, 150)
    raw = on_a_terminal(MEMORY, ["reindex", "--embedder", "hashing"], project)
    complete = [part for part in raw.replace("\r\n", "\n").replace("\n", "\r").split("\r") if "150/150" in part]
    assert len(complete) == 1, raw  # the finished bar, drawn once
    shown = [ln.rsplit("\r", 1)[-1] for ln in raw.split("\r\n")]  # what the terminal shows, line by line
    assert len([ln for ln in shown if "%|" in ln]) == 1, shown
    assert any("150 memories, 150 embedded" in ln for ln in shown)
    # Captured (a pipe, as in Claude Code's Bash tool): no bar, the summary line alone.
    r = memory("reindex", "--embedder", "hashing", cwd=project)
    assert r.returncode == 0 and "%|" not in r.stderr and "\r" not in r.stderr + r.stdout, r.stderr
    assert "150 memories, 150 embedded" in r.stdout


# --- counted nouns ----------------------------------------------------------------------------------------


def test_counted_nouns_one_rule() -> None:
    from memory.base.words import count, plural

    assert [count(n, "memory") for n in (0, 1, 2, 1200)] == ["0 memories", "1 memory", "2 memories",
                                                            "1,200 memories"]
    assert [plural(w) for w in ("session", "match", "day", "stale section", "index", "box")] == \
        ["sessions", "matches", "days", "stale sections", "indexes", "boxes"]
    assert count(1, "more todo") == "1 more todo" and count(3, "child", "kids") == "3 kids"


def test_one_is_singular_in_the_cli_and_the_mcp_server(home: Path, project: Path) -> None:
    ok("save", "Retry uploads with exponential backoff", cwd=project)
    (project / "NOTES.md").write_text("# Deploys\n\nBlue-green deploys, one switch at a time.\n")
    outputs = {
        "reindex": ok("reindex", "--embedder", "hashing", cwd=project),
        "index-markdown": ok("index-markdown", cwd=project),
        "stats": ok("stats", cwd=project),
    }
    assert "1 memory, 1 embedded" in outputs["reindex"]
    assert "1 markdown file: 1 indexed (1 section)" in outputs["index-markdown"], outputs["index-markdown"]
    mcp_out = _mcp(project, [("search", {"query": "exponential backoff"}), ("stats", {})])
    assert mcp_out[0].split("\n", 2)[2].startswith("1 memory in project app"), mcp_out[0]  # inside the fence
    everything = "\n".join([*outputs.values(), *mcp_out])
    for wrong in ("1 memories", "1 sessions", "1 learnings", "1 files", "1 markdown files", "1 sections",
                  "1 reads", "1 hooks", "(s)"):
        assert wrong not in everything, (wrong, everything)


def _mcp(project: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """Tool answers from the real MCP server process, this checkout's code."""
    import asyncio

    mcp = pytest.importorskip("mcp")
    params = mcp.StdioServerParameters(command=sys.executable, args=["-m", "memory.mcp.server"], cwd=str(project),
                                       env={**os.environ, "PYTHONPATH": str(ROOT), "CLAUDE_PROJECT_DIR": str(project)})

    async def main() -> list[str]:
        async with mcp.stdio_client(params) as (read, write):
            async with mcp.ClientSession(read, write) as s:
                await s.initialize()
                out = []
                for name, args in calls:
                    result = await s.call_tool(name, args)
                    assert not result.is_error, result
                    out.append("\n".join(getattr(c, "text", "") for c in result.content))
                return out

    return asyncio.run(main())
