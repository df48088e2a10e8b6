"""The commands that keep the plugin working and show how it works: doctor, cleanup, index-markdown, replay,
outline, map and mcp."""

from __future__ import annotations

import os
import sys
import tempfile
from typing import Any

import click

from memory.base.words import count
from memory.cli.common import emit, json_option, open_project, opened, project_option, workspace
from memory.present.text import size


def _cleanup_text(r: dict[str, Any]) -> list[str]:
    dry = r["dry_run"]
    lim = r["limits"]
    before, after = size(r["before"]["bytes"]), size(r["after"]["bytes"])
    if not dry:
        amount = f"{before} before, {after} after"
    elif r["after"]["bytes"] < r["before"]["bytes"]:
        amount = f"{before} now, about {after} after this cleanup"
    else:
        amount = f"{before} now, the same after this cleanup"
    lines = [f"data dir {r['home']}: {amount} (cap {size(lim['max_bytes'])}; over it, a cleanup evicts down to "
             f"{size(lim['target_bytes'])})"]
    verb = "to remove" if dry else "removed"
    lines.append(f"expired memories {verb}: {r['expired']}")
    evicted = r["evicted_for_count"] + r["evicted_for_bytes"]
    per = ", ".join(f"{k} {v}" for k, v in r["by_project"].items())
    lines.append(f"least recently used {verb}: {evicted} ({r['evicted_for_count']} over the "
                 f"{lim['max_memories_per_project'] or 'unlimited'}-per-project count, {r['evicted_for_bytes']} "
                 f"over the size cap){f'; by project: {per}' if per else ''}")
    for s in r["sample"]:
        lines.append(f"  {s['project']} #{s['id']} [{s['type']}] {s['title'][:90]}")
    if evicted > len(r["sample"]):
        lines.append(f"  ... and {evicted - len(r['sample'])} more")
    if not dry:
        lines.append(f"freed {size(r['freed_bytes'])}; memories {r['memories_before']} -> {r['memories_after']}; "
                     f"vectors: {r['vectors']}; finished jobs purged: {r['queue_rows_purged']}; "
                     f"stale outlines dropped: {r['outlines_dropped']}")
    if r["note"]:
        lines.append(r["note"])
    return lines


@click.command()
@click.option("--dry-run", is_flag=True, help="Show what would be removed; change nothing.")
@click.option("--max-bytes", help="Size cap for this run (e.g. 200MB; default MEMORY_MAX_BYTES).")
@click.option("--max-memories", type=click.IntRange(0), help="Per-project count cap for this run.")
@json_option
def cleanup(dry_run: bool, max_bytes: str | None, max_memories: int | None, as_json: bool) -> None:
    """Remove expired memories and evict the least recently used ones past the limits (all projects)."""
    from memory.recall import vectors
    from memory.store import evict
    from memory.store.limits import parse_size

    try:
        cap = parse_size(max_bytes) if max_bytes else None
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--max-bytes") from None
    result = evict.run(max_bytes=cap, max_memories=max_memories, dry_run=dry_run, delete_vectors=vectors.delete)
    if as_json:
        emit(result)
    else:
        click.echo("\n".join(_cleanup_text(result)))


@click.command(name="index-markdown")
@click.option("--force", is_flag=True, help="Re-index every file, changed or not.")
@click.option("--off", "switch", flag_value="off", default=None,
              help="Never index this project's docs (and remove the sections indexed so far).")
@click.option("--on", "switch", flag_value="on", help="Index this project's docs again (the default).")
@project_option
@json_option
def index_markdown(force: bool, switch: str | None, project: str | None, as_json: bool) -> None:
    """Index the project's markdown (MEMORY_MARKDOWN_GLOBS) as repository docs now; --off/--on per project."""
    from memory.capture import mdindex

    ws = open_project(project)
    if switch:
        removed = mdindex.set_project(ws, switch == "on")
        if as_json:
            emit({"project": ws.project.name, "repo_docs": switch, "removed": removed})
        else:
            click.echo(f"repository docs of project {ws.project.name}: indexing {switch}"
                       + (f"; {removed} indexed sections removed" if removed else ""))
        if switch == "off":
            return
    result = mdindex.index_project(ws, force=force)
    if as_json:
        emit(result)
        return
    click.echo(f"{count(result['files'], 'markdown file')}: {result['indexed']} indexed "
               f"({count(result['sections'], 'section')}), {result['unchanged']} unchanged, "
               f"{count(result['removed'], 'stale section')} removed")
    for rel in result["skipped_large"]:  # type: ignore[attr-defined]
        click.echo(f"skipped (over 100 KB): {rel}")


@click.command()
@click.option("--warm", is_flag=True, help="Record the handshake cache now (after an install or update) and exit.")
def mcp(warm: bool) -> None:
    """Run the MCP server on stdin/stdout (what Claude Code starts from plugin.json's mcpServers)."""
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        raise click.ClickException("the MCP server needs the `mcp` package; run scripts/setup")
    from memory.mcp import front

    if warm:
        click.echo(f"MCP handshake cached in {front.warm()}")
        return
    sys.exit(front.main())


@click.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--home", type=click.Path(file_okay=False), help="Data dir to replay into (default: a new scratch dir).")
@click.option("--cwd", help="Project folder to use instead of the cwd recorded in the events.")
@click.option("--show", type=click.IntRange(0, 100000), default=300, show_default=True,
              help="Characters of each hook's output to show.")
@click.option("--keep", is_flag=True, help="Keep the scratch data dir (removed at the end by default).")
@json_option
def replay(file: str, home: str | None, cwd: str | None, show: int, keep: bool, as_json: bool) -> None:
    """Feed recorded hook events (JSON lines) or a transcript through the real hook processes."""
    import shutil

    from memory.base.bootstrap import venv_python
    from memory.hook.replay import replay as run_replay

    scratch = home is None
    home = home or tempfile.mkdtemp(prefix="memory-replay-")
    env = {**os.environ, "MEMORY_HOME": home}
    python = venv_python()
    if python:  # the hooks' own interpreter, found as hooks/run would (a pyenv shim costs 80-180 ms a hook)
        env["MEMORY_PYTHON"] = python
    if scratch:  # no background worker left behind in a scratch dir
        env["MEMORY_WORKER"] = "off"
    if not cwd:
        _note_missing_folders(file)
    try:
        results = _replay_print(run_replay(file, cwd=cwd, env=env), show, as_json)
    finally:
        if scratch and not keep:
            shutil.rmtree(home, ignore_errors=True)
    kept = home if not scratch or keep else None
    if as_json:
        emit({"home": kept, "python": python, "results": results})
    else:
        ran = [r for r in results if r.get("entry")]
        if ran:
            ms = sorted(r["ms"] for r in ran)
            click.echo(f"{count(len(ran), 'hook')} on {python or 'python3 from PATH'}, p50 {ms[len(ms) // 2]:.1f} ms, "
                       f"max {ms[-1]:.1f} ms; " + (f"data in {kept}" if kept else "scratch data removed (--keep)"))
        bad = [r for r in ran if r["exit_code"] != 0]
        if bad:
            raise click.ClickException(f"{count(len(bad), 'hook')} exited non-zero")


def _replay_print(runs: Any, show: int, as_json: bool) -> list[dict[str, Any]]:
    """Each hook's line as it runs (nothing with --json); returns every result."""
    results = []
    for r in runs:
        results.append(r)
        if as_json:
            continue
        if r.get("entry") is None:
            click.echo(f"{r['event'] or '?':<20} skipped ({r['skipped']})")
            continue
        out = r["stdout"].strip()
        click.echo(f"{r['event']:<20} exit {r['exit_code']}  {r['ms']:>7.1f} ms  "
                   f"{(out[:show] + ('...' if len(out) > show else '')) if out else '(no output)'}")
    return results


def _note_missing_folders(file: str) -> None:
    """Hooks record nothing for a folder that is not there: say so rather than replay into nothing."""
    from memory.hook.replay import events_from_file

    folders = {str(e.get("cwd")) for e in events_from_file(file) if e.get("cwd")}
    for folder in sorted(f for f in folders if not os.path.isdir(f)):
        click.echo(f"replay: the recorded folder {folder} does not exist here, so the hooks record nothing "
                   "for it; pass --cwd DIR to replay into a folder of this machine", err=True)


@click.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@json_option
def outline(file: str, as_json: bool) -> None:
    """Print the tree-sitter outline of a code file (--json: structured symbols)."""
    from parser import estimate_tokens, outline_file

    result = outline_file(file)
    if as_json:
        data = result.to_json()
        data["symbols"] = [{"name": s["name"], "kind": s["kind"], "start_line": s["start_line"],
                            "end_line": s["end_line"], "signature": s["signature"], "parent": s["parent"],
                            "doc": s["doc"]} for s in data["symbols"]]
        emit(data)
        return
    text = result.render()
    with open(file, "rb") as fh:
        original = estimate_tokens(fh.read())
    click.echo(text)
    if result.parsed:
        click.echo(f"-- {count(len(result.symbols), 'symbol')}; ~{count(estimate_tokens(text), 'token')} instead of "
                   f"~{original:,}", err=True)


@click.command(name="map")
@click.argument("path", required=False, type=click.Path(exists=True, file_okay=False))
@click.option("--tokens", type=click.IntRange(16, 100_000), default=1024, show_default=True,
              help="Token budget of the map (counted as outlines are).")
@click.option("--focus", multiple=True, help="A file or symbol you work on: the rank leans towards it (repeatable).")
@json_option
def repo_map(path: str | None, tokens: int, focus: tuple[str, ...], as_json: bool) -> None:
    """Print the repository's most referenced definitions (signatures by file) within a token budget."""
    from memory.outline import mapbuild

    root = os.path.realpath(path or os.getcwd())
    built = mapbuild.build(map_db(root), root, tokens, list(focus))
    if as_json:
        emit(built.to_json())
        return
    click.echo(built.text, nl=False)
    info = built.to_json()
    click.echo(f"-- {count(info['files'], 'file')} ({info['parsed']} parsed), ~{count(info['tokens'], 'token')}, "
               f"{info['seconds']:.2f} s", err=True)


def map_db(root: str) -> Any:
    """The project's database, where the map's cache lives; a scratch one in memory for an excluded folder
    (nothing of it may be stored)."""
    from memory.base.config import data_home
    from memory.base.quiet import excluded_by
    from memory.store.db import connect

    if excluded_by(root, data_home()):
        return connect(":memory:")
    return opened(workspace(root)).db


@click.command()
@click.option("--repair", is_flag=True, help="Fix what can be fixed: salvage a damaged database, rebuild the "
              "full-text index, release jobs of a dead worker, clear notices.")
@project_option
@json_option
def doctor(repair: bool, project: str | None, as_json: bool) -> None:
    """What is installed, which providers are available, data dir and database health."""
    from memory.present.doctor import repair as run_repair
    from memory.present.doctor import report

    if repair:
        for line in run_repair(workspace(project)):
            click.echo(f"repair: {line}", err=as_json)
    data = report(workspace(project))
    if as_json:
        emit(data)
    else:
        for key, value in data.items():
            if isinstance(value, dict):
                click.echo(f"{key}:")
                for k, v in value.items():
                    click.echo(f"  {k}: {v}")
            else:
                click.echo(f"{key}: {value}")
    if not data["database"].get("ok", True):
        sys.exit(1)


COMMANDS = [doctor, cleanup, index_markdown, replay, outline, repo_map, mcp]
