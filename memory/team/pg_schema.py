"""The team server's schema in PostgreSQL, as ordered migrations (like memory/store/migrations.py): migration N
brings `memory.schema_migrations` from N-1 to N. Append only.

Tables live in the schema `memory`. Row-level security keeps each role to its projects: a row of
`memory.team_members (project_id, role)` makes a role a member of a project, and every policy compares
with `current_user`. Table privileges go to PUBLIC, since the rows are what is guarded: a role that is no
member of any project sees nothing and can write nothing. Who wrote a row is the server's to say (m002: a
trigger sets author, written_at and the pull cursor; clients may write the other columns only), and only
the author changes or deletes a row (m003: policies compare author with `session_user`). The owner
(who ran `memory team init` first) adds members (`memory team grant ROLE`); superusers and BYPASSRLS roles
see everything, as always. FORCE ROW LEVEL SECURITY applies the policies to the owner too (the owner is
made a member of the projects it links)."""

from __future__ import annotations

from typing import Any

from memory.team.config import TeamError

LOCK_KEY = 0x6D656D7465616D  # pg_advisory_xact_lock: one migrator at a time
# Vector sizes with an HNSW index each (partial on embed_dim): MiniLM 384, nomic-embed-text 768,
# hashing and bge-m3 1024, OpenAI-style 1536. Other sizes are stored and searched exactly.
HNSW_DIMS = (384, 768, 1024, 1536)

MEMBER = "project_id IN (SELECT t.project_id FROM memory.team_members t WHERE t.role = current_user)"


def m001_initial(cur: Any) -> None:
    cur.execute("""
        CREATE TABLE memory.team_members (
            project_id text NOT NULL,
            role name NOT NULL,
            added_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (project_id, role)
        );
        CREATE INDEX team_members_role ON memory.team_members (role);
        CREATE SEQUENCE memory.change_seq;
        CREATE TABLE memory.memories (
            project_id text NOT NULL,
            uid text NOT NULL,
            type text NOT NULL,
            title text NOT NULL DEFAULT '',
            content text NOT NULL DEFAULT '',
            tags text NOT NULL DEFAULT '',
            files text NOT NULL DEFAULT '',
            importance real NOT NULL DEFAULT 0.5,
            confidence real NOT NULL DEFAULT 0.5,
            source text NOT NULL DEFAULT '',
            session_id text,
            created_at double precision NOT NULL,
            updated_at double precision NOT NULL,
            expires_at double precision,
            deleted boolean NOT NULL DEFAULT false,
            -- last writer wins: (version, machine) is the writer's clock at the change, then its machine
            version double precision NOT NULL,
            machine text NOT NULL,
            author name NOT NULL DEFAULT current_user,
            written_at timestamptz NOT NULL DEFAULT now(),
            -- the pull cursor: (xid, seq) of the writing transaction, read only below the snapshot's xmin
            xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
            seq bigint NOT NULL DEFAULT nextval('memory.change_seq'),
            embedding vector,
            embed_dim integer,
            embed_model text,
            tsv tsvector GENERATED ALWAYS AS (
                setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', content), 'B')
                || setweight(to_tsvector('english', tags), 'C')) STORED,
            PRIMARY KEY (project_id, uid)
        );
        CREATE INDEX memories_changes ON memory.memories (project_id, xid, seq);
        CREATE INDEX memories_tsv ON memory.memories USING gin (tsv);
        CREATE TABLE memory.sessions (
            project_id text NOT NULL,
            id text NOT NULL,
            machine text NOT NULL,
            author name NOT NULL DEFAULT current_user,
            started_at double precision,
            ended_at double precision,
            written_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (project_id, id)
        );
        CREATE TABLE memory.handoffs (
            project_id text NOT NULL,
            uid text NOT NULL,
            session_id text NOT NULL,
            trigger text NOT NULL,
            content text NOT NULL,
            created_at double precision NOT NULL,
            machine text NOT NULL,
            author name NOT NULL DEFAULT current_user,
            written_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (project_id, uid)
        );
        CREATE INDEX handoffs_recent ON memory.handoffs (project_id, created_at);
    """)
    for dim in HNSW_DIMS:
        cur.execute(f"CREATE INDEX memories_hnsw_{dim} ON memory.memories USING hnsw "
                    f"((embedding::vector({dim})) vector_cosine_ops) WHERE embed_dim = {dim}")
    cur.execute(f"""
        ALTER TABLE memory.team_members ENABLE ROW LEVEL SECURITY;
        CREATE POLICY own_rows ON memory.team_members FOR SELECT USING (role = current_user);
        ALTER TABLE memory.memories ENABLE ROW LEVEL SECURITY;
        ALTER TABLE memory.memories FORCE ROW LEVEL SECURITY;
        CREATE POLICY members ON memory.memories USING ({MEMBER}) WITH CHECK ({MEMBER});
        ALTER TABLE memory.sessions ENABLE ROW LEVEL SECURITY;
        ALTER TABLE memory.sessions FORCE ROW LEVEL SECURITY;
        CREATE POLICY members ON memory.sessions USING ({MEMBER}) WITH CHECK ({MEMBER});
        ALTER TABLE memory.handoffs ENABLE ROW LEVEL SECURITY;
        ALTER TABLE memory.handoffs FORCE ROW LEVEL SECURITY;
        CREATE POLICY members ON memory.handoffs USING ({MEMBER}) WITH CHECK ({MEMBER});
        GRANT USAGE ON SCHEMA memory TO PUBLIC;
        GRANT SELECT ON memory.team_members, memory.schema_migrations TO PUBLIC;
        GRANT SELECT, INSERT, UPDATE ON memory.memories, memory.sessions, memory.handoffs TO PUBLIC;
        GRANT USAGE ON SEQUENCE memory.change_seq TO PUBLIC;
    """)


# What a client may write; author, written_at and the pull cursor (xid, seq) are the server's (m002).
WRITABLE = {
    "memories": ("project_id", "uid", "type", "title", "content", "tags", "files", "importance", "confidence",
                 "source", "session_id", "created_at", "updated_at", "expires_at", "deleted", "version", "machine",
                 "embedding", "embed_dim", "embed_model"),
    "sessions": ("project_id", "id", "machine", "started_at", "ended_at"),
    "handoffs": ("project_id", "uid", "session_id", "trigger", "content", "created_at", "machine"),
}


def m002_server_sets_the_writer(cur: Any) -> None:
    """Team rows carry the truth: a trigger sets author to the authenticated login (session_user, which
    SET ROLE cannot change), written_at, and on memories the pull cursor (xid, seq); clients keep INSERT and
    UPDATE on the other columns only (PUBLIC had them on every column, and author was only a default).

    The machine name is the client's claim, scoped to its author: `memory.machines` records which author
    first wrote from each machine name in a project; another author's row claiming that name is stored as
    `author/name`, so a member cannot pass their rows off as written on a teammate's machine (a client
    also skips rows of its own machine as echoes). The trigger runs as the schema's owner (SECURITY
    DEFINER) to keep that table closed to clients."""
    cur.execute("""
        CREATE TABLE memory.machines (
            project_id text NOT NULL,
            machine text NOT NULL,
            author name NOT NULL,
            first_seen timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (project_id, machine)
        );
        REVOKE ALL ON memory.machines FROM PUBLIC;
        CREATE FUNCTION memory.stamp_writer() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
        SET search_path = pg_catalog, pg_temp AS $fn$
        DECLARE
            claimed_by name;
        BEGIN
            NEW.author := session_user;
            NEW.written_at := now();
            IF TG_TABLE_NAME = 'memories' THEN  -- the xid first, then the sequence number: see sync.PULL
                NEW.xid := pg_current_xact_id();
                NEW.seq := nextval('memory.change_seq');
            END IF;
            SELECT m.author INTO claimed_by FROM memory.machines m
            WHERE m.project_id = NEW.project_id AND m.machine = NEW.machine;
            IF claimed_by IS NULL THEN
                INSERT INTO memory.machines (project_id, machine, author)
                VALUES (NEW.project_id, NEW.machine, session_user) ON CONFLICT DO NOTHING;
                SELECT m.author INTO claimed_by FROM memory.machines m
                WHERE m.project_id = NEW.project_id AND m.machine = NEW.machine;
            END IF;
            IF claimed_by <> session_user THEN
                NEW.machine := session_user || '/' || NEW.machine;
            END IF;
            RETURN NEW;
        END
        $fn$;
        REVOKE ALL ON FUNCTION memory.stamp_writer() FROM PUBLIC;
    """)
    # Machines already on the server belong to whoever wrote from them first. FORCE ROW LEVEL SECURITY binds
    # the owner running this migration too: lifted for the backfill, inside this transaction.
    tables = ("memories", "sessions", "handoffs")
    cur.execute("".join(f"ALTER TABLE memory.{t} NO FORCE ROW LEVEL SECURITY;" for t in tables))
    cur.execute("""
        INSERT INTO memory.machines (project_id, machine, author, first_seen)
        SELECT DISTINCT ON (project_id, machine) project_id, machine, author, written_at FROM (
            SELECT project_id, machine, author, written_at FROM memory.memories
            UNION ALL SELECT project_id, machine, author, written_at FROM memory.sessions
            UNION ALL SELECT project_id, machine, author, written_at FROM memory.handoffs) w
        ORDER BY project_id, machine, written_at
    """)
    cur.execute("".join(f"ALTER TABLE memory.{t} FORCE ROW LEVEL SECURITY;" for t in tables))
    for table, columns in WRITABLE.items():
        cols = ", ".join(columns)
        cur.execute(f"""
            CREATE TRIGGER stamp_writer BEFORE INSERT OR UPDATE ON memory.{table}
                FOR EACH ROW EXECUTE FUNCTION memory.stamp_writer();
            REVOKE INSERT, UPDATE ON memory.{table} FROM PUBLIC;
            GRANT INSERT ({cols}), UPDATE ({cols}) ON memory.{table} TO PUBLIC;
        """)


# How far ahead of the server's clock a write's version may be: a client clock a few minutes fast still
# syncs, and a version pinned further ahead (so that no later edit could win) is brought back to this.
MAX_SKEW_S = 300
# The most a row may hold, in bytes (octet_length), checked by the server on every write: a member's
# 20 MB row would otherwise land on every machine. The client cuts its own rows to these before a push
# (sync.fit_for_server) and cuts pulled rows much shorter (outbox.PULLED_MAX_CHARS).
MAX_BYTES = {
    "memories": {"type": 64, "title": 2048, "content": 65536, "tags": 4096, "files": 16384, "source": 256,
                 "session_id": 256, "machine": 256, "embed_model": 256},
    "sessions": {"id": 256, "machine": 256},
    "handoffs": {"uid": 1024, "session_id": 256, "trigger": 64, "content": 65536, "machine": 256},
}
AUTHOR = "author = session_user"


def m003_authors_own_their_rows(cur: Any) -> None:
    """A teammate's row stays theirs: row-level security lets a member UPDATE (and so tombstone, a
    tombstone being an update of `deleted`) or DELETE only the rows whose author is the connecting login,
    for every role the policies bind (the tables' owner included: FORCE ROW LEVEL SECURITY). An edit of
    someone else's memory is a new row of its editor's (the client makes it, sync.push). Versions are
    bounded by the server's clock (at most MAX_SKEW_S ahead, a trigger brings a later one back), and each
    text column by MAX_BYTES (CHECK constraints, NOT VALID: rows already stored stay, new writes are
    checked)."""
    cur.execute(f"""
        CREATE FUNCTION memory.bound_times() RETURNS trigger LANGUAGE plpgsql
        SET search_path = pg_catalog, pg_temp AS $fn$
        DECLARE
            horizon double precision := extract(epoch FROM now()) + {MAX_SKEW_S};
        BEGIN
            -- least() also brings back NaN and Infinity, which PostgreSQL orders above every number
            NEW.version := least(NEW.version, horizon);
            NEW.created_at := least(NEW.created_at, horizon);
            NEW.updated_at := least(NEW.updated_at, horizon);
            RETURN NEW;
        END
        $fn$;
        CREATE TRIGGER bound_times BEFORE INSERT OR UPDATE ON memory.memories
            FOR EACH ROW EXECUTE FUNCTION memory.bound_times();
    """)
    # A version already pinned ahead would keep its author's own later edits out for ever: brought back
    # (bound_times does it), the row keeping its author and place in the pull order (stamp_writer off for
    # this one statement, and row-level security lifted for the owner, inside this transaction).
    cur.execute(f"""
        ALTER TABLE memory.memories DISABLE TRIGGER stamp_writer;
        ALTER TABLE memory.memories NO FORCE ROW LEVEL SECURITY;
        UPDATE memory.memories SET version = version
            WHERE greatest(version, created_at, updated_at) > extract(epoch FROM now()) + {MAX_SKEW_S};
        ALTER TABLE memory.memories ENABLE TRIGGER stamp_writer;
        ALTER TABLE memory.memories FORCE ROW LEVEL SECURITY;
    """)
    for table, limits in MAX_BYTES.items():
        cur.execute(f"DROP POLICY members ON memory.{table}")
        cur.execute(f"""
            CREATE POLICY members_read ON memory.{table} FOR SELECT USING ({MEMBER});
            CREATE POLICY members_insert ON memory.{table} FOR INSERT WITH CHECK ({MEMBER});
            CREATE POLICY authors_update ON memory.{table} FOR UPDATE USING ({MEMBER} AND {AUTHOR})
                WITH CHECK ({MEMBER} AND {AUTHOR});
            CREATE POLICY authors_delete ON memory.{table} FOR DELETE USING ({MEMBER} AND {AUTHOR});
        """)
        checks = " AND ".join(f"octet_length({col}) <= {n}" for col, n in limits.items())
        cur.execute(f"ALTER TABLE memory.{table} ADD CONSTRAINT row_size CHECK ({checks}) NOT VALID")


MIGRATIONS = [m001_initial, m002_server_sets_the_writer, m003_authors_own_their_rows]


def up_to_date(conn: Any) -> bool:
    with conn.cursor() as cur:
        return version(cur) >= len(MIGRATIONS)


def version(cur: Any) -> int:
    cur.execute("SELECT to_regclass('memory.schema_migrations') IS NOT NULL")
    if not cur.fetchone()[0]:
        return 0
    cur.execute("SELECT coalesce(max(version), 0) FROM memory.schema_migrations")
    return int(cur.fetchone()[0])


def ensure_pgvector(conn: Any) -> str:
    """The installed pgvector version; created when missing and allowed, else a TeamError that says who
    must do what."""
    import psycopg

    with conn.cursor() as cur:
        cur.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        row = cur.fetchone()
        if row:
            return str(row[0])
        cur.execute("SELECT default_version FROM pg_available_extensions WHERE name = 'vector'")
        available = cur.fetchone()
    if not available:
        raise TeamError("the PostgreSQL server has no pgvector extension: install pgvector on it "
                        "(https://github.com/pgvector/pgvector; managed Postgres offers it as `vector`)")
    try:
        with conn.transaction(), conn.cursor() as cur:
            cur.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.errors.InsufficientPrivilege:
        raise TeamError("pgvector is installed on the server but not enabled in this database, and this role "
                        "may not enable it: ask an administrator to run CREATE EXTENSION vector; "
                        "in this database") from None
    return str(available[0])


def migrate(conn: Any) -> int:
    """Create or bring up to date the schema; returns how many migrations ran. One migrator at a time
    (an advisory lock), all in one transaction: a failure leaves the schema as it was."""
    import psycopg

    applied = 0
    try:
        with conn.transaction(), conn.cursor() as cur:
            cur.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
            current = version(cur)
            if current >= len(MIGRATIONS):
                return 0
            if current == 0:
                cur.execute("CREATE SCHEMA IF NOT EXISTS memory")
                cur.execute("""CREATE TABLE IF NOT EXISTS memory.schema_migrations (
                    version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now(),
                    applied_by name NOT NULL DEFAULT current_user)""")
            for number, migration in enumerate(MIGRATIONS[current:], start=current + 1):
                migration(cur)
                cur.execute("INSERT INTO memory.schema_migrations (version) VALUES (%s)", (number,))
                applied += 1
    except psycopg.errors.InsufficientPrivilege as exc:
        raise TeamError(f"this role may not create or migrate the team schema ({exc.diag.message_primary}): "
                        "run `memory team init` once as the database owner, or ask them to") from None
    return applied


PROBE_DIM = 384  # MiniLM's size: the partial HNSW index the team's memories use most
PROBE_UIDS = tuple(f"memory-team-probe-{i}" for i in range(3))
PROBE_ROW = """
INSERT INTO memory.memories (project_id, uid, type, created_at, updated_at, version, machine, embedding, embed_dim,
    embed_model)
VALUES (%s, %s, 'probe', 0, 0, 0, 'probe', %s::vector, {dim}, 'probe')
"""
PROBE_SEARCH = """
SELECT uid, embedding::vector({dim}) <=> %s::vector({dim}) AS distance FROM memory.memories
WHERE project_id = %s AND embed_dim = {dim} AND uid = ANY(%s)
ORDER BY embedding::vector({dim}) <=> %s::vector({dim}) LIMIT 3
"""


def _axis(i: int, dim: int = PROBE_DIM) -> str:
    return "[" + ",".join("1" if k == i else "0" for k in range(dim)) + "]"


class _Rollback(Exception):
    """Ends the probe's transaction: nothing it wrote stays."""


def probe_vectors(conn: Any, project_id: str) -> None:
    """Insert three 384-dimension vectors through the team table's HNSW index and answer a cosine query
    with it, in a transaction rolled back. A pgvector that fails, answers wrongly or kills its backend
    (a build for CPU instructions the server lacks dies with SIGILL) is named at `memory team init`, not
    at the first push. Median 3.6 ms on a local unix-socket server (2026-11-24, load 6.7, 2 shared cores)."""
    import psycopg

    sql_row, sql_search = PROBE_ROW.format(dim=PROBE_DIM), PROBE_SEARCH.format(dim=PROBE_DIM)
    query = _axis(0)
    try:
        with conn.transaction(), conn.cursor() as cur:
            for i, uid in enumerate(PROBE_UIDS):
                cur.execute(sql_row, (project_id, uid, _axis(i)))
            cur.execute("SET LOCAL enable_seqscan = off")  # the search goes through HNSW, as the team's do
            cur.execute(sql_search, (query, project_id, list(PROBE_UIDS), query))
            rows = cur.fetchall()
            raise _Rollback(rows)
    except _Rollback as done:
        rows = done.args[0]
    except psycopg.Error as exc:
        if conn.broken or conn.closed:  # the backend is gone: "server closed the connection unexpectedly"
            raise TeamError(
                "the team server's backend died during a pgvector insert and search probe (the connection "
                "dropped). A pgvector built for CPU instructions the server's CPU lacks (such as AVX-512) "
                "crashes this way: look for 'terminated by signal 4: Illegal instruction' in the server's "
                "log, and install a pgvector built for that CPU") from None
        raise TeamError(f"pgvector failed a vector insert and search probe: {exc.diag.message_primary or exc}"
                        ) from None
    if not rows or rows[0][0] != PROBE_UIDS[0] or abs(float(rows[0][1])) > 1e-6:
        raise TeamError(f"pgvector answered a cosine search probe wrongly (nearest {rows[:1]!r}, expected "
                        f"{PROBE_UIDS[0]!r} at distance 0): check the server's pgvector build")
