"""A process that opens a database while another one migrates it waits for that migration whatever its busy
timeout (a hook's or a CLI's of 5 ms), within MEMORY_MIGRATION_WAIT_MS; past it a hook keeps its event (spool)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory.store.workspace import Workspace
from tests.support.helpers import ROOT, HookRunner
from tests.test_spool import contents

# The real migrations, run by the real connect(); the last one, once done, holds its transaction open until
# the test writes a line: a migration slowed by a hook that exists only in this child process.
MIGRATOR = """
import sys
from memory.store import migrations
from memory.store.workspace import Workspace

last = migrations.MIGRATIONS[-1]

def held(db):
    last(db)
    print("migrating", flush=True)
    sys.stdin.readline()

migrations.MIGRATIONS[-1] = held
ws = Workspace.for_dir(sys.argv[1])
ws.db
ws.close()
print("migrated", flush=True)
"""

WAITING = "waiting for another process migrating the database"


class Migration:
    """A child process migrating the project's fresh database, held open until release()."""

    def __init__(self, project: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", MIGRATOR, str(project)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, cwd=ROOT)
        assert self.proc.stdout is not None and self.proc.stdout.readline() == "migrating\n"

    def release(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline() == "migrated\n"
        assert self.proc.wait() == 0


@pytest.fixture
def migration(home: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Migration]:
    monkeypatch.setenv("MEMORY_BUSY_TIMEOUT_MS", "5")
    monkeypatch.setenv("MEMORY_LOG_LEVEL", "info")
    held = Migration(project)
    yield held
    if held.proc.poll() is None:
        held.proc.kill()
        held.proc.wait()


def wait_until_waiting(proc: subprocess.Popen[bytes], home: Path) -> None:
    """Until `proc` has said in the log that it found the migration and waits (an event, not a delay)."""
    log = home / "logs" / "hooks.log"
    while not (log.exists() and WAITING in log.read_text()):
        assert proc.poll() is None, f"it ended (exit code {proc.returncode}) without waiting for the migration"
        time.sleep(0.01)


def test_a_cli_with_a_5_ms_busy_timeout_waits_for_another_process_migrating(
        migration: Migration, home: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_MIGRATION_WAIT_MS", "600000")  # bounded by the release below, not by a clock
    cli = subprocess.Popen([str(Path(sys.executable).parent / "memory"), "search", "refund", "--json"],
                           cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_until_waiting(cli, home)
    migration.release()
    out, err = cli.communicate(timeout=120)
    assert cli.returncode == 0, err
    assert json.loads(out) == [] and b"locked" not in err
    assert "database is locked" not in (home / "logs" / "hooks.log").read_text()


def test_a_hook_with_a_5_ms_busy_timeout_waits_for_the_migration_and_records_its_event(
        migration: Migration, hooks: HookRunner, home: Path, project: Path) -> None:
    event = hooks.event("UserPromptSubmit", prompt="Why does the refund rounding test fail on leap years?")
    hook = subprocess.Popen([str(ROOT / "hooks" / "run"), "user_prompt_submit"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert hook.stdin is not None
    hook.stdin.write(json.dumps(event).encode())
    hook.stdin.close()
    wait_until_waiting(hook, home)
    migration.release()
    assert hook.wait(timeout=120) == 0
    assert not (home / "spool").exists()
    assert contents(home, project, "leap years")


def test_a_hook_that_waited_past_the_bound_spools_its_event_and_a_later_hook_replays_it(
        migration: Migration, hooks: HookRunner, home: Path, project: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_MIGRATION_WAIT_MS", "1")  # the migration is held until release(): past it
    out = hooks.prompt("Why does the refund rounding test fail on leap years?")
    assert out == ""
    assert len(list((home / "spool").glob("*.json"))) == 1, "the event is kept"
    log = (home / "logs" / "hooks.log").read_text()
    assert "event spooled as" in log and " ERROR " not in log
    migration.release()
    hooks.stop("Looked at the rounding")
    assert not list((home / "spool").glob("*")), "replayed and removed"
    assert contents(home, project, "leap years"), "the spooled event reached the database"


def test_past_the_bound_the_cli_says_why(migration: Migration, project: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_MIGRATION_WAIT_MS", "1")
    p = subprocess.run([str(Path(sys.executable).parent / "memory"), "search", "refund", "--json"], cwd=project,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode != 0
    assert "to be migrated" in p.stderr and "MEMORY_MIGRATION_WAIT_MS" in p.stderr
    migration.release()


# A new database file another process holds exclusively before it is in WAL mode (as the first of several
# processes opening a new file at once does): switching to WAL is refused until it lets go.
SETTER = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
db.execute("CREATE TABLE setting_up (x)")
print("holding", flush=True)
sys.stdin.readline()
db.execute("ROLLBACK")
db.close()
"""


def test_a_cli_with_a_5_ms_busy_timeout_waits_for_another_process_setting_up_a_new_database(
        home: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_BUSY_TIMEOUT_MS", "5")
    monkeypatch.setenv("MEMORY_LOG_LEVEL", "info")
    monkeypatch.setenv("MEMORY_MIGRATION_WAIT_MS", "600000")  # bounded by the release below, not by a clock
    path = Path(Workspace.for_dir(str(project), home=str(home)).db_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    setter = subprocess.Popen([sys.executable, "-c", SETTER, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert setter.stdin is not None and setter.stdout is not None and setter.stdout.readline() == "holding\n"
    cli = subprocess.Popen([str(Path(sys.executable).parent / "memory"), "search", "refund", "--json"],
                           cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    log = home / "logs" / "hooks.log"
    while not (log.exists() and "waiting for another process setting up the database" in log.read_text()):
        assert cli.poll() is None, cli.communicate()
        time.sleep(0.01)
    setter.stdin.write("\n")
    setter.stdin.flush()
    assert setter.wait(timeout=60) == 0
    out, err = cli.communicate(timeout=120)
    assert cli.returncode == 0, err
    assert json.loads(out) == [] and b"locked" not in err
