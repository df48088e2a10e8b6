"""The data dir is private and never written through a symlink, and a hook outside any project records
nothing: all through the real hook processes (issue 14 item 7)."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from tests.support.helpers import HookRunner


def session(hooks: HookRunner) -> None:
    hooks.start()
    hooks.prompt("Decision: we will use Redis streams for the session queue")
    hooks.tool("Bash", {"command": "make build"}, failed="Exit code 2\nerror: missing header")
    hooks.stop("Fixed the header include.")
    hooks.end()


def modes(home: Path) -> dict[str, int]:
    out = {str(home): stat.S_IMODE(home.lstat().st_mode)}
    for path in home.rglob("*"):
        if not path.is_symlink():
            out[str(path)] = stat.S_IMODE(path.lstat().st_mode)
    return out


def test_every_folder_in_the_data_dir_is_0700_and_files_owner_only(hooks: HookRunner, home: Path) -> None:
    session(hooks)
    found = modes(home)
    assert len(found) > 8 and (home / "projects").is_dir() and (home / "daily").is_dir()
    for path, mode in found.items():
        if Path(path).is_dir():
            assert mode == 0o700, (path, oct(mode))
        else:
            assert mode & 0o077 == 0, (path, oct(mode))


def test_an_older_install_with_open_folders_is_made_private(hooks: HookRunner, home: Path) -> None:
    session(hooks)
    for path in [home, *home.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    hooks.start()
    for path, mode in modes(home).items():
        assert mode & 0o077 == 0, (path, oct(mode))


def test_a_symlink_planted_at_the_log_or_the_daily_file_is_never_followed(
        hooks: HookRunner, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_LOG_LEVEL", "info")  # a cut input is logged at info
    hooks.start()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    os.chmod(victim, 0o644)
    log = home / "logs" / "hooks.log"
    daily = home / "daily" / (time.strftime("%Y-%m-%d") + ".md")
    for planted in (log, daily):
        planted.parent.mkdir(parents=True, exist_ok=True)
        planted.unlink(missing_ok=True)
        planted.symlink_to(victim)
    hooks.prompt("Decision: we will keep the audit log in append-only storage. " + "filler " * 10_000)
    assert victim.read_text() == "precious\n" and stat.S_IMODE(victim.stat().st_mode) == 0o644
    assert not log.is_symlink() and "input too large" in log.read_text()
    assert not daily.is_symlink() and "append-only storage" in daily.read_text()
    # a planted folder: logs/ itself a link to elsewhere
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for p in (home / "logs").iterdir():
        p.unlink()
    (home / "logs").rmdir()
    (home / "logs").symlink_to(elsewhere, target_is_directory=True)
    hooks.prompt("Look at the retry policy " + "filler " * 10_000)
    assert list(elsewhere.iterdir()) == [] and (home / "logs" / "hooks.log").is_file()
    assert not (home / "logs").is_symlink()
    told = hooks.results[-1]["json"]["systemMessage"]  # the next prompt or SessionStart carries notices
    assert "symlink" in told, "the user hears of it"


@pytest.mark.parametrize("where", ["/", "missing", "file"])
def test_a_hook_outside_any_folder_records_nothing(home: Path, tmp_path: Path, where: str) -> None:
    cwd = {"/": "/", "missing": str(tmp_path / "gone" / "away"), "file": str(tmp_path / "a-file.txt")}[where]
    (tmp_path / "a-file.txt").write_text("not a folder")
    runner = HookRunner(Path(cwd))
    results = [runner.start(), runner.prompt("Decision: we will use Postgres for the ledger"),
               runner.tool("Bash", {"command": "make"}, {"stdout": "ok", "stderr": ""}), runner.stop("done"),
               runner.compact(), runner.end()]
    assert all(r["exit_code"] == 0 and r["stderr"] == "" for r in runner.results)
    assert not any(r["stdout"].strip() for r in runner.results), results
    assert not (home / "projects").exists(), "no project database created"
    assert not list(home.rglob("*.db"))


def test_the_worker_a_hook_starts_writes_private_folders_too(
        hooks: HookRunner, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memory.base import worker_client

    monkeypatch.setenv("MEMORY_WORKER", "on")
    monkeypatch.setenv("MEMORY_WORKER_IDLE_SECONDS", "5")
    try:
        session(hooks)  # the hooks start the worker, which embeds the memories into LanceDB
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not list(home.glob("projects/*/vectors.lance/*")):
            time.sleep(0.2)
        assert list(home.glob("projects/*/vectors.lance/*")), "the worker wrote its vectors"
        for path, mode in modes(home).items():
            if Path(path).is_dir():
                assert mode == 0o700, (path, oct(mode))
            elif not path.endswith(".sock"):
                assert mode & 0o077 == 0, (path, oct(mode))
    finally:
        worker_client.ask(str(home), {"op": "shutdown"}, timeout=5)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and worker_client.alive(str(home)):
            time.sleep(0.1)
