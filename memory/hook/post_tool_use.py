"""PostToolUse and PostToolUseFailure: turn the tool call into observations and session state; a full
Read of a large code file gets its outline instead of its body (memory/outline/read.py)."""

from __future__ import annotations

from memory.capture import tools
from memory.capture.screen import screened
from memory.hook.common import apply, session_id, touch_session, workspace
from memory.store.db import Tx

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from typing import Any

    from memory.hook.run import Call


def handle(event: dict[str, Any], call: Call) -> dict[str, Any] | None:
    if not event.get("tool_name"):
        return None
    ws = workspace(event, call)
    sid = session_id(event)
    cap = tools.tool_event(screened(event), ws.project.root)  # filter first: capture cuts what it keeps
    out = None
    if event.get("tool_name") == "Read" and event.get("hook_event_name") == "PostToolUse":
        from memory.outline.read import maybe_outline

        out = maybe_outline(ws, event, sid, cap)  # parses (if it must) before the write lock is taken
    with Tx(ws.db):
        touch_session(ws, event, tools=1)
        apply(ws, sid, cap)
    return out

