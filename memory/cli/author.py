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


def _slash() -> tuple[str, str] | None:
    """The session and raw arguments of the `/memory:save` this command runs for (memory/cli/slash.py)."""
    obj = click.get_current_context().find_root().obj
    slash = obj.get("slash") if isinstance(obj, dict) else None
    if not slash:
        return None
    session, raw = slash
    sid = session or os.environ.get("CLAUDE_CODE_SESSION_ID", "")
    return (sid, raw) if sid else None


def slash_typed(ws: Workspace) -> bool:
    """Whether this command is the `!` block of a `/memory:save` the person typed in this session, its
    prompt already seen: the grant the UserPromptSubmit hook left is consumed."""
    slash = _slash()
    if slash is None:
        return False
    sid, raw = slash
    now = time.time()
    if not grants.take_grant(session_state.load(ws, sid), raw, now):
        return False  # no write when there is nothing to take
    took: list[bool] = []
    session_state.update(ws, sid, lambda s: took.append(grants.take_grant(s, raw, now)), export=False)
    return bool(took and took[0])


def await_prompt(ws: Workspace, memory_id: int, requested: tuple[str, float, float]) -> bool:
    """A slash save with no grant: pending, in case its typed prompt is seen after the block (older
    clients run the block first); the hook then gives the memory what it asked for. Whether it is one."""
    slash = _slash()
    if slash is None:
        return False
    sid, raw = slash
    session_state.update(ws, sid, lambda s: grants.add_pending(s, raw, time.time(), memory_id, requested),
                         export=False)
    return True


def agent_saving(ws: Workspace) -> str:
    """Why this save is the agent's, or '' when it is the person's own."""
    reason = agent_reason()
    return "" if not reason or slash_typed(ws) else reason


def settle_cli(m: NewMemory, reason: str) -> NewMemory:
    return deciders.as_agent(m, reason) if reason else m
