"""Team memory against a real PostgreSQL + pgvector server (tests/pg_server.py): two machines (two data
dirs, two roles), real CLI and hook processes."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from pg_server import ROLES, PgServer, server
from team_machines import PROJECT_ID, Machine


@pytest.fixture(scope="session")
def pg(tmp_path_factory: pytest.TempPathFactory) -> PgServer:
    return server(tmp_path_factory.mktemp("pg") / "data")


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
    indexes = {r[0] for r in pg.sql(database, "SELECT indexname FROM pg_indexes WHERE schemaname = 'memory'")}
    assert {"memories_tsv", "memories_hnsw_384", "memories_hnsw_1024", "memories_changes"} <= indexes
