"""Memories out and in: export (JSONL that `memory save --jsonl` reads back, or a Markdown bundle) and the
import of Claude Code's own auto-memory files as labelled facts."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import click

from memory.cli.common import emit, json_option, no_memory_yet, open_project, opened, project_option, workspace
from memory.store.workspace import Workspace, all_projects


def _workspaces(project: str | None, every: bool) -> list[Workspace]:
    """The projects to export: every project of the data dir, or one (none when it has no database)."""
    if every:
        from memory.cli.common import _by_key

        return [_by_key(m) for m in all_projects()]
    ws = workspace(project)
    if not os.path.exists(ws.db_path):  # said on stderr: stdout is the export
        click.echo(f"memory: {no_memory_yet(ws)}", err=True)
        return []
    return [opened(ws)]


def _file_name(ws: Workspace) -> str:
    return f"{ws.project.key}.md"


@click.command()
@project_option
@click.option("--all", "every", is_flag=True, help="Every project of the data dir.")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "markdown"]), default="jsonl", show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=True), help="Write here (default: stdout). Markdown of "
              "several projects: a folder, one file a project.")
def export(project: str | None, every: bool, fmt: str, output: str | None) -> None:
    """Export memories: JSONL (read back by `memory save --jsonl`) or a Markdown bundle."""
    from memory.present import export as ex

    if every and project:
        raise click.UsageError("give either --project or --all, not both")
    if fmt == "jsonl" and output and os.path.isdir(output):
        raise click.UsageError(f"{output} is a folder: JSONL goes to one file (-o FILE)")
    spaces = _workspaces(project, every)
    if fmt == "markdown" and output and (every or os.path.isdir(output)):
        os.makedirs(output, mode=0o700, exist_ok=True)
        for ws in spaces:
            _write(os.path.join(output, _file_name(ws)), ex.markdown(ws))
        click.echo(f"wrote {len(spaces)} file{'s' if len(spaces) != 1 else ''} to {output}", err=True)
        return
    # Owner-only from the start: an export holds everything the data dir does.
    out = os.fdopen(os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") \
        if output else sys.stdout
    try:
        n = 0
        for ws in spaces:
            if fmt == "markdown":
                out.write(ex.markdown(ws) + ("\n" if len(spaces) > 1 else ""))
                continue
            for obj in ex.record_lines(ws):  # sessions and handoffs first: the memories name them
                out.write(json.dumps(obj, ensure_ascii=False) + "\n")
            for r in ex.memory_rows(ws):
                out.write(json.dumps(ex.line(ws, r), ensure_ascii=False) + "\n")
                n += 1
    finally:
        if output:
            out.close()
    if output:
        click.echo(f"exported {n} memories to {output}" if fmt == "jsonl" else f"wrote {output}", err=True)


def _write(path: str, text: str) -> None:
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as fh:
        fh.write(text)


@click.command(name="import-auto-memory")
@click.argument("path", required=False, type=click.Path(exists=True))
@project_option
@json_option
def import_auto_memory(path: str | None, project: str | None, as_json: bool) -> None:
    """Import Claude Code's auto memory (its MEMORY.md and topic files) as `fact` memories.

    PATH is the memory folder or a file in it; default: this project's, under
    $CLAUDE_CONFIG_DIR/projects/<project folder, non-alphanumerics made ->/memory. Running it again adds
    nothing new; a changed file updates its memory.
    """
    from memory import store
    from memory.learn.automemory import default_folder, read

    ws = open_project(project)
    source = path or default_folder(ws.project.root)
    if not os.path.exists(source):
        raise click.ClickException(f"no Claude Code auto memory at {source}; give its folder as PATH")
    memories = read(source)
    saved = store.save_many(ws.db, ws.project.key, memories, filter_low_value=False) if memories else []
    results: list[dict[str, Any]] = [{"id": s.id, "action": s.action, "title": m.title, "file": m.origin_detail}
                                     for m, s in zip(memories, saved, strict=True)]
    if as_json:
        emit({"source": source, "results": results})
        return
    done = {a: sum(r["action"] == a for r in results) for a in ("inserted", "updated", "duplicate", "dropped")}
    click.echo(f"imported {len(results)} entr{'y' if len(results) == 1 else 'ies'} of Claude Code's auto memory "
               f"from {source} as facts: " + ", ".join(f"{v} {k}" for k, v in done.items() if v))


COMMANDS = [export, import_auto_memory]
