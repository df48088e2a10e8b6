"""The CLI side of the interfaces: cross-project search, handoff, recent, --home, the bin/memory launcher,
and `memory slash` (what the /memory:* commands run, with the raw arguments on stdin)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from memory.cli import cli, slash
from tests.support.helpers import ROOT, HookRunner, make_git_project

LAUNCHER = str(ROOT / "bin" / "memory")


def memory(*args: str, cwd: Path, env: dict[str, str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([LAUNCHER, *args], cwd=cwd, env=env, input=stdin, capture_output=True, text=True,
                          timeout=60)


@pytest.fixture
def env(home: Path) -> dict[str, str]:
    return {**os.environ, "MEMORY_HOME": str(home)}


@pytest.fixture
def two_projects(tmp_path: Path, env: dict[str, str]) -> dict[str, Any]:
    web = make_git_project(tmp_path / "web")
    api = make_git_project(tmp_path / "api", remote="git@example.com:acme/api.git")
    for folder, text in [(web, "Retry uploads with exponential backoff in the web client"),
                         (api, "Retry database writes with exponential backoff in the API"),
                         (api, "Rate limits are per token")]:
        memory("save", "--type", "learning", text, cwd=folder, env=env).check_returncode()
    return {"web": web, "api": api}


def test_search_all_projects_labels_each_hit(two_projects: dict[str, Any], env: dict[str, str]) -> None:
    local = memory("search", "exponential", "backoff", "--json", cwd=two_projects["web"], env=env)
    assert [h["title"][:13] for h in json.loads(local.stdout)] == ["Retry uploads"]
    everywhere = memory("search", "exponential", "backoff", "--all-projects", "--json", cwd=two_projects["web"],
                        env=env)
    hits = json.loads(everywhere.stdout)
    assert {h["project"] for h in hits} == {"web", "api"}
    assert all(h["project_key"].startswith(h["project"] + "-") for h in hits)
    text = memory("search", "backoff", "-a", cwd=two_projects["web"], env=env).stdout
    assert any(line.startswith("api ") for line in text.splitlines())
    assert any(line.startswith("web ") for line in text.splitlines())
    both = memory("search", "x", "--all-projects", "--project", "web", cwd=two_projects["web"], env=env)
    assert both.returncode != 0 and "either --project or --all-projects" in both.stderr


def test_home_option_and_plugin_data(two_projects: dict[str, Any], env: dict[str, str], home: Path,
                                     tmp_path: Path) -> None:
    bare = {k: v for k, v in env.items() if k not in ("MEMORY_HOME", "CLAUDE_PLUGIN_DATA")}
    bare["HOME"] = str(tmp_path / "nohome")
    r = memory("--home", str(home), "search", "backoff", "--json", cwd=two_projects["api"], env=bare)
    assert json.loads(r.stdout)[0]["title"].startswith("Retry database")
    # What a slash command passes: the data dir Claude Code substituted, used when MEMORY_HOME is unset.
    r = memory("--plugin-data", str(home), "search", "backoff", "--json", cwd=two_projects["api"], env=bare)
    assert json.loads(r.stdout)[0]["title"].startswith("Retry database")
    # MEMORY_HOME, when set, still wins (as in the hooks).
    r = memory("--plugin-data", str(tmp_path / "elsewhere"), "search", "backoff", "--json", cwd=two_projects["api"],
               env=env)
    assert json.loads(r.stdout)


def test_handoff_and_recent(hooks: HookRunner, env: dict[str, str]) -> None:
    none = memory("handoff", cwd=hooks.project, env=env)
    assert none.returncode == 0 and "no memory for project app yet" in none.stdout
    hooks.start()
    hooks.prompt("Add a --verbose flag to the CLI")
    hooks.tool("Edit", {"file_path": str(hooks.project / "cli.py"), "old_string": "a", "new_string": "b"}, {})
    hooks.stop("Decision: we will use click for the flag.")
    out = memory("handoff", "--session", hooks.session, cwd=hooks.project, env=env).stdout
    assert "Handoff of this session" in out and "Add a --verbose flag" in out and "cli.py" in out
    other = memory("handoff", "--session", "other", cwd=hooks.project, env=env)
    assert other.returncode != 0 and "no session 'other'" in other.stderr and "Add a --verbose" not in other.stdout
    data = json.loads(memory("handoff", "--json", cwd=hooks.project, env=env).stdout)
    assert data["session_id"] == hooks.session
    recent = memory("recent", "-n", "5", cwd=hooks.project, env=env).stdout
    assert "we will use click" in recent and "Asked:" not in recent  # prompts left out by default
    assert "Asked:" in memory("recent", "--type", "prompt", cwd=hooks.project, env=env).stdout


@pytest.mark.parametrize("verb,raw,expected", [
    ("search", "retry backoff --type learning", ["search", "--type", "learning", "--", "retry", "backoff"]),
    ("search", "what's -v for", ["search", "--", "what's", "-v", "for"]),
    ("search", "", "what should I search for"),
    ("save", "--type decision --expires 30d don't use \"tabs\"; $(id)",
     ["save", "--type", "decision", "--expires", "30d", "--", "don't use \"tabs\"; $(id)"]),
    ("save", "--title \"Lint rule\" always lint", ["save", "--title", "Lint rule", "--", "always lint"]),
    ("save", "   ", "nothing to save"),
    ("forget", "#12 13", ["forget", "12", "13"]),
    ("forget", "the tabs rule", ["search", "--limit", "5", "--", "the", "tabs", "rule"]),
    ("get", "12 x", "memory ids are numbers"),
    ("handoff", "", ["handoff", "--current-session", "S1"]),
    ("recent", "-n 3", ["recent", "-n", "3"]),
    ("stats", "", ["stats"]),
    ("rm", "-rf /", "unknown slash command"),
    # Every option of the `memory` command works in its slash form (read from its click params):
    ("search", "deploy --mode keyword", ["search", "--mode", "keyword", "--", "deploy"]),
    ("search", "deploy --mode=keyword -a --json", ["search", "--mode=keyword", "-a", "--json", "--", "deploy"]),
    ("search", "a -- --mode keyword", ["search", "--", "a", "--mode", "keyword"]),
    ("timeline", "1 --json", ["timeline", "--json", "1"]),
    ("timeline", "#7 --before 2 -p api", ["timeline", "--before", "2", "-p", "api", "7"]),
    ("get", "3 --json", ["get", "--json", "3"]),
    ("handoff", "--session abc --json", ["handoff", "--session", "abc", "--json", "--current-session", "S1"]),
    ("recent", "--type decision --json", ["recent", "--type", "decision", "--json"]),
    ("cleanup", "--dry-run --max-memories 5", ["cleanup", "--dry-run", "--max-memories", "5"]),
    ("save", "--json --tag ops --importance=0.9 keep --json here",
     ["save", "--json", "--tag", "ops", "--importance", "0.9", "--", "keep --json here"]),
    ("save", "--jsonish text", ["save", "--", "--jsonish text"]),
    ("save", "--jsonl text", ["save", "--", "--jsonl text"]),
    ("pause", "", ["pause", "--session", "S1"]),  # the session the command was typed in
    ("resume", "--session other", ["resume", "--session", "other"]),
    ("why", "#4 --session abc --json", ["why", "--session", "abc", "--json", "4"]),
    ("why", "4 5", "give one memory id"),
])
def test_slash_arguments(verb: str, raw: str, expected: list[str] | str) -> None:
    got = slash.argv_for(cli, verb, raw, "S1")
    if isinstance(expected, str):
        assert isinstance(got, str) and expected in got
    else:
        assert got == expected


def test_slash_runs_and_always_exits_0(two_projects: dict[str, Any], env: dict[str, str]) -> None:
    web = two_projects["web"]
    saved = memory("slash", "save", stdin="--type decision don't retry \"forever\"; $(touch pwned)\n", cwd=web,
                   env=env)
    assert saved.returncode == 0 and "saved #" in saved.stdout
    assert not (web / "pwned").exists()
    found = memory("slash", "search", stdin="retry forever\n", cwd=web, env=env)
    assert "don't retry \"forever\"; $(touch pwned)" in found.stdout
    bad = memory("slash", "search", stdin="x --type nonsense\n", cwd=web, env=env)
    assert bad.returncode == 0 and bad.stdout.startswith("memory: ") and "nonsense" in bad.stdout
    missing = memory("slash", "forget", stdin="999999\n", cwd=web, env=env)
    assert missing.returncode == 0 and "no memory with id 999999" in missing.stdout
    words = memory("slash", "forget", stdin="retry forever\n", cwd=web, env=env)
    assert "Nothing was forgotten" in words.stdout and "retry" in words.stdout


def test_slash_options_are_the_commands_own(two_projects: dict[str, Any], env: dict[str, str]) -> None:
    """Through the launcher, as commands/*.md run it: an option is an option, not words to search for
    (`/memory:search deploy --mode keyword` once searched for "--mode keyword"), and `--json` is taken
    after an id (`/memory:timeline 1 --json` once said "memory ids are numbers")."""
    api = two_projects["api"]
    found = memory("slash", "search", "--session", "S1", stdin="writes --mode keyword\n", cwd=api, env=env).stdout
    assert "Retry database writes" in found and "Rate limits" not in found
    memory("save", "Keyword mode is what the rate limiter logs", cwd=api, env=env).check_returncode()
    found = memory("slash", "search", stdin="writes --mode keyword --json\n", cwd=api, env=env).stdout
    assert [h["title"] for h in json.loads(found[found.index("["):found.rindex("]") + 1])] == [
        "Retry database writes with exponential backoff in the API"]
    around = memory("slash", "timeline", stdin="2 --json\n", cwd=api, env=env).stdout
    rows = json.loads(around[around.index("["):around.rindex("]") + 1])
    assert [r["id"] for r in rows if r["anchor"]] == [2] and len(rows) == 3


def test_slash_usage_names_only_real_options() -> None:
    """The usage lines slash.py prints and the argument hints of commands/*.md name options the `memory`
    command has (its click params are the one home of the options)."""
    import re

    hints = {path.stem: re.search(r"^argument-hint: (.*)$", path.read_text(), re.M)[1]  # type: ignore[index]
             for path in (ROOT / "commands").glob("*.md")}
    assert set(hints) <= set(slash.VERBS)
    for verb, text in [*slash.USAGE.items(), *hints.items()]:
        values, flags = slash.option_names(cli.commands[verb])
        named = re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", text)
        assert named == [n for n in named if n in values | flags], (verb, text)


def test_an_unsubstituted_placeholder_is_never_a_data_dir(project: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("MEMORY_HOME", "CLAUDE_PLUGIN_DATA")}
    env["HOME"] = str(tmp_path / "scratch-home")
    r = memory("--plugin-data", "${CLAUDE_PLUGIN_DATA}", "save", "a note", cwd=project, env=env)
    assert r.returncode == 0, r.stderr
    assert not list(project.glob("$*")) and not list(project.rglob("memory.db"))
    assert list((tmp_path / "scratch-home").rglob("memory.db"))


@pytest.mark.parametrize("raw,expected", [
    # An unquoted title takes the words up to the next option, as a person means it (issue 26).
    ("--title My title --expires 30d --type decision Keep argparse vendored",
     ["save", "--title", "My title", "--expires", "30d", "--type", "decision", "--", "Keep argparse vendored"]),
    ("--type decision --title=Lint rule --tag ops always lint",
     ["save", "--type", "decision", "--title", "Lint rule", "--tag", "ops", "--", "always lint"]),
    ("-t One two --json keep it", ["save", "-t", "One two", "--json", "--", "keep it"]),
    ("--title only words here", "nothing to save after the title"),
])
def test_slash_save_title_of_several_words(raw: str, expected: list[str] | str) -> None:
    got = slash.argv_for(cli, "save", raw, "S1")
    if isinstance(expected, str):
        assert isinstance(got, str) and expected in got
    else:
        assert got == expected


def test_slash_save_multiword_title_is_stored_as_typed(two_projects: dict[str, Any], env: dict[str, str]) -> None:
    web = two_projects["web"]
    raw = "--title My title --expires 30d --type decision Keep argparse vendored\n"
    assert "saved #" in memory("slash", "save", stdin=raw, cwd=web, env=env).stdout
    row = json.loads(memory("recent", "--type", "decision", "--json", cwd=web, env=env).stdout)[0]
    assert (row["type"], row["title"]) == ("decision", "My title")
    got = json.loads(memory("get", str(row["id"]), "--json", cwd=web, env=env).stdout)
    text = got[0]["content"] if isinstance(got, list) else got["content"]
    assert text == "Keep argparse vendored"


def test_an_empty_filtered_listing_says_what_was_filtered(two_projects: dict[str, Any], env: dict[str, str]) -> None:
    web = two_projects["web"]
    memory("save", "--", "we vendor argparse", cwd=web, env=env)
    out = memory("slash", "recent", stdin="--type decision\n", cwd=web, env=env).stdout
    assert "no decisions among" in out and "memor" in out and "no memories yet" not in out
