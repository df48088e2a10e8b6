"""Degraded environments: a corrupt or old database, an unwritable or full data dir, no git."""

from __future__ import annotations

import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from memory.base.project import identify
from tests.support.helpers import ROOT, HookRunner

CLI = str(Path(sys.executable).parent / "memory")


def db_path(home: Path, project: Path) -> Path:
    return home / "projects" / identify(str(project)).key / "memory.db"


def cli(*args: str, home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, *args], capture_output=True, text=True, cwd=cwd, timeout=120,
                          env={**os.environ, "MEMORY_HOME": str(home)})


@pytest.fixture(autouse=True)
def private_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))  # the notices fallback dir


def test_a_corrupt_database_is_moved_aside_and_the_user_told(hooks: HookRunner, home: Path) -> None:
    hooks.start()
    hooks.prompt("Remember the deploy steps for staging")
    path = db_path(home, hooks.project)
    for suffix in ("-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    path.write_bytes(b"this is not a database" * 500)
    result = hooks.run("session_start", hooks.event("SessionStart", source="startup"))
    assert result["exit_code"] == 0
    message = result["json"]["systemMessage"]
    assert "corrupt" in message and "fresh database" in message
    assert list(path.parent.glob("memory.db.corrupt-*")), "the damaged file is kept"
    assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    again = hooks.run("session_start", hooks.event("SessionStart", source="startup"))
    assert not (again["json"] or {}).get("systemMessage"), "told once"


def test_an_older_schema_is_migrated(hooks: HookRunner, home: Path) -> None:
    from memory.store.migrations import MIGRATIONS

    path = db_path(home, hooks.project)
    path.parent.mkdir(parents=True)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("BEGIN")
    MIGRATIONS[0](db)
    db.execute("PRAGMA user_version=1")
    db.execute("COMMIT")
    db.execute("INSERT INTO memories (project, type, title, title_key, content, content_hash, created_at, "
               "updated_at) VALUES ('p', 'decision', 'Old decision', 'old decision', 'kept', 'h', 1, 1)")
    db.close()
    hooks.start()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert db.execute("SELECT content FROM memories WHERE title = 'Old decision'").fetchone()[0] == "kept"


def test_an_unwritable_data_dir_never_breaks_a_hook_and_doctor_says_so(tmp_path: Path, project: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the data dir should be")
    home = blocker / "data"
    monkeypatch.setenv("MEMORY_HOME", str(home))  # every write under it fails (ENOTDIR)
    runner = HookRunner(project)
    for entry, event in [("session_start", runner.event("SessionStart", source="startup")),
                         ("user_prompt_submit", runner.event("UserPromptSubmit", prompt="Add a cache")),
                         ("post_tool_use", runner.event("PostToolUse", tool_name="Bash",
                                                        tool_input={"command": "make"}, tool_response={})),
                         ("stop", runner.event("Stop", last_assistant_message="done"))]:
        result = runner.run(entry, event)
        assert result["exit_code"] == 0 and result["stderr"] == ""
    told = runner.results[0]["json"]["systemMessage"]
    assert told.startswith(f"memory: the data dir {home} cannot be written (Not a directory); 1 event kept aside")
    assert "To fix: fix the path or MEMORY_HOME" in told
    shown = cli("doctor", "--json", home=home, cwd=project)
    assert "Traceback" not in shown.stderr
    report = json.loads(shown.stdout)["spooled_events"]
    assert report["waiting"] == 4 and "unwritable (Not a directory)" in report["last failure"]
    blocker.unlink()  # the user fixes the path
    fixed = cli("doctor", "--repair", home=home, cwd=project)
    assert "wrote 4 of 4 spooled events" in fixed.stdout, fixed.stdout + fixed.stderr
    assert "cleared the record of the refused writes" in fixed.stdout
    assert json.loads(cli("doctor", "--json", home=home, cwd=project).stdout)["spooled_events"]["waiting"] == 0
    db = sqlite3.connect(db_path(home, project))
    assert db.execute("SELECT count(*) FROM sessions").fetchone()[0] == 1


def _full_disk(limit: int) -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail with EFBIG instead
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_a_full_disk_never_breaks_a_hook(hooks: HookRunner, home: Path) -> None:
    hooks.start()
    size = db_path(home, hooks.project).stat().st_size
    big = "x" * 200_000
    event = hooks.event("UserPromptSubmit", prompt="A very long request " + big)
    proc = subprocess.run([str(ROOT / "hooks" / "run"), "user_prompt_submit"], input=json.dumps(event).encode(),
                          capture_output=True, timeout=60, preexec_fn=lambda: _full_disk(size + 4096))
    assert proc.returncode == 0 and proc.stderr == b""
    assert not proc.stdout.strip() or json.loads(proc.stdout)


def test_no_git_uses_the_folder(tmp_path: Path, home: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    runner = HookRunner(plain)
    runner.run("user_prompt_submit", runner.event("UserPromptSubmit", prompt="Write the changelog"))
    assert db_path(home, plain).exists()
    assert identify(str(plain)).root == str(plain.resolve())


def test_doctor_repair_salvages_a_damaged_database(hooks: HookRunner, home: Path) -> None:
    hooks.start()
    for i in range(300):
        hooks_db = sqlite3.connect(db_path(home, hooks.project))
        hooks_db.execute(
            "INSERT INTO memories (project, type, title, title_key, content, content_hash, created_at, updated_at) "
            "VALUES ('p', 'fact', ?, ?, ?, ?, 1, 1)", (f"fact {i}", f"fact {i}", "payload " * 40, f"h{i}"))
        hooks_db.commit()
        hooks_db.close()
    path = db_path(home, hooks.project)
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    data = bytearray(path.read_bytes())
    page = 4096
    data[page * 6: page * 7] = b"\xde\xad\xbe\xef" * (page // 4)  # one damaged page in the middle
    path.write_bytes(bytes(data))
    result = cli("doctor", "--repair", home=home, cwd=hooks.project)
    assert "salvaged" in result.stdout + result.stderr or "rebuilt" in result.stdout + result.stderr
    report = json.loads(cli("doctor", "--json", home=home, cwd=hooks.project).stdout)
    assert report["database"]["ok"] is True
    kept = sqlite3.connect(path).execute("SELECT count(*) FROM memories").fetchone()[0]
    assert kept >= 200, f"only {kept} of 300 memories salvaged"


def test_doctor_calls_a_store_of_memories_naming_files_healthy(hooks: HookRunner, home: Path) -> None:
    """SQLite 3.40's quick_check (Debian 12's) says "NULL value in memory_files.memory_id" of rows that hold
    none: doctor said the store was damaged (exit 1), and --repair salvaged it into a fresh database."""
    hooks.start()
    (hooks.project / "app.py").write_text("def total():\n    return 1\n")
    hooks.run("post_tool_use", hooks.event("PostToolUse", tool_name="Edit", tool_input={
        "file_path": str(hooks.project / "app.py"), "old_string": "return 2", "new_string": "return 1"},
        tool_response={"filePath": str(hooks.project / "app.py")}))
    path = db_path(home, hooks.project)
    assert sqlite3.connect(path).execute("SELECT count(*) FROM memory_files").fetchone()[0] >= 1
    shown = cli("doctor", "--json", home=home, cwd=hooks.project)
    assert shown.returncode == 0, shown.stdout
    assert json.loads(shown.stdout)["database"]["integrity"] == "ok"
    fixed = cli("doctor", "--repair", home=home, cwd=hooks.project)
    assert "salvaged" not in fixed.stdout + fixed.stderr
    assert not [p for p in path.parent.iterdir() if p.name.startswith("memory.db.") and "corrupt" in p.name]
