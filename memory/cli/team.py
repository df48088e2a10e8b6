"""`memory team ...`: team memory on PostgreSQL + pgvector."""

from __future__ import annotations

import sys
import time
from typing import Any

import click

from memory.base.words import count
from memory.cli.common import MEMORY_ID, emit, fail_on_missing, json_option, open_project, project_option
from memory.team.config import TeamError


def _when(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts)) if ts else "never"


def _fail(exc: TeamError) -> click.ClickException:
    return click.ClickException(str(exc))


@click.group()
def team() -> None:
    """Share the project's memories with a team through PostgreSQL + pgvector."""


@team.command()
@click.argument("url", required=False)
@click.option("--project-id", help="The project's name on the server, the same on every machine "
              "(default: its git remote).")
@click.option("--share-handoffs", is_flag=True, help="Share this machine's handoffs too (personal by default).")
@project_option
@json_option
def init(url: str | None, project_id: str | None, share_handoffs: bool, project: str | None, as_json: bool) -> None:
    """Link the project to a team server: create or migrate the schema, check pgvector, sync.

    URL is postgresql://USER:PASSWORD@HOST:PORT/DATABASE; `-` reads it from stdin, and without it
    MEMORY_TEAM_URL is used (either keeps the password out of your shell history). It is kept in the data
    dir (team.json, owner-only) and never printed."""
    from memory.base.config import env
    from memory.team import job
    from memory.team.config import check_url

    if url == "-":
        url = sys.stdin.readline().strip()
    url = url or env("MEMORY_TEAM_URL").strip()
    if not url:
        raise click.UsageError("give the server's URL: memory team init postgresql://USER:PASSWORD@HOST/DB "
                               "(or `-` to read it from stdin, or set MEMORY_TEAM_URL)")
    ws = open_project(project)
    try:
        check_url(url)
        out = job.init(ws, url, pid=project_id, share_handoffs=share_handoffs)
    except TeamError as exc:
        raise _fail(exc) from None
    if as_json:
        emit(out)
        return
    click.echo(f"linked {ws.project.name} to team project {out['project_id']} on {out['server']} "
               f"(pgvector {out['pgvector']}, {out['migrations_applied']} schema migrations applied)")
    click.echo(f"pushed {out['push']['pushed']}, pulled {out['pull']['pulled']} (this machine: {out['machine']})")


@team.command()
@click.option("--offline", is_flag=True, help="Do not ask the server (local state only).")
@project_option
@json_option
def status(offline: bool, project: str | None, as_json: bool) -> None:
    """What is shared, what waits in the outbox, when the last sync was, and the server's view."""
    from memory.team import outbox
    from memory.team.config import url_for

    ws = open_project(project)
    data = outbox.status(ws.db)
    url = url_for(ws)
    data["configured"] = bool(url)
    if url and data["linked"] and not offline:
        from memory.team import sync

        try:
            with sync.connect(url) as conn:
                data["server_view"] = sync.server_counts(conn, data["project_id"])
        except TeamError as exc:
            data["server_view"] = {"error": str(exc)}
    if as_json:
        emit(data)
        return
    if not data["linked"]:
        click.echo("team sync: off for this project (memory team init URL, or MEMORY_TEAM_URL)")
        return
    click.echo(f"team project {data['project_id']} on {data['server']} (this machine: {data['machine']})")
    click.echo(f"shared    {count(data['shared'], 'team memory')} here ({data['shared_by_me']} written here, "
               f"{data['from_team']} from teammates); {data['personal']} personal, never sent")
    click.echo(f"types     shared by default: {', '.join(data['types'])}; handoffs "
               f"{'shared' if data['share_handoffs'] else 'personal'}")
    click.echo(f"pending   {count(data['pending_upserts'], 'change')} and {count(data['pending_deletes'], 'deletion')} "
               "in the outbox")
    click.echo(f"last push {_when(data['last_push_at'])}, last pull {_when(data['last_pull_at'])}")
    if data["dropped_author"] or data["forked"] or data["not_ours"]:
        click.echo(f"authors   {count(data['dropped_author'], 'pulled change')} dropped (its author changed under "
                   f"the same id); {count(data['forked'], 'edit')} of teammates' memories sent as new memories "
                   f"of yours; {count(data['not_ours'], 'change')} to teammates' memories kept here only")
    if data["last_error"]:
        click.echo(f"last error ({_when(data['last_error_at'])}): {data['last_error']}")
    view = data.get("server_view")
    if view:
        click.echo(f"server    {view['error']}" if "error" in view else
                   f"server    {count(view['memories'], 'memory')}, {view['tombstones']} deleted, from "
                   f"{count(view['machines'], 'machine')}; last write {view['last_write'] or '-'}")


def _run(project: str | None, as_json: bool, **which: bool) -> None:
    from memory.team import job

    ws = open_project(project)
    try:
        out = job.run(ws, **which)
    except TeamError as exc:
        raise _fail(exc) from None
    if as_json:
        emit(out)
        return
    if "push" in out:
        p = out["push"]
        click.echo(f"pushed {p['pushed']} in {p['batches']} batches; {p['pending']} pending")
    if "pull" in out:
        p = out["pull"]
        click.echo(f"pulled {p['pulled']}: {p['inserted']} new, {p['updated']} updated, {p['deleted']} deleted"
                   + (f", {p['kept_local']} kept (newer here)" if p["kept_local"] else "")
                   + (f", {p['dropped']} dropped (author changed)" if p.get("dropped") else ""))


@team.command()
@project_option
@json_option
def push(project: str | None, as_json: bool) -> None:
    """Send the outbox to the team server now."""
    _run(project, as_json, do_push=True, do_pull=False)


@team.command()
@project_option
@json_option
def pull(project: str | None, as_json: bool) -> None:
    """Fetch the team's changes since the last pull now."""
    _run(project, as_json, do_push=False, do_pull=True)


@team.command()
@project_option
@json_option
def sync(project: str | None, as_json: bool) -> None:
    """Push, then pull (what the worker does in the background)."""
    _run(project, as_json, do_push=True, do_pull=True)


@team.command()
@click.argument("ids", nargs=-1, type=MEMORY_ID, required=True)
@click.option("--no-push", is_flag=True, help="Only queue the deletions (the worker sends them).")
@project_option
def forget(ids: tuple[int, ...], no_push: bool, project: str | None) -> None:
    """Delete memories for everyone: tombstones go to the team, the local rows go now."""
    from memory.team import outbox

    ws = open_project(project)
    if outbox.link_row(ws.db) is None:
        raise click.ClickException("this project is not linked to a team server: `memory forget` deletes "
                                   "locally; `memory team init URL` first to delete for everyone")
    gone, theirs = outbox.forget_for_everyone(ws.db, list(ids))
    for mid, author in theirs.items():
        click.echo(f"forgot #{mid} here only: it is {author}'s memory, and only its author can delete it for "
                   "everyone", err=True)
    if gone:
        click.echo(f"forgot {', '.join(f'#{i}' for i in gone)} for everyone")
        if not no_push:
            _try_push(ws)
    fail_on_missing(ids, [*gone, *theirs])


def _try_push(ws: Any) -> None:
    from memory.team import job

    try:
        job.run(ws, do_push=True, do_pull=False)
        click.echo("sent to the team server")
    except TeamError as exc:
        click.echo(f"queued; not sent yet: {exc}", err=True)


@team.command()
@click.argument("ids", nargs=-1, type=MEMORY_ID, required=True)
@click.option("--personal", is_flag=True, help="Make them personal again (removed from the team's copies).")
@project_option
def share(ids: tuple[int, ...], personal: bool, project: str | None) -> None:
    """Share memories with the team (or, with --personal, stop sharing them)."""
    from memory.team import outbox

    ws = open_project(project)
    done = outbox.share(ws.db, list(ids), "personal" if personal else "team")
    if done:
        click.echo(f"{'personal' if personal else 'shared'}: {', '.join(f'#{i}' for i in done)}")
        if outbox.link_row(ws.db) is None:  # only the scope changed: say so, and how to link
            click.echo(f"scope set to {'personal' if personal else 'team'}; {outbox.UNLINKED}", err=True)
    fail_on_missing(ids, done)


@team.command()
@click.argument("query", nargs=-1, required=True)
@click.option("--limit", "-n", default=10, show_default=True, type=click.IntRange(1, 100))
@project_option
@json_option
def search(query: tuple[str, ...], limit: int, project: str | None, as_json: bool) -> None:
    """Search the team's memories on the server (full text + vectors)."""
    from memory.team import outbox, sync
    from memory.team.config import url_for

    ws = open_project(project)
    url, link = url_for(ws), outbox.link_row(ws.db)
    if not url or link is None:
        raise click.ClickException("this project is not linked to a team server: run `memory team init URL`")
    from memory.base import worker_client

    # The worker answers when it runs (its embedder is loaded); else the search runs here.
    answer = worker_client.ask(ws.home, {"op": "team_search", "project": ws.project.key, "query": " ".join(query),
                                         "limit": limit}, timeout=10.0)
    if answer and answer.get("ok"):
        hits = answer["hits"]
    else:
        try:
            with sync.connect(url) as conn:
                hits = sync.remote_search(conn, link["project_id"], " ".join(query), limit)
        except TeamError as exc:
            raise _fail(exc) from None
    if as_json:
        emit(hits)
        return
    if not hits:
        click.echo("no team memories match")
    for h in hits:
        click.echo(f"{h['uid'][:8]}  {h['type']:<10} {h['author']:<12} {h['title']}")


@team.command()
@click.option("--limit", "-n", default=5, show_default=True, type=click.IntRange(1, 100))
@project_option
@json_option
def handoffs(limit: int, project: str | None, as_json: bool) -> None:
    """The team's latest shared handoffs (members who linked with --share-handoffs)."""
    from memory.team import outbox, sync
    from memory.team.config import url_for

    ws = open_project(project)
    url, link = url_for(ws), outbox.link_row(ws.db)
    if not url or link is None:
        raise click.ClickException("this project is not linked to a team server: run `memory team init URL`")
    try:
        with sync.connect(url) as conn:
            rows = sync.team_handoffs(conn, link["project_id"], limit)
    except TeamError as exc:
        raise _fail(exc) from None
    if as_json:
        emit(rows)
        return
    if not rows:
        click.echo("no shared handoffs (handoffs are personal unless a member links with --share-handoffs)")
    for r in rows:
        click.echo(f"== {r['author']} on {r['machine']}, {_when(r['created_at'])} ({r['trigger']})")
        click.echo(r["content"])
        click.echo("")


@team.command()
@click.argument("role")
@click.option("--project-id", help="Team project (default: this project's).")
@project_option
def grant(role: str, project_id: str | None, project: str | None) -> None:
    """Make a PostgreSQL role a member of the team project (run by the schema's owner)."""
    from memory.team import sync
    from memory.team.config import project_id as resolve_pid
    from memory.team.config import url_for

    ws = open_project(project)
    url = url_for(ws)
    if not url:
        raise click.ClickException("no team server for this project: run `memory team init URL` first")
    try:
        name = resolve_pid(ws, project_id)
        with sync.connect(url) as conn:
            sync.add_member(conn, name, role)
    except TeamError as exc:
        raise _fail(exc) from None
    click.echo(f"{role} is a member of team project {name}")


COMMANDS = [team]
