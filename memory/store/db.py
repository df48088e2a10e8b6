"""Opening a project's SQLite database: WAL, busy timeout, owner-only files, migrations applied once."""

from __future__ import annotations

import os
import sqlite3
import time

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from collections.abc import Callable


def _busy_timeout_ms() -> int:
    try:
        return max(0, int(os.environ.get("MEMORY_BUSY_TIMEOUT_MS") or 5000))
    except ValueError:
        return 5000


# Past it a hook spools its event (memory/hook/spool.py) rather than lose it.
BUSY_TIMEOUT_MS = _busy_timeout_ms()
# The count of migrations (memory/store/migrations.py), written here by `python -m scripts.gen_docs` (checked
# by --check) so that opening an up-to-date database does not load the migrations.
SCHEMA_VERSION = 16


class DatabaseCorrupt(Exception):
    """The database file could not be opened as SQLite; it has been moved aside."""


def connect(path: str, *, migrate: bool = True) -> sqlite3.Connection:
    os.makedirs(os.path.dirname(path) or ".", mode=0o700, exist_ok=True)
    old = os.umask(0o077)  # the db, its -wal and -shm: owner-only
    try:
        db = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    finally:
        os.umask(old)
    db.row_factory = sqlite3.Row
    try:
        db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        _ensure_wal(db)
        db.execute("PRAGMA synchronous=NORMAL")
        if migrate:
            apply_migrations(db)
    except sqlite3.DatabaseError as exc:
        db.close()
        if "not a database" in str(exc) or "malformed" in str(exc):
            moved = quarantine(path)
            raise DatabaseCorrupt(f"database {path} was corrupt and was moved to {moved}; a fresh database "
                                  f"was created. To recover what can be read from it: `memory doctor --repair`") \
                from exc
        if read_only_place(path):
            return _read_only(path)
        raise
    return db


def read_only_place(path: str) -> bool:
    """Whether the database's folder takes no writes: a read-only filesystem (a read-only mount: even root
    cannot write there) or a full one (under 1 MB free), where SQLite cannot make a WAL database's
    shared-memory file to open it."""
    try:
        st = os.statvfs(os.path.dirname(path) or ".")
        return os.path.exists(path) and bool(st.f_flag & os.ST_RDONLY or st.f_bavail * st.f_frsize < 2**20)
    except OSError:
        return False


def _read_only(path: str) -> sqlite3.Connection:
    """The database opened for reading only, without locks (`immutable`: nothing can write on a read-only
    or full filesystem): recall still works; every write fails with "attempt to write a readonly database", which
    the hooks keep aside (memory/hook/spool.py)."""
    from urllib.parse import quote

    db = sqlite3.connect(f"file:{quote(path)}?immutable=1", uri=True, isolation_level=None)
    db.row_factory = sqlite3.Row
    return db


def _ensure_wal(db: sqlite3.Connection) -> None:
    """Switch to WAL once. Switching needs an exclusive lock and SQLite may answer "database is locked"
    without waiting when several processes open a new file at once: another process setting the file up is
    waited for as a migration is (_setup_wait_ms), whatever this one's busy timeout."""
    def switch() -> None:
        if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            db.execute("PRAGMA journal_mode=WAL")

    try:
        switch()
    except sqlite3.OperationalError as exc:
        if not is_lock_error(exc):
            raise
        from memory.base.log import log

        _until_unlocked(switch, _setup_wait_ms(),
                        waiting=lambda: log("info", "waiting for another process setting up the database"))


def _setup_wait_ms() -> int:
    """How long a process waits for another one setting up or migrating the database: its busy timeout, or
    MEMORY_MIGRATION_WAIT_MS if longer (a hook's or a CLI's busy timeout may be a few ms)."""
    from memory.base.config import env_int

    return max(BUSY_TIMEOUT_MS, env_int("MEMORY_MIGRATION_WAIT_MS"))


def is_lock_error(exc: sqlite3.OperationalError) -> bool:
    """SQLite's "database is locked" / "busy" (memory/hook/spool.py has its twin by name, without sqlite3)."""
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _until_unlocked(step: Callable[[], object], wait_ms: int, done: Callable[[], bool] = lambda: False,
                    waiting: Callable[[], None] = lambda: None) -> bool:
    """Run `step`, again while SQLite answers "locked" or "busy", for up to `wait_ms`: True once it ran,
    False as soon as `done()` says it is no longer needed. `waiting` is called once, at the first refusal."""
    deadline = time.monotonic() + wait_ms / 1000
    refused = False
    while True:
        try:
            step()
            return True
        except sqlite3.OperationalError as exc:
            if not is_lock_error(exc):
                raise
            if done():
                return False
            if time.monotonic() > deadline:
                raise
        if not refused:
            waiting()
            refused = True
        time.sleep(0.01)


def schema_version(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA user_version").fetchone()[0])


def apply_migrations(db: sqlite3.Connection) -> int:
    if schema_version(db) >= SCHEMA_VERSION:
        return 0
    from memory.store.migrations import MIGRATIONS

    if not _begin_migration(db):
        return 0
    applied = 0
    try:
        version = schema_version(db)
        for number, migration in enumerate(MIGRATIONS[version:], start=version + 1):
            migration(db)  # migrations use run_script, never executescript (it would COMMIT early)
            db.execute(f"PRAGMA user_version={number}")
            applied += 1
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return applied


def _begin_migration(db: sqlite3.Connection) -> bool:
    """Take the write lock to migrate (one process migrates). A process that finds another one migrating
    waits for it whatever its own busy timeout (a hook's may be a few ms, and its BEGIN would fail at once),
    up to MEMORY_MIGRATION_WAIT_MS: False when the other one finished meanwhile. Past it, "database is locked"
    with the reason (a hook spools its event: memory/hook/spool.py)."""
    from memory.base.log import log

    wait_ms = _setup_wait_ms()
    try:
        return _until_unlocked(lambda: db.execute("BEGIN IMMEDIATE"), wait_ms,
                               done=lambda: schema_version(db) >= SCHEMA_VERSION,
                               waiting=lambda: log("info", "waiting for another process migrating the database"))
    except sqlite3.OperationalError as exc:
        if not is_lock_error(exc):
            raise
        raise sqlite3.OperationalError(
            f"database is locked: another process held the database for more than {wait_ms} ms while it was to "
            f"be migrated to schema {SCHEMA_VERSION} (a migration under way or a stuck writer; "
            f"MEMORY_MIGRATION_WAIT_MS sets the wait)") from exc


def quarantine(path: str) -> str:
    """Move a corrupt database (and its WAL) aside so that a fresh one can be created. Nothing is deleted."""
    base = f"{path}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}"
    target, n = base, 1
    while os.path.exists(target):  # never overwrite an earlier corrupt copy
        target, n = f"{base}-{n}", n + 1
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.rename(path + suffix, target + suffix)
    return target


class Tx:
    """`with Tx(db):` runs a write transaction that takes the write lock up front (no upgrade deadlocks).

    Re-entrant: inside another Tx it joins it, so a hook can make all its writes one commit (each commit
    costs a hook ~1-2 ms)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.owner = False

    def __enter__(self) -> sqlite3.Connection:
        if not self.db.in_transaction:
            self.db.execute("BEGIN IMMEDIATE")
            self.owner = True
        return self.db

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if self.owner:
            self.db.execute("ROLLBACK" if exc_type else "COMMIT")
