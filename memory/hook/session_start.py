"""SessionStart: register the session and inject the handoff and the project's most useful memories."""

from __future__ import annotations

import os

from memory.base import bootstrap
from memory.base.config import env_int
from memory.base.log import log
from memory.capture import mdindex
from memory.hook import spool
from memory.hook.common import session_id, touch_session, wake_worker, workspace
from memory.hook.run import Answered, context_output
from memory.recall import inject
from memory.store import consent, symbols
from memory.store.workspace import Workspace, secure_data_dir

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from typing import Any

    from memory.base.event import Event
    from memory.hook.run import Call


def _queue_team_sync(ws: Workspace) -> bool:
    """Queue a team_sync job when the project is linked to a team server, or MEMORY_TEAM_URL asks for one:
    one indexed query; the worker does the rest. A memory's scope (personal or team) is set at insert by
    the m005 trigger from `team_types` (memory/store/migrations.py)."""
    linked = ws.db.execute("SELECT 1 FROM team_link").fetchone() is not None
    if not linked and not os.environ.get("MEMORY_TEAM_URL", "").strip():
        return False
    from memory.store import queue  # only for a linked project: most sessions never load it

    queue.enqueue(ws.db, "team_sync", {"key": "team_sync"}, dedup_key="team_sync")
    return True


def _with_map(ws: Workspace, text: str) -> str:
    """The injected text with the repository map the worker last built, when MEMORY_SESSION_MAP_TOKENS asks
    for one (off by default): one SELECT here, the next build queued (memory/outline/repomap.py)."""
    tokens = env_int("MEMORY_SESSION_MAP_TOKENS")
    if tokens <= 0:
        return text
    try:
        from memory.outline import repomap

        shown = repomap.session_map(ws.db, ws.project.root, tokens)
    except Exception as exc:  # a map is a nicety: it must not cost the session its context
        log("warning", f"repository map not read: {exc!r}", event="SessionStart")
        return text
    return f"{text}\n\n{shown}" if text and shown else (shown or text)


def handle(event: Event, call: Call) -> dict[str, Any] | None:
    bootstrap.ensure_venv()
    ws = workspace(event, call)
    secure_data_dir(ws.home)  # an older install's 0755 folders made owner-only (two stat calls when done)
    sid = session_id(event)
    source = event.source or "startup"
    try:
        _record(ws, event, source)
        # Code changed between sessions (a pull, a merge) marks its memories stale before they are injected.
        symbols.sweep(ws.db)
        refused = None
    except Exception as exc:  # a full or read-only data dir: the context still goes out, the event is kept
        if not (spool.is_space_error(exc) or spool.is_corrupt_error(exc)):
            raise
        refused = exc
    bootstrap.record_root(ws.home)  # after _record: a first session's data dir exists only now
    wake_worker(ws)  # warm for hybrid recall by the first prompt, and the queue gets drained
    text, _ = inject.session_start(ws, sid, source)
    text = _with_map(ws, text)
    out = context_output("SessionStart", text) or {}
    # Notices and the fault's line are added by memory/hook/run.py, to this answer or the next prompt's.
    lines = [] if call.replayed else _spend_lines(ws)  # a replayed SessionStart leaves them to a real one
    if lines:  # shown to the user, not the model
        out["systemMessage"] = "\n".join(lines)
    if refused is not None:
        raise Answered(out or None, refused)  # memory/hook/run.py keeps the event and tells the user
    return out or None


def _spend_lines(ws: Workspace) -> list[str]:
    """The consent notice before the user chose an extractor, and the receipt after a day with paid spend
    (memory/store/consent.py): shown to the user, never to the model."""
    try:
        return consent.session_start_lines(ws.home)
    except Exception as exc:  # a nicety: it must not cost the session its context
        log("warning", f"spend lines not read: {exc!r}", event="SessionStart")
        return []


def _record(ws: Workspace, event: Event, source: str) -> None:
    """SessionStart's writes: the session row, the disk reserve, the queued markdown index and team sync."""
    touch_session(ws, event, source=source)
    spool.ensure_reserve(ws.home)  # room to spool into when the disk fills (one stat when it is there)
    try:  # the project's markdown is re-indexed by the worker, at most once per interval (memory/capture/mdindex.py)
        mdindex.maybe_enqueue(ws)
    except Exception as exc:  # indexing is a nicety: it must not cost the session its context
        log("warning", f"markdown indexing not queued: {exc!r}", event="SessionStart")
    try:  # team memory: the worker pushes and pulls (memory/team/job.py); a hook never touches the network
        _queue_team_sync(ws)
    except Exception as exc:
        log("warning", f"team sync not queued: {exc!r}", event="SessionStart")
