"""The commands that show and steer what is recorded and recalled: why (a memory's recalls and their score
parts), pause and resume (one session), exclude and include (a folder); memory/base/quiet.py is what the
hooks check."""

from __future__ import annotations

import os

import click

from memory.cli.common import MEMORY_ID, emit, existing_or_fail, json_option, project_option
from memory.present.text import minute


@click.command()
@click.argument("memory_id", type=MEMORY_ID)
@click.option("--session", help="Only its recalls in this session (its id, or the start of it).")
@click.option("--limit", "-n", default=20, show_default=True, type=click.IntRange(1, 1000))
@project_option
@json_option
def why(memory_id: int, session: str | None, limit: int, project: str | None, as_json: bool) -> None:
    """Why a memory was recalled: each injection or search that showed it, with its score parts."""
    from memory import store
    from memory.cli.memories import _session_id
    from memory.present.why import host_of, parts_line, recalls

    ws = existing_or_fail(project, f"memory #{memory_id}")
    rows = store.get_many(ws.db, [memory_id])
    if not rows:
        raise click.ClickException(f"no memory #{memory_id} in project {ws.project.name}; "
                                   "find ids with `memory search`")
    sid = _session_id(ws, session) if session else None
    found = recalls(ws.db, memory_id, sid, limit)
    from memory.store import symbols

    stale = symbols.stale(ws.db, [memory_id]).get(memory_id)
    host = host_of(ws.db, rows[0]["session_id"])
    if as_json:
        emit({"id": memory_id, "title": rows[0]["title"], "host": host, "stale": stale, "recalls": found})
        return
    if host:
        click.echo(f"#{memory_id} was recorded in a {host} session ({(rows[0]['session_id'] or '')[:8]})")
    if stale:
        click.echo(f"#{memory_id} is stale: the code changed since it was recorded ({stale}); it is ranked "
                   "lower and labelled when injected")
    where = f" in session {sid}" if sid else ""
    if not found:
        click.echo(f"#{memory_id} {rows[0]['title']}: never injected or found by a search{where}")
        return
    click.echo(f"#{memory_id} {rows[0]['title']}: {len(found)} recall{'s' if len(found) > 1 else ''}{where}, "
               "newest first")
    for r in found:
        rank = f"rank {r['rank']} of {r['of']}" if r["rank"] and r["of"] else ""
        score = f"score {r['score']:.2f}" if r["score"] is not None else ""
        head = "  ".join(x for x in (minute(r["at"]), r["what"], f"session {(r['session_id'] or '-')[:8]}",
                                     r["mode"] or "", rank, score) if x)
        click.echo(head)
        if r["query"]:
            click.echo(f"    for: {r['query'][:120]}")
        click.echo(f"    {parts_line(r['parts'])}" if r["parts"] else
                   "    (no score parts: recorded before they were kept)")


def _latest_session(project: str | None) -> str:
    """The project's most recently active session (what `memory pause` means without --session)."""
    from memory.cli.common import workspace

    ws = workspace(project)
    row = None
    if os.path.exists(ws.db_path):
        row = ws.db.execute("SELECT id FROM sessions WHERE project = ? ORDER BY last_event_at DESC LIMIT 1",
                            (ws.project.key,)).fetchone()
    if row is None:
        raise click.ClickException(f"no session recorded in project {ws.project.name}: give --session ID "
                                   "(in Claude Code, /memory:pause pauses its own session)")
    return str(row[0])


session_option = click.option("--session", help="The session (default: the project's most recently active one; "
                              "/memory:pause passes its own).")


@click.command()
@session_option
@project_option
def pause(session: str | None, project: str | None) -> None:
    """Pause memory for one session: its hooks record and inject nothing until `memory resume`."""
    from memory.base.config import data_home
    from memory.base.quiet import session_file

    sid = session or _latest_session(project)
    path = session_file(data_home(), sid)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600))
    click.echo(f"memory paused for session {sid}: nothing is recorded or recalled in it until /memory:resume "
               "(or `memory resume`)")


@click.command()
@session_option
@project_option
def resume(session: str | None, project: str | None) -> None:
    """Resume memory for a paused session."""
    from memory.base.config import data_home
    from memory.base.quiet import session_file

    sid = session or _latest_session(project)
    try:
        os.unlink(session_file(data_home(), sid))
    except FileNotFoundError:
        click.echo(f"memory was not paused for session {sid}")
        return
    click.echo(f"memory resumed for session {sid}: it records and recalls again")


def _excluded_file() -> str:
    from memory.base.config import data_home
    from memory.base.quiet import EXCLUDED_FILE

    return os.path.join(data_home(), EXCLUDED_FILE)


def _folder(path: str | None) -> str:
    """The folder a PATH names (real path); without one, the current project's root."""
    from memory.base.project import identify, project_folder

    if path:
        return os.path.realpath(os.path.expanduser(path))
    return identify(project_folder(os.getcwd())).root


def _save_excluded(paths: list[str]) -> None:
    from memory.store.workspace import write_private

    write_private(_excluded_file(), "".join(f"{p}\n" for p in paths))


@click.command()
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option("--list", "show", is_flag=True, help="List what is excluded (folders, MEMORY_EXCLUDE globs).")
@json_option
def exclude(path: str | None, show: bool, as_json: bool) -> None:
    """Exclude a folder (default: this project): hooks there record and inject nothing."""
    from memory.base.config import data_home
    from memory.base.quiet import excluded_paths, globs

    paths = excluded_paths(data_home())
    if show:
        if as_json:
            emit({"folders": paths, "globs": globs()})
            return
        for p in paths:
            click.echo(p)
        for g in globs():
            click.echo(f"{g}  (MEMORY_EXCLUDE)")
        if not paths and not globs():
            click.echo("nothing is excluded")
        return
    folder = _folder(path)
    if folder not in paths:
        _save_excluded([*paths, folder])
    if as_json:
        emit({"excluded": folder})
        return
    click.echo(f"excluded {folder}: the hooks record and recall nothing there (a session already open says so "
               "at its next start); memories saved before stay (`memory forget` removes them)")


@click.command()
@click.argument("path", required=False, type=click.Path(file_okay=False))
@json_option
def include(path: str | None, as_json: bool) -> None:
    """Undo `memory exclude` for a folder (default: this project)."""
    from memory.base.config import data_home
    from memory.base.quiet import excluded_by, excluded_paths

    folder = _folder(path)
    paths = excluded_paths(data_home())
    if folder not in paths:
        raise click.ClickException(f"{folder} is not excluded by `memory exclude`; `memory exclude --list` "
                                   "shows what is")
    _save_excluded([p for p in paths if p != folder])
    still = excluded_by(folder, data_home())
    if as_json:
        emit({"included": folder, "still_excluded_by": still})
        return
    click.echo(f"included {folder}: the hooks record and recall there again")
    if still:
        click.echo(f"but it is still excluded by {still}")


COMMANDS = [why, pause, resume, exclude, include]
