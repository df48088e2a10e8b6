"""PreToolUse (Read): a whole Read of a code file the client would refuse (over 256 KB, or over its token cap)
is denied with the file's outline as the reason, which the model receives as the Read's result. Every other
Read goes through unchanged, at the cost of one `os.stat` (memory/outline/limits.py); the outline of a large
file the client does read is given after the Read, by PostToolUse (memory/outline/read.py)."""

from __future__ import annotations

from memory.outline.limits import may_be_refused

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from typing import Any

    from memory.hook.run import Call


def handle(event: dict[str, Any], call: Call) -> dict[str, Any] | None:
    if event.get("tool_name") != "Read":
        return None
    found = may_be_refused(event.get("tool_input"))
    if found is None:
        return None  # the common case: no database opened, nothing imported beyond limits.py
    from memory.hook.common import workspace
    from memory.outline.read import refused_read

    return refused_read(workspace(event, call), *found)
