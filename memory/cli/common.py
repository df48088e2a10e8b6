"""What every `memory` command module shares: finding and opening the project, printing JSON, the common
options and argument types. Imports no command module (they import this one)."""

from __future__ import annotations

import json
import os
from typing import Any

import click

from memory.base.project import project_folder
from memory.base.timeparse import parse_when
from memory.store.workspace import Workspace, all_projects


def workspace(project: str | None) -> Workspace:
    """--project takes a folder (its git project) or a project key/name from `memory stats --all`."""
    if project and not os.path.isdir(project):
        for meta in all_projects():
            if project in (meta.get("key"), meta.get("name")):
                return Workspace.for_dir(meta["root"]) if os.path.isdir(meta["root"]) else _by_key(meta)
        raise click.UsageError(f"no project {project!r}: give a folder, or a key or name from `memory projects`")
    # As the hooks decide: CLAUDE_PROJECT_DIR stays put when the agent cds (Bash tool, MCP server).
    return Workspace.for_dir(project or project_folder(os.getcwd()))


def _by_key(meta: dict[str, Any]) -> Workspace:
    from memory.base.project import Project

    return Workspace(Project(meta["key"], meta["name"], meta["root"], meta.get("remote")))


def open_project(project: str | None) -> Workspace:
    """The project's workspace with its database open (created when missing): for commands that write."""
    return opened(workspace(project))


def opened(ws: Workspace) -> Workspace:
    from memory.base import notices

    before = len(notices.pending())
    ws.db  # noqa: B018 - opens and migrates; a corrupt file is moved aside and recorded as a notice
    for notice in notices.pending()[before:]:
        click.echo(f"memory: {notice.get('message')}", err=True)
    return ws


def no_memory_yet(ws: Workspace) -> str:
    return (f"no memory for project {ws.project.name} yet ({ws.project.root}): the plugin records it while you "
            "work there with Claude Code, or `memory save` adds one")


def existing(ws: Workspace, as_json: bool = False, empty: Any = None) -> Workspace | None:
    """The project's workspace for a read-only command, or None when the project has no database: then
    nothing is created (a read in any folder must not leave a database behind) and the command says so
    (JSON: `empty`)."""
    if os.path.exists(ws.db_path):
        return opened(ws)
    if as_json:
        emit(empty)
    else:
        click.echo(no_memory_yet(ws))
    return None


def existing_or_fail(project: str | None, what: str) -> Workspace:
    """As existing, for a command about given ids: no database is an error naming them."""
    ws = workspace(project)
    if not os.path.exists(ws.db_path):
        raise click.ClickException(f"no {what}: {no_memory_yet(ws)}")
    return opened(ws)


def emit(data: Any) -> None:
    """--json output: indented, non-ASCII text as is (not \\u escapes), anything else by its str()."""
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


project_option = click.option("--project", "-p", help="Project folder, or a project key or name (default: cwd).")
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")


class Fraction(click.FloatRange):
    """0 to 1, and not NaN (a FloatRange lets NaN through: every comparison with it is false)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if number != number:
            self.fail("nan is not a number from 0 to 1", param, ctx)
        return number


MEMORY_ID = click.IntRange(1, 2**63 - 1)  # SQLite's integer range: a larger number is a usage error, not a crash


def fail_on_missing(asked: tuple[int, ...], found: list[int] | set[int]) -> None:
    """A command about given ids, once it has done what it could: the ids not there are an error."""
    missing = sorted(set(asked) - set(found))
    if missing:
        raise click.ClickException(f"no memory with id {', '.join(map(str, missing))}")


def when(value: str | None) -> float | None:
    """A --since/--until value as a unix time; a bad one is a usage error saying what to write."""
    if value is None:
        return None
    try:
        return parse_when(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
