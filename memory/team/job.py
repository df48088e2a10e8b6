"""Team sync as one operation (push, then pull), for the worker's `team_sync` jobs and the CLI.

The worker runs a `team_sync` job when the outbox has changes (queued by the m005 trigger), at each
SessionStart of a linked project, and every MEMORY_TEAM_SYNC_SECONDS while a session of the project is
active. A server that cannot be reached is recorded (`memory team status` shows it) and the changes wait in
the outbox; nothing is raised at the worker, whose log and queue therefore never see a password."""

from __future__ import annotations

import json
import time
from typing import Any

from memory.base.config import env_int
from memory.store import queue
from memory.store.workspace import Workspace
from memory.team import outbox
from memory.team.config import TeamError, project_id, redact, save_entry, scrub, team_types, url_for

KEYS = ("team_sync", "team_sync:next")  # alternate: a running job's own key cannot be re-queued


def init(ws: Workspace, url: str, *, pid: str | None = None, share_handoffs: bool = False,
         remember: bool = True) -> dict[str, Any]:
    """Create or migrate the server schema, check pgvector, make this role a member of the project when
    it may, probe a vector insert and search, link the project locally, then sync. Returns what it did."""
    from memory.team import pg_schema, sync

    name = project_id(ws, pid)
    with sync.connect(url) as conn:
        vector = pg_schema.ensure_pgvector(conn)
        sync.register_vector_type(conn)
        applied = pg_schema.migrate(conn)
        if not sync.member_check(conn, name):
            try:
                with conn.cursor() as cur:
                    cur.execute("SELECT current_user")
                    me = cur.fetchone()[0]
                sync.add_member(conn, name, me)
            except TeamError:
                raise TeamError(f"this role is not a member of team project {name!r} on {redact(url)}: ask the "
                                f"owner of the team schema to run `memory team grant {me} --project-id {name}`"
                                ) from None
        pg_schema.probe_vectors(conn, name)
        if remember:
            save_entry(ws, url=url, project_id=name)
        link = outbox.link(ws.db, name, redact(url), team_types(), share_handoffs=share_handoffs)
        pushed = sync.push(conn, ws.db)
        pulled = sync.pull(conn, ws.db, ws.project.key)
    return {"project_id": name, "server": redact(url), "pgvector": vector, "migrations_applied": applied,
            "machine": link.get("machine"), "push": pushed, "pull": pulled}


def run(ws: Workspace, *, do_push: bool = True, do_pull: bool = True) -> dict[str, Any]:
    """Push then pull. TeamError (scrubbed) when not configured or unreachable; the error is recorded."""
    from memory.team import pg_schema, sync

    url = url_for(ws)
    if not url:
        raise TeamError(f"team sync is not set up for project {ws.project.name}: run `memory team init URL` "
                        "or set MEMORY_TEAM_URL")
    try:
        if outbox.link_row(ws.db) is None:  # MEMORY_TEAM_URL set, never initialised here: link now
            result = init(ws, url, remember=False)
            return {"linked": True, "push": result["push"], "pull": result["pull"]}
        out: dict[str, Any] = {}
        with sync.connect(url) as conn:
            if not pg_schema.up_to_date(conn):  # writes would miss the newer schema's rules: migrate first
                pg_schema.migrate(conn)
            if do_push:
                out["push"] = sync.push(conn, ws.db)
            if do_pull:
                out["pull"] = sync.pull(conn, ws.db, ws.project.key)
        outbox.set_state(ws.db, last_error="")
        return out
    except TeamError as exc:
        outbox.set_state(ws.db, last_error=scrub(str(exc), url), last_error_at=time.time())
        raise
    except Exception as exc:  # noqa: BLE001 - anything else, told without the password
        message = scrub(f"{type(exc).__name__}: {exc}", url)
        outbox.set_state(ws.db, last_error=message, last_error_at=time.time())
        raise TeamError(message) from None


def _session_active(ws: Workspace) -> bool:
    row = ws.db.execute("SELECT max(last_event_at) FROM sessions").fetchone()
    return bool(row and row[0] and time.time() - float(row[0]) < env_int("MEMORY_WORKER_IDLE_SECONDS"))


def schedule(ws: Workspace, delay: float, current: str | None = None) -> None:
    key = KEYS[1] if current == KEYS[0] else KEYS[0]
    queue.enqueue(ws.db, "team_sync", {"key": key}, dedup_key=key, delay=delay)


def handle_job(ws: Workspace, payload: dict[str, Any]) -> dict[str, Any]:
    """The worker's `team_sync` job."""
    current = str(payload.get("key") or KEYS[0])
    if not url_for(ws):  # unlinked since (or MEMORY_TEAM_URL only in the queuing hook's environment)
        return {"skipped": "team sync is not configured for this project"}
    try:
        result = run(ws)
    except TeamError as exc:
        if _session_active(ws):  # try again later; the outbox keeps the changes meanwhile
            schedule(ws, max(5.0, float(env_int("MEMORY_TEAM_SYNC_SECONDS"))), current)
        return {"error": str(exc)}
    if outbox.outbox_size(ws.db):
        schedule(ws, 1.0, current)  # changes made while this one ran
    elif _session_active(ws):
        schedule(ws, float(env_int("MEMORY_TEAM_SYNC_SECONDS")), current)
    return json.loads(json.dumps(result, default=str))
