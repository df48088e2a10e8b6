"""PreCompact: write a handoff (no model call, bounded) so the next context continues the work.
Never blocks compaction."""

from __future__ import annotations

from memory.base.privacy import clean
from memory.capture import handoff
from memory.hook.common import queue_extraction, session_id, touch_session, wake_worker, workspace
from memory.store import state as session_state
from memory.store.db import Tx

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from typing import Any

    from memory.base.event import Event
    from memory.hook.run import Call


def handle(event: Event, call: Call) -> dict[str, Any] | None:
    ws = workspace(event, call)
    sid = session_id(event)
    with Tx(ws.db):  # one commit
        touch_session(ws, event)
        st = session_state.load(ws, sid)
        instructions = event.instructions
        if instructions.strip():
            # What the user asked /compact to keep: filtered, then cut.
            st["compact_instructions"] = clean(instructions.strip())[:300]
        handoff.write(ws, st, "compact")
        handoff.mark_compact_pending(ws, sid)  # until SessionStart(compact) or the next prompt delivers it
        queue_extraction(ws, event, sid, "compact", dedup_key=None)
    wake_worker(ws)  # the extraction runs detached, in the worker; compaction never waits for it
    return None
