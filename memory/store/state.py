"""Live session state (task, files, decisions, todos, errors, last action), kept in SQLite and exported
as session-state.json beside the database."""

from __future__ import annotations

import time

from memory.base.privacy import clean_obj
from memory.fastpath import jsonlite as json  # not the json package: it imports re (~5-10 ms a hook)
from memory.store.db import Tx
from memory.store.workspace import Workspace, write_private

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from collections.abc import Callable
    from typing import Any

State = dict  # dict[str, Any]: a plain alias, evaluating the generic would import typing
LIST_CAPS = {"files_modified": 60, "files_read": 60, "decisions": 20, "errors": 10, "fixed": 10,
             "prompts": 8, "commands": 15, "blockers": 10, "outlined": 500, "injected_handoffs": 50}


def empty_state(session_id: str, project: str) -> State:
    return {"session_id": session_id, "project": project, "task": "", "status": "active", "prompts": [],
            "files_modified": [], "files_read": [], "decisions": [], "todos": [], "errors": [], "fixed": [],
            "blockers": [], "commands": [], "last_action": "", "tool_calls": 0, "updated_at": 0.0}


def load(ws: Workspace, session_id: str) -> State:
    return _parsed(ws, session_id, _stored(ws, session_id))


def _stored(ws: Workspace, session_id: str) -> str | None:
    row = ws.db.execute("SELECT state FROM session_state WHERE session_id = ?", (session_id,)).fetchone()
    return row["state"] if row else None


def _parsed(ws: Workspace, session_id: str, stored: str | None) -> State:
    state = empty_state(session_id, ws.project.key)
    if stored:
        try:
            state.update(json.loads(stored))
        except ValueError:
            pass
    return state


def push_unique(state: State, key: str, value: Any) -> None:
    """Append, moving an existing equal value to the end, and keep the list bounded."""
    items = [v for v in state.get(key, []) if v != value]
    items.append(value)
    state[key] = items[-LIST_CAPS.get(key, 30):]


def update(ws: Workspace, session_id: str, change: Callable[[State], None], *, export: bool = True) -> State:
    """Read-modify-write under the write lock: parallel tool hooks of one session do not lose updates."""
    with Tx(ws.db):
        stored = _stored(ws, session_id)
        state = _parsed(ws, session_id, stored)
        change(state)
        # Only what the change brought is filtered: the stored state was filtered when it was written, and
        # a long session's state at its caps (LIST_CAPS: ~700 paths, prompts, commands) cost ~5 ms CPU to
        # filter whole at every prompt and tool call. A second parse, not a copy: a change may edit the
        # dicts inside a list in place.
        state = _cleaned(state, _parsed(ws, session_id, stored))  # type: ignore[assignment]
        state["updated_at"] = time.time()
        ws.db.execute(
            """INSERT INTO session_state (session_id, project, state, updated_at) VALUES (?, ?, ?, ?)
               ON CONFLICT(session_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at""",
            (session_id, ws.project.key, json.dumps(state), state["updated_at"]),
        )
    if export:
        _export(ws, state)
    return state


_NONE = object()


def _cleaned(value: Any, before: Any) -> Any:
    """`clean_obj(value)`, with the values `before` (as stored: filtered already) holds passed as they are."""
    if value == before:
        return value
    if isinstance(value, list) and isinstance(before, list):
        known = {v for v in before if isinstance(v, str)}
        return [v if (v in known if isinstance(v, str) else v in before) else clean_obj(v) for v in value]
    if isinstance(value, dict) and isinstance(before, dict):
        return {k: _cleaned(v, before.get(k, _NONE)) for k, v in value.items()}
    return clean_obj(value)


def export(ws: Workspace, state: State) -> None:
    write_private(ws.state_path, json.dumps(state, indent=2, ensure_ascii=False))


_export = export  # `update` has a parameter named export
