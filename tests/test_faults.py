"""Faults a user can meet, through the real hook processes and CLI: a read-only data dir (a read-only bind
mount: root ignores chmod, so that is what makes writes fail for us and in CI, both root), a damaged
LanceDB store, a SQLite file with garbage in its header and a truncated one. Each is told to the user in
one line (the hook's answer at the next SessionStart or prompt, `memory doctor`), nothing recorded meanwhile
is lost (kept aside, counted, replayed once the fault is gone), and no command shows a traceback: every
command of the click group, found recursively, is run against each fault (and against a full disk)."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click
import pytest

from memory.base.project import identify
from tests.support.helpers import ROOT, HookRunner
from tests.test_full_disk import fill

CLI = [sys.executable, "-m", "memory"]


@pytest.fixture(autouse=True)
def private_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "tmp").mkdir(exist_ok=True)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))  # where events are kept when the data dir refuses them


def waiting(tmp_path: Path) -> int:
    return sum(1 for p in (tmp_path / "tmp").glob("claude-memory-*/spool-*/*.json") if p.name != "fault.json")


def db_path(home: Path, project: Path) -> Path:
    return home / "projects" / identify(str(project)).key / "memory.db"


def cli(home: Path, project: Path, *args: str, stdin: str | None = None,
        extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMORY_HOME": str(home), "PYTHONPATH": str(ROOT), "MEMORY_EMBEDDER": "hashing",
           "HOME": str(home.parent / "user-home"), **(extra or {})}
    return subprocess.run([*CLI, *args], capture_output=True, text=True, env=env, cwd=project, timeout=300,
                          input=stdin if stdin is not None else "")


def assert_one_line(proc: subprocess.CompletedProcess[str]) -> None:
    """No traceback, a normal exit (0, 1 for a failure, 2 for a usage error), and a failure said in one line."""
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out and not re.search(r'^\s+File "', out, re.M), out[-3000:]
    assert proc.returncode in (0, 1, 2), (proc.returncode, out[-2000:])
    for line in out.splitlines():
        if " failed: " in line and line.startswith("memory "):
            assert line.endswith("."), line  # the whole message on this one line


def seed(hooks: HookRunner, home: Path) -> None:
    """A project with memories: a session's prompt, a failed build, a decision."""
    hooks.start()
    hooks.prompt("Plan the zebra migration for the billing service")
    hooks.tool("Bash", {"command": "make quokka"}, failed="Exit code 2\nerror: quokka header missing")
    hooks.stop("Decision: we will use the ocelot scheduler instead of cron.")
    hooks.end()
    assert db_path(home, hooks.project).exists()


# -- a read-only data dir ---------------------------------------------------------------------------------


@pytest.fixture
def ro_mount(home: Path) -> Iterator[Callable[[], None]]:
    if os.geteuid() != 0:
        pytest.skip("a read-only bind mount needs root (mount --bind, then remount ro)")
    mounted: list[bool] = []

    def mount() -> None:
        for args in (["mount", "--bind", str(home), str(home)], ["mount", "-o", "remount,bind,ro", str(home)]):
            proc = subprocess.run(args, capture_output=True, text=True)
            if proc.returncode != 0:
                subprocess.run(["umount", "-l", str(home)], check=False)
                pytest.skip(f"cannot mount read-only here: {proc.stderr.strip()}")
        mounted.append(True)
        with pytest.raises(OSError):
            (home / "probe").write_text("x")

    yield mount
    if mounted:
        subprocess.run(["umount", "-l", str(home)], check=False)


def unmount(home: Path) -> None:
    subprocess.run(["umount", "-l", str(home)], check=True)


def test_a_read_only_data_dir_keeps_recall_tells_once_and_loses_nothing(
        hooks: HookRunner, home: Path, tmp_path: Path, ro_mount: Callable[[], None]) -> None:
    seed(hooks, home)
    ro_mount()
    later = HookRunner(hooks.project, session="sess-ro")
    start = later.run("session_start", later.event("SessionStart", source="startup"))
    line = start["json"]["systemMessage"]
    assert re.fullmatch(rf"memory: the data dir {re.escape(str(home))} is read-only; 1 event kept aside, nothing "
                        r"recorded since \d\d:\d\d\. To fix: make it writable \(`memory doctor` shows more\)\.", line)
    assert "ocelot" in later.context(start), "recall still works: the startup context came from the database"
    answer = later.run("user_prompt_submit", later.event("UserPromptSubmit", prompt="How do we run the zebra "
                                                                                  "migration?"))
    assert "systemMessage" not in (answer["json"] or {}), "told once a session"
    later.tool("Bash", {"command": "make yak"}, failed="Exit code 2\nerror: yak header missing")
    later.tool("Bash", {"command": "make emu"}, failed="Exit code 2\nerror: emu header missing")
    report = json.loads(cli(home, hooks.project, "doctor", "--json").stdout)
    assert report["spooled_events"]["waiting"] == 4
    assert report["spooled_events"]["data dir's disk read-only"] is True
    assert "read-only" in report["spooled_events"]["last failure"]

    assert waiting(tmp_path) == 4
    unmount(home)  # the user makes it writable again
    for _ in range(4):  # each hook replays at least one event, however loaded the machine (spool.replay)
        later.tool("Bash", {"command": "true"}, {"stdout": "", "stderr": ""})
        if not waiting(tmp_path):
            break
    db = sqlite3.connect(db_path(home, hooks.project))
    text = " ".join(r[0] for r in db.execute("SELECT content FROM memories"))
    assert "yak header" in text and "emu header" in text
    assert db.execute("SELECT prompt_count FROM sessions WHERE id = 'sess-ro'").fetchone()[0] == 1
    assert json.loads(cli(home, hooks.project, "doctor", "--json").stdout)["spooled_events"]["waiting"] == 0


# -- a damaged LanceDB store ---------------------------------------------------------------------------------


def indexed(hooks: HookRunner, home: Path) -> Path:
    seed(hooks, home)
    built = cli(home, hooks.project, "reindex", extra={"MEMORY_WORKER": "off"})
    assert built.returncode == 0, built.stderr
    (store,) = db_path(home, hooks.project).parent.glob("vectors.lance")
    return store


def damage_lance(store: Path) -> None:
    for f in store.rglob("*"):
        if f.is_file() and f.suffix in (".manifest", ".lance"):
            f.write_bytes(b"not lance at all " * 20)


def test_a_damaged_vector_store_answers_with_keywords_says_so_and_reindex_rebuilds_it(
        hooks: HookRunner, home: Path) -> None:
    store = indexed(hooks, home)
    damage_lance(store)
    off = {"MEMORY_WORKER": "off"}
    searched = cli(home, hooks.project, "search", "--mode", "hybrid", "ocelot scheduler", extra=off)
    assert searched.returncode == 0 and "ocelot" in searched.stdout
    assert searched.stderr.strip() == ("memory: keyword results (the semantic index was damaged: moved aside; "
                                       "`memory reindex` rebuilds it)")
    assert list(store.parent.glob("vectors.lance.corrupt-*")), "the damaged store is kept aside"
    report = json.loads(cli(home, hooks.project, "doctor", "--json", extra=off).stdout)["vector_index"]
    assert "damaged and set aside" in report and report["memories embedded"].startswith("0 of ")
    rebuilt = cli(home, hooks.project, "reindex", extra=off)
    assert rebuilt.returncode == 0 and "embedded" in rebuilt.stdout, rebuilt.stderr
    again = cli(home, hooks.project, "search", "--mode", "hybrid", "ocelot scheduler", extra=off)
    assert again.stderr.strip() == "memory: hybrid results (keywords and vectors)" and "ocelot" in again.stdout


def test_reindex_rebuilds_a_damaged_store_it_cannot_open(hooks: HookRunner, home: Path) -> None:
    store = indexed(hooks, home)
    damage_lance(store)
    rebuilt = cli(home, hooks.project, "reindex", extra={"MEMORY_WORKER": "off"})
    assert rebuilt.returncode == 0 and "embedded" in rebuilt.stdout, rebuilt.stderr
    assert list(store.parent.glob("vectors.lance.corrupt-*"))
    again = cli(home, hooks.project, "search", "--mode", "hybrid", "ocelot scheduler", extra={"MEMORY_WORKER": "off"})
    assert "hybrid results" in again.stderr


def test_the_worker_rebuilds_a_damaged_store_from_sqlite(hooks: HookRunner, home: Path) -> None:
    from memory import store as memstore
    from memory.recall.vectors import is_index_damage

    store = indexed(hooks, home)
    damage_lance(store)
    saved = cli(home, hooks.project, "save", "The yak shaving script lives in tools/yak.sh",
                extra={"MEMORY_WORKER": "off"})
    assert saved.returncode == 0, saved.stderr
    proc = subprocess.run([*CLI, "worker", "run"], capture_output=True, text=True, cwd=hooks.project, timeout=300,
                          env={**os.environ, "MEMORY_HOME": str(home), "PYTHONPATH": str(ROOT),
                               "MEMORY_EMBEDDER": "hashing", "MEMORY_WORKER_IDLE_SECONDS": "3"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "the vector store was damaged" in proc.stderr and "rebuilding it from SQLite" in proc.stderr
    assert list(store.parent.glob("vectors.lance.corrupt-*"))
    db = sqlite3.connect(db_path(home, hooks.project))
    indexed_n, total = memstore.vector_coverage(db)
    assert indexed_n == total > 0, "every memory embedded again"
    assert is_index_damage(RuntimeError("lance error: LanceError(IO): file size is too small"))
    assert not is_index_damage(RuntimeError("lance error: LanceError(IO): No space left on device"))


# -- a damaged SQLite file -----------------------------------------------------------------------------------


def many_memories(home: Path, project: Path, n: int = 60) -> None:
    lines = "\n".join(json.dumps({"title": f"fact number {i} about the heron service", "content":
                                  f"heron fact {i}: " + "detail " * 30}) for i in range(n))
    saved = cli(home, project, "save", "--jsonl", stdin=lines, extra={"MEMORY_WORKER": "off"})
    assert saved.returncode == 0, saved.stderr
    db = sqlite3.connect(db_path(home, project))
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def test_garbage_in_the_header_is_moved_aside_told_with_its_command_and_repair_recovers_it(
        hooks: HookRunner, home: Path) -> None:
    seed(hooks, home)
    many_memories(home, hooks.project)
    path = db_path(home, hooks.project)
    with open(path, "r+b") as fh:
        fh.write(os.urandom(100))  # the header only: every page is intact
    start = hooks.run("session_start", hooks.event("SessionStart", source="startup"))
    message = start["json"]["systemMessage"]
    assert "was corrupt and was moved to" in message and "`memory doctor --repair`" in message
    assert message.count("\n") == 0
    hooks.prompt("Where is the heron service deployed?")  # recorded in the fresh database
    report = json.loads(cli(home, hooks.project, "doctor", "--json").stdout)["database"]
    assert report["to recover their rows"] == "memory doctor --repair" and len(report["damaged copies aside"]) == 1
    fixed = cli(home, hooks.project, "doctor", "--repair")
    assert re.search(r"recovered (\d+) memories from", fixed.stdout), fixed.stdout + fixed.stderr
    db = sqlite3.connect(path)
    heron = db.execute("SELECT count(*) FROM memories WHERE content LIKE 'heron fact%'").fetchone()[0]
    assert heron == 60, "every memory of the damaged file, recovered"
    assert db.execute("SELECT count(*) FROM memories WHERE content LIKE '%zebra migration%'").fetchone()[0] >= 1
    assert list(path.parent.glob("memory.db.corrupt-*.recovered")), "the damaged file is kept"


def test_a_truncated_database_is_told_with_its_command_and_repair_salvages_it(
        hooks: HookRunner, home: Path) -> None:
    """A third of the file cut off: the next hooks find it damaged (moved aside when it cannot be opened,
    else their events kept aside); either way the next prompt says so with the command, nothing recorded
    meanwhile is lost, and `memory doctor --repair` brings back what can be read."""
    seed(hooks, home)
    many_memories(home, hooks.project, 200)
    path = db_path(home, hooks.project)
    os.truncate(path, path.stat().st_size * 2 // 3)
    later = HookRunner(hooks.project, session="sess-trunc")
    for i in range(3):
        later.tool("Bash", {"command": f"make stork{i}"}, failed=f"Exit code 2\nerror: stork{i} header missing")
    answer = later.run("user_prompt_submit", later.event("UserPromptSubmit", prompt="What broke the stork build?"))
    line = answer["json"]["systemMessage"]
    assert "`memory doctor --repair`" in line and ("corrupt" in line or "damaged" in line), line
    assert "\n" not in line
    again = later.run("user_prompt_submit", later.event("UserPromptSubmit", prompt="And the heron service?"))
    assert "systemMessage" not in (again["json"] or {}), "told once"
    fixed = cli(home, hooks.project, "doctor", "--repair")
    assert "recovered" in fixed.stdout or "salvaged" in fixed.stdout, fixed.stdout + fixed.stderr
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    heron = db.execute("SELECT count(*) FROM memories WHERE content LIKE 'heron fact%'").fetchone()[0]
    # The memories' pages are spread among the full-text index's: 91 of the 200 lie in the kept two thirds.
    assert heron >= 80, f"{heron} of 200 memories salvaged from two thirds of the file"
    text = " ".join(r[0] for r in db.execute("SELECT content FROM memories"))
    assert all(f"stork{i} header" in text for i in range(3)), "the events of the damaged period"


# -- every command, against every fault -----------------------------------------------------------------------


def commands() -> list[list[str]]:
    from memory.cli import cli as group

    def walk(cmd: click.Command, path: list[str]) -> Iterator[list[str]]:
        if isinstance(cmd, click.Group):
            for name, sub in sorted(cmd.commands.items()):
                yield from walk(sub, [*path, name])
        else:
            yield path

    return list(walk(group, []))


# Arguments a command needs to do its work (others run bare). `mcp` serves until its stdin closes (given none
# here); `ui` until stopped: it is stopped once it has printed its URL or failed (ui_outcome).
ARGS = {"forget": ["1"], "get": ["1"], "search": ["zebra"], "timeline": ["1"], "why": ["1"],
        "save": ["The heron deploy runs from ci/deploy.sh"], "team forget": ["1"], "team grant": ["reader"],
        "team search": ["zebra"], "team share": ["1"], "worker": ["status"],
        "outline": ["app.py"], "replay": ["events.jsonl"], "import": ["events.jsonl"]}
SLASH = ["search zebra", "get 1", "forget 1", "recent", "stats", "handoff", "why 1", "timeline 1", "pause",
         "resume", "save a note about herons", "cleanup"]


def ui_outcome(home: Path, project: Path) -> subprocess.CompletedProcess[str]:
    """`memory ui` run until it prints its URL (then stopped: it serves until then) or fails."""
    env = {**os.environ, "MEMORY_HOME": str(home), "PYTHONPATH": str(ROOT), "HOME": str(home.parent / "user-home")}
    proc = subprocess.Popen([*CLI, "ui", "--no-browser"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=project)
    assert proc.stdout is not None
    first = proc.stdout.readline()  # the URL, or "" when it ended
    if first.startswith("http://"):
        proc.terminate()
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, 0 if first.startswith("http://") else proc.returncode,
                                       first + out, err)


@pytest.mark.parametrize("fault", ["read-only", "full", "lancedb", "sqlite-header", "sqlite-truncated"])
def test_no_command_shows_a_traceback_under_any_fault(fault: str, tmp_path: Path, project: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    if os.geteuid() != 0 and fault in ("read-only", "full"):
        pytest.skip("mounting needs root")
    mounted = []
    home = tmp_path / "data"
    if fault == "full":
        small = tmp_path / "small"
        small.mkdir()
        proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", str(small)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
        mounted.append(small)
        home = small / "data"
    monkeypatch.setenv("MEMORY_HOME", str(home))
    monkeypatch.setenv("MEMORY_WORKER", "off")
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    (tmp_path / "user-home").mkdir()
    hooks = HookRunner(project)
    try:
        seed(hooks, home)
        (project / "events.jsonl").write_text(json.dumps(hooks.event("UserPromptSubmit", prompt="Replayed ask")))
        if fault == "lancedb":
            damage_lance(indexed(hooks, home))
        elif fault == "sqlite-header":
            with open(db_path(home, project), "r+b") as fh:
                fh.write(os.urandom(100))
        elif fault == "sqlite-truncated":
            many_memories(home, project, 120)
            os.truncate(db_path(home, project), db_path(home, project).stat().st_size // 2)
        elif fault == "full":
            fill(mounted[0])
        elif fault == "read-only":
            for args in (["mount", "--bind", str(home), str(home)], ["mount", "-o", "remount,bind,ro", str(home)]):
                proc = subprocess.run(args, capture_output=True, text=True)
                if proc.returncode != 0:
                    pytest.skip(f"cannot mount read-only here: {proc.stderr.strip()}")
            mounted.append(home)
        ran = 0
        for path in commands():
            args = ARGS.get(" ".join(path), [])
            proc = ui_outcome(home, project) if path == ["ui"] else cli(home, project, *path, *args, stdin="")
            assert_one_line(proc)
            ran += 1
        for verb_and_args in SLASH:
            verb, _, rest = verb_and_args.partition(" ")
            proc = cli(home, project, "slash", verb, "--session", "sess-1", stdin=rest)
            assert_one_line(proc)
            assert proc.returncode == 0, (verb, proc.stdout, proc.stderr)  # a slash command shows its stdout
        assert ran == len(commands()) >= 40
    finally:
        for m in reversed(mounted):
            subprocess.run(["umount", "-l", str(m)], check=False)


def test_the_mcp_server_answers_a_refused_write_with_an_error_result_and_goes_on(
        hooks: HookRunner, home: Path, ro_mount: Callable[[], None]) -> None:
    pytest.importorskip("mcp")
    from tests.test_mcp_server import call, session

    seed(hooks, home)
    ro_mount()

    async def body(s: Any) -> tuple[tuple[bool, str], tuple[bool, str]]:
        saved = await call(s, "save", {"content": "The heron deploy runs from ci/deploy.sh", "type": "learning"})
        found = await call(s, "search", {"query": "ocelot scheduler"})
        return saved, found

    (err, text), (found_err, found) = session(home, hooks.project, body)
    # The SDK puts "Error executing tool save: " before a tool's error.
    assert err and text.endswith(f"memory mcp save failed: the data dir {home} is read-only. Make it writable; "
                                 "`memory doctor` shows more."), text
    assert "\n" not in text
    assert not found_err and "ocelot" in found, "the server goes on: reads still work"
