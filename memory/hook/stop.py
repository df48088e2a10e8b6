"""Stop: the turn ended. Keep the last action and any decision stated, refresh the session's handoff."""

from __future__ import annotations

from memory import capture
from memory.base.privacy import clean
from memory.capture import handoff
from memory.hook.common import apply, session_id, touch_session, workspace
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
    with Tx(ws.db):  # one commit for the whole turn end
        touch_session(ws, event)
        # Filter first: capture keeps the message's first 400 characters in the state.
        apply(ws, sid, capture.stop_event(clean(event.last_message), sid))
        handoff.write(ws, session_state.load(ws, sid), "stop")
    return None
