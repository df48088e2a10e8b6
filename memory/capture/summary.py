"""A session's short summary without a model: what was asked, done, decided, and what is still open."""

from __future__ import annotations

import os
import sqlite3
import time

from memory.base.words import said_in, wording
from memory.capture import FIX_ERROR
from memory.store.state import State


def heuristic(state: State, root: str) -> str:
    parts = []
    if state.get("task"):
        parts.append(f"Asked: {state['task'][:200]}")
    files = [os.path.relpath(p, root) if p.startswith(root) else p for p in state.get("files_modified", [])]
    if files:
        parts.append(f"Changed: {', '.join(files[-8:])}")
    if state.get("fixed"):  # what was fixed; the error it fixed is its memory's to tell
        parts.append(f"Fixed: {'; '.join(f.partition(FIX_ERROR)[0][:120] for f in state['fixed'][-3:])}")
    # A decision or a last action the task already states in full is not said again (issue 26: each fact
    # once; a commit's subject as the task and the assistant's closing words the same, say).
    asked = wording(parts[0]) if state.get("task") else ""
    decided = [d[:120] for d in state.get("decisions", [])[-3:] if not said_in(d[:120], asked)]
    if decided:
        parts.append(f"Decided: {'; '.join(decided)}")
    open_todos = [t.get("content", "") for t in state.get("todos", []) if t.get("status") != "completed"]
    if open_todos or state.get("errors"):
        nxt = open_todos[:3] + [f"unresolved: {e.get('command', '')}" for e in state.get("errors", [])[-2:]]
        parts.append(f"Next: {'; '.join(str(n)[:120] for n in nxt)}")
    else:
        last = state.get("last_action", "")[:160]
        if last and parts and not said_in(last.partition(": ")[2] or last, asked):
            parts.append(f"Last: {last}")
    # A session that asked nothing with content of its own, changed, fixed and decided nothing (a greeting,
    # "ok", a question about the plugin) has no summary: it never fills a "Recent sessions" line.
    return " | ".join(parts)[:1000]


def recent(db: sqlite3.Connection, project: str, exclude: tuple[str, ...], limit: int) -> list[str]:
    """Lines for the startup context: the summaries of the project's last completed sessions, newest first.

    The extraction worker replaces the heuristic summary written at SessionEnd with a better one (asked,
    done, learned, next), so by the next session these are usually the model's or the heuristic
    extractor's."""
    if limit <= 0:
        return []
    marks = ",".join("?" * len(exclude)) or "''"
    rows = db.execute(
        f"""SELECT id, summary, coalesce(ended_at, last_event_at, started_at) AS at FROM sessions
            WHERE project = ? AND status = 'completed' AND coalesce(summary, '') != '' AND id NOT IN ({marks})
            ORDER BY at DESC LIMIT ?""",
        (project, *exclude, limit),
    ).fetchall()
    out = []
    for r in rows:
        text = " ".join(str(r["summary"]).split())
        when = time.strftime("%Y-%m-%d", time.localtime(r["at"])) if r["at"] else ""
        out.append(f"- {when}: {text[:400]}{'...' if len(text) > 400 else ''}")
    return out
