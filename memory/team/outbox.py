"""The local side of team sync, in the project's SQLite (standard library only).

- link: the project is linked to a team server (team_link): from then on the m005 triggers write an
  outbox row for every change of a team memory, in the same transaction as the change.
- pending: the outbox, oldest first; what a push sends is read from the memories table at that moment,
  so several changes of one memory make one row and one upload.
- acknowledge: pushed rows are removed by id; a row changed again meanwhile was replaced (INSERT OR
  REPLACE gives it a new id), so that newer change is kept for the next push.
- apply_pulled: the team's changes written into the local copy in one transaction with the new cursor,
  under the 'applying' flag, so nothing pulled goes back into the outbox. Last writer wins against a local
  change still waiting in the outbox: (version, machine) compared, the later one kept."""

from __future__ import annotations

import json
import secrets
import socket
import sqlite3
import time
from typing import Any

from memory import store
from memory.store.db import Tx

COLUMNS = ("uid", "type", "title", "content", "tags", "files", "importance", "confidence", "source",
           "session_id", "created_at", "updated_at", "expires_at")


# What a share on an unlinked project says (the CLI and the viewer): only the scope changed.
UNLINKED = ("this project is not linked to a team server, so nothing is sent "
            "(`memory team init URL` links it, then the worker uploads its team memories)")


def link_row(db: sqlite3.Connection) -> sqlite3.Row | None:
    return db.execute("SELECT * FROM team_link WHERE id = 1").fetchone()


def get_state(db: sqlite3.Connection, key: str, default: str | None = None) -> str | None:
    row = db.execute("SELECT value FROM team_state WHERE key = ?", (key,)).fetchone()
    return row[0] if row else default


def set_state(db: sqlite3.Connection, **values: Any) -> None:
    with Tx(db):
        db.executemany("INSERT INTO team_state (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET "
                       "value = excluded.value", [(k, str(v)) for k, v in values.items()])


def new_machine_id() -> str:
    host = "".join(c for c in socket.gethostname() if c.isalnum() or c in "-.")[:40] or "host"
    return f"{host}-{secrets.token_hex(4)}"


def link(db: sqlite3.Connection, project_id: str, server: str, types: list[str], *,
         share_handoffs: bool = False) -> dict[str, Any]:
    """Link (or re-link) the project. The first link scopes this machine's memories by `types` and puts
    every team memory in the outbox, so what was learned before is shared too. `server` is redacted."""
    now = time.time()
    with Tx(db):
        old = link_row(db)
        db.execute("DELETE FROM team_types")
        db.executemany("INSERT INTO team_types (type) VALUES (?)", [(t,) for t in dict.fromkeys(types)])
        if old is None or old["project_id"] != project_id:
            machine = old["machine"] if old else new_machine_id()
            db.execute("DELETE FROM team_link")  # unlinked while scopes change: the triggers stay quiet
            db.execute("DELETE FROM team_state WHERE key LIKE 'cursor%'")  # another project's cursor
            db.execute("UPDATE memories SET scope = CASE WHEN type IN (SELECT type FROM team_types) THEN 'team' "
                       "ELSE 'personal' END WHERE machine IS NULL")
            db.execute("INSERT INTO team_link (id, project_id, server, machine, share_handoffs, linked_at) "
                       "VALUES (1, ?, ?, ?, ?, ?)", (project_id, server, machine, int(share_handoffs), now))
            db.execute("INSERT OR IGNORE INTO team_outbox (uid, op, at) SELECT uid, 'upsert', updated_at "
                       "FROM memories WHERE scope = 'team' AND machine IS NULL")
        else:
            db.execute("UPDATE team_link SET server = ?, share_handoffs = ? WHERE id = 1",
                       (server, int(share_handoffs)))
        row = link_row(db)
    return dict(row) if row else {}


def unlink(db: sqlite3.Connection) -> None:
    with Tx(db):
        db.execute("DELETE FROM team_link")
        db.execute("DELETE FROM team_outbox")
        db.execute("DELETE FROM team_state")


def pending(db: sqlite3.Connection, limit: int) -> list[dict[str, Any]]:
    """The next outbox rows with what to send: the memory as it is now, or a tombstone."""
    out = []
    for ob in db.execute("SELECT * FROM team_outbox ORDER BY id LIMIT ?", (limit,)).fetchall():
        rec: dict[str, Any] = {"outbox_id": ob["id"], "uid": ob["uid"], "version": ob["at"]}
        row = db.execute(f"SELECT {', '.join(COLUMNS)}, scope FROM memories WHERE uid = ?",
                         (ob["uid"],)).fetchone() if ob["op"] == "upsert" else None
        if row is not None and row["scope"] == "team":
            rec.update({k: row[k] for k in COLUMNS}, deleted=False)
        elif ob["op"] == "upsert":
            rec["skip"] = True  # deleted here only (eviction, `memory forget`): nothing to tell the team
        else:
            rec.update(deleted=True, type="deleted", title="", content="", tags="", files="", importance=0.0,
                       confidence=0.0, source="", session_id=None, created_at=ob["at"], updated_at=ob["at"],
                       expires_at=None)
        out.append(rec)
    return out


def acknowledge(db: sqlite3.Connection, outbox_ids: list[int]) -> None:
    if not outbox_ids:
        return
    with Tx(db):
        db.executemany("DELETE FROM team_outbox WHERE id = ?", [(i,) for i in outbox_ids])


def outbox_size(db: sqlite3.Connection) -> int:
    return int(db.execute("SELECT count(*) FROM team_outbox").fetchone()[0])


def cursor(db: sqlite3.Connection) -> tuple[str, int]:
    raw = get_state(db, "cursor")
    if not raw:
        return ("0", 0)
    xid, seq = json.loads(raw)
    return (str(xid), int(seq))


def apply_pulled(db: sqlite3.Connection, project: str, rows: list[dict[str, Any]], new_cursor: tuple[str, int],
                 machine: str) -> dict[str, int]:
    """Write a page of the team's changes and the cursor after it, in one transaction."""
    counts = {"inserted": 0, "updated": 0, "deleted": 0, "kept_local": 0, "own": 0}
    touched: list[int] = []
    now = time.time()
    with Tx(db):
        db.execute("INSERT OR REPLACE INTO team_state (key, value) VALUES ('applying', '1')")
        for r in rows:
            if r["machine"] == machine:
                counts["own"] += 1  # our own change coming back: the local copy has it
                continue
            waiting = db.execute("SELECT id, at FROM team_outbox WHERE uid = ?", (r["uid"],)).fetchone()
            if waiting is not None:
                if (waiting["at"], machine) >= (r["version"], r["machine"]):
                    counts["kept_local"] += 1  # ours is later: it wins when pushed
                    continue
                db.execute("DELETE FROM team_outbox WHERE id = ?", (waiting["id"],))
            local = db.execute("SELECT id FROM memories WHERE uid = ?", (r["uid"],)).fetchone()
            if r["deleted"]:
                if local is not None:
                    db.execute("DELETE FROM memories WHERE id = ?", (local["id"],))
                    store.scrub_injections(db, local["id"])
                    db.execute("DELETE FROM access_log WHERE memory_id = ?", (local["id"],))
                    touched.append(local["id"])
                    counts["deleted"] += 1
                continue
            title = r["title"]
            # Suffixed with the uid: a teammate's memory never merges into one of ours by title or content.
            tkey = f"{store.normalise(title)}\x00team:{r['uid']}"
            chash = f"{store.content_hash(store.normalise(title) + chr(0) + store.normalise(r['content']))}:{r['uid']}"
            values = (project, r["session_id"], r["type"], title, tkey, r["content"], chash, r["importance"],
                      r["confidence"], r["tags"], r["files"], "team", r["created_at"], r["updated_at"],
                      r["expires_at"], r["uid"], "team", r["author"], r["machine"])
            if local is None:
                cur = db.execute(
                    """INSERT INTO memories (project, session_id, type, title, title_key, content, content_hash,
                       importance, confidence, tags, files, source, created_at, updated_at, expires_at, uid,
                       scope, author, machine) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                    values)
                touched.append(int(cur.lastrowid or 0))
                counts["inserted"] += 1
            else:
                db.execute(
                    """UPDATE memories SET project = ?, session_id = ?, type = ?, title = ?, title_key = ?,
                       content = ?, content_hash = ?, importance = ?, confidence = ?, tags = ?, files = ?,
                       source = ?, created_at = ?, updated_at = ?, expires_at = ?, uid = ?, scope = ?,
                       author = ?, machine = ? WHERE id = ?""", (*values, local["id"]))
                touched.append(local["id"])
                counts["updated"] += 1
        store.queue_vector_jobs(db, touched)  # the local semantic index follows
        db.execute("DELETE FROM team_state WHERE key = 'applying'")
        db.executemany("INSERT INTO team_state (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET "
                       "value = excluded.value",
                       [("cursor", json.dumps(list(new_cursor))), ("last_pull_at", str(now))])
    if touched:
        store.mark_dirty(db, project)
    return counts


def forget_for_everyone(db: sqlite3.Connection, ids: list[int]) -> list[int]:
    """Tombstones in the outbox, then the local rows deleted: one transaction."""
    gone = []
    with Tx(db):
        now = time.time()
        for mid in ids:
            row = db.execute("SELECT uid FROM memories WHERE id = ?", (mid,)).fetchone()
            if row is None:
                continue
            db.execute("INSERT OR REPLACE INTO team_outbox (uid, op, at) VALUES (?, 'delete', ?)", (row["uid"], now))
            gone.append(mid)
        store.forget(db, gone)
    return gone


def share(db: sqlite3.Connection, ids: list[int], scope: str) -> list[int]:
    """Set the scope of memories (the triggers queue the upload or the tombstone)."""
    done = []
    with Tx(db):
        for mid in ids:
            if db.execute("UPDATE memories SET scope = ? WHERE id = ?", (scope, mid)).rowcount:
                done.append(mid)
    return done


def status(db: sqlite3.Connection) -> dict[str, Any]:
    link = link_row(db)
    scopes = {r[0] or "personal": r[1] for r in db.execute("SELECT scope, count(*) FROM memories GROUP BY scope")}
    ops = {r[0]: r[1] for r in db.execute("SELECT op, count(*) FROM team_outbox GROUP BY op")}
    state = {r[0]: r[1] for r in db.execute("SELECT key, value FROM team_state")}

    def when(key: str) -> float | None:
        try:
            return float(state[key])
        except (KeyError, ValueError):
            return None

    return {
        "linked": link is not None,
        "project_id": link["project_id"] if link else None,
        "server": link["server"] if link else None,
        "machine": link["machine"] if link else None,
        "share_handoffs": bool(link["share_handoffs"]) if link else False,
        "types": [r[0] for r in db.execute("SELECT type FROM team_types ORDER BY type")],
        "shared": scopes.get("team", 0),
        "shared_by_me": int(db.execute("SELECT count(*) FROM memories WHERE scope = 'team' AND machine IS NULL")
                            .fetchone()[0]),
        "from_team": int(db.execute("SELECT count(*) FROM memories WHERE machine IS NOT NULL").fetchone()[0]),
        "personal": scopes.get("personal", 0),
        "pending_upserts": ops.get("upsert", 0),
        "pending_deletes": ops.get("delete", 0),
        "last_push_at": when("last_push_at"),
        "last_pull_at": when("last_pull_at"),
        "last_error": state.get("last_error") or None,
        "last_error_at": when("last_error_at"),
        "cursor": state.get("cursor"),
    }

