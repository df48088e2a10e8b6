"""A newcomer's first minutes, through the real Claude Code CLI with a fresh HOME and the documented install
(`scripts/setup --install`: the plugin alone, added as a marketplace on a folder).

One test builds the installed plugin's venv once (the real scripts/setup, started by the first SessionStart:
~1 minute quiet, ~2 loaded) and checks, while it runs and after: the slash command says "being set up"
(no traceback), the MCP server is connected and answers "being set up", the venv appears in one rename,
the worker is started when setup completes (no failed start held for 10 minutes), setup's log has no
setuptools warning block, then the slash command and the MCP tools work. The same venv then serves a
checkout's `scripts/setup --run`, whose MCP server must work (it offered a broken project `.mcp.json`).
A second, quick test links a venv in mid-session: the real MCP tools appear in that same session.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import _STRIPPED_PREFIXES

from memory.base import worker_client
from tests.support.e2e_harness import REPO, make_git_repo
from tests.support.fake_anthropic import (
    FakeAnthropic,
    Script,
    Turns,
    all_text,
    is_main,
    text,
    tool_result_text,
    tool_results,
    tool_use,
)

pytestmark = pytest.mark.e2e

SERVER = "mcp__plugin_memory_memory__"
SETUP_LIMIT_S = 900  # a loaded 2-core machine took 165 s; pip may also have to download


def clean_copy(dest: Path) -> Path:
    """The checkout as git would give it (tracked files, as in the working tree), no build outputs."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        src = REPO / name
        if src.is_file():
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(src.read_bytes())
            target.chmod(src.stat().st_mode & 0o777)
    return dest


class Claude:
    """The real CLI in a fresh HOME against the fake API: plugin commands and `-p` runs."""

    def __init__(self, claude_bin: Path, home: Path, fake: FakeAnthropic) -> None:
        self.bin, self.home, self.fake = claude_bin, home, fake
        home.mkdir(parents=True, exist_ok=True)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(_STRIPPED_PREFIXES)}
        self.env.update(HOME=str(home), ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="sk-ant-e2e-dummy",
                        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1", NO_COLOR="1",
                        MEMORY_EMBEDDER="hashing", MEMORY_WORKER_IDLE_SECONDS="60")

    def cmd(self, *args: str, cwd: Path | None = None, timeout: float = 180) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.bin), *args], capture_output=True, text=True, env=self.env, cwd=cwd,
                              timeout=timeout, stdin=subprocess.DEVNULL)

    def prompt(self, prompt: str, script: Script, cwd: Path, *extra: str,
               argv: list[str] | None = None) -> tuple[subprocess.CompletedProcess[str], list[dict]]:
        self.fake.script = script
        first = len(self.fake.requests)
        args = argv or [str(self.bin)]
        proc = subprocess.Popen([*args, "-p", prompt, "--output-format", "json", *extra], cwd=cwd, env=self.env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        try:
            out, err = proc.communicate(timeout=240)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
        assert not self.fake.errors, self.fake.errors
        done = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
        return done, [b for b in self.fake.requests[first:] if is_main(b)]


def mcp_script(tool: str, arguments: dict[str, object], project: Path) -> Turns:
    # A first step, as in tests/e2e/test_interfaces.py: -p may send the first request before the MCP
    # connection is announced.
    return Turns([tool_use("Read", {"file_path": str(project / "README.md")}),
                  tool_use("ToolSearch", {"query": f"select:{tool}", "max_results": 5}),
                  tool_use(tool, arguments), text("Done.")])


def last_tool_text(requests: list[dict]) -> str:
    results = tool_results(requests[-1]) if requests else []
    return tool_result_text(results[-1]) if results else ""


class VenvWatch:
    """Samples <data>/venv every 20 ms: whenever its python exists, setup's marker (written last) must too."""

    def __init__(self, data: Path) -> None:
        self.venv, self.samples, self.half_built = data / "venv", 0, 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        while not self.stop.wait(0.02):
            if (self.venv / "bin" / "python").exists():
                self.samples += 1
                if not list(self.venv.glob(".memory-setup-*")):
                    self.half_built += 1


def stop_workers(home: Path) -> None:
    """The workers a test's sessions started (the installed plugin's, --plugin-dir's in memory-inline), by
    their own sockets and locks."""
    for data in (home / ".claude" / "plugins" / "data").glob("memory-*"):
        for _ in range(3):  # a hook may have spawned one that takes its lock only after a second or two
            worker_client.ask(str(data), {"op": "shutdown"}, timeout=2)
            deadline = time.monotonic() + 20
            while worker_client.alive(str(data)) and time.monotonic() < deadline:
                time.sleep(0.1)
            time.sleep(3)
            if not worker_client.alive(str(data)):
                break
        assert not worker_client.alive(str(data)), f"a worker is still running in {data}"


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as f:
        yield f


def test_first_minutes_of_an_installed_plugin(claude_bin: Path, fake: FakeAnthropic, tmp_path: Path) -> None:
    claude = Claude(claude_bin, tmp_path / "home", fake)
    project = make_git_repo(tmp_path / "project", {"README.md": "# shop\n"})
    # The documented install: `scripts/setup --install` from a clone writes the plugin alone and adds it.
    market = tmp_path / "memory-plugin"
    r = subprocess.run([str(clean_copy(tmp_path / "clone") / "scripts" / "setup"), "--install", str(market)],
                       env={**claude.env, "PATH": f"{claude_bin.parent}{os.pathsep}{claude.env['PATH']}"},
                       capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert r.returncode == 0 and not (market / "tests").exists(), r.stdout + r.stderr
    data = claude.home / ".claude" / "plugins" / "data" / "memory-memory-local"
    watch = VenvWatch(data)
    started = time.monotonic()
    try:
        # 1. The first session starts the setup; its slash command says so, without a traceback (item 8).
        run, requests = claude.prompt("/memory:stats", Turns([text("ok")]), project)
        assert run.returncode == 0, run.stderr[-2000:]
        body = all_text(requests[0])
        assert (data / "venv.setup-running").exists(), "the setup finished before the probes could run"
        assert "being set up" in body and "Traceback" not in body and "ModuleNotFoundError" not in body, body[-2000:]
        # 2. The MCP server is up before the venv (a failed start is cached by the client for 15 minutes),
        #    and says "being set up" through the protocol (item 7).
        listing = claude.cmd("mcp", "list", cwd=project)
        assert "plugin:memory:memory" in listing.stdout and "Connected" in listing.stdout, listing.stdout
        run, requests = claude.prompt("Is the memory plugin ready?", mcp_script(SERVER + "status", {}, project),
                                      project, "--allowedTools", SERVER + "status")
        assert run.returncode == 0, run.stderr[-2000:]
        assert "being set up" in last_tool_text(requests), requests[-1] if requests else run.stdout
        assert (data / "venv.setup-running").exists(), "the setup finished before the probes could run"
        assert not (data / "worker.failed").exists()  # no worker was tried on python3 meanwhile
        # 3. The setup finishes: the venv appeared in one rename, the worker runs, the log is clean.
        while (data / "venv.setup-running").exists() and time.monotonic() - started < SETUP_LIMIT_S:
            time.sleep(0.5)
        setup_s = time.monotonic() - started
        print(f"installed plugin's setup: {setup_s:.0f} s")
        log = (data / "logs" / "setup.log").read_text()
        assert not (data / "venv.setup-running").exists(), log[-3000:]
        assert (data / "venv").is_symlink() and (data / "venv" / "bin" / "python").exists(), log[-3000:]
        assert watch.samples > 0 and watch.half_built == 0
        assert "Editable installation" not in log and "Traceback" not in log, log[-3000:]
        python = data / "venv" / "bin" / "python"
        plugin_root = next((claude.home / ".claude" / "plugins" / "cache").glob("memory-local/memory/*"))
        cli_env = {**claude.env, "CLAUDE_PLUGIN_DATA": str(data), "PYTHONPATH": str(plugin_root)}
        status = json.loads(subprocess.run([str(python), "-m", "memory", "worker", "status", "--json"], cwd=project,
                                           env=cli_env, capture_output=True, text=True, timeout=60).stdout)
        assert status["alive"] is True, (status, log[-2000:])
        doctor = json.loads(subprocess.run([str(python), "-m", "memory", "doctor", "--json"], cwd=project,
                                           env={**cli_env, "CLAUDE_PLUGIN_DATA": ""}, capture_output=True,
                                           text=True, timeout=60).stdout)
        assert doctor["hook_interpreter"] == str(python) and doctor["setup"] == "done", doctor
        assert doctor["worker"] == "running", doctor
        # A marketplace on a folder runs the plugin from that folder: the hooks ran from it, doctor from the copy.
        assert doctor["hooks_root"] == str(market) and doctor["plugin_root"] == str(plugin_root), doctor
        # 4. Now everything works: the slash command and the real MCP tools, in new sessions.
        run, requests = claude.prompt("/memory:stats", Turns([text("ok")]), project)
        body = all_text(requests[0])
        assert "Statistics from the memory plugin" in body and "being set up" not in body, body[-2000:]
        run, requests = claude.prompt("What do we know?", mcp_script(SERVER + "search", {"query": "shop"}, project),
                                      project, "--allowedTools", SERVER + "search")
        assert run.returncode == 0, run.stderr[-2000:]
        found = last_tool_text(requests)
        assert found and "being set up" not in found and "error" not in found.lower(), found
        # 5. A checkout's `scripts/setup --run` (item 12): its MCP server works (here on this same venv,
        #    which the checkout's in-place update re-points at the checkout).
        checkout = clean_copy(tmp_path / "checkout")
        (checkout / ".venv").symlink_to(os.readlink(data / "venv"))
        (checkout / ".tools").symlink_to(REPO / ".tools")
        env = {**claude.env, "PATH": f"{claude_bin.parent}{os.pathsep}{claude.env['PATH']}"}
        claude.env = env
        run, requests = claude.prompt("What do we know?", mcp_script(SERVER + "search", {"query": "shop"}, checkout),
                                      checkout, "--allowedTools", SERVER + "search",
                                      argv=[str(checkout / "scripts" / "setup"), "--run"])
        assert run.returncode == 0, run.stderr[-3000:]
        assert "ENOENT" not in run.stderr and "Editable installation" not in run.stderr, run.stderr[-3000:]
        found = last_tool_text(requests)
        assert found and "error" not in found.lower(), (found, run.stderr[-2000:])
        listing = claude.cmd("--plugin-dir", str(checkout), "mcp", "list", cwd=checkout)
        assert "plugin:memory:memory" in listing.stdout and "Pending approval" not in listing.stdout, listing.stdout
    finally:
        watch.stop.set()
        try:  # a setup still running after a failure: its own process group (started with a new session)
            os.killpg(int((data / "venv.setup-running").read_text()), signal.SIGTERM)
        except (OSError, ValueError):
            pass
        stop_workers(claude.home)


def test_mcp_tools_appear_in_the_session_when_the_venv_does(claude_bin: Path, fake: FakeAnthropic,
                                                            tmp_path: Path) -> None:
    """The session that began during the setup gets the real tools once the venv is renamed into place: the
    front starts the real server and sends tools/list_changed, and Claude Code lists them again. (The venv
    here is this interpreter's, linked in one rename as scripts/setup does; no setup is started.)"""
    import sys

    plugin = clean_copy(tmp_path / "plugin")
    claude = Claude(claude_bin, tmp_path / "home", fake)
    claude.env.update(MEMORY_AUTO_SETUP="0", MEMORY_WORKER="off")
    project = make_git_repo(tmp_path / "project", {"README.md": "# shop\n"})
    data = claude.home / ".claude" / "plugins" / "data" / "memory-inline"
    search = SERVER + "search"

    def venv_appears(body: dict) -> object:
        data.mkdir(parents=True, exist_ok=True)
        (data / "venv.new").symlink_to(Path(sys.prefix))
        (data / "venv.new").rename(data / "venv")
        time.sleep(8)  # the front polls every second, then the real server starts (the SDK's import: ~1-3 s)
        return tool_use("Read", {"file_path": str(project / "README.md")})

    script = Turns([tool_use("Read", {"file_path": str(project / "README.md")}), venv_appears,
                    tool_use("ToolSearch", {"query": f"select:{search}", "max_results": 5}),
                    tool_use(search, {"query": "shop"}), text("Done.")])
    try:
        run, requests = claude.prompt("What do we know?", script, project, "--plugin-dir", str(plugin),
                                      "--allowedTools", search)
        assert run.returncode == 0, run.stderr[-2000:]
        assert SERVER + "status" in all_text(requests[0])  # the session began with the setup's tool
        found = last_tool_text(requests)
        assert found and "being set up" not in found and "error" not in found.lower(), (found, run.stdout[-2000:])
    finally:
        stop_workers(claude.home)
