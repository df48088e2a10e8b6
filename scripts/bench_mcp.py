#!/usr/bin/env python3
"""How long the MCP server takes to be usable, as Claude Code starts it (plugin.json mcpServers: bin/memory mcp).

Measures, over several runs, speaking newline-delimited JSON-RPC over the pipes (no client library in the
measurement): spawn -> `server/discover` answered, -> `tools/list` answered, -> a first search answered,
without the handshake cache (first start after an install or update) and with it; beside a bare
interpreter start and `import mcp` alone. Claude Code connects MCP servers in the background of an
interactive session; with -p it waits for them before the first request, so this is what -p pays.

    .venv/bin/python scripts/bench_mcp.py [--runs 7]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _send(proc: subprocess.Popen[bytes], message: dict[str, object]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()


def _answer(proc: subprocess.Popen[bytes], id_: int) -> dict[str, object]:
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("the server closed its output")
        data = json.loads(line)
        if data.get("id") == id_:
            return data


META = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
                  "io.modelcontextprotocol/clientCapabilities": {}}}


def one_run(home: str, project: str) -> tuple[float, float, float]:
    """spawn -> server/discover answered, -> tools/list answered, -> a search answered (the real server)."""
    env = {**os.environ, "MEMORY_HOME": home, "CLAUDE_PROJECT_DIR": project}
    start = time.perf_counter()
    proc = subprocess.Popen([str(ROOT / "bin" / "memory"), "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env, cwd=project)
    try:
        # What Claude Code 2.1.330 sends: the stateless protocol of 2026-07-28, discover first.
        _send(proc, {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": META})
        _answer(proc, 1)
        discovered = time.perf_counter() - start
        _send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": META})
        tools = _answer(proc, 2)
        listed = time.perf_counter() - start
        assert len(tools["result"]["tools"]) == 6, tools  # type: ignore[index]
        _send(proc, {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                     "params": {**META, "name": "search", "arguments": {"query": "anything"}}})
        _answer(proc, 3)
        return discovered, listed, time.perf_counter() - start
    finally:
        proc.kill()
        proc.wait()


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    python = str(ROOT / ".venv" / "bin" / "python")
    with tempfile.TemporaryDirectory() as tmp:
        project = os.path.join(tmp, "project")
        os.makedirs(project)
        home = os.path.join(tmp, "home")
        cold = []
        for _ in range(max(1, args.runs // 2)):  # no handshake cache: the first start after an install or update
            shutil.rmtree(os.path.join(home, "cache"), ignore_errors=True)
            cold.append(one_run(home, project))
        warm = [one_run(home, project) for _ in range(args.runs)]
    bare = [timed([python, "-c", "pass"]) for _ in range(args.runs)]
    imp = [timed([python, "-c", "import mcp.server.mcpserver"]) for _ in range(args.runs)]
    med = statistics.median

    def show(label: str, values: list[float]) -> None:
        spread = f"{min(values) * 1000:.0f}-{max(values) * 1000:.0f}"
        print(f"{label:<48} {med(values) * 1000:6.0f} ms ({spread})")

    print(f"runs: {args.runs} (median, min-max), {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
    show("bare interpreter start", bare)
    show("import mcp.server.mcpserver alone", imp)
    for name, rows in (("first start (no cache)", cold), ("later starts", warm)):
        show(f"{name}: spawn -> server/discover", [r[0] for r in rows])
        show(f"{name}: spawn -> tools/list", [r[1] for r in rows])
        show(f"{name}: spawn -> first search answered", [r[2] for r in rows])
    sys.stdout.flush()


if __name__ == "__main__":
    main()
