"""A database locked past the busy timeout (many sessions and the worker writing at once) must not lose
the event: the hook spools it, privacy-filtered, and a later hook replays it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memory.base.project import identify
from tests.support.helpers import HookRunner, all_bytes_under

SECRET = "AKIAIOSFODNN7EXAMPLE"


def db_path(home: Path, project: Path) -> Path:
    return home / "projects" / identify(str(project)).key / "memory.db"


def contents(home: Path, project: Path, needle: str) -> list[str]:
    db = sqlite3.connect(db_path(home, project))
    try:
        # The title names the command; the content holds it only when the title does not (memory/capture/tools.py).
        return [r[0] for r in db.execute("SELECT title || ' ' || content FROM memories WHERE title || ' ' || content "
                                         "LIKE ?", (f"%{needle}%",))]
    finally:
        db.close()


@pytest.fixture
def locked(hooks: HookRunner, home: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """The project's database with another process's write transaction open on it."""
    monkeypatch.setenv("MEMORY_BUSY_TIMEOUT_MS", "150")
    hooks.start()  # creates the database
    holder = sqlite3.connect(db_path(home, hooks.project), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    yield holder
    holder.close()


def test_an_event_refused_by_a_locked_database_is_spooled_and_replayed_by_a_later_hook(
        hooks: HookRunner, home: Path, locked: sqlite3.Connection) -> None:
    cmd = "pytest tests/test_billing.py -k refund_rounding"
    out = hooks.tool("Bash", {"command": cmd},
                     {"stdout": f"FAILED test_refund_rounding <private>card 4111 1111</private> key={SECRET}",
                      "stderr": "", "interrupted": False})
    assert out["exit_code"] == 0 and not out["stdout"].strip()
    spooled = list((home / "spool").glob("*.json"))
    assert len(spooled) == 1
    find = all_bytes_under(home)
    assert not find(SECRET.encode()) and not find(b"4111 1111"), "spooled text is privacy-filtered"
    log = (home / "logs" / "hooks.log").read_text()
    assert "event spooled as" in log and " ERROR " not in log

    locked.rollback()  # the other writer is done
    hooks.tool("Bash", {"command": "pytest tests/test_tax.py"}, {"stdout": "FAILED test_vat_rounding", "stderr": ""})
    assert not list((home / "spool").glob("*")), "replayed and removed"
    assert contents(home, hooks.project, "refund_rounding"), "the spooled event reached the database"
    assert contents(home, hooks.project, "test_tax.py")
    assert not find(SECRET.encode())


def test_a_replay_that_meets_the_lock_again_keeps_the_event(
        hooks: HookRunner, home: Path, locked: sqlite3.Connection) -> None:
    hooks.prompt("Why does the refund rounding test fail on leap years?")
    assert len(list((home / "spool").glob("*.json"))) == 1
    hooks.prompt("Also check the currency conversion for yen amounts")  # still locked: both wait
    assert len(list((home / "spool").glob("*.json"))) == 2
    locked.rollback()
    for _ in range(2):  # each hook replays at least one event, however loaded the machine (spool.replay)
        hooks.stop("Looked at the rounding")
        if not list((home / "spool").glob("*")):
            break
    assert not list((home / "spool").glob("*"))
    assert contents(home, hooks.project, "leap years") and contents(home, hooks.project, "yen amounts")


def test_a_damaged_spool_file_is_set_aside_and_breaks_nothing(hooks: HookRunner, home: Path) -> None:
    hooks.start()
    spool = home / "spool"
    spool.mkdir(mode=0o700)
    (spool / "00000000000000000001-1-post_tool_use.json").write_text('{"hook": "post_tool_use", "event": ')
    (spool / "00000000000000000002-1-os.json").write_text('{"hook": "../../x", "event": {}}')
    for _ in range(2):  # each hook takes at least one event, however loaded the machine (spool.replay)
        hooks.tool("Bash", {"command": "pytest tests/test_tax.py"}, {"stdout": "FAILED test_vat_rounding",
                                                                     "stderr": ""})
        if not list(spool.glob("*.json")):
            break
    assert not list(spool.glob("*.json")), "nothing left to retry forever"
    assert len(list(spool.glob("*.bad"))) == 2
    assert contents(home, hooks.project, "test_tax.py")


def test_doctor_reports_spooled_events_and_repair_writes_them(
        hooks: HookRunner, home: Path, locked: sqlite3.Connection) -> None:
    import json
    import os
    import subprocess
    import sys

    hooks.tool("Bash", {"command": "pytest tests/test_tax.py"}, {"stdout": "FAILED test_vat_rounding", "stderr": ""})
    locked.rollback()  # no hook ran since: the event still waits
    cli = [str(Path(sys.executable).parent / "memory")]
    env = {**os.environ, "MEMORY_HOME": str(home)}
    report = json.loads(subprocess.run([*cli, "doctor", "--json"], capture_output=True, text=True, env=env,
                                       cwd=hooks.project, check=True, timeout=120).stdout)
    assert report["spooled_events"]["waiting"] == 1 and report["spooled_events"]["unreadable"] == 0
    fixed = subprocess.run([*cli, "doctor", "--repair"], capture_output=True, text=True, env=env,
                           cwd=hooks.project, check=True, timeout=120).stdout
    assert "wrote 1 of 1 spooled event" in fixed
    assert contents(home, hooks.project, "test_tax.py")


def test_hooks_leave_no_write_ahead_log_behind(hooks: HookRunner, home: Path) -> None:
    """Each hook closes its connection: the last one out checkpoints the WAL and removes it. Before, the WAL
    grew by every hook's pages (67 MB after 600 events) and each new hook re-scanned it."""
    hooks.start()
    for i in range(12):
        hooks.tool("Bash", {"command": f"pytest tests/test_tax.py -k case_{i}"},
                   {"stdout": f"FAILED case_{i}", "stderr": ""})
    hooks.stop("done")
    wal = Path(str(db_path(home, hooks.project)) + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    assert len(contents(home, hooks.project, "test_tax.py")) == 12


def test_a_spooled_event_is_replayed_into_its_own_project(
        hooks: HookRunner, home: Path, locked: sqlite3.Connection, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.support.helpers import make_git_project

    hooks.tool("Bash", {"command": "pytest tests/test_tax.py"}, {"stdout": "FAILED test_vat_rounding", "stderr": ""})
    locked.rollback()
    other = make_git_project(tmp_path / "other-app")
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(other))  # the replaying hook belongs to another project
    HookRunner(other, session="sess-other").tool("Bash", {"command": "cargo test"}, {"stdout": "ok", "stderr": ""})
    assert not list((home / "spool").glob("*"))
    assert contents(home, hooks.project, "test_tax.py"), "written where its hook ran, not into the other project"
    assert not contents(home, other, "test_tax.py")


def test_a_replay_tells_dispatch_its_project_and_leaves_the_environment_alone(
        hooks: HookRunner, home: Path, locked: sqlite3.Connection, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Replayed in this process (as `memory doctor --repair` does), the event goes to the project it was
    recorded in, which dispatch is given as a parameter: no environment variable is set on the way."""
    import os

    from memory.hook import common, spool
    from memory.hook.run import dispatch
    from tests.support.helpers import make_git_project

    hooks.tool("Bash", {"command": "pytest tests/test_tax.py"}, {"stdout": "FAILED test_vat_rounding", "stderr": ""})
    locked.rollback()
    assert len(spool.pending()) == 1
    other = make_git_project(tmp_path / "other-app")
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(other))
    before = dict(os.environ)
    try:
        assert spool.replay(dispatch, budget_s=30.0) == 1
    finally:
        common.close_workspaces()
    assert dict(os.environ) == before
    assert contents(home, hooks.project, "test_tax.py") and not db_path(home, other).exists()
