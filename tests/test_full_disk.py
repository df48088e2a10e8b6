"""A full disk under the data dir, on a small tmpfs the test mounts (3 MB; we run as root, as CI does;
skipped with the reason where mounting is refused): the real hook processes keep every event of the full
period outside the data dir (the runtime dir; privacy-filtered, bounded), the next prompt carries one line
saying so (once a session, again in a new one), `memory doctor` shows it, and once space returns every
event reaches the database, counted. The temp dir sits on the same full disk, as /tmp often does."""

from __future__ import annotations

import json
import os
import re
import resource
import signal
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
LINE = re.compile(r"^memory: the data disk is full \(.*\); (\d+) events? kept aside, nothing recorded since "
                  r"\d\d:\d\d\. To fix: free some space \(`memory doctor` shows more\)\.$")


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
        for chunk in (65536, 512, 1):
            try:
                while True:
                    os.write(fd, b"\0" * chunk)
            except OSError:
                pass
    finally:
        os.close(fd)
    return filler


def memories(home: Path, project: Path) -> str:
    db = sqlite3.connect(home / "projects" / identify(str(project)).key / "memory.db")
    try:
        return "\n".join(r[0] + " " + r[1] for r in db.execute("SELECT title, content FROM memories"))
    finally:
        db.close()


@pytest.fixture
def env(small_fs: Path, tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """The data dir and the temp dir on the small disk; the runtime dir elsewhere (as /run/user/<uid> is)."""
    places = {"home": small_fs / "data", "tmp": small_fs / "tmp", "run": tmp_path / "run"}
    places["tmp"].mkdir()
    places["run"].mkdir(mode=0o700)
    for name, value in {"MEMORY_HOME": places["home"], "TMPDIR": places["tmp"], "XDG_RUNTIME_DIR": places["run"],
                        "MEMORY_WORKER": "off"}.items():
        monkeypatch.setenv(name, str(value))
    for name in ("CLAUDE_PLUGIN_DATA", "CLAUDE_PROJECT_DIR", "MEMORY_PROJECT_DIR"):
        monkeypatch.delenv(name, raising=False)
    return places


def line_of(result: dict) -> str | None:  # type: ignore[type-arg]
    return (result["json"] or {}).get("systemMessage")


def doctor(home: Path, project: Path) -> dict:  # type: ignore[type-arg]
    env = {**os.environ, "MEMORY_HOME": str(home), "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([*CLI, "doctor", "--json"], capture_output=True, text=True, env=env, cwd=project,
                          timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    return json.loads(proc.stdout)


def test_fifteen_tool_events_of_a_full_disk_are_kept_told_once_and_all_written_later(
        env: dict[str, Path], small_fs: Path, project: Path) -> None:
    """The reported loss: 11 of 15 tool events gone and nobody told (the spool and the notice were both on
    the full disk, the temp dir being on it too)."""
    home = env["home"]
    runner = HookRunner(project)
    runner.start()
    (home / "reserve").unlink()  # as if an earlier full period had used it
    filler = fill(small_fs)
    for i in range(15):
        runner.tool("Bash", {"command": f"make target{i:02d} KEY={SECRET}"},
                    failed=f"Exit code 2\nerror: header{i:02d}x missing")
    assert all(r["exit_code"] == 0 and r["stderr"] == "" and not r["stdout"].strip() for r in runner.results)
    (kept,) = (env["run"] / f"claude-memory-{os.getuid()}").glob("spool-*")
    assert stat.S_IMODE(kept.stat().st_mode) == 0o700
    assert len([p for p in kept.glob("*.json") if p.name != "fault.json"]) == 15
    assert not all_bytes_under(env["run"])(SECRET.encode()), "spooled text is privacy-filtered"

    told = runner.run("user_prompt_submit", runner.event("UserPromptSubmit", prompt="How is the build going?"))
    match = LINE.match(line_of(told) or "")
    assert match and int(match.group(1)) == 16, line_of(told)  # the 15, and this prompt itself
    again = runner.run("user_prompt_submit", runner.event("UserPromptSubmit", prompt="And the tests?"))
    assert line_of(again) is None, "once a session"
    other = HookRunner(project, session="sess-2")
    start = other.run("session_start", other.event("SessionStart", source="startup"))
    assert LINE.match(line_of(start) or ""), "told again in a new session while it lasts"

    report = doctor(home, project)["spooled_events"]
    assert report["waiting"] == 18 and report["lost"] == 0
    assert report["last failure"].endswith(")") and ": full (" in report["last failure"]
    assert LINE.match(report["what the user is told"])

    filler.unlink()  # space returns
    for _ in range(18):  # each hook replays at least one event, however loaded the machine (spool.replay)
        runner.tool("Bash", {"command": "true"}, {"stdout": "", "stderr": ""})
        if not [p for p in kept.glob("*.json") if p.name != "fault.json"]:
            break
    text = memories(home, project)
    assert [i for i in range(15) if f"header{i:02d}x" in text] == list(range(15)), "every event written"
    assert not (kept / "fault.json").exists(), "the fault is forgotten once all is written"
    assert line_of(runner.run("user_prompt_submit", runner.event("UserPromptSubmit", prompt="Next step?"))) is None
    assert not all_bytes_under(home)(SECRET.encode())


def _no_writes() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))


def test_an_event_that_can_be_kept_nowhere_is_told_in_the_hooks_own_answer(hooks: HookRunner, home: Path) -> None:
    """No file can grow anywhere (RLIMIT_FSIZE 0 on the hook: the database, the spool folders, the fault
    record and the log all refuse): the prompt's own answer says the event is lost."""
    hooks.start()
    event = hooks.event("UserPromptSubmit", prompt="Refactor the billing module")
    proc = subprocess.run([str(ROOT / "hooks" / "run"), "user_prompt_submit"], input=json.dumps(event).encode(),
                          capture_output=True, timeout=60, preexec_fn=_no_writes)
    assert proc.returncode == 0 and proc.stderr == b""
    message = json.loads(proc.stdout)["systemMessage"]
    assert message.startswith("memory: ") and "1 lost (no room to keep them)" in message, message
    assert "\n" not in message


def test_a_spool_folder_is_bounded_and_what_it_refuses_is_counted(
        home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memory.hook import spool

    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    monkeypatch.setattr(spool, "MAX_EVENTS", 3)
    monkeypatch.setattr(spool, "fallback_spool_dirs", lambda: [str(tmp_path / "run" / "claude-memory" / "s")])
    full = OSError(28, "No space left on device")
    written = [spool.save_anywhere("post_tool_use", {"cwd": str(tmp_path), "n": i}, full) for i in range(5)]
    assert [w is not None for w in written] == [True, True, True, False, False]
    fault = spool.read_fault()
    assert fault is not None and fault["lost"] == 2
    assert "3 events kept aside, 2 lost (no room to keep them)" in spool.describe(fault, spool.waiting())
    for i in range(3):  # the data dir's own spool (a locked database) has the same bounds
        spool.save("post_tool_use", {"cwd": str(tmp_path), "locked": i})
    with pytest.raises(OSError):
        spool.save("post_tool_use", {"cwd": str(tmp_path), "locked": 3})
