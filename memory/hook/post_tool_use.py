"""PostToolUse and PostToolUseFailure: turn the tool call into observations and session state; a full
Read of a large code file gets its outline instead of its body (memory/outline/read.py)."""

from __future__ import annotations

from memory import capture
from memory.capture import tools
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
    cap = tools.tool_event(event, ws.project.root)
    if event.get("tool_name") == "Bash":
        model_saves(ws.project.key, event, cap)
    out = None
    if event.get("tool_name") == "Read" and event.get("hook_event_name") == "PostToolUse":
        from memory.outline.read import maybe_outline

        out = maybe_outline(ws, event, sid, cap)  # parses (if it must) before the write lock is taken
    with Tx(ws.db):
        touch_session(ws, event, tools=1)
        apply(ws, sid, cap)
    return out


def model_saves(project: str, event: dict[str, Any], cap: capture.Capture) -> None:
    """A `memory save` the model ran through Bash saved the model's words, not the user's: what it saved as a
    decision becomes the model's observation (memory/capture/deciders.py), in the same transaction as the event."""
    tin = event.get("tool_input") if isinstance(event.get("tool_input"), dict) else {}
    command = str(tin.get("command") or "")
    if "memory" not in command or "save" not in command:
        return
    import time

    from memory.capture import deciders

    resp = event.get("tool_response")
    output = "\n".join(str(resp.get(k) or "") for k in ("stdout", "stderr")) if isinstance(resp, dict) else str(resp)
    cap.writes.append(lambda db: deciders.demote_model_cli_saves(
        db, deciders.saved_by_command(db, project, command, output, time.time())))
