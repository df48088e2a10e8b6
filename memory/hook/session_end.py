"""SessionEnd: close the session with a short summary and a final handoff, queue the slow work.
Claude Code gives all SessionEnd hooks 1.5 s together, so nothing slow happens here."""

from __future__ import annotations

from memory.base import clock
from memory.base.privacy import clean
from memory.capture import handoff, summary
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
        handoff.write(ws, st, "end")
        ws.db.execute(
            "UPDATE sessions SET status = 'completed', ended_at = ?, end_reason = ?, summary = ? WHERE id = ?",
            # The reason is event text like any other: through the privacy filter before the disk.
            (clock.now(), clean(event.reason)[:40], summary.heuristic(st, ws.project.root), sid),
        )
        queue_extraction(ws, event, sid, "end", dedup_key=f"extract:end:{sid}")
    _check_symbols(ws, st.get("files_modified") or [], sid)
    wake_worker(ws)
    return None


def _check_symbols(ws: Any, files: list[Any], sid: str, most: int = 20) -> None:
    """The memories about the definitions this session changed are marked stale now, not at their next read
    (memory/store/symbols.py): one indexed read a file, the file itself only when something is recorded.
    This session's own memories follow its code instead."""
    from memory.store import symbols

    for path in files[-most:]:
        if isinstance(path, str):
            symbols.check_file(ws.db, path, sid)
