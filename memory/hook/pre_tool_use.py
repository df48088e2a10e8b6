"""PreToolUse. Read: a whole Read of a code file the client would refuse (over 256 KB, or over its token cap)
is denied with the file's outline as the reason, which the model receives as the Read's result; every other
Read goes through unchanged, at the cost of one `os.stat` (memory/outline/limits.py), and the outline of a
large file the client does read is given after the Read, by PostToolUse (memory/outline/read.py).
Edit, Write, MultiEdit: what past sessions recorded about the file is given beside the edit, once per file
per session (memory/recall/point.py). Bash: the same for a file the command names (`sed -i ... a.py`, `pytest
test/test_a.py::test_b`), found by splitting the command's text, without a shell parser; a command that names
no existing file opens no database."""

from __future__ import annotations

import os

from memory.outline.limits import may_be_refused

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from typing import Any

    from memory.base.event import Event
    from memory.hook.run import Call

EDITS = ("Edit", "Write", "MultiEdit")


def handle(event: Event, call: Call) -> dict[str, Any] | None:
    tool = event.tool
    if tool in EDITS:
        return _before_edit(event, call)
    if event.tool_kind == "shell":
        return _before_command(event, call)
    if tool != "Read":
        return None
    found = may_be_refused(event.tool_input)
    if found is None:
        return None  # the common case: no database opened, nothing imported beyond limits.py
    from memory.hook.common import workspace
    from memory.outline.read import refused_read

    return refused_read(workspace(event, call), *found)


def _before_edit(event: Event, call: Call) -> dict[str, Any] | None:
    tin = event.tool_input
    if not isinstance(tin.get("file_path"), str):
        return None
    from memory.hook.common import session_id, workspace
    from memory.hook.run import context_output
    from memory.recall import point

    edits = tin.get("edits")
    first = edits[0] if isinstance(edits, list) and edits and isinstance(edits[0], dict) else {}
    old = tin.get("old_string", first.get("old_string"))
    new = tin.get("new_string", first.get("new_string", tin.get("content")))
    old_text = old if isinstance(old, str) else ""
    new_text = new[:COMMAND_CHARS * 4] if isinstance(new, str) else ""  # a Write's content: its head will do
    text = point.recall(workspace(event, call), session_id(event), tin["file_path"], old_text, new_text)
    return context_output("PreToolUse", text)


COMMAND_CHARS = 2000  # of a command read for file names: a heredoc's body is data, not the files it acts on
FILES = 8  # existing files a command names, at most
STATS = 40  # words looked up as files, at most: one stat each
WORDS = 30  # identifiers kept from a command (pytest node ids, -k expressions): the symbols it may be about
# Shell punctuation read as a word break: `a.py;`, `"a.py"`, `--file=a.py`, `$(cat a.py)`, `a.py>out`.
_BREAKS = str.maketrans({c: " " for c in ";|&()<>'\"`=,{}\n\t\\"})


def named_files(command: str, cwd: str) -> tuple[list[str], list[str]]:
    """The existing files a shell command names (absolute, in order of mention) and the identifiers beside
    them (`path::name` parts, bare words that are no file). Text is split at shell punctuation: quoting is
    not honoured, so a quoted path is found too; a word costs one stat, STATS of them at most."""
    paths: list[str] = []
    words: list[str] = []
    stats = 0
    for token in command[:COMMAND_CHARS].translate(_BREAKS).split():
        if token[0] == "-" or "$" in token or "://" in token:
            continue
        head, _, names = token.partition("::")  # a pytest node id: test/test_a.py::TestA::test_b
        words.extend(n for n in names.split("::") if n.isidentifier())
        head = head.split(":", 1)[0]  # grep's and compilers' `a.py:12:3`
        if not head or any(c in head for c in "*?[~") or len(paths) == FILES or stats == STATS:
            continue
        full = os.path.normpath(head if os.path.isabs(head) else os.path.join(cwd, head))
        stats += 1
        if os.path.isfile(full):
            if full not in paths:
                paths.append(full)
        elif head.isidentifier():
            words.append(head)
    return paths, list(dict.fromkeys(words))[:WORDS]


def _before_command(event: Event, call: Call) -> dict[str, Any] | None:
    command, cwd = event.tool_input.get("command"), event.cwd
    if not isinstance(command, str) or not os.path.isabs(cwd):
        return None
    paths, words = named_files(command, cwd)
    if not paths:
        return None  # the common case: no database opened
    from memory.hook.common import session_id, workspace
    from memory.hook.run import context_output
    from memory.recall import point

    text = point.recall_command(workspace(event, call), session_id(event), paths, words)
    return context_output("PreToolUse", text)
