"""The `memory` command line: the same operations as the library, one command each.

This module builds the group and adds the commands of its modules (memories, maintain, learn, semantic,
team, audit, steer, transfer, slash, ui, hosts); what they share is in memory/cli/common.py, which imports none
of them.

Cold side, the top layer (above mcp, which `memory mcp` starts): may import every other memory package
and click. Nothing imports it except the entry points (bin/memory, `python -m memory`, the `memory`
console script)."""

from __future__ import annotations

import os
import sys

import click

from memory import __version__
from memory.cli import audit, hosts, learn, maintain, memories, semantic, slash, steer, team, transfer, ui


def _readable(arg: str) -> str:
    """An argument as text SQLite and the terminal accept: bytes that were not UTF-8 reach Python as lone
    surrogates (which no encoder takes) and become U+FFFD; a NUL (only possible in-process) goes too."""
    if arg.isascii() and "\x00" not in arg:
        return arg
    try:
        raw = arg.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no byte came from
        raw = arg.encode("utf-8", "replace")
    return raw.decode("utf-8", "replace").replace("\x00", "\ufffd")


class _Group(click.Group):
    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, [_readable(a) for a in args])

    def invoke(self, ctx: click.Context) -> object:
        """Any command's failure as one line, never a traceback (memory/cli/failure.py)."""
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception as exc:  # noqa: BLE001 - the one place a command's unexpected error is told
            from memory.cli import failure

            failure.handled(ctx, exc)
            raise  # not reached: handled exits


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
# The version from memory/__init__.py, not the installed distribution's metadata: a shared venv
# (scripts/venv_store.py) runs the plugin from its folder, not installed, and has none.
@click.version_option(version=__version__, message="memory %(version)s")
@click.option("--home", type=click.Path(file_okay=False), help="Data dir (default: MEMORY_HOME, else "
              "CLAUDE_PLUGIN_DATA, else the installed plugin's).")
def cli(home: str | None) -> None:
    """Persistent memory for Claude Code: search, inspect and manage what the plugin remembers."""
    if home:
        os.environ["MEMORY_HOME"] = os.path.abspath(os.path.expanduser(home))


for _module in (memories, maintain, learn, semantic, team, audit, steer, transfer, slash, ui, hosts):
    for _command in _module.COMMANDS:
        cli.add_command(_command)


def main() -> None:
    if hasattr(sys.stdin, "reconfigure"):  # stdin that is not UTF-8: U+FFFD, not a UnicodeDecodeError
        sys.stdin.reconfigure(errors="replace")
    cli(prog_name="memory")
