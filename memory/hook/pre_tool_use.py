"""PreToolUse. Read: a whole Read of a code file the client would refuse (over 256 KB, or over its token cap)
is denied with the file's outline as the reason, which the model receives as the Read's result; every other
Read goes through unchanged, at the cost of one `os.stat` (memory/outline/limits.py), and the outline of a
large file the client does read is given after the Read, by PostToolUse (memory/outline/read.py).
Edit, Write, MultiEdit: what past sessions recorded about the file is given beside the edit, once per file
per session (memory/recall/point.py)."""

from __future__ import annotations

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
    old_text = old if isinstance(old, str) else ""
    text = point.recall(workspace(event, call), session_id(event), tin["file_path"], old_text)
    return context_output("PreToolUse", text)
