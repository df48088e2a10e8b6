"""Handoffs: the state of the work written down before a compaction (and at each turn's end), no model
call, bounded in size, so that the next context starts where this one stopped."""

from __future__ import annotations

import os
import sqlite3
import time

from memory.base.privacy import clean
from memory.capture import OWN_SLASH
from memory.store import state as session_state
from memory.store.db import Tx
from memory.store.state import State
from memory.store.workspace import Workspace

MAX_HANDOFF_CHARS = 6000
# Session-state key set by PreCompact and cleared once the handoff reached the model (SessionStart(compact)
# or, when that context was lost, the next prompt): memory/recall/inject.py lost_compact_handoff.
COMPACT_PENDING = "compact_handoff_pending"
CARRIED = "carried"  # a rendered state's task and last action are another session's (_carried)


def _rel(path: str, root: str) -> str:
    try:
        rel = os.path.relpath(path, root)
        return path if rel.startswith("..") else rel
    except ValueError:
        return path


def render(state: State, root: str, notes: list[sqlite3.Row] | None = None) -> str:
    lines: list[str] = []
    if state.get("task"):
        lines.append(f"Task{' (of the last session that worked)' if state.get(CARRIED) else ''}: {state['task']}")
    # The plugin's own slash commands are no requests of the work (states recorded before they were
    # left out of the prompts may hold them).
    later = [p for p in state.get("prompts", []) if p != state.get("task") and not p.startswith(OWN_SLASH)]
    if len(state.get("prompts", [])) > 1 and later:
        lines.append("Later requests: " + " | ".join(p[:160] for p in later[-4:]))
    if state.get("compact_instructions"):
        lines.append(f"Compaction focus asked by the user: {state['compact_instructions']}")
    if state.get("last_action"):
        lines.append(f"Last action: {state['last_action'][:500]}")
    if state.get("files_modified"):
        lines.append("Files modified: " + ", ".join(_rel(p, root) for p in state["files_modified"][-25:]))
    if state.get("files_read"):
        lines.append("Files read: " + ", ".join(_rel(p, root) for p in state["files_read"][-15:]))
    if state.get("decisions"):
        lines.append("Decisions:")
        lines += [f"- {d[:300]}" for d in state["decisions"][-8:]]
    todos = state.get("todos") or []
    if todos:
        lines.append("Todos:")
        lines += [f"- [{t.get('status', 'pending')}] {str(t.get('content', ''))[:200]}" for t in todos[:15]]
    if state.get("errors"):
        lines.append("Unresolved errors:")
        lines += [f"- `{e.get('command', '')[:120]}`: {e.get('error', '')[:200]}" for e in state["errors"][-4:]]
    if state.get("fixed"):
        lines.append("Fixed this session: " + "; ".join(f[:160] for f in state["fixed"][-4:]))
    if state.get("blockers"):
        lines.append("Blockers: " + "; ".join(b[:200] for b in state["blockers"][-4:]))
    if state.get("commands"):
        lines.append("Recent commands: " + "; ".join(f"`{c[:100]}`" for c in state["commands"][-5:]))
    if notes:
        lines.append("Recorded this session:")
        lines += [f"- [{n['type']}] {n['title'][:160]}" for n in notes]
    body = "\n".join(lines)
    if len(body) > MAX_HANDOFF_CHARS:
        body = body[: MAX_HANDOFF_CHARS - 20].rsplit("\n", 1)[0] + "\n[... cut ...]"
    return clean(body)


def write(ws: Workspace, state: State, trigger: str) -> int:
    """Store a handoff. The per-turn ('stop') handoff of a session is replaced, not accumulated."""
    notes = ws.db.execute(
        """SELECT type, title FROM memories WHERE session_id = ? AND type IN
           ('decision', 'bugfix', 'discovery', 'feature', 'refactor', 'learning')
           ORDER BY importance DESC, created_at DESC LIMIT 8""",
        (state["session_id"],),
    ).fetchall()
    content = render(_carried(ws, state), ws.project.root, notes)
    now = time.time()
    with Tx(ws.db):
        if trigger == "stop":
            ws.db.execute("DELETE FROM handoffs WHERE session_id = ? AND trigger = 'stop'", (state["session_id"],))
        cur = ws.db.execute(
            "INSERT INTO handoffs (project, session_id, trigger, content, created_at) VALUES (?, ?, ?, ?, ?)",
            (ws.project.key, state["session_id"], trigger, content, now),
        )
    return int(cur.lastrowid or 0)


# A session did real work when it changed a file, ran a command or took a decision (errors and fixes come
# from commands). Only such a session's handoff leads the next startup: a session of questions, reads or
# slash commands (`/memory:stats`) leaves a handoff too, but it must not push the last real one out of
# the startup context (issue 13.9).
WORK_KEYS = ("files_modified", "commands", "decisions", "fixed", "errors")
# The same test on session_state rows: a session is meaningful when one of these lists is not empty.
_MEANINGFUL_SQL = " OR ".join(f"json_array_length(s.state, '$.{k}') > 0" for k in WORK_KEYS)


def _carried(ws: Workspace, state: State) -> State:
    """A session that did no work of its own and was asked nothing with content (it continued, greeted,
    looked) hands over the task and last action of the last session that worked, not its own "ok"."""
    if state.get("task") or any(state.get(k) for k in WORK_KEYS):
        return state
    row, _ = for_startup(ws, state["session_id"])
    prev = session_state.load(ws, row["session_id"]) if row is not None else None
    if not prev or not prev.get("task") and not prev.get("last_action"):
        return state
    return {**state, "task": prev.get("task", ""), "last_action": prev.get("last_action", ""), CARRIED: True}


def for_startup(ws: Workspace, session_id: str, max_age_s: float | None = None) -> tuple[sqlite3.Row | None, int]:
    """The handoff a new session leads with: the latest of the last session that did real work (the
    latest of any session when none did), and how many sessions left handoffs after it without working."""
    row = ws.db.execute(
        f"""SELECT h.* FROM handoffs h JOIN session_state s ON s.session_id = h.session_id
            WHERE h.project = ? AND h.session_id != ? AND ({_MEANINGFUL_SQL})
            ORDER BY h.created_at DESC, h.id DESC LIMIT 1""",
        (ws.project.key, session_id),
    ).fetchone()
    later = 0
    if row is None:  # no session worked: the latest that was asked something of its own, else the latest
        row = ws.db.execute(
            """SELECT h.* FROM handoffs h LEFT JOIN session_state s ON s.session_id = h.session_id
               WHERE h.project = ? AND h.session_id != ?
               ORDER BY coalesce(json_extract(s.state, '$.task'), '') != '' DESC, h.created_at DESC, h.id DESC
               LIMIT 1""",
            (ws.project.key, session_id),
        ).fetchone()
    else:
        later = ws.db.execute(
            "SELECT count(DISTINCT session_id) FROM handoffs WHERE project = ? AND created_at > ? AND session_id != ?",
            (ws.project.key, row["created_at"], session_id),
        ).fetchone()[0]
    if row is not None and max_age_s is not None and time.time() - row["created_at"] > max_age_s:
        return None, 0
    return row, int(later)


def latest(ws: Workspace, session_id: str | None = None, max_age_s: float | None = None) -> sqlite3.Row | None:
    if session_id:
        row = ws.db.execute(
            "SELECT * FROM handoffs WHERE session_id = ? ORDER BY created_at DESC, id DESC LIMIT 1",
            (session_id,),
        ).fetchone()
        if row:
            return row
    row = ws.db.execute(
        "SELECT * FROM handoffs WHERE project = ? ORDER BY created_at DESC, id DESC LIMIT 1",
        (ws.project.key,),
    ).fetchone()
    if row and max_age_s is not None and time.time() - row["created_at"] > max_age_s:
        return None
    return row


def compact_pending(ws: Workspace, session_id: str) -> bool:
    """Whether a PreCompact of this session wrote a handoff that no SessionStart(compact) delivered yet.
    One indexed read of one JSON key: the prompt hook asks it every time."""
    row = ws.db.execute(f"SELECT json_extract(state, '$.{COMPACT_PENDING}') FROM session_state WHERE session_id = ?",
                        (session_id,)).fetchone()
    return bool(row and row[0])


def mark_compact_pending(ws: Workspace, session_id: str) -> None:
    session_state.update(ws, session_id, lambda s: s.__setitem__(COMPACT_PENDING, True))


def compact_delivered(ws: Workspace, session_id: str) -> None:
    if compact_pending(ws, session_id):
        session_state.update(ws, session_id, lambda s: s.pop(COMPACT_PENDING, None))
