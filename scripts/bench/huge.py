"""Huge-input hook benchmark: every hook spawned as Claude Code spawns it with a 20 MB field (prompt, tool
output, assistant message, compaction instructions, end reason, a 20 MB transcript beside it) and a
TodoWrite of 20,000 items, against the same hook with a small event and a bare interpreter start, rounds
interleaved. Wall and CPU (user+sys of the hook process) per row.

    .venv/bin/python -m scripts.bench.huge [--mb 20] [--todos 20000] [--runs 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
from pathlib import Path

from scripts.bench.common import BARE, ROOT, interleaved, machine, machine_line, print_json, python, run_timed


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
        samples = interleaved(args.runs, [
            ("bare", lambda _: run_timed([python(), *BARE], b"", env)),
            ("small", lambda _, data=small_data, entry=entry: run_timed([hook, entry], data, env)),
            ("huge", lambda _, data=big_data, entry=entry: run_timed([hook, entry], data, env))])
        row = {"hook": label, "input_mb": round(len(big_data) / 2**20, 1)}
        for kind, got in samples.items():
            row[f"{kind}_wall_ms"] = round(statistics.median(got.wall), 1)
            row[f"{kind}_cpu_ms"] = round(statistics.median(got.cpu), 1)
        rows.append(row)
    info = machine()
    if args.json:
        print_json({"rows": rows}, info)
        return
    print(f"{machine_line(info)}; medians of {args.runs} runs; {args.todos} todos in the TodoWrite row")
    print(f"{'hook':24} {'input':>8} {'huge wall':>10} {'huge cpu':>9} {'small wall':>11} {'small cpu':>10} "
          f"{'bare cpu':>9}")
    for r in rows:
        print(f"{r['hook']:24} {r['input_mb']:>6} MB {r['huge_wall_ms']:>8} ms {r['huge_cpu_ms']:>6} ms "
              f"{r['small_wall_ms']:>8} ms {r['small_cpu_ms']:>7} ms {r['bare_cpu_ms']:>6} ms")


if __name__ == "__main__":
    main()
