"""What every handler needs: the event's project workspace, the session row, applying a capture."""

from __future__ import annotations

import os

from memory import store
from memory.base import clock
from memory.base.privacy import clean
from memory.base.project import event_folder
from memory.capture import Capture
from memory.capture.deciders import settle
from memory.hook.run import at_exit, session_id  # noqa: F401 - session_id: the handlers' import
from memory.store import state as session_state
from memory.store.db import Tx
from memory.store.workspace import Workspace

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from memory.base.event import Event
    from memory.hook.run import Call


# The workspaces this hook process opened: memory/hook/run.py closes them before it exits (close_workspaces).
_OPENED: list[Workspace] = []


class NotAProject(Exception):
    """The event's folder is `/` or not a folder: the hook records nothing (no project database made)."""


def workspace(event: Event, call: Call | None = None) -> Workspace:
    """The event's project workspace: the folder a replayed event was recorded in, else event_folder."""
    folder = call.project_dir if call is not None and call.project_dir else event_folder(event.cwd)
    try:
        real = os.path.realpath(folder or os.getcwd())
    except OSError as exc:  # the process's own cwd was removed
        raise NotAProject(f"no folder: {exc}") from None
    if real == "/" or not os.path.isdir(real):
        # The folder as the event gave it (the log filters it, then cuts): realpath may have changed the text.
        raise NotAProject(f"cwd {folder or os.getcwd()} is not a project folder: nothing recorded")
    ws = Workspace.for_dir(real)
    if not _OPENED:
        at_exit(close_workspaces)
    _OPENED.append(ws)
    return ws


def close_workspaces() -> None:
    """Close the databases this hook opened. A hook ends with `os._exit`, which closes nothing: the last
    connection to close checkpoints the WAL into the database and removes it. Without it the WAL only grew
    (the auto-checkpoint gives way to the connection's own unfinished statements), reaching tens of MB in a
    long session, and every hook's first read re-scanned all of it: +30 ms per hook after ~600 events."""
    while _OPENED:
        try:
            _OPENED.pop().close()
        except Exception:  # noqa: BLE001 - closing is best effort; the data is committed already
            pass


def touch_session(ws: Workspace, event: Event, *, source: str | None = None, prompts: int = 0,
                  tools: int = 0) -> bool:
    """Create the session row if needed and count activity. Returns True when the session is new."""
    now = clock.now()
    sid = session_id(event)
    with Tx(ws.db):
        cur = ws.db.execute(
            """INSERT INTO sessions (id, project, source, cwd, transcript_path, started_at, last_event_at, host)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO NOTHING""",
            (sid, ws.project.key, clean(source)[:40] if source else source, clean(event.cwd),
             clean(event.transcript), now, now, clean(event.host)[:20]),  # memory/hook/hosts.py
        )
        new = cur.rowcount == 1
        ws.db.execute(
            """UPDATE sessions SET last_event_at = ?, prompt_count = prompt_count + ?,
               tool_call_count = tool_call_count + ?, status = 'active', ended_at = NULL WHERE id = ?""",
            (now, prompts, tools, sid),
        )
    return new


def apply(ws: Workspace, sid: str, cap: Capture) -> list[store.Saved]:
    """All of a capture's writes in one transaction (one commit), then the state file export."""
    state = None
    with Tx(ws.db):
        if cap.changes:
            def change(s: session_state.State) -> None:
                for fn in cap.changes:
                    fn(s)

            state = session_state.update(ws, sid, change, export=False)
        for write in cap.writes:
            write(ws.db)
        saved = [store.save(ws.db, ws.project.key, settle(m)) for m in cap.memories]
    if state is not None:
        session_state.export(ws, state)
    if any(s.action in ("inserted", "updated") for s in saved):
        wake_worker(ws)  # after the commit: the worker must find the jobs when it looks
    return saved


def queue_extraction(ws: Workspace, event: Event, sid: str, trigger: str,
                     dedup_key: str | None) -> None:
    """Queue the session's learning extraction for the worker (PreCompact and SessionEnd)."""
    from memory.store import queue

    queue.enqueue(ws.db, "extract", {"session_id": sid, "trigger": trigger,
                                     "transcript_path": clean(event.transcript)},
                  dedup_key=dedup_key)


def wake_worker(ws: Workspace) -> None:
    """New queued work: wake the running worker, or start one (memory/base/worker_client.py)."""
    from memory.base import worker_client

    try:
        worker_client.kick(ws.home, ws.project.key)
    except OSError as exc:
        from memory.base.log import log

        log("warning", f"worker not started: {exc!r}", event="worker")
