"""More `memory` commands: handoff, recent, cleanup, index-markdown, mcp, and `slash` (what the
/memory:* slash commands run). Registered on the group at the end of memory/cli.py."""

from __future__ import annotations

import sys
import time
from typing import Any

import click

from memory.base.classify import TYPES
from memory.base.words import count
from memory.cli import _date, _emit, _existing, _open, _workspace, json_option, project_option


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def search_all_projects(text: str, limit: int, filters: Any, project: str | None, as_json: bool) -> None:
    """`memory search --all-projects`: every project's database, hits labelled with their project."""
    from memory.recall.finder import search_all

    if project:
        raise click.UsageError("give either --project or --all-projects, not both")
    found = search_all(text, limit=limit, filters=filters)
    if as_json:
        _emit([{**x.hit.compact(), "project": x.project, "project_key": x.key} for x in found])
        return
    if not found:
        click.echo("no memories match in any project")
        return
    from memory.base.fence import FLAG, instruction_shaped

    width = max(len(x.project) for x in found)
    for x in found:
        c = x.hit.compact()
        flag = f"  [flagged: {FLAG}]" if instruction_shaped(f"{x.hit.title}\n{x.hit.content}") else ""
        click.echo(f"{x.project:<{width}}  #{c['id']:<6} {c['date']}  {c['type']:<11} {c['score']:>7.2f}  "
                   f"{x.hit.title}{flag}")


def _session_id(ws: Any, given: str) -> str:
    """The session a --session value names: an exact id, or the one session whose id starts with it. An
    unknown or ambiguous value is an error: never another session's handoff in its place."""
    known: dict[str, float] = {}
    for sid, at in ws.db.execute(
            """SELECT id, started_at FROM sessions WHERE project = ? AND substr(id, 1, ?) = ?
               UNION ALL SELECT session_id, min(created_at) FROM handoffs WHERE project = ?
               AND substr(session_id, 1, ?) = ? GROUP BY session_id""",
            (ws.project.key, len(given), given, ws.project.key, len(given), given)):
        if sid:
            known[sid] = min(at or 0, known.get(sid, at or 0))
    if given in known or len(known) == 1:
        return given if given in known else next(iter(known))
    if not known:
        raise click.ClickException(f"no session {given!r} in project {ws.project.name}; "
                                   "`memory sessions` lists them")
    shown = sorted(known, key=lambda s: -known[s])
    listed = ", ".join(f"{s} ({_date(known[s])})" for s in shown[:10])
    more = f" and {len(shown) - 10} more" if len(shown) > 10 else ""
    raise click.ClickException(f"{given!r} starts {count(len(shown), 'session id')} in project {ws.project.name}: "
                               f"{listed}{more}; give more of the id")


@click.command(name="handoff")
@click.option("--session", help="Show this session's handoff (its id, or the start of it); default: the "
              "project's latest.")
@click.option("--current-session", hidden=True, help="What /memory:handoff passes: this session's handoff "
              "when it has one, else the project's latest.")
@project_option
@json_option
def handoff_cmd(session: str | None, current_session: str | None, project: str | None, as_json: bool) -> None:
    """The current handoff: the state of the work that a compaction or a new session starts from."""
    from memory.capture import handoff

    ws = _existing(_workspace(project), as_json)
    if ws is None:
        return
    if session:
        session = _session_id(ws, session)
        row = ws.db.execute("SELECT * FROM handoffs WHERE project = ? AND session_id = ? "
                            "ORDER BY created_at DESC, id DESC LIMIT 1", (ws.project.key, session)).fetchone()
    else:
        row = handoff.latest(ws, current_session or None)
    if row is None:
        if as_json:
            _emit(None)
        elif session:
            click.echo(f"session {session} has no handoff yet in project {ws.project.name}: one is written at "
                       "the end of each turn, before a compaction and when a session ends")
        else:
            click.echo(f"no handoff yet for project {ws.project.name}: one is written at the end of each turn, "
                       "before a compaction and when a session ends")
        return
    if as_json:
        _emit(dict(row))
        return
    mine = row["session_id"] in (session, current_session)
    whose = "this session" if mine else f"session {row['session_id'][:8]}"
    click.echo(f"Handoff of {whose} ({row['trigger']}, {_date(row['created_at'])}), project {ws.project.name}:")
    click.echo("")
    click.echo(row["content"])


@click.command()
@click.option("--limit", "-n", default=10, show_default=True, type=click.IntRange(1, 200))
@click.option("--type", "types", multiple=True, type=click.Choice(TYPES),
              help="Only these types (repeatable; default: all but prompts).")
@project_option
@json_option
def recent(limit: int, types: tuple[str, ...], project: str | None, as_json: bool) -> None:
    """The most recent memories of the project, newest first."""
    ws = _existing(_workspace(project), as_json, [])
    if ws is None:
        return
    shown = list(types) or [t for t in TYPES if t != "prompt"]
    marks = ",".join("?" * len(shown))
    rows = ws.db.execute(
        f"""SELECT id, type, title, created_at, session_id, flags FROM memories WHERE type IN ({marks})
            AND (expires_at IS NULL OR expires_at > ?) ORDER BY created_at DESC, id DESC LIMIT ?""",
        [*shown, time.time(), limit]).fetchall()
    if as_json:
        _emit([dict(r) for r in rows])
        return
    if not rows:
        click.echo(f"no memories yet in project {ws.project.name}")
        return
    for r in rows:
        flag = f"  [flagged: {r['flags']}]" if r["flags"] else ""  # memory/base/fence.py: a person reviews these
        click.echo(f"#{r['id']:<6} {_date(r['created_at'])}  {r['type']:<11} {r['title']}{flag}")


def _cleanup_text(r: dict[str, Any]) -> list[str]:
    dry = r["dry_run"]
    lim = r["limits"]
    before, after = _size(r["before"]["bytes"]), _size(r["after"]["bytes"])
    if not dry:
        size = f"{before} before, {after} after"
    elif r["after"]["bytes"] < r["before"]["bytes"]:
        size = f"{before} now, about {after} after this cleanup"
    else:
        size = f"{before} now, the same after this cleanup"
    lines = [f"data dir {r['home']}: {size} (cap {_size(lim['max_bytes'])}; over it, a cleanup evicts down to "
             f"{_size(lim['target_bytes'])})"]
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
        lines.append(f"freed {_size(r['freed_bytes'])}; memories {r['memories_before']} -> {r['memories_after']}; "
                     f"vectors: {r['vectors']}; finished jobs purged: {r['queue_rows_purged']}")
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
        _emit(result)
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

    ws = _open(project)
    if switch:
        removed = mdindex.set_project(ws, switch == "on")
        if as_json:
            _emit({"project": ws.project.name, "repo_docs": switch, "removed": removed})
        else:
            click.echo(f"repository docs of project {ws.project.name}: indexing {switch}"
                       + (f"; {removed} indexed sections removed" if removed else ""))
        if switch == "off":
            return
    result = mdindex.index_project(ws, force=force)
    if as_json:
        _emit(result)
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
    from memory.mcp import front as mcp_front

    if warm:
        click.echo(f"MCP handshake cached in {mcp_front.warm()}")
        return
    sys.exit(mcp_front.main())


@click.command(hidden=True)
@click.argument("verb")
@click.option("--session", default="", help="The Claude Code session id (${CLAUDE_SESSION_ID}).")
def slash(verb: str, session: str) -> None:
    """Run what /memory:VERB asks, with its raw arguments on stdin (see memory/cli/slash.py)."""
    from memory.cli.slash import run

    sys.exit(run(verb, sys.stdin.read(), session or None))


COMMANDS = [handoff_cmd, recent, cleanup, index_markdown, mcp, slash]
