"""Handoffs: the state of the work written down before a compaction (and at each turn's end), no model
call, bounded in size, so that the next context starts where this one stopped."""

from __future__ import annotations

import os
import sqlite3

from memory.base import clock
from memory.base.privacy import clean
from memory.base.words import said_in, told, wording
from memory.capture import FAILED_TITLE, FIXED_TITLE, OWN_SLASH, carries_content
from memory.store import state as session_state
from memory.store.db import Tx
from memory.store.state import State
from memory.store.workspace import Workspace

MAX_HANDOFF_CHARS = 6000
# Session-state key set by PreCompact and cleared once the handoff reached the model (SessionStart(compact)
# or, when that context was lost, the next prompt): memory/recall/inject.py lost_compact_handoff.
COMPACT_PENDING = "compact_handoff_pending"
CARRIED = "carried"  # a rendered state's task and last action are another session's (_carried)
NOTES = "Recorded this session:"  # the heading of the session's notable memories, one `- [type #id] title` each


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
    # left out of the prompts may hold them), nor is a greeting or a go-ahead ("hello", "ok": no content).
    later = [p for p in state.get("prompts", []) if p != state.get("task") and not p.startswith(OWN_SLASH)
             and carries_content(p)]
    if len(state.get("prompts", [])) > 1 and later:
        lines.append("Later requests: " + " | ".join(p[:160] for p in later[-4:]))
    if state.get("compact_instructions"):
        lines.append(f"Compaction focus asked by the user: {state['compact_instructions']}")
    # Each fact is said once (issue 26): a last action ("User asked: ...") or a decision that the task or a
    # request already states in full is not said again, nor a note of this session whose title the lines
    # above hold.
    asked = wording("\n".join(lines))
    action = state.get("last_action", "")[:500]
    if action and not said_in(action.partition(": ")[2] or action, asked):
        lines.append(f"Last action: {action}")
    if state.get("files_modified"):
        lines.append("Files modified: " + ", ".join(_rel(p, root) for p in state["files_modified"][-25:]))
    if state.get("files_read"):
        lines.append("Files read: " + ", ".join(_rel(p, root) for p in state["files_read"][-15:]))
    decisions = [d[:300] for d in state.get("decisions", [])[-8:] if not said_in(d[:300], asked)]
    if decisions:
        lines.append("Decisions:")
        lines += [f"- {d}" for d in decisions]
    todos = state.get("todos") or []
    if todos:
        lines.append("Todos:")
        lines += [f"- [{t.get('status', 'pending')}] {str(t.get('content', ''))[:200]}" for t in todos[:15]]
    if state.get("errors"):
        lines.append("Unresolved errors:")
        lines += [f"- `{e.get('command', '')[:120]}`: {e.get('error', '')[:200]}" for e in state["errors"][-4:]]
    if state.get("fixed"):
        # Whole: each is bounded where it is made (tools._resolve), and is its fix memory's text, which
        # this line then says once for the startup (a note or memory line that repeats it is left out).
        lines.append("Fixed this session: " + "; ".join(f[:500] for f in state["fixed"][-4:]))
    if state.get("blockers"):
        lines.append("Blockers: " + "; ".join(b[:200] for b in state["blockers"][-4:]))
    if state.get("commands"):
        lines.append("Recent commands: " + "; ".join(f"`{c[:100]}`" for c in state["commands"][-5:]))
    said = wording("\n".join(lines))
    notes = [n for n in notes or [] if not said_in(n["title"][:160], said) and not told(n["title"], n["content"], said)]
    if notes:  # each with its memory's id: the startup memories list shows that memory once (inject.py)
        lines.append(NOTES)
        lines += [f"- [{n['type']} #{n['id']}] {n['title'][:160]}" for n in notes]
    body = "\n".join(lines)
    if len(body) > MAX_HANDOFF_CHARS:
        body = body[: MAX_HANDOFF_CHARS - 20].rsplit("\n", 1)[0] + "\n[... cut ...]"
    return clean(body)


def fixed_later(db: sqlite3.Connection, rows: list[tuple[int, str, str | None]]) -> set[int]:
    """The ids of the command failures among (id, title, session) rows that their session fixed afterwards:
    the fix's memory says the failure's error with it (memory/capture/tools.py _resolve), so the failure is
    not told beside it. A failure of the same command after its fix is still open. One indexed read."""
    head, _, tail = FAILED_TITLE.partition("{}")
    failed = [i for i, title, session in rows if session and title.startswith(head) and title.endswith(tail)]
    if not failed:
        return set()
    before, _, after = FIXED_TITLE.partition("{}")
    return {r[0] for r in db.execute(  # the fix's title made of the failure's command, in SQL
        f"""SELECT f.id FROM memories f JOIN memories x ON x.session_id = f.session_id
            AND x.title = ? || substr(f.title, ?, length(f.title) - ?) || ? AND x.updated_at >= f.updated_at
            WHERE f.id IN ({','.join('?' * len(failed))})""",
        (before, len(head) + 1, len(head) + len(tail), after, *failed))}


def write(ws: Workspace, state: State, trigger: str) -> int:
    """Store a handoff. The per-turn ('stop') handoff of a session is replaced, not accumulated."""
    rows = ws.db.execute(
        """SELECT id, type, title, content, session_id FROM memories WHERE session_id = ? AND type IN
           ('decision', 'bugfix', 'discovery', 'feature', 'refactor', 'learning')
           ORDER BY importance DESC, created_at DESC LIMIT 16""",
        (state["session_id"],),
    ).fetchall()
    fixed = fixed_later(ws.db, [(r["id"], r["title"], r["session_id"]) for r in rows])
    notes = [r for r in rows if r["id"] not in fixed][:8]
    content = render(_carried(ws, state), ws.project.root, notes)
    now = clock.now()
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
    if row is not None and max_age_s is not None and clock.now() - row["created_at"] > max_age_s:
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
    if row and max_age_s is not None and clock.now() - row["created_at"] > max_age_s:
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
