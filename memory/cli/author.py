"""Who is saving through the `memory` command: the person, or a process of the agent's
(memory/base/provenance.py), and the person's own typed `/memory:save` (memory/capture/grants.py)."""

from __future__ import annotations

import os
import time

import click

from memory.base.provenance import agent_reason
from memory.capture import deciders, grants
from memory.store import NewMemory
from memory.store import state as session_state
from memory.store.workspace import Workspace

# What the agent is told when a save of its process is recorded as its own.
AS_AGENT = ("recorded as the agent's, not the user's ({reason}); a person saves a decision with /memory:save "
            "or from their own terminal")


def slash_typed(ws: Workspace) -> bool:
    """Whether this command is the `!` block of a `/memory:save` the person typed in this session (its
    grant, left by the UserPromptSubmit hook, is consumed)."""
    obj = click.get_current_context().find_root().obj
    slash = obj.get("slash") if isinstance(obj, dict) else None
    if not slash:
        return False
    session, raw = slash
    sid = session or os.environ.get("CLAUDE_CODE_SESSION_ID", "")
    now = time.time()
    if not sid or not grants.take_grant(session_state.load(ws, sid), raw, now):
        return False  # no write when there is nothing to take
    took: list[bool] = []
    session_state.update(ws, sid, lambda s: took.append(grants.take_grant(s, raw, now)), export=False)
    return bool(took and took[0])


def agent_saving(ws: Workspace) -> str:
    """Why this save is the agent's, or '' when it is the person's own."""
    reason = agent_reason()
    return "" if not reason or slash_typed(ws) else reason


def settle_cli(m: NewMemory, reason: str) -> NewMemory:
    return deciders.as_agent(m, reason) if reason else m
