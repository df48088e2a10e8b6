"""What the /memory:* slash commands run: `memory slash VERB` with the user's raw arguments on stdin.

Claude Code pastes $ARGUMENTS into the command's shell text as is, so `/memory:save don't` would break
the shell (an unbalanced quote) and `$(...)` would run. The commands therefore pass the arguments
through a quoted heredoc (never expanded by the shell) and this module splits them: the options of the
`memory` command of the same name (read from its click params, so each of them works here too) are
taken out, the rest is the query, the ids or (for save) the text verbatim, quotes included.

A `!` command that exits non-zero aborts the whole slash command, so every outcome, errors included,
is printed (to stdout: the model reads it) and the exit code is 0.
"""

from __future__ import annotations

import re
import shlex
import sys

import click

VERBS = ("search", "save", "forget", "handoff", "stats", "recent", "get", "timeline", "cleanup", "pause", "resume",
         "ui", "why")
USAGE = {
    "search": "/memory:search QUERY [--type T] [--since 7d] [--all-projects]",
    "get": "/memory:get ID...",
    "forget": "/memory:forget ID...",
    "timeline": "/memory:timeline ID [--before N] [--after N]",
    "why": "/memory:why ID [--session S]",
    "save": "/memory:save [--type decision] [--expires 30d] [--title T] TEXT",
}
# Options whose unquoted value is free text: it takes the words up to the next option, as a person means
# `/memory:save --title My title --type decision ...` (a shell would give the title one word).
MULTIWORD = frozenset({"--title", "-t"})
# save's leading options: a name, then (for an option that takes one) its value, quoted or up to a space.
_LEADING_NAME = re.compile(r"\s*(--?[a-z][a-z-]*)(?=[\s=]|$)")
_VALUE = re.compile(r"""(?:=|\s+)("(?:[^"\\]|\\.)*"|'[^']*'|\S+)""")


def tokens(raw: str) -> list[str]:
    """Shell-like words; unbalanced quotes (an apostrophe in "don't") fall back to plain words."""
    try:
        return shlex.split(raw)
    except ValueError:
        return raw.split()


def option_names(command: click.Command) -> tuple[set[str], set[str]]:
    """The command's own options, from its click params: the names that take a value, and the flags."""
    values: set[str] = set()
    flags: set[str] = set()
    for param in command.params:
        if isinstance(param, click.Option):
            (flags if param.is_flag or param.count else values).update([*param.opts, *param.secondary_opts])
    return values, flags


def split_options(command: click.Command, words: list[str]) -> tuple[list[str], list[str]]:
    """The command's options (with their values) and the other words, in order. A word that is no option of
    the command is a plain word (a query may hold `-v`); `--` ends the options, as in click."""
    values, flags = option_names(command)
    options: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--":
            rest += words[i + 1:]
            break
        if word.split("=", 1)[0] in values and "=" in word:
            options.append(word)
        elif word in values and i + 1 < len(words):
            options += [word, words[i + 1]]
            i += 1
        elif word in flags:
            options.append(word)
        else:
            rest.append(word)
        i += 1
    return options, rest


def save_arguments(command: click.Command, raw: str) -> tuple[list[str], str]:
    """Leading options, then the text exactly as typed."""
    values, flags = option_names(command)
    flags.discard("--jsonl")  # reads stdin, which here carries the slash command's own text: that is the text
    options: list[str] = []
    pos = 0
    while name := _LEADING_NAME.match(raw, pos):
        if name[1] in flags and not raw.startswith("=", name.end()):
            options.append(name[1])
            pos = name.end()
            continue
        value = _VALUE.match(raw, name.end()) if name[1] in values else None
        if value is None:
            break
        word, pos = value[1], value.end()
        if len(word) >= 2 and word[0] == word[-1] and word[0] in "\"'":
            word = word[1:-1]
        elif name[1] in MULTIWORD:
            word, pos = _words_to_next_option(raw, value.start(1), values | flags)
        options += [name[1], word]
    return options, raw[pos:].strip()


def _words_to_next_option(raw: str, start: int, names: set[str]) -> tuple[str, int]:
    """An unquoted free-text value: the words from `start` up to the next option name (or the end)."""
    for word in re.finditer(r"\S+", raw[start:]):
        if word[0].split("=", 1)[0] in names:
            end = start + word.start()
            return raw[start:end].strip(), end
    return raw[start:].strip(), len(raw)


def argv_for(cli: click.Group, verb: str, raw: str, session: str | None) -> list[str] | str:
    """The `memory` arguments for a slash command, or a message to print instead. The options are those of
    the `memory` command of the same name in the group `cli`."""
    if verb not in VERBS:
        return f"unknown slash command {verb!r}; the commands are {', '.join('/memory:' + v for v in VERBS)}"
    command = cli.commands[verb]
    if verb == "save":
        options, text = save_arguments(command, raw)
        if not text and any(o in MULTIWORD for o in options):
            return ("nothing to save after the title: put the text after the options, or quote a title of "
                    f"several words. Usage: {USAGE['save']}")
        if not text:
            return f"nothing to save. Usage: {USAGE['save']}"
        return ["save", *options, "--", text]
    options, rest = split_options(command, tokens(raw))
    if verb in ("get", "forget", "timeline", "why"):
        ids = [w.lstrip("#") for w in rest]
        if not ids:
            return f"give memory ids (from /memory:search or /memory:recent). Usage: {USAGE[verb]}"
        if not all(i.isdigit() for i in ids):
            if verb == "forget":  # words, not ids: show what they match so the user can pick
                return ["search", "--limit", "5", *options, "--", *rest]
            return f"memory ids are numbers. Usage: {USAGE[verb]}"
        if verb == "why" and len(ids) != 1:
            return f"give one memory id. Usage: {USAGE[verb]}"
        return [verb, *options, *ids]
    if verb == "search":
        if not rest:
            return f"what should I search for? Usage: {USAGE['search']}"
        return ["search", *options, "--", *rest]
    if verb == "ui":  # the slash command must return: the viewer goes on in the background
        return ["ui", "--detach", *options, *rest]
    if verb == "handoff" and session:
        options += ["--current-session", session]
    if verb in ("pause", "resume") and session and "--session" not in options:
        options += ["--session", session]  # the session the command was typed in
    return [verb, *options, *rest]


# What these print is recalled text the model reads: it goes out inside the untrusted block (memory/base/fence.py).
# Errors and usage messages are the plugin's own words and stay outside it.
RECALLING = frozenset({"search", "get", "timeline", "recent", "handoff", "why"})


def run(cli: click.Group, verb: str, raw: str, session: str | None) -> int:
    argv = argv_for(cli, verb, raw.strip(), session)
    if isinstance(argv, str):
        click.echo(f"memory: {argv}")
        return 0
    if verb == "forget" and argv[0] == "search":
        click.echo("Nothing was forgotten: /memory:forget takes memory ids. Memories that match:")
    if argv[0] not in RECALLING:
        problem = _main(cli, argv, (session or "", raw) if verb == "save" else None)
        if problem:
            click.echo(problem)
        return 0
    import contextlib
    import io

    from memory.base.fence import wrap

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        problem = _main(cli, argv)
    if out.getvalue().strip():
        click.echo(wrap(out.getvalue()))
    if problem:
        click.echo(problem)
    return 0


def _main(cli: click.Group, argv: list[str], slash: tuple[str, str] | None = None) -> str:
    """Run one `memory` command; returns its error message ('' when it ran). Every outcome is printed and
    the exit code is 0 (a `!` command that fails aborts the slash command). `slash`: the session and raw
    arguments of the typed command, for `save` to find the person's grant (memory/cli/author.py)."""
    try:
        cli.main(args=argv, prog_name="memory", standalone_mode=False, obj={"slash": slash})
    except click.ClickException as exc:
        return f"memory: {exc.format_message()}"
    except click.Abort:
        return "memory: aborted"
    except SystemExit as exc:  # a command that exits on its own (doctor): its output is already printed
        if exc.code not in (0, None):
            return f"memory: exit status {exc.code}"
    return ""


@click.command(hidden=True)
@click.argument("verb")
@click.option("--session", default="", help="The Claude Code session id (${CLAUDE_SESSION_ID}).")
def slash(verb: str, session: str) -> None:
    """Run what /memory:VERB asks, with its raw arguments on stdin (see memory/cli/slash.py)."""
    cli = click.get_current_context().find_root().command  # the `memory` group this command is part of
    assert isinstance(cli, click.Group)
    sys.exit(run(cli, verb, sys.stdin.read(), session or None))


COMMANDS = [slash]
