#!/usr/bin/env python3
"""Huge-input hook benchmark: every hook spawned as Claude Code spawns it with a 20 MB field (prompt, tool
output, assistant message, compaction instructions, end reason, a 20 MB transcript beside it) and a
TodoWrite of 20,000 items, against the same hook with a small event and a bare interpreter start, rounds
interleaved. Wall and CPU (user+sys of the hook process) per row.

    .venv/bin/python scripts/bench_huge.py [--mb 20] [--todos 20000] [--runs 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def spawn(argv: list[str], data: bytes, env: dict[str, str]) -> tuple[float, float]:
    """(wall ms, cpu ms) of one process fed `data` on stdin."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=env)
    proc.stdin.write(data)  # type: ignore[union-attr]
    proc.stdin.close()  # type: ignore[union-attr]
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = (time.perf_counter() - start) * 1000
    if proc.returncode != 0:
        raise SystemExit(f"{argv[-1]} exited {proc.returncode}")
    return wall, (usage.ru_utime + usage.ru_stime) * 1000


def events(project: str, transcript: str, mb: int, todos: int) -> list[tuple[str, str, dict, dict]]:
    big = "lorem ipsum dolor " * (mb * 1024 * 1024 // 18)
    base = {"session_id": "bench-huge", "transcript_path": transcript, "cwd": project}
    items = [{"content": f"Finish part {i}", "status": "completed", "activeForm": "x"} for i in range(todos)]
    few = items[:5]

    def tool(name: str, tin: dict, resp: object) -> dict:
        return {**base, "hook_event_name": "PostToolUse", "tool_name": name, "tool_input": tin, "tool_response": resp}

    return [
        ("SessionStart", "session_start", {**base, "source": big}, {**base, "source": "startup"}),
        ("UserPromptSubmit", "user_prompt_submit", {**base, "prompt": big}, {**base, "prompt": "Fix the login bug"}),
        ("PostToolUse Bash", "post_tool_use", tool("Bash", {"command": "make"}, {"stdout": big, "stderr": ""}),
         tool("Bash", {"command": "make"}, {"stdout": "ok", "stderr": ""})),
        ("PostToolUse TodoWrite", "post_tool_use", tool("TodoWrite", {"todos": items}, {}),
         tool("TodoWrite", {"todos": few}, {})),
        ("Stop", "stop", {**base, "last_assistant_message": big}, {**base, "last_assistant_message": "Done."}),
        ("PreCompact", "pre_compact", {**base, "trigger": "manual", "custom_instructions": big},
         {**base, "trigger": "manual", "custom_instructions": ""}),
        ("SessionEnd", "session_end", {**base, "reason": big}, {**base, "reason": "other"}),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=20)
    ap.add_argument("--todos", type=int, default=20000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-huge-"))
    project = tmp / "app"
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    transcript = tmp / "transcript.jsonl"
    line = json.dumps({"type": "user", "message": {"role": "user", "content": "w " * 1000}}) + "\n"
    transcript.write_text(line * (args.mb * 1024 * 1024 // len(line)))
    env = {**os.environ, "MEMORY_HOME": str(tmp / "data"), "MEMORY_WORKER": "off"}
    hook = str(ROOT / "hooks" / "run")
    rows = []
    for label, entry, huge, small in events(str(project), str(transcript), args.mb, args.todos):
        big_data, small_data = json.dumps(huge).encode(), json.dumps(small).encode()
        samples: dict[str, list[tuple[float, float]]] = {"huge": [], "small": [], "bare": []}
        for _ in range(args.runs):
            samples["bare"].append(spawn([sys.executable, "-S", "-c", "pass"], b"", env))
            samples["small"].append(spawn([hook, entry], small_data, env))
            samples["huge"].append(spawn([hook, entry], big_data, env))
        row = {"hook": label, "input_mb": round(len(big_data) / 2**20, 1)}
        for kind, values in samples.items():
            row[f"{kind}_wall_ms"] = round(statistics.median(v[0] for v in values), 1)
            row[f"{kind}_cpu_ms"] = round(statistics.median(v[1] for v in values), 1)
        rows.append(row)
    if args.json:
        print(json.dumps({"load": os.getloadavg(), "rows": rows}, indent=2))
        return
    print(f"load {os.getloadavg()[0]:.2f}; medians of {args.runs} runs; {args.todos} todos in the TodoWrite row")
    print(f"{'hook':24} {'input':>8} {'huge wall':>10} {'huge cpu':>9} {'small wall':>11} {'small cpu':>10} "
          f"{'bare cpu':>9}")
    for r in rows:
        print(f"{r['hook']:24} {r['input_mb']:>6} MB {r['huge_wall_ms']:>8} ms {r['huge_cpu_ms']:>6} ms "
              f"{r['small_wall_ms']:>8} ms {r['small_cpu_ms']:>7} ms {r['bare_cpu_ms']:>6} ms")


if __name__ == "__main__":
    main()
