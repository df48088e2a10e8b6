"""How long the MCP server takes to be usable, as Claude Code starts it (plugin.json mcpServers: bin/memory mcp).

Measures, over several runs, speaking newline-delimited JSON-RPC over the pipes (no client library in the
measurement): spawn -> `server/discover` answered, -> `tools/list` answered, -> a first search answered,
without the handshake cache (first start after an install or update) and with it; beside a bare
interpreter start and `import mcp` alone. Claude Code connects MCP servers in the background of an
interactive session; with -p it waits for them before the first request, so this is what -p pays.

    .venv/bin/python -m scripts.bench.mcp [--runs 7] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time

from scripts.bench.common import ROOT, interleaved, machine, machine_line, print_json, python, run_timed


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = os.path.join(tmp, "project")
        os.makedirs(project)
        home = os.path.join(tmp, "home")
        cold = []
        for _ in range(max(1, args.runs // 2)):  # no handshake cache: the first start after an install or update
            shutil.rmtree(os.path.join(home, "cache"), ignore_errors=True)
            cold.append(one_run(home, project))
        warm = [one_run(home, project) for _ in range(args.runs)]
    py = python()
    starts = interleaved(args.runs, [("bare interpreter start", lambda _: run_timed([py, "-c", "pass"])),
                                     ("import mcp.server.mcpserver alone",
                                      lambda _: run_timed([py, "-c", "import mcp.server.mcpserver"]))])
    rows = {name: [t / 1000 for t in got.wall] for name, got in starts.items()}
    for name, runs in (("first start (no cache)", cold), ("later starts", warm)):
        rows[f"{name}: spawn -> server/discover"] = [r[0] for r in runs]
        rows[f"{name}: spawn -> tools/list"] = [r[1] for r in runs]
        rows[f"{name}: spawn -> first search answered"] = [r[2] for r in runs]
    info = machine()
    if args.json:
        print_json({"runs": args.runs, "rows": [
            {"what": label, "p50_ms": round(statistics.median(v) * 1000), "min_ms": round(min(v) * 1000),
             "max_ms": round(max(v) * 1000)} for label, v in rows.items()]}, info)
        return
    print(f"runs: {args.runs} (median, min-max), {machine_line(info)}")
    for label, values in rows.items():
        spread = f"{min(values) * 1000:.0f}-{max(values) * 1000:.0f}"
        print(f"{label:<48} {statistics.median(values) * 1000:6.0f} ms ({spread})")


if __name__ == "__main__":
    main()
