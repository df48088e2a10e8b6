"""UserPromptSubmit: record the task, inject memories relevant to the prompt (recall runs before the
prompt is stored, so it never echoes the prompt back)."""

from __future__ import annotations

from memory import capture
from memory.base import fence
from memory.base.config import env_int
from memory.base.privacy import clean
from memory.hook.common import apply, session_id, touch_session, workspace
from memory.hook.run import Answered, context_output
from memory.recall import inject
from memory.store.db import Tx

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from typing import Any

    from memory.base.event import Event
    from memory.hook.run import Call


def handle(event: Event, call: Call) -> dict[str, Any] | None:
    prompt = event.prompt
    if prompt is None:
        return None
    ws = workspace(event, call)
    sid = session_id(event)
    parts = []
    # One untrusted block (memory/base/fence.py) for all of it, within the 9,000 characters Claude Code keeps inline.
    room = 9000 - fence.OVERHEAD
    # Recall runs before the write lock is taken: it may wait for the worker, which may be writing.
    new = ws.db.execute("SELECT 1 FROM sessions WHERE id = ?", (sid,)).fetchone() is None
    if new:
        # SessionStart context is not always delivered on new interactive sessions (claude-code#10373):
        # the first prompt of a session we have not seen carries it instead.
        start, _ = inject.session_start_body(ws, sid, "startup", min(room, env_int("MEMORY_INJECT_MAX_CHARS")))
        if start:
            parts.append(start)
    else:
        lost = inject.lost_compact_handoff(ws, sid)
        if lost:
            parts.append(lost)
    recall, _ = inject.prompt_recall_body(ws, sid, prompt, 4000 - fence.OVERHEAD)
    if recall:
        parts.append(recall)
    answer = context_output("UserPromptSubmit", fence.wrap("\n\n".join(parts), 9000))
    try:
        with Tx(ws.db):  # one commit for the session row and the capture
            touch_session(ws, event, source="prompt", prompts=1)
            apply(ws, sid, capture.prompt_event(clean(prompt), sid))  # filter first: capture cuts what it keeps
    except Exception as exc:  # the recall still goes out; memory/hook/run.py keeps the event (or logs the error)
        raise Answered(answer, exc) from exc
    return answer
