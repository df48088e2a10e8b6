#!/usr/bin/env python3
"""Hook latency benchmark: every hook spawned as Claude Code spawns it (the launcher, one JSON event on
stdin), on a project database holding --memories memories, against a bare interpreter start measured in
the same run (rounds interleaved, so machine noise hits both alike).

    .venv/bin/python scripts/bench_hooks.py [--memories 50000] [--runs 40] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memory.store import content_hash, normalise  # noqa: E402
from memory.workspace import Workspace  # noqa: E402


def corpus_words(limit_files: int = 80) -> list[str]:
    """Real developer prose with its natural (Zipf) word frequencies: the words of the Python standard
    library's own source. A tiny synthetic vocabulary would make every prompt word match a quarter of all
    memories, which no real store looks like."""
    import re
    import sysconfig

    stdlib = Path(sysconfig.get_paths()["stdlib"])
    words: list[str] = []
    for path in sorted(stdlib.glob("*.py"))[:limit_files]:
        words += re.findall(r"[a-z]{3,}", path.read_text(errors="replace").lower())
    return words


TYPES = ["observation"] * 5 + ["change"] * 3 + ["bugfix", "decision", "discovery", "feature", "refactor", "prompt"]


def populate(ws: Workspace, n: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    now = time.time()
    rows = []
    pool = corpus_words()
    for i in range(n):
        start = rng.randrange(0, len(pool) - 80)
        words = pool[start:start + rng.randint(12, 60)]  # a run of real text, as a memory would be
        title = f"{rng.choice(['Fixed', 'Changed', 'Found', 'Decided', 'Ran', 'Modified'])} {' '.join(words[:6])} {i}"
        content = " ".join(words) + f" (file src/module_{i % 500}.py)"
        created = now - rng.uniform(0, 180 * 86400)
        rows.append((ws.project.key, f"bench-session-{i % 400}", rng.choice(TYPES), title, normalise(title), content,
                     content_hash(f"{title}\n{content}"), round(rng.random(), 2), 0.5, "", "", "bench", created,
                     created, None, 0, None))
    db = ws.db
    db.execute("BEGIN IMMEDIATE")
    db.executemany(
        """INSERT INTO memories (project, session_id, type, title, title_key, content, content_hash, importance,
           confidence, tags, files, source, created_at, updated_at, accessed_at, access_count, expires_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""", rows)
    for s in range(400):
        db.execute("INSERT INTO sessions (id, project, status, started_at, ended_at, summary) VALUES "
                   "(?, ?, 'completed', ?, ?, ?)", (f"bench-session-{s}", ws.project.key, now - s * 3600,
                                                     now - s * 3600 + 1800, "benchmark session"))
        db.execute("INSERT INTO handoffs (project, session_id, trigger, content, created_at) VALUES (?, ?, ?, ?, ?)",
                   (ws.project.key, f"bench-session-{s}", "end", "Task: benchmark\nFiles modified: a.py",
                    now - s * 3600))
    db.execute("COMMIT")


def events(project: Path) -> dict[str, tuple[str, dict]]:
    base = {"session_id": "bench-live", "transcript_path": "", "cwd": str(project), "permission_mode": "default"}
    app = str(project / "src" / "app.py")
    big = str(project / "src" / "big.py")
    return {
        "SessionStart(startup)": ("session_start", {**base, "hook_event_name": "SessionStart", "source": "startup"}),
        "SessionStart(compact)": ("session_start", {**base, "hook_event_name": "SessionStart", "source": "compact"}),
        "UserPromptSubmit": ("user_prompt_submit", {**base, "hook_event_name": "UserPromptSubmit",
                                                    "prompt": "Why does the parser raise an error when the "
                                                              "encoding of the file is missing? fix the decoder"}),
        "PreToolUse(Read)": ("pre_tool_use", {**base, "hook_event_name": "PreToolUse", "tool_name": "Read",
                                              "tool_input": {"file_path": app}, "tool_use_id": "t1"}),
        "PostToolUse(Read)": ("post_tool_use", {**base, "hook_event_name": "PostToolUse", "tool_name": "Read",
                                                "tool_input": {"file_path": app}, "tool_response": {
                                                    "type": "text", "file": {"filePath": app,
                                                                             "content": "x = 1\n" * 400}}}),
        "PostToolUse(Read, outline cold)": ("post_tool_use", _read_event(base, big, "cold")),
        "PostToolUse(Read, outline cached)": ("post_tool_use", _read_event(base, big, "cached")),
        "PostToolUse(Edit)": ("post_tool_use", {**base, "hook_event_name": "PostToolUse", "tool_name": "Edit",
                                                "tool_input": {"file_path": app, "old_string": "x = 1",
                                                               "new_string": "x = 2"}, "tool_response": {}}),
        "PostToolUse(Bash)": ("post_tool_use", {**base, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                                                "tool_input": {"command": "pytest -q tests/test_auth.py"},
                                                "tool_response": {"stdout": "12 passed\n" * 50, "stderr": ""}}),
        "PreCompact": ("pre_compact", {**base, "hook_event_name": "PreCompact", "trigger": "auto",
                                       "custom_instructions": ""}),
        "Stop": ("stop", {**base, "hook_event_name": "Stop", "stop_hook_active": False,
                          "last_assistant_message": "Decision: we will use a sliding window for the rate limit."}),
        "SessionEnd": ("session_end", {**base, "hook_event_name": "SessionEnd", "reason": "other"}),
    }


BIG_SOURCE = Path(__file__).resolve().parents[1].joinpath("memory", "cli.py")


def _read_event(base: dict, path: str, mode: str) -> dict:
    """A full Read of a large code file. Each run is a new session (a second full Read in one session
    passes through); `cold` also changes the file so the cached outline no longer matches."""
    return {**base, "hook_event_name": "PostToolUse", "tool_name": "Read", "tool_input": {"file_path": path},
            "tool_response": {"type": "text", "file": {"filePath": path, "content": "(body)", "numLines": 2000,
                                                       "startLine": 1, "totalLines": 2000}}, "_mode": mode}


def prepare(payload: dict, run: int) -> bytes:
    mode = payload.get("_mode")
    event = {k: v for k, v in payload.items() if k != "_mode"}
    if mode:
        event["session_id"] = f"bench-read-{mode}-{run}"
        if mode == "cold":
            path = Path(event["tool_input"]["file_path"])
            path.write_text(BIG_SOURCE.read_text() + f"\n# run {run}\n")
    return json.dumps(event).encode()


def timed(cmd: list[str], data: bytes, env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, input=data, capture_output=True, env=env)
    elapsed = (time.perf_counter() - start) * 1000
    if proc.returncode != 0:
        raise SystemExit(f"{cmd} exited {proc.returncode}: {proc.stderr.decode()[:500]}")
    return elapsed


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memories", type=int, default=50_000)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-hooks-") as tmp:
        home, project = Path(tmp) / "data", Path(tmp) / "project"
        (project / "src").mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        (project / "src" / "app.py").write_text("x = 1\n" * 400)
        (project / "src" / "big.py").write_text(BIG_SOURCE.read_text())
        # Worker off, as the README's table says: a worker the hooks start would index the 50,000 memories
        # on the same cores and time itself, not the hooks.
        env = {**os.environ, "MEMORY_HOME": str(home), "MEMORY_WORKER": "off"}
        for name in ("CLAUDE_PLUGIN_DATA", "CLAUDE_PROJECT_DIR", "MEMORY_PROJECT_DIR"):
            env.pop(name, None)
        ws = Workspace.for_dir(str(project), home=str(home))
        t = time.perf_counter()
        populate(ws, args.memories)
        fill_s = time.perf_counter() - t
        ws.close()

        # As scripts/setup leaves the plugin: byte-compiled (PYTHONDONTWRITEBYTECODE may be set here).
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "memory"), str(ROOT / "parser"),
                        str(ROOT / "hooks")], check=False, capture_output=True)
        launcher = str(ROOT / "hooks" / "run")
        venv_py = ROOT / ".venv" / "bin" / "python"
        py = str(venv_py if venv_py.exists() else Path(sys.executable))
        evs = events(project)
        samples: dict[str, list[float]] = {"bare interpreter (python -S -c pass)": []} | {k: [] for k in evs}
        for entry, payload in evs.values():  # warm-up: .pyc files, page cache
            timed([launcher, entry], prepare(payload, -1), env)
        for run in range(args.runs):
            samples["bare interpreter (python -S -c pass)"].append(timed([py, "-S", "-c", "pass"], b"", env))
            for name, (entry, payload) in evs.items():
                samples[name].append(timed([launcher, entry], prepare(payload, run), env))

    bare = statistics.median(samples["bare interpreter (python -S -c pass)"])
    table = [{"event": k, "p50_ms": round(statistics.median(v), 1), "p95_ms": round(pct(v, 0.95), 1),
              "max_ms": round(max(v), 1), "p50_vs_bare": round(statistics.median(v) / bare, 2)}
             for k, v in samples.items()]
    meta = {"date": time.strftime("%Y-%m-%d"), "machine": f"{os.cpu_count()} cores, {sys.platform}",
            "python": sys.version.split()[0], "memories": args.memories, "runs": args.runs,
            "populate_seconds": round(fill_s, 1)}
    if args.json:
        print(json.dumps({"meta": meta, "results": table}, indent=2))
        return
    print(f"hook latency, {args.memories} memories in the project db, {args.runs} runs per event "
          f"({meta['date']}, {meta['machine']}, Python {meta['python']}; db filled in {fill_s:.1f} s)")
    print(f"{'event':<40} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'p50/bare':>9}")
    for row in table:
        print(f"{row['event']:<40} {row['p50_ms']:>8} {row['p95_ms']:>8} {row['max_ms']:>8} {row['p50_vs_bare']:>9}")
    worst = max(r["p95_ms"] for r in table[1:])
    print(f"worst hook p95: {worst} ms (budget 100 ms)")


if __name__ == "__main__":
    main()
