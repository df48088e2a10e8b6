"""A full disk under the data dir, on a small filesystem the test mounts (tmpfs of 3 MB; skipped with the
reason where mounting is not permitted): the real hook processes keep every event of the full period
(spooled, privacy-filtered, in the data dir after freeing the reserve, else in a private temp-dir folder),
the next SessionStart and `memory doctor` say so, and once space returns the events reach the database."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory.base.project import identify
from tests.support.helpers import ROOT, HookRunner, all_bytes_under

SECRET = "AKIAIOSFODNN7EXAMPLE"
CLI = [sys.executable, "-m", "memory"]  # this checkout's code, whichever the venv's `memory` points at


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small filesystem needs root (mount -t tmpfs)")
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m,mode=0700", "tmpfs", str(mnt)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def fill(mnt: Path) -> Path:
    filler = mnt / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 65536)
    except OSError:
        pass
    try:
        while True:
            os.write(fd, b"\0" * 512)
    except OSError:
        pass
    finally:
        os.close(fd)
    return filler


def titles(home: Path, project: Path) -> list[str]:
    db = sqlite3.connect(home / "projects" / identify(str(project)).key / "memory.db")
    try:
        return [r[0] + " " + r[1] for r in db.execute("SELECT title, content FROM memories")]
    finally:
        db.close()


def hooks_on(home: Path, tmpdir: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> HookRunner:
    for name, value in {"MEMORY_HOME": str(home), "TMPDIR": str(tmpdir), "MEMORY_WORKER": "off"}.items():
        monkeypatch.setenv(name, value)
    for name in ("CLAUDE_PLUGIN_DATA", "CLAUDE_PROJECT_DIR", "MEMORY_PROJECT_DIR"):
        monkeypatch.delenv(name, raising=False)
    return HookRunner(project)


def full_period(runner: HookRunner) -> None:
    runner.prompt(f"Plan the zebra migration; the key is {SECRET}")
    runner.tool("Bash", {"command": "make quokka"}, failed="Exit code 2\nerror: quokka header missing")
    runner.stop("Decision: we will use the ocelot scheduler instead of cron.")
    for r in runner.results:
        assert r["exit_code"] == 0 and r["stderr"] == "", r


def recovered(runner: HookRunner, home: Path, spools: list[Path]) -> None:
    for _ in range(12):  # each hook replays within its 30 ms budget
        runner.prompt("What next?")
        if not any(p.exists() and list(p.glob("*.json*")) for p in spools):
            break
    text = "\n".join(titles(home, runner.project))
    for word in ("zebra", "quokka", "ocelot"):
        assert word in text, word
    assert not all_bytes_under(home)(SECRET.encode())


def test_events_of_a_full_disk_go_to_the_temp_dir_and_come_back(
        small_fs: Path, tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = small_fs / "data"
    tmpdir = tmp_path / "tmp"  # another filesystem than the full one
    tmpdir.mkdir()
    runner = hooks_on(home, tmpdir, project, monkeypatch)
    runner.start()
    assert (home / "reserve").stat().st_size == 1024 * 1024, "SessionStart keeps a reserve"
    runner.prompt("Before the disk filled: set up the billing service")
    (home / "reserve").unlink()  # as if an earlier full period had used it: the temp dir takes the events
    filler = fill(small_fs)
    full_period(runner)
    elsewhere = [p for p in (tmpdir / f"claude-memory-{os.getuid()}").glob("spool-*")]
    assert len(elsewhere) == 1 and len(list(elsewhere[0].glob("*.json"))) == 3
    assert stat.S_IMODE(elsewhere[0].stat().st_mode) == 0o700
    assert not all_bytes_under(tmpdir)(SECRET.encode()), "spooled text is privacy-filtered"

    filler.unlink()  # space returns
    env = {**os.environ, "MEMORY_HOME": str(home), "PYTHONPATH": str(ROOT)}
    report = json.loads(subprocess.run([*CLI, "doctor", "--json"], capture_output=True, text=True, env=env,
                                       cwd=project, check=True, timeout=120).stdout)
    assert report["spooled_events"]["waiting"] == 3
    assert any("could not be written" in n and "kept" in n for n in report["notices"])
    start = runner.run("session_start", runner.event("SessionStart", source="startup"))
    assert "could not be written" in start["json"]["systemMessage"]
    recovered(runner, home, [elsewhere[0], home / "spool"])
    assert (home / "reserve").exists(), "the reserve is made again once there is room"


def test_the_reserve_makes_room_when_the_temp_dir_is_full_too(
        small_fs: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = small_fs / "data"
    tmpdir = small_fs / "tmp"  # the same full filesystem: only the reserve can help
    tmpdir.mkdir()
    runner = hooks_on(home, tmpdir, project, monkeypatch)
    runner.start()
    filler = fill(small_fs)
    full_period(runner)
    assert not (home / "reserve").exists(), "freed for the spool"
    # The first event went to the spool; the room it freed let the next hooks write (and replay) again.
    text = "\n".join(titles(home, project))
    spooled = b"".join(p.read_bytes() for p in (home / "spool").glob("*.json"))
    for word in ("zebra", "quokka", "ocelot"):
        assert word in text or word.encode() in spooled, word
    filler.unlink()
    start = runner.run("session_start", runner.event("SessionStart", source="startup"))
    assert "could not be written" in start["json"]["systemMessage"]
    recovered(runner, home, [home / "spool"])


def test_a_blocked_data_dir_keeps_events_in_the_temp_dir_until_it_is_fixed(
        tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "blocked"
    blocker.write_text("a file where the data dir's parent should be")
    home = blocker / "data"  # every write under it fails (ENOTDIR); no mount needed
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    runner = hooks_on(home, tmpdir, project, monkeypatch)
    runner.start()
    full_period(runner)
    (elsewhere,) = (tmpdir / f"claude-memory-{os.getuid()}").glob("spool-*")
    assert len(list(elsewhere.glob("*.json"))) == 4
    blocker.unlink()  # the user fixes the path
    start = runner.run("session_start", runner.event("SessionStart", source="startup"))
    assert "could not be written" in start["json"]["systemMessage"]
    recovered(runner, home, [elsewhere])
