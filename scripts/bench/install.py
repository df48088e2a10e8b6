"""From a clean clone to a fully working plugin: time to each stage of an installed plugin's first minutes.

A clean copy of the checkout (its tracked files), the plugin alone written from it (scripts/build_plugin.py,
as `scripts/setup --install` does), `claude plugin marketplace add` + `claude plugin install` (the real CLI,
pinned under .tools/) into a fresh HOME and an empty cache, then, as Claude Code would run it (from the
marketplace's folder, not the copy in its cache), the plugin's first SessionStart hook, which starts
scripts/setup detached. From the install on, the wall time until each stage works, polled every POLL_S: the
hooks (SessionStart answered), the venv (renamed into place), the worker (alive), the MCP tools (a fresh
`bin/memory mcp` lists `search`, not `status`), a hybrid search answered (`memory search --json` says mode
hybrid) and an outline (a Read of a large file answered with its outline), the setup's own stages (wall and
CPU each), and an update with the same dependencies (another data dir on the shared venv). Then scripts/setup
on the clean copy (a cold build, a re-run with nothing changed, a second checkout) with its CPU beside the
wall, the plugin's installed size and the venv's largest packages.
The load average is printed at the start and at the end: this machine is shared.

    .venv/bin/python -m scripts.bench.install [--json] [--timeout 900]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from scripts.bench.common import ROOT, machine, machine_line, print_json
from scripts.bench.mcp import META, _answer, _send

POLL_S = 2.0
CLAUDE = ROOT / ".tools" / "claude-code" / "node_modules" / ".bin" / "claude"


def clean_copy(dest: Path) -> Path:
    """The checkout's tracked files, as a clone would have them."""
    names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, names.decode().split("\0")):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def size(path: Path) -> int:
    return sum(p.lstat().st_size for p in path.rglob("*") if not p.is_symlink())


def load() -> str:
    with open("/proc/loadavg", encoding="ascii") as fh:
        return " ".join(fh.read().split()[:3])


class Stages:
    """The installed copy's stages, each probed as a user's session would meet it."""

    def __init__(self, plugin: Path, data: Path, project: Path, env: dict[str, str]) -> None:
        self.plugin, self.data, self.project = plugin, data, project
        self.env = {**env, "CLAUDE_PLUGIN_ROOT": str(plugin), "CLAUDE_PLUGIN_DATA": str(data),
                    "CLAUDE_PROJECT_DIR": str(project)}
        big = project / "big.py"
        big.write_text("".join(f"def function_{i}(x):\n    return x + {i}\n\n" for i in range(400)))
        self.big = big

    def hook(self, name: str, event: dict[str, Any]) -> dict[str, Any] | None:
        event = {"session_id": "bench-1", "transcript_path": "", "cwd": str(self.project), **event}
        out = subprocess.run([str(self.plugin / "hooks" / "run"), name], input=json.dumps(event).encode(),
                             capture_output=True, env=self.env, timeout=60).stdout
        return json.loads(out) if out.strip() else None

    def venv(self) -> bool:
        return (self.data / "venv" / "bin" / "python").exists()

    def worker(self) -> bool:
        from memory.base import worker_client

        return worker_client.alive(str(self.data))

    def mcp(self) -> bool:
        proc = subprocess.Popen([str(self.plugin / "bin" / "memory"), "mcp"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=self.env, cwd=self.project)
        try:
            _send(proc, {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": META})
            _answer(proc, 1)
            _send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": META})
            tools = _answer(proc, 2).get("result", {})
            return "search" in {t.get("name") for t in tools.get("tools", [])}  # type: ignore[union-attr]
        except (RuntimeError, ValueError, OSError):
            return False
        finally:
            proc.kill()
            proc.wait()

    def hybrid(self) -> bool:
        done = subprocess.run([str(self.plugin / "bin" / "memory"), "search", "shop", "--json"], capture_output=True,
                              text=True, env=self.env, cwd=self.project, timeout=60)
        try:
            hits = json.loads(done.stdout)
        except ValueError:
            return False
        return bool(hits) and hits[0].get("mode") == "hybrid"

    def outline(self) -> bool:
        text = self.big.read_text()
        lines = text.count("\n") + 1
        out = self.hook("post_tool_use", {
            "hook_event_name": "PostToolUse", "tool_name": "Read", "tool_input": {"file_path": str(self.big)},
            "tool_response": {"type": "text", "file": {"filePath": str(self.big), "content": text,
                                                       "numLines": lines, "startLine": 1, "totalLines": lines}}})
        return "Outline:" in json.dumps(out or {})


def first_minutes(tmp: Path, timeout: float) -> dict[str, Any]:
    """Marketplace add and install in a fresh HOME, the first SessionStart, then each stage's time."""
    from scripts.build_plugin import build

    home, project = tmp / "home", tmp / "project"
    market = tmp / "memory-plugin"  # the plugin alone, as scripts/build_plugin.py writes it from the clone
    build(market, clean_copy(tmp / "clone"))
    home.mkdir()
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "README.md").write_text("# shop\nThe shop sells shoes.\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "MEMORY_", "VIRTUAL_ENV"))}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(tmp / "cache"))
    env.pop("XDG_DATA_HOME", None)  # the shared venvs: in the fresh HOME, empty
    started = time.monotonic()
    for args in (["plugin", "marketplace", "add", str(market)], ["plugin", "install", "memory@memory-local"]):
        subprocess.run([str(CLAUDE), *args], capture_output=True, env=env, check=True, timeout=300)
    installed = time.monotonic() - started
    cache = home / ".claude" / "plugins" / "cache"
    copied = size(next(cache.glob("memory-local/memory/*")))
    # A marketplace on a folder: the client runs the plugin from that folder (CLAUDE_PLUGIN_ROOT), not the copy.
    plugin = market
    data = home / ".claude" / "plugins" / "data" / "memory-memory-local"
    s = Stages(plugin, data, project, env)
    s.hook("session_start", {"hook_event_name": "SessionStart", "source": "startup"})
    s.hook("user_prompt_submit", {"hook_event_name": "UserPromptSubmit", "prompt": "Where does the shop sell shoes?"})
    times: dict[str, float] = {"marketplace add + install": installed, "hooks": time.monotonic() - started}
    probes = {"venv": s.venv, "worker": s.worker, "mcp tools": s.mcp, "hybrid answer": s.hybrid,
              "outline": s.outline}
    while probes and time.monotonic() - started < timeout:
        for name, probe in list(probes.items()):
            if probe():
                times[name] = time.monotonic() - started
                del probes[name]
        time.sleep(POLL_S)
    from memory.base import worker_client

    worker_client.ask(str(data), {"op": "shutdown"}, timeout=5)
    log = (data / "logs" / "setup.log").read_text() if (data / "logs" / "setup.log").exists() else ""
    return {"seconds": {k: round(v, 1) for k, v in times.items()}, "not reached": sorted(probes),
            "setup stages": [line for line in log.splitlines() if line.startswith("setup: took")],
            "update, same dependencies": update(plugin, tmp / "plugin-2", data, env),
            "installed plugin bytes": {"copied": copied, "after its setup": size(plugin)},
            "venv": packages(data / "venv")}


def update(plugin: Path, new: Path, data: Path, env: dict[str, str]) -> dict[str, Any]:
    """A plugin update with the same dependencies: the next version's folder (here a copy of the installed
    one) sets up the same data dir, on the shared venv the first install built. Its stages line: until the
    venv is switched, then the byte-compiling, the MCP warm-up and the worker start beside each other."""
    shutil.copytree(plugin, new, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run([str(new / "scripts" / "setup"), "--venv", str(data / "venv"), "--marker", "auto"],
                          env={**env, "CLAUDE_PLUGIN_DATA": str(data)}, capture_output=True, text=True,
                          check=True, timeout=600)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    from memory.base import worker_client

    worker_client.ask(str(data), {"op": "shutdown"}, timeout=5)
    return {"wall_s": round(time.monotonic() - started, 2),
            "cpu_s": round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, 2), "load": load(),
            "stages": [line for line in done.stdout.splitlines() if line.startswith("setup: took")]}


def packages(venv: Path, top: int = 10) -> dict[str, int]:
    """The venv's largest installed packages, in bytes: those of the shared venv its overlay stands on."""
    shared = venv / ".memory-shared"
    venv = Path(shared.read_text().strip()) if shared.exists() else venv.resolve()
    site = next(venv.glob("lib/python3*/site-packages"), None)
    if site is None:
        return {}
    sizes = {p.name: size(p) if p.is_dir() else p.stat().st_size for p in site.iterdir()
             if not p.name.endswith((".dist-info", ".pth")) and p.name != "__pycache__"}
    biggest = dict(sorted(sizes.items(), key=lambda kv: -kv[1])[:top])
    return {"total": size(venv.resolve()), **biggest}


def setup_twice(tmp: Path) -> dict[str, Any]:
    """scripts/setup on the clean copy: a cold build into an empty cache and store, a re-run with nothing
    changed, then a second checkout with the same dependencies (on the shared venv)."""
    first, second = clean_copy(tmp / "checkout"), clean_copy(tmp / "checkout-2")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "VIRTUAL_ENV"))}
    env.update(XDG_CACHE_HOME=str(tmp / "setup-cache"), XDG_DATA_HOME=str(tmp / "setup-share"))
    out = {}
    for label, market, venv in (("cold build", first, "setup-venv"), ("re-run, nothing changed", first, "setup-venv"),
                                ("second checkout, same dependencies", second, "setup-venv-2")):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        done = subprocess.run([str(market / "scripts" / "setup"), "--venv", str(tmp / venv / "venv")], env=env,
                              capture_output=True, text=True, check=True, timeout=1800)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        out[label] = {"wall_s": round(time.monotonic() - started, 2),
                      "cpu_s": round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, 2),
                      "load": load(),
                      "stages": [line for line in done.stdout.splitlines() if line.startswith("setup: took")]}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--timeout", type=float, default=900.0, help="give up on the stages after this many seconds")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if not CLAUDE.exists():
        raise SystemExit(f"no Claude Code at {CLAUDE}: run scripts/install-claude-code")
    results: dict[str, Any] = {"load at start": load()}
    with tempfile.TemporaryDirectory(prefix="bench-install-") as tmp:
        results["first minutes"] = first_minutes(Path(tmp), a.timeout)
        results["load after the first minutes"] = load()
        results["scripts/setup"] = setup_twice(Path(tmp))
    results["load at end"] = load()
    if a.json:
        print_json(results, machine())
        return
    print(machine_line())
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
