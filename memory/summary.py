"""A session's short summary without a model: what was asked, done, decided, and what is still open."""

from __future__ import annotations

import os

from memory.state import State


def heuristic(state: State, root: str) -> str:
    parts = []
    if state.get("task"):
        parts.append(f"Asked: {state['task'][:200]}")
    files = [os.path.relpath(p, root) if p.startswith(root) else p for p in state.get("files_modified", [])]
    if files:
        parts.append(f"Changed: {', '.join(files[-8:])}")
    if state.get("fixed"):
        parts.append(f"Fixed: {'; '.join(f[:120] for f in state['fixed'][-3:])}")
    if state.get("decisions"):
        parts.append(f"Decided: {'; '.join(d[:120] for d in state['decisions'][-3:])}")
    open_todos = [t.get("content", "") for t in state.get("todos", []) if t.get("status") != "completed"]
    if open_todos or state.get("errors"):
        nxt = open_todos[:3] + [f"unresolved: {e.get('command', '')}" for e in state.get("errors", [])[-2:]]
        parts.append(f"Next: {'; '.join(str(n)[:120] for n in nxt)}")
    elif state.get("last_action"):
        parts.append(f"Last: {state['last_action'][:160]}")
    return " | ".join(parts)[:1000]
