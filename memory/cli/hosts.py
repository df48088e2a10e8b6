"""The commands that connect other coding agents to the same memory: install, uninstall (docs/hosts.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from memory.present import hosts

HOST_NAMES = sorted(hosts.EVENTS)


def _project(user: bool) -> Path | None:
    """The project a --project install writes into: the git root of the current folder (one project key for
    every host), else the folder itself."""
    if user:
        return None
    from memory.base.project import identify

    return Path(identify(str(Path.cwd())).root)


@click.command()
@click.argument("host", type=click.Choice(HOST_NAMES))
@click.option("--project", "scope", flag_value="project", default=True, help="This project's config files "
              "(the default).")
@click.option("--user", "scope", flag_value="user", help="The user's config files (every project).")
@click.option("--rules", is_flag=True, help="Also add an AGENTS.md section telling the agent to call the memory "
              "MCP tools (for modes that run no hooks, such as `codex exec`).")
@click.option("--dry-run", is_flag=True, help="Show the diff, write nothing.")
def install(host: str, scope: str, rules: bool, dry_run: bool) -> None:
    """Hook HOST (codex, cursor, copilot, gemini, antigravity, cline, opencode, qwen) into this memory,
    merged into its config files: the user's other hooks kept, a backup made, installing twice changes
    nothing."""
    try:
        lines = hosts.install(host, _project(scope == "user"), rules=rules, dry_run=dry_run)
    except ValueError as exc:
        click.echo(f"memory install {host}: {exc}", err=True)
        sys.exit(2)
    for line in lines:
        if line:
            click.echo(line.rstrip("\n"))


@click.command()
@click.argument("host", type=click.Choice(HOST_NAMES))
def uninstall(host: str) -> None:
    """Remove exactly what `memory install HOST` added: the user's files as they were."""
    for line in hosts.uninstall(host):
        click.echo(line)


COMMANDS = [install, uninstall]
