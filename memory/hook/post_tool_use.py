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

    from memory import store
    from memory.base.event import Event
    from memory.hook.run import Call
    from memory.store.workspace import Workspace


def handle(event: Event, call: Call) -> dict[str, Any] | None:
    if not event.tool:
        return None
    ws = workspace(event, call)
    sid = session_id(event)
    cap = tools.tool_event(screened(event), ws.project.root)  # filter first: capture cuts what it keeps
    out = None
    if event.tool == "Read" and not event.failed:
        from memory.outline.read import maybe_outline

        out = maybe_outline(ws, event, sid, cap)  # parses (if it must) before the write lock is taken
    with Tx(ws.db):
        touch_session(ws, event, tools=1)
        saved = apply(ws, sid, cap)
    if not event.failed:
        _symbols(ws, event, saved)
    return out


def _symbols(ws: Workspace, event: Event, saved: list[store.Saved]) -> None:
    """An edit's change memory records the definitions it was in (memory/store/symbols.py); a Read or an edit
    of a file marks stale the memories whose recorded definitions of it have changed since."""
    tool, tin = event.tool, event.tool_input
    if tool not in ("Read", "Edit", "MultiEdit", "Write"):
        return
    path = tin.get("file_path")
    if not isinstance(path, str):
        return
    from memory.store import symbols

    data = symbols.read(path)  # read once: the staleness check and an edit's record both need it
    if data is None:
        return
    symbols.check(ws.db, path, data, session_id(event))
    changes = [s.id for s in saved if s.id is not None and s.action in ("inserted", "updated")]
    if tool != "Read" and changes:
        _record_edit(ws, path, data, str(tin.get("new_string") or tin.get("content") or ""), changes)


def _record_edit(ws: Workspace, path: str, data: bytes, new: str, ids: list[int]) -> None:
    from memory.base.definitions import scopes
    from memory.store import symbols

    at = data.find(new.encode("utf-8", "replace")) if new.strip() else -1
    names = scopes(data, data.count(b"\n", 0, at) + 1) if at >= 0 else []
    if names:
        text = data.decode("utf-8", "replace")
        with Tx(ws.db):
            for mid in ids:
                symbols.record(ws.db, mid, path, text, names)
