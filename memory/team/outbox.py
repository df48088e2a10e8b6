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
        row = db.execute(f"SELECT {', '.join(COLUMNS)}, scope, content_hash FROM memories WHERE uid = ?",
                         (ob["uid"],)).fetchone() if ob["op"] == "upsert" else None
        if row is not None and row["scope"] == "team":
            rec.update({k: row[k] for k in COLUMNS}, deleted=False, content_hash=row["content_hash"])
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


# A teammate's row is data from elsewhere: cleaned by the privacy filter as a local save is, then cut to
# these sizes, so the rows SessionStart reads stay small whatever a member pushed (a 20 MB row cost the
# hook ~1 s of CPU). The pull reads at most PULL_READ_CHARS of a row from the server (sync.PULL).
PULLED_MAX_CHARS = 16384
PULL_READ_CHARS = 4 * PULLED_MAX_CHARS
# A row the pull had to cut may end in half a secret no rule matches: that much of its tail is dropped.
SPLIT_MARGIN = 8192
FIELD_MAX_CHARS = {"title": 200, "tags": 1024, "files": 4096, "source": 64, "session_id": 128, "author": 64,
                   "machine": 80}
_MACHINE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_/@:+")


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[... {len(text) - limit} characters of a teammate's row cut ...]"


def admit(r: dict[str, Any], now: float) -> dict[str, Any]:
    """A pulled row as this machine keeps it: every text through the privacy filter, then cut; the type
    one this plugin knows; no date later than now; importance and confidence no higher than what recorded
    text from elsewhere gets (memory/capture/deciders.py): a teammate's decision is shown as theirs, never
    ranked as one of the user's own."""
    from memory.base.classify import TYPES
    from memory.base.privacy import clean
    from memory.capture.deciders import DEMOTED_MAX_IMPORTANCE, MODEL_MAX_CONFIDENCE

    out = dict(r)
    content = clean(str(r.get("content") or ""))
    if r.get("content_cut"):  # read cut short by the pull: half a secret may end it
        content = content[:-SPLIT_MARGIN]
    out["content"] = _cut(content.strip(), PULLED_MAX_CHARS)
    for key in FIELD_MAX_CHARS:
        out[key] = admit_text(r.get(key), key)
    out["machine"] = "".join(c for c in out["machine"] if c in _MACHINE_CHARS) or "unknown"
    out["session_id"] = out["session_id"] or None
    out["type"] = r.get("type") if r.get("type") in TYPES else "observation"
    out["importance"] = min(_number(r.get("importance"), 0.5), DEMOTED_MAX_IMPORTANCE)
    out["confidence"] = min(_number(r.get("confidence"), 0.5), MODEL_MAX_CONFIDENCE)
    out["created_at"] = min(_number(r.get("created_at"), now), now)
    out["updated_at"] = min(_number(r.get("updated_at"), now), now)
    out["expires_at"] = _number(r.get("expires_at"), 0.0) or None
    return out


def admit_text(value: Any, key: str) -> str:
    """One short field of a pulled row (FIELD_MAX_CHARS): filtered, on one line, cut."""
    from memory.base.privacy import clean

    return " ".join(clean(str(value or "")).split())[:FIELD_MAX_CHARS[key]]


def _number(value: Any, default: float) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return default
    return x if x == x and abs(x) != float("inf") else default  # NaN and infinities: the default


def apply_pulled(db: sqlite3.Connection, project: str, rows: list[dict[str, Any]], new_cursor: tuple[str, int],
                 machine: str, me: str | None = None) -> dict[str, int]:
    """Write a page of the team's changes and the cursor after it, in one transaction. `me`: this
    machine's role on the server (the author of the rows written here). A row whose author is not the
    author of the local row with its uid is dropped and counted: the server refuses such a change, so
    it comes from a server that does not (an older schema, or one tampered with)."""
    counts = {"inserted": 0, "updated": 0, "deleted": 0, "kept_local": 0, "own": 0, "dropped": 0, "forked": 0}
    touched: list[int] = []
    now = time.time()
    with Tx(db):
        db.execute("INSERT OR REPLACE INTO team_state (key, value) VALUES ('applying', '1')")
        for r in rows:
            if r["machine"] == machine:
                counts["own"] += 1  # our own change coming back: the local copy has it
                continue
            local = db.execute("SELECT id, author FROM memories WHERE uid = ?", (r["uid"],)).fetchone()
            # as stored: the author a pulled row was admitted with (outbox.admit), this machine's role for ours
            if local is not None and (local["author"] or me) != admit_text(r["author"], "author"):
                counts["dropped"] += 1
                continue
            waiting = db.execute("SELECT id, at FROM team_outbox WHERE uid = ?", (r["uid"],)).fetchone()
            if waiting is not None and local is not None and local["author"] and local["author"] != me:
                # this machine's change to a teammate's row, not pushed yet: an edit of its text is kept as
                # a memory of ours, the teammate's row taken as they sent it; any other change is local
                edited = db.execute("SELECT title, content, content_hash, uid FROM memories WHERE id = ?",
                                    (local["id"],)).fetchone()
                if edited_here(edited) and not r["deleted"]:
                    fork(db, r["uid"], r)
                    touched.append(local["id"])
                    counts["forked"] += 1
                    continue
                db.execute("DELETE FROM team_outbox WHERE id = ?", (waiting["id"],))
                waiting = None
            if waiting is not None:
                if (waiting["at"], machine) >= (r["version"], r["machine"]):
                    counts["kept_local"] += 1  # ours is later: it wins when pushed
                    continue
                db.execute("DELETE FROM team_outbox WHERE id = ?", (waiting["id"],))
            if r["deleted"]:
                if local is not None:
                    _delete_local(db, local["id"])
                    touched.append(local["id"])
                    counts["deleted"] += 1
                continue
            mid = _write_pulled(db, project, admit(r, now), local["id"] if local else None)
            touched.append(mid)
            counts["updated" if local else "inserted"] += 1
        store.queue_vector_jobs(db, touched)  # the local semantic index follows
        db.execute("DELETE FROM team_state WHERE key = 'applying'")
        db.executemany("INSERT INTO team_state (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET "
                       "value = excluded.value",
                       [("cursor", json.dumps(list(new_cursor))), ("last_pull_at", str(now))])
        if counts["dropped"]:
            add_count(db, "dropped_author", counts["dropped"])
    if touched:
        store.mark_dirty(db, project)
    return counts


def _delete_local(db: sqlite3.Connection, mid: int) -> None:
    db.execute("DELETE FROM memories WHERE id = ?", (mid,))
    store.scrub_injections(db, mid)
    db.execute("DELETE FROM access_log WHERE memory_id = ?", (mid,))


def _write_pulled(db: sqlite3.Connection, project: str, r: dict[str, Any], local_id: int | None) -> int:
    """Insert or update the local copy of a teammate's row (already admitted): the teammate's, by origin."""
    from memory.base.fence import flags_for

    title = r["title"]
    # Suffixed with the uid: a teammate's memory never merges into one of ours by title or content.
    tkey = f"{store.normalise(title)}\x00team:{r['uid']}"
    chash = pulled_hash(title, r["content"], r["uid"])
    values = (project, r["session_id"], r["type"], title, tkey, r["content"], chash, r["importance"],
              r["confidence"], r["tags"], r["files"], "team", r["created_at"], r["updated_at"],
              r["expires_at"], r["uid"], "team", r["author"], r["machine"], "teammate", r["author"],
              flags_for(title, r["content"]))
    if local_id is None:
        cur = db.execute(
            """INSERT INTO memories (project, session_id, type, title, title_key, content, content_hash,
               importance, confidence, tags, files, source, created_at, updated_at, expires_at, uid,
               scope, author, machine, origin, origin_detail, flags)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""", values)
        return int(cur.lastrowid or 0)
    db.execute(
        """UPDATE memories SET project = ?, session_id = ?, type = ?, title = ?, title_key = ?,
           content = ?, content_hash = ?, importance = ?, confidence = ?, tags = ?, files = ?,
           source = ?, created_at = ?, updated_at = ?, expires_at = ?, uid = ?, scope = ?,
           author = ?, machine = ?, origin = ?, origin_detail = ?, flags = ? WHERE id = ?""",
        (*values, local_id))
    return local_id


def pulled_hash(title: str, content: str, uid: str) -> str:
    """The content_hash a pulled row is stored with: an edit here (memory/store/edit.py hashes the new text
    its own way, a plain UPDATE leaves the hash of the old one) no longer matches it."""
    return f"{store.content_hash(store.normalise(title) + chr(0) + store.normalise(content))}:{uid}"


def edited_here(row: Any) -> bool:
    """Whether the text of a teammate's row (title, content, content_hash, uid) was changed on this machine."""
    return bool(row["content_hash"] != pulled_hash(row["title"], row["content"], row["uid"]))


def add_count(db: sqlite3.Connection, key: str, n: int) -> None:
    """Add to a running count kept in team_state (shown by `memory team status`)."""
    with Tx(db):
        db.execute("INSERT INTO team_state (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET "
                   "value = CAST(CAST(value AS INTEGER) + CAST(excluded.value AS INTEGER) AS TEXT)", (key, str(n)))


def fork(db: sqlite3.Connection, uid: str, theirs: dict[str, Any] | None) -> str:
    """A local change to a teammate's memory becomes a new memory of this machine's: the local row takes
    a new uid (its outbox row follows it, so the push sends it as new), drops the teammate as author, and
    says whose memory it was edited from; the teammate's row, `theirs` as the server has it, comes back
    as their memory. Returns the new uid."""
    new_uid = secrets.token_hex(16)
    with Tx(db):
        row = db.execute("SELECT id, project, title, content, author FROM memories WHERE uid = ?",
                         (uid,)).fetchone()
        if row is None:
            return uid
        owner = (theirs or {}).get("author") or row["author"] or "a teammate"
        applying = get_state(db, "applying")  # set when a pull forks: it stays set for the rest of its page
        db.execute("INSERT OR REPLACE INTO team_state (key, value) VALUES ('applying', '1')")
        chash = store.content_hash(f"{store.normalise(row['title'])}\x00{store.normalise(row['content'])}")
        db.execute("UPDATE memories SET uid = ?, author = NULL, machine = NULL, origin = 'user', "
                   "origin_detail = ?, title_key = ?, content_hash = ? WHERE id = ?",
                   (new_uid, f"edited from {owner}'s team memory", f"{store.normalise(row['title'])}\x00edit:"
                    f"{new_uid}", f"{chash}:{new_uid}", row["id"]))
        db.execute("UPDATE team_outbox SET uid = ? WHERE uid = ?", (new_uid, uid))
        if theirs is not None and not theirs.get("deleted"):
            store.queue_vector_jobs(db, [_write_pulled(db, row["project"], admit(theirs, time.time()), None)])
        if applying is None:
            db.execute("DELETE FROM team_state WHERE key = 'applying'")
        add_count(db, "forked", 1)
    return new_uid


def forget_for_everyone(db: sqlite3.Connection, ids: list[int]) -> tuple[list[int], dict[int, str]]:
    """Tombstones in the outbox, then the local rows deleted: one transaction. A teammate's memory is only
    its author's to delete for everyone (the server refuses anyone else): it is deleted here only.
    Returns (deleted for everyone, {deleted here only: its author})."""
    gone: list[int] = []
    theirs: dict[int, str] = {}
    me = get_state(db, "role")
    with Tx(db):
        now = time.time()
        for mid in ids:
            row = db.execute("SELECT uid, author FROM memories WHERE id = ?", (mid,)).fetchone()
            if row is None:
                continue
            if row["author"] and row["author"] != me:
                theirs[mid] = row["author"]
            else:
                db.execute("INSERT OR REPLACE INTO team_outbox (uid, op, at) VALUES (?, 'delete', ?)",
                           (row["uid"], now))
                gone.append(mid)
        store.forget(db, [*gone, *theirs])
    return gone, theirs


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
        # What this machine would not take or send as it was: pulled rows whose author changed under the
        # same id (dropped), its own edits of teammates' memories (sent as new memories of its own), and
        # changes to teammates' memories it may not make for everyone (kept here only).
        "dropped_author": int(state.get("dropped_author") or 0),
        "forked": int(state.get("forked") or 0),
        "not_ours": int(state.get("not_ours") or 0),
    }

