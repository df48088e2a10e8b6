"""A `memory` command that fails ends with one line (memory/present/failure.py), never a traceback. A slash
command's line goes to stdout with exit 0: the client shows stdout and aborts the command on a non-zero
exit (bin/memory)."""

from __future__ import annotations

import click

from memory.present.failure import report


def handled(ctx: click.Context, exc: Exception) -> None:
    """End the command with its one line: on stdout with exit 0 for a slash command, else on stderr, exit 1."""
    command = ctx.invoked_subcommand or "memory"
    line = report(command, exc)
    if command == "slash":
        click.echo(line)
        ctx.exit(0)
    click.echo(line, err=True)
    ctx.exit(1)
