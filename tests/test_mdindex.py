"""Project markdown indexed as fact memories, the daily log, and the job SessionStart queues for them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memory import store
from memory.capture import mdindex
from memory.recall.search import keyword_search
from memory.store import daily_log
from memory.store.workspace import Workspace
from tests.support.helpers import HookRunner

CLAUDE_MD = """# Project rules

Run `make check` before every commit.

## Deployment

Deploys go through the blue-green switch in deploy.sh.

```bash
# not a heading: inside a code fence
./deploy.sh --switch
```

## Secrets

The staging token is <private>hunter2-PRIVATE</private> kept in the vault; AWS key AKIAIOSFODNN7EXAMPLE.
"""


@pytest.fixture
def ws(home: Path, project: Path) -> Workspace:
    w = Workspace.for_dir(str(project))
    yield w
    w.close()


def facts(ws: Workspace) -> dict[str, str]:
    return {r["title"]: r["content"] for r in ws.db.execute(
        "SELECT title, content FROM memories WHERE source = 'markdown' AND type = 'fact'")}


def test_sections_become_fact_memories(ws: Workspace, project: Path) -> None:
    (project / "CLAUDE.md").write_text(CLAUDE_MD)
    (project / "docs").mkdir()
    (project / "docs" / "api.md").write_text("# API\n\nThe upload endpoint takes multipart bodies up to 50 MB.\n")
    (project / "src").mkdir()
    (project / "src" / "notes.md").write_text("# Not matched\n\nsrc/*.md is not in the default globs.\n")
    report = mdindex.index_project(ws)
    assert report["indexed"] == 2 and report["files"] == 2
    got = facts(ws)
    assert set(got) == {"CLAUDE.md § Project rules", "CLAUDE.md § Project rules > Deployment",
                        "CLAUDE.md § Project rules > Secrets", "docs/api.md § API"}
    assert "./deploy.sh --switch" in got["CLAUDE.md § Project rules > Deployment"]  # the fence stayed in
    secrets = got["CLAUDE.md § Project rules > Secrets"]
    assert "hunter2" not in secrets and "AKIAIOSFODNN7EXAMPLE" not in secrets  # the privacy filter applies
    assert [h.title for h in keyword_search(ws.db, "blue-green switch")][0].endswith("Deployment")


def test_reindexed_only_when_the_content_changes(ws: Workspace, project: Path) -> None:
    doc = project / "CLAUDE.md"
    doc.write_text("# Rules\n\nUse tabs.\n")
    assert mdindex.index_project(ws)["indexed"] == 1
    first = facts(ws)
    second = mdindex.index_project(ws)
    assert second["indexed"] == 0 and second["unchanged"] == 1 and facts(ws) == first
    doc.write_text("# Rules\n\nUse four spaces, never tabs.\n\n## Naming\n\nsnake_case everywhere.\n")
    third = mdindex.index_project(ws)
    assert third["indexed"] == 1
    assert facts(ws) == {"CLAUDE.md § Rules": "Rules\n\nUse four spaces, never tabs.",
                         "CLAUDE.md § Rules > Naming": "Rules > Naming\n\nsnake_case everywhere."}
    assert not keyword_search(ws.db, "use tabs")[:1] or "never tabs" in keyword_search(ws.db, "use tabs")[0].content
    doc.unlink()
    gone = mdindex.index_project(ws)
    assert gone["removed"] == 2 and facts(ws) == {}


def test_large_files_symlinks_out_and_vendored_folders_are_skipped(ws: Workspace, project: Path,
                                                                     tmp_path: Path) -> None:
    (project / "big.md").write_text("# Big\n\n" + "lorem ipsum dolor " * 7000)  # > 100 KB
    (project / "node_modules" / "pkg").mkdir(parents=True)
    (project / "node_modules" / "pkg" / "CLAUDE.md").write_text("# Vendored\n\nnot ours\n")
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\n\nsecret outside the project\n")
    (project / "linked.md").symlink_to(outside)
    report = mdindex.index_project(ws)
    assert report["skipped_large"] == ["big.md"] and report["indexed"] == 0
    assert facts(ws) == {}
    # A small file that grows past the limit loses its sections.
    (project / "grow.md").write_text("# Grow\n\nsmall for now\n")
    assert mdindex.index_project(ws)["indexed"] == 1
    (project / "grow.md").write_text("# Grow\n\n" + "x" * 110_000)
    assert mdindex.index_project(ws)["removed"] == 1 and facts(ws) == {}


def test_globs_come_from_the_environment(ws: Workspace, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project / "notes").mkdir()
    (project / "notes" / "a.md").write_text("# A\n\nnote a\n")
    (project / "wiki").mkdir()
    (project / "wiki" / "b.md").write_text("# B\n\nnote b\n")
    monkeypatch.setenv("MEMORY_MARKDOWN_GLOBS", "wiki/*.md")
    mdindex.index_project(ws)
    assert set(facts(ws)) == {"wiki/b.md § B"}
    monkeypatch.setenv("MEMORY_MARKDOWN_GLOBS", "")
    assert mdindex.index_project(ws)["files"] == 0 and set(facts(ws)) == {"wiki/b.md § B"}  # off keeps what is there
    assert not mdindex.maybe_enqueue(ws)


def test_glob_translation() -> None:
    rx = mdindex.glob_regex
    assert rx("**/CLAUDE.md").match("CLAUDE.md") and rx("**/CLAUDE.md").match("a/b/CLAUDE.md")
    assert rx("*.md").match("README.md") and not rx("*.md").match("docs/x.md")
    assert rx("docs/**/*.md").match("docs/x.md") and rx("docs/**/*.md").match("docs/a/b/x.md")
    assert not rx("docs/**/*.md").match("src/docs/x.md")


def test_a_hand_saved_memory_is_never_deleted_by_the_indexer(ws: Workspace, project: Path) -> None:
    mine = store.save(ws.db, ws.project.key, store.NewMemory(title="Rules", content="Rules\n\nUse tabs."),
                      filter_low_value=False).id
    (project / "CLAUDE.md").write_text("# Rules\n\nUse tabs.\n")  # the same text: the store dedups to mine
    mdindex.index_project(ws)
    (project / "CLAUDE.md").unlink()
    mdindex.index_project(ws)
    assert ws.db.execute("SELECT id FROM memories WHERE id = ?", (mine,)).fetchone()


def test_daily_log_records_saves_and_is_never_indexed(home: Path, project: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    ws = Workspace.for_dir(str(project))
    long = "Decision: use blue-green deploys. " + "because " * 100
    store.save(ws.db, ws.project.key, store.NewMemory(title="Deploy strategy", content=long, type="decision"),
               filter_low_value=False)
    store.save(ws.db, ws.project.key, store.NewMemory(
        title="Vault token",
        content="the token is <private>hunter2</private> ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
        filter_low_value=False)
    log = Path(daily_log.path_for(str(home)))
    assert log.name == time.strftime("%Y-%m-%d") + ".md" and log.parent == home / "daily"
    text = log.read_text()
    assert text.startswith("# Memories saved on ")
    line = next(x for x in text.splitlines() if "Deploy strategy" in x)
    assert "[decision]" in line and line.endswith("...") and len(line.split("**: ", 1)[1]) <= 200
    assert "hunter2" not in text and "ghp_abcdef" not in text
    assert oct(log.stat().st_mode & 0o777) == "0o600"
    # Markdown sections are not logged, and the log itself is never indexed, even with the data dir
    # inside the project and a glob that matches it.
    monkeypatch.setenv("MEMORY_MARKDOWN_GLOBS", "**/*.md")
    inner_home = project / "memory-data"  # not hidden: excluded as the data dir
    monkeypatch.setenv("MEMORY_HOME", str(inner_home))
    inner = Workspace.for_dir(str(project))
    store.save(inner.db, inner.project.key, store.NewMemory(title="Inner note", content="logged inside"),
               filter_low_value=False)
    assert (inner_home / "daily").is_dir()
    (project / "guide.md").write_text("# Guide\n\nread me\n")
    report = mdindex.index_project(inner)
    assert report["files"] == 1 and report["indexed"] == 1
    assert all(not t.startswith("memory-data") for t in facts(inner))
    lines = Path(daily_log.path_for(str(inner_home))).read_text()
    assert "Inner note" in lines and "Guide" not in lines
    monkeypatch.setenv("MEMORY_DAILY_LOG", "off")
    store.save(inner.db, inner.project.key, store.NewMemory(title="Quiet note", content="not logged"),
               filter_low_value=False)
    assert "Quiet note" not in Path(daily_log.path_for(str(inner_home))).read_text()
    inner.close()
    ws.close()


def test_session_start_queues_indexing_at_most_once_per_interval(hooks: HookRunner, home: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    (hooks.project / "CLAUDE.md").write_text("# Rules\n\nAlways run the linter.\n")
    hooks.start()
    hooks.start("resume")
    db = Workspace.for_dir(str(hooks.project)).db
    jobs = db.execute("SELECT kind, payload, status FROM queue WHERE kind = 'index_markdown'").fetchall()
    assert len(jobs) == 1 and json.loads(jobs[0]["payload"])["root"] == os.path.realpath(hooks.project)
    # The worker runs it (here by hand, through its entry point), and the section can be recalled.
    ws = Workspace.for_dir(str(hooks.project))
    assert mdindex.handle_job(ws, json.loads(jobs[0]["payload"]))["indexed"] == 1
    db.execute("UPDATE queue SET status = 'done' WHERE kind = 'index_markdown'")
    hooks.start("clear")  # within the interval: nothing new queued
    assert db.execute("SELECT status FROM queue WHERE kind = 'index_markdown'").fetchone()[0] == "done"
    monkeypatch.setenv("MEMORY_MARKDOWN_INTERVAL_MINUTES", "0")
    hooks.start("clear")
    assert db.execute("SELECT status FROM queue WHERE kind = 'index_markdown'").fetchone()[0] == "pending"


def test_index_markdown_command(home: Path, project: Path) -> None:
    (project / "CLAUDE.md").write_text("# Rules\n\nUse tabs.\n")
    env = {**os.environ, "MEMORY_HOME": str(home)}
    out = subprocess.run([sys.executable, "-m", "memory", "index-markdown"], cwd=project, env=env,
                         capture_output=True, text=True, check=True).stdout
    assert "1 indexed (1 section)" in out
    again = subprocess.run([sys.executable, "-m", "memory", "index-markdown", "--json"], cwd=project, env=env,
                           capture_output=True, text=True, check=True).stdout
    assert json.loads(again)["unchanged"] == 1
