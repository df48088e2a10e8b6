"""The hook side of team memory: standard library only, no network, one indexed query.

A memory's scope (personal or team) is set at insert by the m005 trigger from `team_types` (its type),
written at link time from MEMORY_TEAM_TYPES; `memory team share ID [--personal]` changes one."""

from __future__ import annotations

import os

from memory.store.workspace import Workspace


def maybe_enqueue_sync(ws: Workspace) -> bool:
    """At SessionStart: queue a team_sync job when the project is linked, or MEMORY_TEAM_URL asks for it.
    The worker does the rest."""
    linked = ws.db.execute("SELECT 1 FROM team_link").fetchone() is not None
    if not linked and not os.environ.get("MEMORY_TEAM_URL", "").strip():
        return False
    from memory.store import queue

    queue.enqueue(ws.db, "team_sync", {"key": "team_sync"}, dedup_key="team_sync")
    return True
