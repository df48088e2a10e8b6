"""Push and pull between a project's SQLite and the team server (PostgreSQL + pgvector). Worker and CLI
only: this module imports psycopg, which no hook may.

Push: outbox rows in batches; each batch one server transaction of idempotent upserts (last writer wins:
`ON CONFLICT ... DO UPDATE ... WHERE (excluded.version, excluded.machine) > (version, machine)`), then the
rows acknowledged locally. A crash between the two sends the batch again, which changes nothing.

Pull: the server's changes after the cursor (xid, seq) of the transaction that wrote them, read only below
the snapshot's xmin: every transaction with a smaller xid has ended, so no change can commit later
behind the cursor (a plain `seq > cursor` would skip a transaction that took its sequence number early and
committed late). Writers take their xid before their first sequence number (`pg_current_xact_id()` at the
start of each batch). Each page and the cursor after it commit in one local transaction.

Every message that leaves this module goes through config.scrub: no password in logs or output."""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Any

from memory.team import outbox
from memory.team.config import TeamError, batch_size, check_url, redact, scrub

CONNECT_TIMEOUT_S = 5

UPSERT = """
INSERT INTO memory.memories AS m (project_id, uid, type, title, content, tags, files, importance, confidence,
    source, session_id, created_at, updated_at, expires_at, deleted, version, machine, embedding, embed_dim,
    embed_model)
VALUES (%(project_id)s, %(uid)s, %(type)s, %(title)s, %(content)s, %(tags)s, %(files)s, %(importance)s,
    %(confidence)s, %(source)s, %(session_id)s, %(created_at)s, %(updated_at)s, %(expires_at)s, %(deleted)s,
    %(version)s, %(machine)s, %(embedding)s, %(embed_dim)s, %(embed_model)s)
ON CONFLICT (project_id, uid) DO UPDATE SET type = excluded.type, title = excluded.title,
    content = excluded.content, tags = excluded.tags, files = excluded.files, importance = excluded.importance,
    confidence = excluded.confidence, source = excluded.source, session_id = excluded.session_id,
    created_at = excluded.created_at, updated_at = excluded.updated_at, expires_at = excluded.expires_at,
    deleted = excluded.deleted, version = excluded.version, machine = excluded.machine,
    embedding = excluded.embedding, embed_dim = excluded.embed_dim, embed_model = excluded.embed_model
WHERE (excluded.version, excluded.machine) > (m.version, m.machine) AND m.author = session_user
"""

SESSION = """
INSERT INTO memory.sessions (project_id, id, machine, started_at, ended_at)
SELECT %(project_id)s, %(id)s, %(machine)s, %(started_at)s, %(ended_at)s
ON CONFLICT (project_id, id) DO UPDATE SET ended_at = excluded.ended_at WHERE memory.sessions.author = session_user
"""

# A row as a client reads it: no more of its text than outbox.PULL_READ_CHARS (the server's size check
# binds new writes only; a row from before it may be any size), cleaned and cut further by outbox.admit.
ROW = f"""uid, type, left(title, 4096) AS title, left(content, {outbox.PULL_READ_CHARS}) AS content,
    length(content) > {outbox.PULL_READ_CHARS} AS content_cut, left(tags, 4096) AS tags, left(files, 16384) AS files,
    importance, confidence, left(source, 256) AS source, left(session_id, 256) AS session_id, created_at,
    updated_at, expires_at, deleted, version, left(machine, 256) AS machine, author::text AS author"""

PULL = f"""
SELECT {ROW}, xid::text AS xid, seq
FROM memory.memories
WHERE project_id = %s AND (xid, seq) > (%s::xid8, %s) AND xid < pg_snapshot_xmin(pg_current_snapshot())
ORDER BY xid, seq LIMIT %s
"""

# The rows of a push's batch that are someone else's on the server (sync.push decides what to do).
THEIRS = f"""
SELECT {ROW} FROM memory.memories WHERE project_id = %s AND uid = ANY(%s) AND author <> session_user
"""


def _friendly(exc: BaseException, url: str, connecting: bool = False) -> str:
    text = scrub(" ".join(str(exc).split()) or repr(exc), url)
    low = text.lower()
    if "password authentication failed" in low:
        return f"the team server refused the password for {redact(url)}"
    if "does not exist" in low and "database" in low:
        return f"no such database on the team server: {redact(url)} ({text})"
    if connecting:
        return f"cannot reach the team server {redact(url)} ({text}); is it running, and is the URL right?"
    return text


@contextmanager
def connect(url: str) -> Any:
    """A psycopg connection (search_path memory, public; pgvector's type registered when present). Any
    error becomes a TeamError without the password."""
    import psycopg

    check_url(url)
    try:
        # A server that vanishes mid-sync must not hold the worker (its jobs run one after another): TCP
        # keepalives and tcp_user_timeout drop a dead connection within ~30 s, statement_timeout a stuck query.
        conn = psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S, autocommit=True,
                               options="-c search_path=memory,public -c statement_timeout=120000",
                               application_name="memory-team", keepalives=1, keepalives_idle=10,
                               keepalives_interval=5, keepalives_count=3, tcp_user_timeout=30000)
    except Exception as exc:  # noqa: BLE001 - psycopg's messages may quote the URL
        raise TeamError(_friendly(exc, url, connecting=True)) from None
    try:
        register_vector_type(conn)
        yield conn
    except TeamError:
        raise
    except psycopg.Error as exc:
        raise TeamError(_friendly(exc, url)) from None
    finally:
        conn.close()


def register_vector_type(conn: Any) -> None:
    """pgvector's psycopg adapter (vectors sent as binary), once the extension exists in the database."""
    from pgvector.psycopg import register_vector

    with conn.cursor() as cur:
        cur.execute("SELECT 1 FROM pg_type WHERE typname = 'vector'")
        if cur.fetchone() is not None:
            register_vector(conn)


def member_check(conn: Any, project_id: str) -> bool:
    with conn.cursor() as cur:
        cur.execute("SELECT 1 FROM memory.team_members WHERE project_id = %s AND role = current_user",
                    (project_id,))
        return cur.fetchone() is not None


def add_member(conn: Any, project_id: str, role: str) -> None:
    """Make `role` a member of the project (the schema owner or a superuser may)."""
    import psycopg

    try:
        with conn.cursor() as cur:
            cur.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,))
            if cur.fetchone() is None:
                raise TeamError(f"no role {role!r} on the server: create it first (CREATE ROLE {role} LOGIN "
                                "PASSWORD '...')")
            cur.execute("INSERT INTO memory.team_members (project_id, role) VALUES (%s, %s) "
                        "ON CONFLICT DO NOTHING", (project_id, role))
    except psycopg.errors.InsufficientPrivilege:
        raise TeamError("only the owner of the team schema (the role that ran the first `memory team init`) "
                        "or a superuser may add members") from None


# -- embeddings ---------------------------------------------------------------------------------------

_embedder: Any = None


def embedder() -> Any:
    """The configured embedding provider, loaded once per process (None when none loads)."""
    global _embedder
    if _embedder is None:
        try:
            from memory.recall import embed

            _embedder = embed.choose()
        except Exception:  # noqa: BLE001 - team sync works without vectors (keyword search only)
            _embedder = False
    return _embedder or None


def _embed(records: list[dict[str, Any]]) -> None:
    todo = [r for r in records if not r["deleted"]]
    for r in records:
        r.update(embedding=None, embed_dim=None, embed_model=None)
    emb = embedder() if todo else None
    if emb is None:
        return
    from pgvector import Vector

    from memory.recall import embed

    try:
        vectors = emb.embed([f"{r['title']}\n{r['content']}" for r in todo])
    except Exception:  # noqa: BLE001 - no vector this time; keyword search still finds them
        return
    model = embed.key(emb)
    for r, v in zip(todo, vectors, strict=True):
        r.update(embedding=Vector([float(x) for x in v]), embed_dim=len(v), embed_model=model)


# -- push and pull ------------------------------------------------------------------------------------

def push(conn: Any, db: Any, *, max_batches: int | None = None, on_batch: Any = None) -> dict[str, int]:
    """Send the outbox in batches until it is empty (or `max_batches`)."""
    from memory.base.privacy import clean

    link = outbox.link_row(db)
    if link is None:
        raise TeamError("this project is not linked to a team server: run `memory team init URL`")
    sent = skipped = batches = 0
    while max_batches is None or batches < max_batches:
        recs = outbox.pending(db, batch_size())
        if not recs:
            break
        _theirs(conn, db, link, recs)
        live = [r for r in recs if not r.get("skip")]
        for r in live:
            r.update(project_id=link["project_id"], machine=link["machine"],
                     title=clean(r["title"]), content=clean(r["content"]))  # again, in case
            fit_for_server(r)
        _embed(live)
        sessions = _sessions(db, live, link)
        with conn.transaction(), conn.cursor() as cur:
            cur.execute("SELECT pg_current_xact_id()")  # the xid first, then sequence numbers: see PULL
            if live:
                cur.executemany(UPSERT, live)
            if sessions:
                cur.executemany(SESSION, sessions)
        outbox.acknowledge(db, [r["outbox_id"] for r in recs])
        sent += len(live)
        skipped += len(recs) - len(live)
        batches += 1
        outbox.set_state(db, last_push_at=time.time())
        if on_batch:
            on_batch(sent)
    handoffs = push_handoffs(conn, db)
    return {"pushed": sent, "handoffs": handoffs, "skipped": skipped, "batches": batches,
            "pending": outbox.outbox_size(db)}


HANDOFF = """
INSERT INTO memory.handoffs (project_id, uid, session_id, trigger, content, created_at, machine)
VALUES (%(project_id)s, %(uid)s, %(session_id)s, %(trigger)s, %(content)s, %(created_at)s, %(machine)s)
ON CONFLICT (project_id, uid) DO UPDATE SET content = excluded.content, created_at = excluded.created_at
WHERE excluded.created_at > memory.handoffs.created_at AND memory.handoffs.author = session_user
"""


def _theirs(conn: Any, db: Any, link: Any, recs: list[dict[str, Any]]) -> None:
    """The batch's changes to memories that are someone else's on the server, which refuses them (row-level
    security, pg_schema m003): an edit of the text becomes a new memory of this machine's (outbox.fork:
    the teammate's row comes back as theirs); a change of the local copy only (tags, a pin, the type, the
    importance) or a deletion stays here. Counted in `memory team status`."""
    uids = [r["uid"] for r in recs if not r.get("skip")]
    if not uids:
        return
    with conn.cursor() as cur:
        cur.execute(THEIRS, (link["project_id"], uids))
        cols = [d.name for d in cur.description]
        theirs = {row[0]: dict(zip(cols, row, strict=True)) for row in cur.fetchall()}
    kept = 0
    for r in recs:
        other = theirs.get(r["uid"])
        if other is None or r.get("skip"):
            continue
        if r["deleted"] or _same_text(r, other):
            r["skip"] = True
            kept += 1
        else:
            r["uid"] = outbox.fork(db, r["uid"], other)
    if kept:
        outbox.add_count(db, "not_ours", kept)


def _same_text(mine: dict[str, Any], other: dict[str, Any]) -> bool:
    """Whether the local copy's text is as it was pulled, or as the server's row is now, as this machine
    keeps it: then only the local copy changed."""
    if mine.get("content_hash") and not outbox.edited_here(mine):
        return True
    kept = outbox.admit(other, time.time())
    return (mine["title"], mine["content"]) == (kept["title"], kept["content"])


def fit_for_server(r: dict[str, Any]) -> None:
    """Cut a record's texts to what the server takes (pg_schema.MAX_BYTES, in bytes): a long local memory
    is sent cut rather than refused with its whole batch."""
    from memory.team.pg_schema import MAX_BYTES

    for col, limit in MAX_BYTES["memories"].items():
        value = r.get(col)
        if isinstance(value, str) and len(value.encode("utf-8")) > limit:
            r[col] = value.encode("utf-8")[:limit].decode("utf-8", "ignore")


def push_handoffs(conn: Any, db: Any) -> int:
    """Handoffs are personal unless the project was linked with --share-handoffs: then those written since
    the last push go up, one row per session and trigger (the per-turn 'stop' handoff is replaced)."""
    link = outbox.link_row(db)
    if link is None or not link["share_handoffs"]:
        return 0
    since = float(outbox.get_state(db, "handoffs_pushed_at") or 0)
    rows = db.execute("SELECT session_id, trigger, content, created_at FROM handoffs WHERE created_at > ? "
                      "ORDER BY created_at", (since,)).fetchall()
    if not rows:
        return 0
    recs = [{"project_id": link["project_id"], "uid": f"{link['machine']}:{r['session_id']}:{r['trigger']}",
             "session_id": r["session_id"], "trigger": r["trigger"], "content": r["content"],
             "created_at": r["created_at"], "machine": link["machine"]} for r in rows]
    with conn.transaction(), conn.cursor() as cur:
        cur.executemany(HANDOFF, recs)
    outbox.set_state(db, handoffs_pushed_at=rows[-1]["created_at"])
    return len(recs)


def team_handoffs(conn: Any, project_id: str, limit: int = 5) -> list[dict[str, Any]]:
    with conn.cursor() as cur:
        cur.execute(f"""SELECT author::text AS author, left(machine, 256) AS machine, left(session_id, 256)
                        AS session_id, left(trigger, 64) AS trigger, left(content, {outbox.PULL_READ_CHARS})
                        AS content, length(content) > {outbox.PULL_READ_CHARS} AS content_cut, created_at
                        FROM memory.handoffs WHERE project_id = %s ORDER BY created_at DESC LIMIT %s""",
                    (project_id, limit))
        names = [d.name for d in cur.description]
        return [shown(dict(zip(names, r, strict=True))) for r in cur.fetchall()]


def shown(row: dict[str, Any]) -> dict[str, Any]:
    """A row read from the server as it may be shown here (a team search hit, a shared handoff): its texts
    through the privacy filter and cut as a pulled row's are (outbox.admit)."""
    kept = outbox.admit({**row, "session_id": row.get("session_id") or "", "machine": row.get("machine") or ""},
                        time.time())
    return {k: kept[k] if k in ("title", "content", "author", "machine", "session_id") else v
            for k, v in row.items() if k != "content_cut"}


def _sessions(db: Any, recs: list[dict[str, Any]], link: Any) -> list[dict[str, Any]]:
    ids = sorted({r["session_id"] for r in recs if r.get("session_id") and not r["deleted"]})
    out = []
    for sid in ids:
        row = db.execute("SELECT started_at, ended_at FROM sessions WHERE id = ?", (sid,)).fetchone()
        if row is not None:
            out.append({"project_id": link["project_id"], "id": sid, "machine": link["machine"],
                        "started_at": row["started_at"], "ended_at": row["ended_at"]})
    return out


def pull(conn: Any, db: Any, project_key: str, *, max_pages: int | None = None) -> dict[str, int]:
    """Apply the team's changes since the cursor, page by page."""
    link = outbox.link_row(db)
    if link is None:
        raise TeamError("this project is not linked to a team server: run `memory team init URL`")
    totals = {"pulled": 0, "inserted": 0, "updated": 0, "deleted": 0, "kept_local": 0, "own": 0, "dropped": 0,
              "forked": 0, "pages": 0}
    limit = batch_size()
    with conn.cursor() as cur:
        cur.execute("SELECT session_user::text")  # the author the server gives this machine's rows
        me = outbox.admit_text(cur.fetchone()[0], "author")  # as a pulled row's author is kept
    outbox.set_state(db, role=me)  # whose rows are this machine's (outbox.forget_for_everyone reads it)
    while max_pages is None or totals["pages"] < max_pages:
        xid, seq = outbox.cursor(db)
        with conn.cursor() as cur:
            cur.execute(PULL, (link["project_id"], xid, seq, limit))
            cols = [d.name for d in cur.description]
            rows = [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]
        if not rows:
            outbox.set_state(db, last_pull_at=time.time())
            break
        counts = outbox.apply_pulled(db, project_key, rows, (rows[-1]["xid"], int(rows[-1]["seq"])),
                                     link["machine"], me)
        for k, v in counts.items():
            totals[k] += v
        totals["pulled"] += len(rows)
        totals["pages"] += 1
        if len(rows) < limit:
            break
    return totals


def server_counts(conn: Any, project_id: str) -> dict[str, Any]:
    with conn.cursor() as cur:
        cur.execute("""SELECT count(*) FILTER (WHERE NOT deleted), count(*) FILTER (WHERE deleted),
                       count(DISTINCT machine), max(written_at) FROM memory.memories WHERE project_id = %s""",
                    (project_id,))
        live, dead, machines, last = cur.fetchone()
    return {"memories": live, "tombstones": dead, "machines": machines,
            "last_write": last.isoformat() if last else None}


def remote_search(conn: Any, project_id: str, query: str, limit: int = 10, emb: Any = None) -> list[dict[str, Any]]:
    """The team's memories on the server: full-text (tsvector, ts_rank_cd) and, when this machine's embedder
    made the stored vectors, cosine similarity (HNSW), fused by reciprocal rank. `emb`: an embedder already
    loaded (the worker's), else the configured one."""
    emb = emb or embedder()
    lists: list[list[dict[str, Any]]] = []
    cols = (f"uid, type, left(title, 4096) AS title, left(content, {outbox.PULL_READ_CHARS}) AS content, "
            f"length(content) > {outbox.PULL_READ_CHARS} AS content_cut, author::text AS author, "
            "left(machine, 256) AS machine, created_at")
    with conn.cursor() as cur:
        cur.execute(f"""SELECT {cols}, ts_rank_cd(tsv, q) AS score FROM memory.memories,
                        websearch_to_tsquery('english', %s) q
                        WHERE project_id = %s AND NOT deleted AND tsv @@ q ORDER BY score DESC LIMIT %s""",
                    (query, project_id, limit * 4))
        names = [d.name for d in cur.description]
        lists.append([dict(zip(names, r, strict=True)) for r in cur.fetchall()])
        if emb is not None:
            from pgvector import Vector

            from memory.recall import embed

            vec = emb.embed_query(query)
            dim = len(vec)
            literal = Vector([float(x) for x in vec])
            cur.execute(f"""SELECT {cols}, 1 - (embedding::vector({dim}) <=> %s::vector({dim})) AS score
                            FROM memory.memories WHERE project_id = %s AND NOT deleted AND embed_dim = {dim}
                            AND embed_model = %s ORDER BY embedding::vector({dim}) <=> %s::vector({dim})
                            LIMIT %s""", (literal, project_id, embed.key(emb), literal, limit * 4))
            names = [d.name for d in cur.description]
            lists.append([dict(zip(names, r, strict=True)) for r in cur.fetchall()])
    fused: dict[str, dict[str, Any]] = {}
    for hits in lists:
        for rank, h in enumerate(hits):
            f = fused.setdefault(h["uid"], {**h, "score": 0.0})
            f["score"] += 1.0 / (60 + rank + 1)
    return [shown(h) for h in sorted(fused.values(), key=lambda h: -h["score"])[:limit]]


def search_for(home: str, project_key: str, query: str, limit: int, emb: Any = None) -> dict[str, Any]:
    """The team search for one project of a data dir, as the worker answers it (`team_search` on its socket:
    the embedder is warm there). Never raises; errors come back without the password."""
    import json
    import os

    from memory.base.project import Project
    from memory.store.workspace import Workspace
    from memory.team.config import url_for

    try:
        with open(os.path.join(home, "projects", project_key, "project.json"), encoding="utf-8") as fh:
            meta = json.load(fh)
        ws = Workspace(Project(meta["key"], meta.get("name") or project_key, meta.get("root") or "",
                               meta.get("remote")), home)
    except (OSError, ValueError, KeyError):
        return {"ok": False, "error": f"no project {project_key!r} in this data dir"}
    try:
        url, link = url_for(ws), outbox.link_row(ws.db)
        if not url or link is None:
            return {"ok": False, "error": "this project is not linked to a team server"}
        with connect(url) as conn:
            hits = remote_search(conn, link["project_id"], query, limit, emb)
        return {"ok": True, "hits": [{k: v for k, v in h.items()} for h in hits]}
    except TeamError as exc:
        return {"ok": False, "error": str(exc)}
    finally:
        ws.close()
