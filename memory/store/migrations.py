"""Ordered schema migrations: migration N brings `PRAGMA user_version` from N-1 to N. Append only.

Each is registered by `@migration` in the order of its number (`mNNN_name`, checked), and its docstring's first
line says what it adds: scripts/gen_docs.py writes docs/storage.md's table list from the schema the migrations
build, and SCHEMA_VERSION is their count."""

from __future__ import annotations

import sqlite3

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from collections.abc import Callable


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = []


def migration(fn: Callable[[sqlite3.Connection], None]) -> Callable[[sqlite3.Connection], None]:
    """Register `fn` as the next migration; its name's number must be the next one (m012_... the 12th)."""
    number = int(fn.__name__[1:4]) if fn.__name__[:1] == "m" and fn.__name__[1:4].isdigit() else 0
    if number != len(MIGRATIONS) + 1:
        raise ValueError(f"migration {fn.__name__} registered as number {len(MIGRATIONS) + 1}")
    MIGRATIONS.append(fn)
    return fn


def run_script(db: sqlite3.Connection, script: str) -> None:
    """Run several statements inside the caller's transaction (executescript would commit first)."""
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            db.execute(pending)
            pending = ""
    if pending.strip():
        db.execute(pending)


def replace_index(db: sqlite3.Connection, name: str, on: str) -> None:
    """Index `name` built again over `on` ("table(columns)"), inside the caller's transaction."""
    db.execute(f"DROP INDEX {name}")
    db.execute(f"CREATE INDEX {name} ON {on}")


@migration
def m001_initial(db: sqlite3.Connection) -> None:
    """Memories and their full-text index, sessions, session state, handoffs, the access log, the queue."""
    run_script(
        db,
        """
        CREATE TABLE memories (
            id INTEGER PRIMARY KEY,
            project TEXT NOT NULL,
            session_id TEXT,
            type TEXT NOT NULL DEFAULT 'observation',
            title TEXT NOT NULL,
            title_key TEXT NOT NULL,
            content TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            importance REAL NOT NULL DEFAULT 0.5,
            confidence REAL NOT NULL DEFAULT 0.5,
            tags TEXT NOT NULL DEFAULT '',
            files TEXT NOT NULL DEFAULT '',
            source TEXT NOT NULL DEFAULT 'hook',
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            accessed_at REAL,
            access_count INTEGER NOT NULL DEFAULT 0,
            expires_at REAL
        );
        CREATE UNIQUE INDEX memories_content_hash ON memories(project, content_hash);
        CREATE UNIQUE INDEX memories_title_key ON memories(project, title_key);
        CREATE INDEX memories_created ON memories(project, created_at);
        CREATE INDEX memories_importance ON memories(project, importance, created_at);
        CREATE INDEX memories_session ON memories(session_id, created_at);
        CREATE INDEX memories_type ON memories(project, type, created_at);

        CREATE VIRTUAL TABLE memories_fts USING fts5(
            title, content, tags,
            content='memories', content_rowid='id',
            tokenize='porter unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
            INSERT INTO memories_fts(rowid, title, content, tags)
            VALUES (new.id, new.title, new.content, new.tags);
        END;
        CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
            INSERT INTO memories_fts(memories_fts, rowid, title, content, tags)
            VALUES ('delete', old.id, old.title, old.content, old.tags);
        END;
        CREATE TRIGGER memories_au AFTER UPDATE OF title, content, tags ON memories BEGIN
            INSERT INTO memories_fts(memories_fts, rowid, title, content, tags)
            VALUES ('delete', old.id, old.title, old.content, old.tags);
            INSERT INTO memories_fts(rowid, title, content, tags)
            VALUES (new.id, new.title, new.content, new.tags);
        END;

        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            project TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'completed')),
            source TEXT,
            cwd TEXT,
            transcript_path TEXT,
            started_at REAL NOT NULL,
            ended_at REAL,
            end_reason TEXT,
            summary TEXT,
            prompt_count INTEGER NOT NULL DEFAULT 0,
            tool_call_count INTEGER NOT NULL DEFAULT 0,
            last_event_at REAL
        );
        CREATE INDEX sessions_started ON sessions(project, started_at);

        CREATE TABLE session_state (
            session_id TEXT PRIMARY KEY,
            project TEXT NOT NULL,
            state TEXT NOT NULL,
            updated_at REAL NOT NULL
        );

        CREATE TABLE handoffs (
            id INTEGER PRIMARY KEY,
            project TEXT NOT NULL,
            session_id TEXT NOT NULL,
            trigger TEXT NOT NULL,
            content TEXT NOT NULL,
            created_at REAL NOT NULL
        );
        CREATE INDEX handoffs_session ON handoffs(session_id, created_at);
        CREATE INDEX handoffs_project ON handoffs(project, created_at);

        CREATE TABLE access_log (
            id INTEGER PRIMARY KEY,
            memory_id INTEGER NOT NULL,
            session_id TEXT,
            kind TEXT NOT NULL,
            query TEXT,
            at REAL NOT NULL
        );
        CREATE INDEX access_log_memory ON access_log(memory_id);
        CREATE INDEX access_log_session ON access_log(session_id, memory_id);

        CREATE TABLE queue (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL,
            payload TEXT NOT NULL DEFAULT '{}',
            dedup_key TEXT UNIQUE,
            status TEXT NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'running', 'done', 'failed')),
            attempts INTEGER NOT NULL DEFAULT 0,
            run_after REAL NOT NULL DEFAULT 0,
            locked_by TEXT,
            locked_at REAL,
            error TEXT,
            created_at REAL NOT NULL,
            finished_at REAL
        );
        CREATE INDEX queue_pending ON queue(status, run_after);

        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        """
    )


@migration
def m002_outlines(db: sqlite3.Connection) -> None:
    """The outline cache and the tokens outlines saved."""
    run_script(
        db,
        """
        CREATE TABLE file_signatures (
            path TEXT PRIMARY KEY,
            language TEXT,
            content_hash TEXT NOT NULL,
            size INTEGER NOT NULL,
            mtime REAL NOT NULL,
            total_lines INTEGER NOT NULL,
            symbols INTEGER NOT NULL,
            outline TEXT NOT NULL,
            original_tokens INTEGER NOT NULL,
            outline_tokens INTEGER NOT NULL,
            created_at REAL NOT NULL,
            accessed_at REAL NOT NULL
        );
        CREATE TABLE token_savings (
            id INTEGER PRIMARY KEY,
            session_id TEXT,
            path TEXT NOT NULL,
            original_tokens INTEGER NOT NULL,
            outline_tokens INTEGER NOT NULL,
            at REAL NOT NULL
        );
        CREATE INDEX token_savings_session ON token_savings(session_id);
        """,
    )


@migration
def m003_semantic(db: sqlite3.Connection) -> None:
    """Semantic recall: memories indexed with their session neighbours, and the vector ledger."""
    # Derived data for semantic recall, written by the worker only (memory/worker/index.py), rebuilt by
    # `memory reindex`. memories_ctx indexes each memory together with its neighbours in the same session
    # (the `ctx` column): on LoCoMo that alone lifts BM25 recall@10 from 0.63 to 0.74. memory_index is the
    # ledger of what the vector store holds, so a worker killed at any point can tell what is missing.
    run_script(
        db,
        """
        CREATE VIRTUAL TABLE memories_ctx USING fts5(
            title, content, tags, ctx,
            tokenize='porter unicode61 remove_diacritics 2'
        );
        CREATE TABLE memory_index (
            memory_id INTEGER PRIMARY KEY,
            session_id TEXT,
            created_at REAL NOT NULL,
            provider TEXT NOT NULL,
            text_hash TEXT NOT NULL,
            indexed_at REAL NOT NULL
        );
        CREATE INDEX memory_index_session ON memory_index(session_id, created_at);
        """,
    )


@migration
def m004_extraction(db: sqlite3.Connection) -> None:
    """Learning extraction attempts and transcript imports."""
    # memory/learn: one row per extraction attempt (provider, tokens spent, the transcript bytes it
    # covered), so a session is extracted once unless it went on, spend is summed per day for the token
    # budget, and `memory stats` can show both; `imports` makes `memory import` idempotent and resumable.
    run_script(
        db,
        """
        CREATE TABLE extractions (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL,
            trigger TEXT NOT NULL,
            provider TEXT NOT NULL,
            model TEXT NOT NULL DEFAULT '',
            status TEXT NOT NULL,
            paid INTEGER NOT NULL DEFAULT 0,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            learnings INTEGER NOT NULL DEFAULT 0,
            offset_from INTEGER NOT NULL DEFAULT 0,
            offset_to INTEGER NOT NULL DEFAULT 0,
            progress INTEGER NOT NULL DEFAULT 0,
            summary TEXT,
            error TEXT,
            day TEXT NOT NULL,
            at REAL NOT NULL
        );
        CREATE INDEX extractions_session ON extractions(session_id, at);
        CREATE INDEX extractions_day ON extractions(day, paid);
        CREATE TABLE imports (
            path TEXT PRIMARY KEY,
            session_id TEXT,
            size INTEGER NOT NULL,
            mtime REAL NOT NULL,
            events_done INTEGER NOT NULL DEFAULT 0,
            status TEXT NOT NULL,
            observations INTEGER NOT NULL DEFAULT 0,
            learnings INTEGER NOT NULL DEFAULT 0,
            updated_at REAL NOT NULL
        );
        """,
    )


@migration
def m005_team(db: sqlite3.Connection) -> None:
    """Team memory: uid, scope, author and machine of memories; the team types, link, outbox and state."""
    # Team memory (memory/team/): every memory gets a global uid and a scope (personal or team, by type
    # from team_types at insert); memories pulled from the team server carry their author and machine.
    # Once the project is linked (a team_link row), a change to a team memory writes an outbox row in the
    # same transaction (triggers, so every writer is covered), and the outbox queues one team_sync job for
    # the worker. While pulled changes are applied, team_state holds 'applying' (inside that transaction
    # only), so nothing pulled echoes back. Deleting a row is local (eviction, `memory forget`): a deletion
    # for everyone is `memory team forget`, which writes the tombstone itself.
    now = "((julianday('now') - 2440587.5) * 86400.0)"
    linked = ("EXISTS (SELECT 1 FROM team_link) AND NOT EXISTS (SELECT 1 FROM team_state WHERE key = 'applying')")
    run_script(
        db,
        f"""
        ALTER TABLE memories ADD COLUMN uid TEXT;
        ALTER TABLE memories ADD COLUMN scope TEXT;
        ALTER TABLE memories ADD COLUMN author TEXT;
        ALTER TABLE memories ADD COLUMN machine TEXT;
        CREATE TABLE team_types (type TEXT PRIMARY KEY);
        INSERT INTO team_types (type) VALUES ('decision'), ('bugfix'), ('discovery'), ('learning');
        UPDATE memories SET uid = lower(hex(randomblob(16))),
            scope = CASE WHEN type IN (SELECT type FROM team_types) THEN 'team' ELSE 'personal' END;
        CREATE UNIQUE INDEX memories_uid ON memories(uid);
        CREATE TABLE team_link (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            project_id TEXT NOT NULL,
            server TEXT NOT NULL,
            machine TEXT NOT NULL,
            share_handoffs INTEGER NOT NULL DEFAULT 0,
            linked_at REAL NOT NULL
        );
        CREATE TABLE team_outbox (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            uid TEXT NOT NULL UNIQUE,
            op TEXT NOT NULL CHECK (op IN ('upsert', 'delete')),
            at REAL NOT NULL
        );
        CREATE TABLE team_state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TRIGGER memories_team_ai AFTER INSERT ON memories BEGIN
            UPDATE memories SET uid = lower(hex(randomblob(16))) WHERE id = new.id AND new.uid IS NULL;
            UPDATE memories SET scope = CASE WHEN new.type IN (SELECT type FROM team_types) THEN 'team'
                ELSE 'personal' END WHERE id = new.id AND new.scope IS NULL;
            INSERT OR REPLACE INTO team_outbox (uid, op, at)
                SELECT uid, 'upsert', {now} FROM memories WHERE id = new.id AND scope = 'team' AND {linked};
        END;
        CREATE TRIGGER memories_team_au AFTER UPDATE OF title, content, type, importance, tags, files, expires_at,
            scope ON memories WHEN new.uid IS NOT NULL AND (new.scope = 'team' OR old.scope = 'team') AND {linked}
        BEGIN
            INSERT OR REPLACE INTO team_outbox (uid, op, at)
                VALUES (new.uid, CASE WHEN new.scope = 'team' THEN 'upsert' ELSE 'delete' END, {now});
        END;
        CREATE TRIGGER team_outbox_kick AFTER INSERT ON team_outbox BEGIN
            INSERT OR IGNORE INTO queue (kind, payload, dedup_key, run_after, created_at)
                VALUES ('team_sync', '{{}}', 'team_sync', {now} + 2, {now});
            UPDATE queue SET status = 'pending', attempts = 0, run_after = {now} + 2
                WHERE dedup_key = 'team_sync' AND status IN ('done', 'failed');
        END;
        """,
    )


@migration
def m006_provenance(db: sqlite3.Connection) -> None:
    """Where each memory came from (origin, detail) and its trust flags."""
    # Where each memory came from (memory/base/fence.py ORIGINS: user, tool, file, assistant, model, teammate,
    # repo-doc, transcript, extractor), a detail (which tool, which file, which extractor), and trust flags
    # ('instruction-shaped': reads as orders to the agent; never injected automatically, listed by doctor).
    # Rows from before are derived from their source, tags and author, and scanned once for flags.
    from memory.base.fence import derive_origin, flags_for

    run_script(
        db,
        """
        ALTER TABLE memories ADD COLUMN origin TEXT;
        ALTER TABLE memories ADD COLUMN origin_detail TEXT;
        ALTER TABLE memories ADD COLUMN flags TEXT NOT NULL DEFAULT '';
        CREATE INDEX memories_flags ON memories(project, flags) WHERE flags != '';
        """,
    )
    rows = db.execute("SELECT id, source, type, tags, files, author, machine, title, content FROM memories")
    updates = [(*derive_origin(r[1], r[2], r[3], r[4], r[5], r[6]), flags_for(r[7], r[8]), r[0]) for r in rows]
    db.executemany("UPDATE memories SET origin = ?, origin_detail = ?, flags = ? WHERE id = ?", updates)


@migration
def m007_injections(db: sqlite3.Connection) -> None:
    """Each injection or search, with the rank, score and score parts of what it showed."""
    # "Why was this recalled": each injection (SessionStart, a prompt's recall, a search) is one row of
    # `injections`, with the exact text the model was given (hooks; NULL for a search, whose answer is the
    # hit list); each memory it named keeps its access_log row, now linked to it with its rank, score and
    # the score parts the ranking filled (JSON: keyword, vector, session, importance, recency, use,
    # diversity...; memory/recall/search.py PARTS). Read by `memory why` and the viewer.
    run_script(
        db,
        """
        CREATE TABLE injections (
            id INTEGER PRIMARY KEY,
            session_id TEXT,
            kind TEXT NOT NULL,
            mode TEXT,
            query TEXT,
            text TEXT,
            at REAL NOT NULL
        );
        CREATE INDEX injections_session ON injections(session_id, at);
        ALTER TABLE access_log ADD COLUMN injection_id INTEGER;
        ALTER TABLE access_log ADD COLUMN rank INTEGER;
        ALTER TABLE access_log ADD COLUMN score REAL;
        ALTER TABLE access_log ADD COLUMN parts TEXT;
        """,
    )


@migration
def m008_repo_map(db: sqlite3.Connection) -> None:
    """The repository map: each file's definitions and references, and the maps built."""
    # The repository map (memory/outline/mapbuild.py): per file, its definitions (JSON rows: name, kind,
    # line, depth, signature) and the identifiers it uses (JSON: name -> count), keyed by content hash so
    # that only changed files are parsed again; and the maps built, which SessionStart reads (never builds).
    run_script(
        db,
        """
        CREATE TABLE repo_files (
            root TEXT NOT NULL,
            path TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            size INTEGER NOT NULL,
            mtime REAL NOT NULL,
            language TEXT,
            defs TEXT NOT NULL,
            refs TEXT NOT NULL,
            parsed_at REAL NOT NULL,
            PRIMARY KEY (root, path)
        );
        CREATE TABLE repo_maps (
            root TEXT NOT NULL,
            tokens INTEGER NOT NULL,
            fingerprint TEXT NOT NULL,
            text TEXT NOT NULL,
            files INTEGER NOT NULL,
            built_at REAL NOT NULL,
            PRIMARY KEY (root, tokens)
        );
        """,
    )


@migration
def m009_memory_files(db: sqlite3.Connection) -> None:
    """The files each memory names, as indexed rows, for recall at the point of action."""
    # The files each memory names (memories.files, one path a line) as indexed rows, kept by triggers: recall
    # at the point of action (memory/recall/point.py) finds a file's memories by index. A LIKE scan of
    # memories.files cost 4.5 ms CPU at 10,000 memories, growing with the store.
    paths = ("json_each('[\"' || replace(replace(replace({row}.files, '\\', '\\\\'), '\"', '\\\"'), "
             "char(10), '\",\"') || '\"]')")
    split = "SELECT {row}.id, value FROM " + paths + " WHERE value != ''"
    run_script(
        db,
        f"""
        CREATE TABLE memory_files (
            memory_id INTEGER NOT NULL,
            path TEXT NOT NULL,
            PRIMARY KEY (path, memory_id)
        ) WITHOUT ROWID;
        CREATE INDEX memory_files_memory ON memory_files(memory_id);
        INSERT OR IGNORE INTO memory_files (memory_id, path)
            SELECT memories.id, value FROM memories, {paths.format(row="memories")}
            WHERE memories.files != '' AND value != '';
        CREATE TRIGGER memory_files_ai AFTER INSERT ON memories WHEN new.files != '' BEGIN
            INSERT OR IGNORE INTO memory_files (memory_id, path) {split.format(row="new")};
        END;
        CREATE TRIGGER memory_files_ad AFTER DELETE ON memories WHEN old.files != '' BEGIN
            DELETE FROM memory_files WHERE memory_id = old.id;
        END;
        CREATE TRIGGER memory_files_au AFTER UPDATE OF files ON memories BEGIN
            DELETE FROM memory_files WHERE memory_id = old.id;
            INSERT OR IGNORE INTO memory_files (memory_id, path) {split.format(row="new")};
        END;
        """,
    )


@migration
def m010_memory_symbols(db: sqlite3.Connection) -> None:
    """The definitions a memory is about, their headers, and whether they changed since."""
    # The definitions a memory is about, with their headers when it was made (memory/store/symbols.py); a
    # header that changed or a definition that is gone sets stale_at and why ("signature changed", "gone").
    run_script(
        db,
        """
        CREATE TABLE memory_symbols (
            memory_id INTEGER NOT NULL,
            path TEXT NOT NULL,
            name TEXT NOT NULL,
            signature TEXT NOT NULL,
            stale_at REAL,
            why TEXT,
            PRIMARY KEY (memory_id, path, name)
        ) WITHOUT ROWID;
        CREATE INDEX memory_symbols_path ON memory_symbols(path, stale_at);
        CREATE TRIGGER memory_symbols_ad AFTER DELETE ON memories BEGIN
            DELETE FROM memory_symbols WHERE memory_id = old.id;
        END;
        """,
    )


@migration
def m011_session_host(db: sqlite3.Connection) -> None:
    """The coding agent each session ran in."""
    # The coding agent a session ran in (memory/hook/hosts.py HOSTS): a memory's host is its session's,
    # shown by `memory why`, the viewer and export. Sessions from before were all Claude Code's.
    db.execute("ALTER TABLE sessions ADD COLUMN host TEXT NOT NULL DEFAULT 'claude'")


@migration
def m012_symbols_checked(db: sqlite3.Connection) -> None:
    """When a memory's recorded definitions of a file were last compared with it."""
    # When a memory's recorded definitions of a file were last compared with it (memory/store/symbols.py
    # sweep): a file written since (a pull, another editor) is compared again at the next SessionStart.
    db.execute("ALTER TABLE memory_symbols ADD COLUMN checked_at REAL NOT NULL DEFAULT 0")


@migration
def m013_flags_checked(db: sqlite3.Connection) -> None:
    """Under which trust rules a memory's flags were last decided."""
    # The trust rules' mark (memory/base/fence.py rules_mark) under which a reader last decided a memory's
    # flags: a row checked under the rules in force is not read again at every injection (the check cost
    # SessionStart 2-8 ms CPU). A new title, content or origin clears it.
    run_script(
        db,
        """
        ALTER TABLE memories ADD COLUMN checked TEXT;
        CREATE TRIGGER memories_checked_au AFTER UPDATE OF title, content, origin, author ON memories
            WHEN old.checked IS NOT NULL BEGIN
            UPDATE memories SET checked = NULL WHERE id = new.id;
        END;
        """,
    )


@migration
def m014_contentless_ctx(db: sqlite3.Connection) -> None:
    """The neighbour-aware index keeps no text: the ledger keeps what it indexed, compressed."""
    # memories_ctx stored its text (each memory with its neighbours': 1.9 KB of the 7.2 KB a memory cost at
    # 10,000 memories); contentless it keeps the index alone, and memory_index.doc the indexed values, zlib
    # compressed (~0.6 KB), to remove a row with (memory/store/ctx_rows.py). Migrations run in whichever
    # process opens the database first, usually a hook (100 ms; Claude Code kills it at its timeout), so
    # this one costs the same at any size: the old table, with its rows, is renamed memories_ctx_old (FTS5
    # renames its shadow tables) and the worker converts its rows a batch a transaction when it loads the
    # project (ctx_rows.convert: the same tokens, so search ranks as before, nothing embedded again).
    db.execute("ALTER TABLE memory_index ADD COLUMN doc BLOB")
    if db.execute("SELECT 1 FROM memories_ctx LIMIT 1").fetchone():
        db.execute("ALTER TABLE memories_ctx RENAME TO memories_ctx_old")
    else:
        db.execute("DROP TABLE memories_ctx")
    db.execute("""CREATE VIRTUAL TABLE memories_ctx USING fts5(
                      title, content, tags, ctx, content='',
                      tokenize='porter unicode61 remove_diacritics 2'
                  )""")


@migration
def m015_shown_in_session(db: sqlite3.Connection) -> None:
    """What a session was shown is read from the access log's session index alone."""
    # Prompt recall leaves out what the session was shown (memory/recall/search.py Filters.not_shown_in: the
    # session's rows whose kind is an injection). With (session_id, memory_id) each of them was read from the
    # table for its kind: ~5 rows a prompt, and a 1,000-prompt session read 5,000 rows (2,300 pages, 5 ms CPU)
    # at every prompt; with the kind in the index it reads 40 pages (0.5 ms). Built once over the log as it
    # is (~1 ms per 1,000 rows), in whichever process opens the database first.
    replace_index(db, "access_log_session", "access_log(session_id, memory_id, kind)")


@migration
def m016_given_in_session(db: sqlite3.Connection) -> None:
    """Whether a session was given a file's note, and its startup text, are read by the session's index."""
    # The point-of-action hook gives a file's note once per session (memory/recall/point.py _given: the
    # session's injections row of that kind and file), and prompt recall reads the session's latest startup
    # text (memory/recall/inject.py _said_at_start). With (session_id, at) both walked the session's rows,
    # each read from the table for its kind: a 1,000-Edit session read 550 pages (~2.8 ms CPU) at every Edit
    # and prompt. (session_id, kind, query) makes the first one probe of the index and the second a
    # range of the session's few startups; a session's timeline (`memory why`, the viewer) reads all its rows
    # anyway and sorts them. Built once over the table as it is, in whichever process opens the database first.
    replace_index(db, "injections_session", "injections(session_id, kind, query)")


SCHEMA_VERSION = len(MIGRATIONS)
