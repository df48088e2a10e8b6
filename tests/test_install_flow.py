"""The first minutes of an installed plugin, as real processes: the worker is not started on python3 while
scripts/setup builds the venv, a failed start does not hide behind "already running", a setup killed
half-way does not block the next one, and `scripts/setup --where` keeps build outputs out of the plugin."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory.base import bootstrap, worker_client
from tests.support.helpers import ROOT

MEMORY = [sys.executable, "-m", "memory"]


@pytest.fixture
def env(home: Path) -> Iterator[dict[str, str]]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "MEMORY_"))}
    environ.update(MEMORY_HOME=str(home), MEMORY_WORKER="on", MEMORY_EMBEDDER="hashing",
                   MEMORY_WORKER_IDLE_SECONDS="5", PYTHONPATH=str(ROOT))
    yield environ
    worker_client.ask(str(home), {"op": "shutdown"}, timeout=2)
    deadline = time.monotonic() + 20
    while worker_client.alive(str(home)) and time.monotonic() < deadline:
        time.sleep(0.1)


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*MEMORY, *args], capture_output=True, text=True, env=env, timeout=120)


def status(env: dict[str, str]) -> dict[str, object]:
    r = cli(env, "worker", "status", "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_worker_start_after_a_failed_start_starts_it_and_says_so(env: dict[str, str], home: Path) -> None:
    # What a hook on python3 left while the venv was being built: a failure hooks back off from for 10 min.
    home.mkdir(parents=True, exist_ok=True)
    (home / "worker.failed").write_text(json.dumps({"python": sys.executable, "at": time.time(),
                                                     "error": "ModuleNotFoundError(\"No module named 'lancedb'\")"}))
    r = cli(env, "doctor", "--json")
    assert "failed to start" in json.loads(r.stdout)["worker"] and "lancedb" in json.loads(r.stdout)["worker"]
    r = cli(env, "worker", "start")
    assert r.returncode == 0 and r.stdout.startswith("started pid "), r.stdout + r.stderr
    assert status(env)["alive"] is True and not (home / "worker.failed").exists()
    r = cli(env, "worker", "start")
    assert r.stdout.strip() == "already running"
    assert json.loads(cli(env, "doctor", "--json").stdout)["worker"] == "running"


def test_worker_start_reports_a_worker_that_cannot_run(env: dict[str, str], home: Path, tmp_path: Path) -> None:
    # An interpreter without lancedb (as python3 from PATH during the setup). The worker never imports it
    # (its vector process does) but looks it up at start: an import hook hides it from that look-up.
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "sitecustomize.py").write_text(
        "import sys\n\n\nclass NoLancedb:\n    def find_spec(self, name, path=None, target=None):\n"
        "        if name.partition('.')[0] == 'lancedb':\n"
        "            raise ModuleNotFoundError('lancedb is not installed here', name=name)\n\n\n"
        "sys.meta_path.insert(0, NoLancedb())\n")
    env = {**env, "PYTHONPATH": f"{ROOT}{os.pathsep}{broken}"}
    r = cli(env, "worker", "start")
    assert r.returncode != 0 and "already running" not in r.stdout + r.stderr
    assert "exited at start" in r.stderr and "lancedb is not installed here" in r.stderr, r.stderr
    assert status(env)["alive"] is False


def test_hooks_do_not_start_the_worker_while_the_setup_runs(env: dict[str, str], home: Path,
                                                            tmp_path: Path) -> None:
    data = tmp_path / "plugin-data"
    data.mkdir()
    setup = subprocess.Popen(["sleep", "60"])  # stands for scripts/setup: a live pid in the running file
    try:
        (data / bootstrap.RUNNING).write_text(f"{setup.pid}\n")
        hook_env = {**env, "CLAUDE_PLUGIN_DATA": str(data)}
        probe = ("import sys; from memory.base import worker_client; "
                 "print(worker_client.start(sys.argv[1]))")
        r = subprocess.run([sys.executable, "-c", probe, str(home)], capture_output=True, text=True,
                           env=hook_env, timeout=60)
        assert r.stdout.strip() == "None" and not worker_client.alive(str(home)), r.stderr
        assert not (home / "worker.failed").exists()
    finally:
        setup.kill()
        setup.wait()
    # A setup that died (its pid is gone) no longer holds anything back: the next hook starts the worker.
    r = subprocess.run([sys.executable, "-c", probe, str(home)], capture_output=True, text=True,
                       env=hook_env, timeout=60)
    assert r.stdout.strip().isdigit(), r.stdout + r.stderr
    deadline = time.monotonic() + 30
    while not worker_client.alive(str(home)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert worker_client.alive(str(home))


def test_a_killed_setup_does_not_block_the_next_one(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    assert not bootstrap.setup_running(str(data))
    (data / bootstrap.RUNNING).write_text(f"{os.getpid()}\n")
    assert bootstrap.setup_running(str(data))
    dead = subprocess.Popen(["true"])
    dead.wait()
    (data / bootstrap.RUNNING).write_text(f"{dead.pid}\n")
    assert not bootstrap.setup_running(str(data))


def test_setup_puts_a_checkouts_venv_and_tools_outside_the_plugin(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    r = subprocess.run([str(ROOT / "scripts" / "setup"), "--where"], capture_output=True, text=True, env=env,
                       timeout=30)
    assert r.returncode == 0, r.stderr
    lines = dict(line.split(": ", 1) for line in r.stdout.splitlines())
    for name, shown in (("venv", ".venv"), ("tools", ".tools")):
        link, target = lines[name].split(" -> ")
        assert link == str(ROOT / shown)
        assert target.startswith(str(tmp_path / "cache" / "claude-memory" / "checkouts" / f"{ROOT.name}-"))


def _rpc(proc: subprocess.Popen[bytes], message: dict[str, object]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()


def _read(proc: subprocess.Popen[bytes], want: object, timeout: float = 60) -> dict[str, object]:
    """The next message answering request `want` (an id), or the next notification named `want`."""
    import select

    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        line = proc.stdout.readline()
        if not line:
            break
        message = json.loads(line)
        if message.get("id") == want and "method" not in message or message.get("method") == want:
            return message
    raise AssertionError(f"no {want!r} within {timeout} s")


def test_mcp_server_answers_being_set_up_then_hands_over_to_the_real_server(tmp_path: Path) -> None:
    """bin/memory with no venv yet starts the MCP front on python3: it answers the handshake and says
    "being set up"; when the venv appears it starts the real server and the client is told to re-list."""
    import shutil

    plugin = tmp_path / "plugin"
    shutil.copytree(ROOT, plugin, ignore=shutil.ignore_patterns(".venv", ".tools", ".git", "tests", "__pycache__"))
    data = tmp_path / "data"
    data.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "MEMORY_", "VIRTUAL_ENV"))}
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if ".venv" not in p)
    env.update(MEMORY_HOME=str(data), MEMORY_WORKER="off")
    proc = subprocess.Popen([str(plugin / "bin" / "memory"), "--plugin-data", str(data), "mcp"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    meta = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"},
                      "io.modelcontextprotocol/clientCapabilities": {}}}
    try:
        _rpc(proc, {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": meta})
        discover = _read(proc, 1)["result"]
        assert "being set up" in discover["instructions"] and discover["capabilities"]["tools"]["listChanged"]
        _rpc(proc, {"jsonrpc": "2.0", "id": "listen:0", "method": "subscriptions/listen",
                    "params": {**meta, "notifications": {"toolsListChanged": True}}})
        ack = _read(proc, "notifications/subscriptions/acknowledged")
        assert ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "listen:0"
        _rpc(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": meta})
        assert [t["name"] for t in _read(proc, 2)["result"]["tools"]] == ["status"]
        _rpc(proc, {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                    "params": {**meta, "name": "search", "arguments": {"query": "x"}}})
        called = _read(proc, 3)["result"]
        assert called["isError"] and "being set up" in called["content"][0]["text"]
        # The venv appears in one rename, as scripts/setup makes it (here: this interpreter's venv).
        (data / "venv.new").symlink_to(Path(sys.prefix))
        (data / "venv.new").rename(data / "venv")
        changed = _read(proc, "notifications/tools/list_changed")
        assert changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "listen:0"
        _rpc(proc, {"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": meta})
        names = {t["name"] for t in _read(proc, 4)["result"]["tools"]}
        assert {"search", "get", "save"} <= names, names
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_doctor_reports_the_root_the_hooks_run_from(home: Path, project: Path, tmp_path: Path) -> None:
    """A directory marketplace runs the hooks from the source folder while `memory doctor` may run from the
    copy: doctor names both (docs/install.md)."""
    from tests.support.helpers import HookRunner

    environ = {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE")}
    environ.update(MEMORY_HOME=str(home), PYTHONPATH=str(ROOT))
    before = json.loads(subprocess.run([*MEMORY, "doctor", "--json"], cwd=project, capture_output=True, text=True,
                                       env=environ, timeout=120).stdout)
    assert before["hooks_root"].startswith("not known yet")
    HookRunner(project).start()
    after = json.loads(subprocess.run([*MEMORY, "doctor", "--json"], cwd=project, capture_output=True, text=True,
                                      env=environ, timeout=120).stdout)
    assert after["hooks_root"] == str(ROOT) and after["plugin_root"] == str(ROOT)
    (home / bootstrap.ROOT_FILE).write_text(str(tmp_path / "elsewhere"))  # hooks of another copy ran last
    HookRunner(project).start()
    assert (home / bootstrap.ROOT_FILE).read_text() == str(ROOT)


def test_the_being_set_up_message_names_the_command_that_finishes_this_copy(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "venv.setup-running").write_text(f"{os.getpid()}\n")  # a setup that runs: this process
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "MEMORY_"))}
    environ["CLAUDE_PLUGIN_DATA"] = str(data)
    plugin = tmp_path / "plugin"  # an installed copy: no .venv of a checkout beside it
    (plugin / "bin").mkdir(parents=True)
    shutil.copy(ROOT / "bin" / "memory", plugin / "bin" / "memory")
    done = subprocess.run([str(plugin / "bin" / "memory"), "slash", "stats"], capture_output=True, text=True,
                          env=environ, timeout=60)
    assert f"{plugin}/scripts/setup --venv {data}/venv --marker auto" in done.stdout, done.stdout


def test_setup_install_from_an_installed_plugin_says_it_needs_a_clone(tmp_path: Path) -> None:
    """The plugin alone (scripts/build_plugin.py) carries scripts/setup but not the builder: `--install` from
    there stops with one line, before touching the client."""
    from scripts.build_plugin import build

    plugin = tmp_path / "plugin"
    build(plugin)
    done = subprocess.run([str(plugin / "scripts" / "setup"), "--install"], capture_output=True, text=True,
                          env={**os.environ, "HOME": str(tmp_path / "home")}, timeout=60)
    assert done.returncode == 2 and done.stdout == "", done.stdout + done.stderr
    assert done.stderr == f"setup: --install runs from a clone of the repository; {plugin} is an installed plugin\n"
    assert not (tmp_path / "home").exists()
