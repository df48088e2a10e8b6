"""Hook latency benchmark: every hook spawned as Claude Code spawns it (the launcher, one JSON event on
stdin), on a project database holding --memories memories, against a bare interpreter start measured in
the same run (rounds interleaved, so machine noise hits both alike).

Wall time and CPU time (user + system of the hook process, from the kernel's accounting of reaped
children) are both given; the ratios to the bare interpreter's CPU are the figure to compare across runs,
since other processes on a shared machine stretch wall time far more than CPU time. The prompt hook is
measured in a fresh session and in a long one (--long-prompts prompts already answered, each having
shown the recall limit's worth of memories, and its live state at its caps, as a long session's tool calls
leave it), whose cost must not grow with the session.

    .venv/bin/python -m scripts.bench.hooks [--memories 50000] [--runs 40] [--long-prompts 80]
        [--only SessionStart,Prompt] [--compare /path/to/other/checkout] [--fastpath-off] [--json]
        [--filter-only]

It also times the privacy filter on each event's texts (every string in the event, and the rendered outline
for the cold Read, which the cache stores), in a fresh interpreter per sample as a hook pays it (the import
of re and the compiling of the patterns a text triggers included), for the filter before the secrets work
of issue 14 (loaded from git at FILTER_BEFORE) and the current one, interleaved in the same run.

The rows' trust flags are decided as the worker's indexing leaves them (memory/store decide_flags), under this
checkout's rules mark (memory/base/fence.py rules_mark: the rule files' sizes and times). A --compare checkout
whose rule files differ only in their times re-marks the rows it shows, and both sides then read them again
at every fresh prompt: give its files this checkout's times (`touch -r`) when they are the same.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from memory.store.workspace import Workspace
from scripts.bench.common import (
    BARE,
    ROOT,
    Samples,
    Timed,
    arguments,
    interleaved,
    machine,
    machine_line,
    percentile,
    print_json,
    python,
    run_timed,
)
from scripts.bench.fill import populate


def events(project: Path) -> dict[str, tuple[str, dict]]:
    base = {"session_id": "bench-live", "transcript_path": "", "cwd": str(project), "permission_mode": "default"}
    app = str(project / "src" / "app.py")
    big = str(project / "src" / "big.py")
    huge = str(project / "src" / "huge.py")
    return {
        "SessionStart(startup)": ("session_start", {**base, "hook_event_name": "SessionStart", "source": "startup"}),
        "SessionStart(compact)": ("session_start", {**base, "hook_event_name": "SessionStart", "source": "compact"}),
        "UserPromptSubmit": ("user_prompt_submit", {**base, "hook_event_name": "UserPromptSubmit",
                                                    "prompt": PROMPT, "_mode": "fresh"}),
        "UserPromptSubmit (long session)": ("user_prompt_submit", {**base, "hook_event_name": "UserPromptSubmit",
                                                                   "session_id": LONG_SESSION, "prompt": PROMPT}),
        "PreToolUse(Edit, recall at the point of action)": (
            "pre_tool_use", {**base, "hook_event_name": "PreToolUse", "tool_name": "Edit", "_mode": "edit",
                             "tool_input": {"file_path": app, "old_string": "x = 1", "new_string": "x = 2"}}),
        "PreToolUse(Bash, names a file with memories)": (
            "pre_tool_use", {**base, "hook_event_name": "PreToolUse", "tool_name": "Bash", "_mode": "command",
                             "tool_input": {"command": "python -m pytest -q src/app.py -k render && git diff"}}),
        "PreToolUse(Bash, names no file)": (
            "pre_tool_use", {**base, "hook_event_name": "PreToolUse", "tool_name": "Bash",
                             "tool_input": {"command": "git status --short && npm run build -- --watch=false"}}),
        "PreToolUse(Read)": ("pre_tool_use", {**base, "hook_event_name": "PreToolUse", "tool_name": "Read",
                                              "tool_input": {"file_path": app}, "tool_use_id": "t1"}),
        "PreToolUse(Read, 315 KB, outline cold)": ("pre_tool_use", _pre_read_event(base, huge, "pre-cold")),
        "PreToolUse(Read, 315 KB, outline cached)": ("pre_tool_use", _pre_read_event(base, huge, "pre-cached")),
        "PostToolUse(Read)": ("post_tool_use", {**base, "hook_event_name": "PostToolUse", "tool_name": "Read",
                                                "tool_input": {"file_path": app}, "tool_response": {
                                                    "type": "text", "file": {"filePath": app,
                                                                             "content": "x = 1\n" * 400}}}),
        "PostToolUse(Read, outline cold)": ("post_tool_use", _read_event(base, big, "cold")),
        "PostToolUse(Read, outline cached)": ("post_tool_use", _read_event(base, big, "cached")),
        "PostToolUse(Read, file_unchanged)": ("post_tool_use", {
            **_read_event(base, big, "unchanged"), "session_id": UNCHANGED_SESSION,
            "tool_response": {"type": "file_unchanged", "file": {"filePath": big}}}),
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


BIG_SOURCE = ROOT / "memory" / "cli" / "memories.py"  # a large module of this repository (21 KB)
PROMPT = "Why does the parser raise an error when the encoding of the file is missing? fix the decoder"
LONG_SESSION = "bench-long"
UNCHANGED_SESSION = "bench-unchanged"  # big.py was outlined in it: a file_unchanged Read gets the file
HUGE_COPIES = 15  # huge.py: BIG_SOURCE this many times, ~315 KB, over the client's 256 KB cap


def seed_prompt_sessions(ws: Workspace, runs: int, tags: list[str]) -> None:
    """The sessions of the fresh-session prompt runs, as their SessionStart left them: a prompt of a
    session never seen would also carry the startup context (the first-prompt fallback)."""
    now = time.time()
    ws.db.execute("BEGIN IMMEDIATE")
    ws.db.executemany("INSERT INTO sessions (id, project, status, started_at) VALUES (?, ?, 'active', ?)",
                      [(f"bench-prompt{tag}-{run}", ws.project.key, now) for run in range(-1, runs) for tag in tags])
    ws.db.execute("COMMIT")


def seed_file_memories(ws: Workspace, path: str, n: int = 40) -> None:
    """Memories of past sessions about one file (changes, fixes, a decision), as an edit of it finds them."""
    from memory import store

    kinds = ["change", "change", "bugfix", "decision"]
    for i in range(n):
        store.save(ws.db, ws.project.key, store.NewMemory(
            title=f"Edited app.py, step {i}", content=f"x = {i} in app.py, for case {i}",
            type=kinds[i % 4], files=[path], session_id=f"bench-past-{i % 9}"), filter_low_value=False)


def decided(ws: Workspace) -> None:
    """The trust flags as the worker's indexing leaves them (memory/store decide_flags): a store whose
    memories the worker has indexed, as one of this size is (the benchmark runs with the worker off)."""
    from memory import store

    store.decide_flags(ws.db, ws.db.execute(
        "SELECT id, title, content, origin, author, flags, checked FROM memories").fetchall())


def seed_long_session(ws: Workspace, prompts: int, per_prompt: int = 5) -> None:
    """A session that has already had `prompts` prompts, each of which injected `per_prompt` memories (as
    the prompt hook logs them in access_log), starting with the memories this benchmark's prompt recalls,
    and whose live state is at its caps, as a long session's tool calls leave it (long_state)."""
    from memory.recall.search import Filters, keyword_search
    from memory.store import state as session_state

    ids = [h.id for h in keyword_search(ws.db, PROMPT, limit=prompts * per_prompt,
                                        filters=Filters(exclude_session=LONG_SESSION))]
    rest = [r[0] for r in ws.db.execute("SELECT id FROM memories ORDER BY random() LIMIT ?", (prompts * per_prompt,))]
    ids = list(dict.fromkeys(ids + rest))[: prompts * per_prompt]
    now = time.time()
    ws.db.execute("BEGIN IMMEDIATE")
    ws.db.execute("INSERT INTO sessions (id, project, status, started_at) VALUES (?, ?, 'active', ?)",
                  (LONG_SESSION, ws.project.key, now - 3600))
    ws.db.executemany("INSERT INTO access_log (memory_id, kind, session_id, query, at) VALUES (?, ?, ?, ?, ?)",
                      [(mid, "inject-prompt", LONG_SESSION, f"prompt {i // per_prompt}", now - 3600 + i)
                       for i, mid in enumerate(ids)])
    ws.db.execute("COMMIT")
    session_state.update(ws, LONG_SESSION, lambda s: long_state(s, str(ws.project.root)))


def long_state(state: dict, root: str) -> None:
    """Each list of a session's state at its cap (memory/store/state.py LIST_CAPS): hundreds of files read,
    outlined and edited, commands, errors, decisions, prompts, todos."""
    from memory.store.state import LIST_CAPS

    for key, cap in LIST_CAPS.items():
        if key == "outlined":
            state[key] = [f"main:{root}/src/pkg{i % 23}/module_{i}.py" for i in range(cap)]
        elif key == "injected_handoffs":
            continue
        elif key.startswith("files"):
            state[key] = [f"{root}/src/pkg{i % 23}/module_{i}.py" for i in range(cap)]
        else:
            state[key] = [f"{key[:-1]} {i}: pytest -q tests/test_module_{i}.py -k 'window and not slow' failed "
                          f"on the decoder of module_{i}" for i in range(cap)]
    state["todos"] = [{"content": f"Fix the decoder of module_{i}", "status": "pending"} for i in range(12)]
    state["task"] = PROMPT


def _read_event(base: dict, path: str, mode: str) -> dict:
    """A full Read of a large code file. Each run is a new session (a second full Read in one session
    passes through); `cold` also changes the file so the cached outline no longer matches."""
    return {**base, "hook_event_name": "PostToolUse", "tool_name": "Read", "tool_input": {"file_path": path},
            "tool_response": {"type": "text", "file": {"filePath": path, "content": "(body)", "numLines": 2000,
                                                       "startLine": 1, "totalLines": 2000}}, "_mode": mode}


def _pre_read_event(base: dict, path: str, mode: str) -> dict:
    """A whole Read of a file over the client's cap, as PreToolUse sees it; `pre-cold` changes the file each run."""
    return {**base, "hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": path},
            "tool_use_id": "t2", "_mode": mode}


def prepare(payload: dict, run: int, tag: str = "") -> bytes:
    """The event of one run; `tag` keeps the per-run sessions of a --compare checkout apart."""
    mode = payload.get("_mode")
    event = {k: v for k, v in payload.items() if k != "_mode"}
    if mode == "fresh":
        event["session_id"] = f"bench-prompt{tag}-{run}"
    elif mode == "edit":  # a new session each run: the note is given once per file per session
        event["session_id"] = f"bench-edit{tag}-{run}"
    elif mode == "command":  # the same, and a session of its own: an edit's note would have told it already
        event["session_id"] = f"bench-command{tag}-{run}"
    elif mode == "pre-cold":
        Path(event["tool_input"]["file_path"]).write_text(BIG_SOURCE.read_text() * HUGE_COPIES + f"\n# {run}{tag}\n")
    elif mode in ("pre-cached", "unchanged"):
        pass
    elif mode:
        event["session_id"] = f"bench-read-{mode}{tag}-{run}"
        if mode == "cold":
            path = Path(event["tool_input"]["file_path"])
            path.write_text(BIG_SOURCE.read_text() + f"\n# run {run}{tag}\n")
    return json.dumps(event).encode()


# The filter as it was before issue 14's secrets work (the commit before it on main).
FILTER_BEFORE = "5df5fbb2c8e9888b772d2bf35576dbbfe81f35b0"
# Events that carry secrets, for the filter's cost when its patterns run (not in the hook table).
SECRET_EVENTS = {
    "Bash with secrets": {"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {
        "command": "PGPASSWORD=s3cr3tPa55 psql -h db -U app -c 'select 1'"}, "tool_response": {
        "stdout": "export GITHUB_TOKEN=ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5" + "\nconnected\n" * 20,
        "stderr": ""}},
    "Prompt with a URL password": {"hook_event_name": "UserPromptSubmit",
                                   "prompt": "the db is postgres://app:p@ss/w0rd@db.internal:5432/shop, my "
                                             "password is Tr0ub4dor&3 - why does the migration hang?"},
}
_FILTER_PROBE = """
import json, sys, time, importlib.util
spec = importlib.util.spec_from_file_location("privacy_probe", sys.argv[1])
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
texts = json.loads(sys.stdin.buffer.read())
t, c = time.perf_counter(), time.process_time()
for text in texts:
    mod.clean(text)
sys.stdout.write(f"{(time.perf_counter() - t) * 1e6} {(time.process_time() - c) * 1e6}")
"""


def strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def filter_cost(evs: dict[str, tuple[str, dict]], runs: int, tmp: Path) -> list[dict]:
    """Microseconds the filter takes on each event's texts, before and after, one fresh process per sample."""
    before = tmp / "privacy_before.py"
    shown = subprocess.run(["git", "-C", str(ROOT), "show", f"{FILTER_BEFORE}:memory/privacy.py"],
                           capture_output=True, text=True)
    if shown.returncode != 0:
        return []  # not a git checkout: no baseline
    before.write_text(shown.stdout)
    after = ROOT / "memory" / "base" / "privacy.py"
    from parser import outline_source

    outline = outline_source(BIG_SOURCE.read_bytes(), str(BIG_SOURCE)).render()
    texts = {name: strings({k: v for k, v in payload.items() if k != "_mode"}) + (
        [outline] if payload.get("_mode") == "cold" else []) for name, (_entry, payload) in evs.items()}
    texts |= {name: strings(event) for name, event in SECRET_EVENTS.items()}
    py = python()
    samples: dict[str, dict[str, list[float]]] = {n: {"before": [], "after": [], "before_cpu": [], "after_cpu": []}
                                                  for n in texts}
    for _ in range(runs):
        for name, batch in texts.items():
            data = json.dumps(batch).encode()
            for label, module in (("before", before), ("after", after)):
                out = subprocess.run([py, "-S", "-c", _FILTER_PROBE, str(module)], input=data, capture_output=True)
                wall, cpu = (float(x) for x in (out.stdout or b"0 0").split())
                samples[name][label].append(wall)
                samples[name][f"{label}_cpu"].append(cpu)
    return [{"event": n, "chars": sum(map(len, texts[n])),
             "before_us_p50": round(statistics.median(v["before"]), 1),
             "after_us_p50": round(statistics.median(v["after"]), 1),
             "after_us_p95": round(percentile(v["after"], 0.95), 1),
             "before_cpu_us_p50": round(statistics.median(v["before_cpu"]), 1),
             "after_cpu_us_p50": round(statistics.median(v["after_cpu"]), 1)} for n, v in samples.items()]


def main() -> None:
    ap = arguments(__doc__)
    ap.add_argument("--memories", type=int, default=50_000)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--long-prompts", type=int, default=80, help="Prompts already answered in the long session.")
    ap.add_argument("--only", default="", help="Comma-separated substrings: measure only the events that match.")
    ap.add_argument("--compare", action="append", default=[], metavar="CHECKOUT",
                    help="Another checkout (e.g. a worktree of an older commit, with a .venv link) whose hooks are "
                         "measured in the same rounds, rows marked [its folder name].")
    ap.add_argument("--fastpath-off", action="store_true",
                    help="Also measure this checkout's hooks with MEMORY_FASTPATH=off in the same rounds, rows marked "
                         "[fast path off]: the cost of the plain standard library (memory/fastpath/).")
    ap.add_argument("--filter-only", action="store_true", help="Only the privacy filter's cost per event.")
    args = ap.parse_args()
    if args.filter_only:
        with tempfile.TemporaryDirectory(prefix="bench-filter-") as tmp:
            print_filter_cost(filter_cost(events(Path(tmp)), args.runs, Path(tmp)), args.json)
        return
    roots = [("", ROOT, {})] + [(f" [{Path(c).name}]", Path(c).resolve(), {}) for c in args.compare]
    if args.fastpath_off:
        roots.append((" [fast path off]", ROOT, {"MEMORY_FASTPATH": "off"}))

    bare_name = "bare interpreter (python -S -c pass)"
    with tempfile.TemporaryDirectory(prefix="bench-hooks-") as tmp:
        home, project = Path(tmp) / "data", Path(tmp) / "project"
        (project / "src").mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        (project / "src" / "app.py").write_text("x = 1\n" * 400)
        (project / "src" / "big.py").write_text(BIG_SOURCE.read_text())
        (project / "src" / "huge.py").write_text(BIG_SOURCE.read_text() * HUGE_COPIES)
        # Worker off, as the README's table says: a worker the hooks start would index the 50,000 memories
        # on the same cores and time itself, not the hooks.
        env = {**os.environ, "MEMORY_HOME": str(home), "MEMORY_WORKER": "off"}
        for name in ("CLAUDE_PLUGIN_DATA", "CLAUDE_PROJECT_DIR", "MEMORY_PROJECT_DIR"):
            env.pop(name, None)
        ws = Workspace.for_dir(str(project), home=str(home))
        t = time.perf_counter()
        populate(ws, args.memories)
        decided(ws)
        seed_long_session(ws, args.long_prompts)
        seed_file_memories(ws, str(project / "src" / "app.py"))
        seed_prompt_sessions(ws, args.runs, [tag for tag, _, _ in roots])
        fill_s = time.perf_counter() - t
        ws.close()

        # As scripts/setup leaves the plugin: byte-compiled (PYTHONDONTWRITEBYTECODE may be set here).
        for _, root, _ in roots:
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "memory"), str(root / "parser"),
                            str(root / "hooks")], check=False, capture_output=True)
        only = [o.strip().lower() for o in args.only.split(",") if o.strip()]
        evs = {k: v for k, v in events(project).items() if not only or any(o in k.lower() for o in only)}
        runs = [(f"{name}{tag}", str(root / "hooks" / "run"), entry, payload, tag, {**env, **extra})
                for name, (entry, payload) in evs.items() for tag, root, extra in roots]
        for _, launcher, entry, payload, tag, run_env in runs:  # warm-up: .pyc files, page cache
            if payload.get("_mode") == "unchanged":  # the outline the file_unchanged Read follows
                outlined = {**_read_event(payload, payload["tool_input"]["file_path"], ""), "_mode": None}
                run_timed([launcher, entry], prepare(outlined, -1, tag), run_env)
            run_timed([launcher, entry], prepare(payload, -1, tag), run_env)

        def hook(launcher: str, entry: str, payload: dict, tag: str, run_env: dict) -> Callable[[int], Timed]:
            # The event is prepared just before its run (a cold Read rewrites its file).
            return lambda run: run_timed([launcher, entry], prepare(payload, run, tag), run_env)

        py = python()
        samples = interleaved(args.runs, [(bare_name, lambda _: run_timed([py, *BARE], b"", env))]
                              + [(name, hook(*rest)) for name, *rest in runs])

    table = hook_table(samples, bare_name)
    info = machine()
    meta = {"memories": args.memories, "runs": args.runs, "long_session_prompts": args.long_prompts,
            "populate_seconds": round(fill_s, 1)}
    if args.json:
        print_json({"meta": meta, "results": table}, info)
        return
    print(f"hook latency, {args.memories} memories in the project db, {args.runs} runs per event "
          f"({machine_line(info)}, load at the end; db filled in {fill_s:.1f} s; long session: "
          f"{args.long_prompts} prompts seen)")
    print(f"{'event':<52} {'p50 ms':>7} {'p95 ms':>7} {'max ms':>7} {'p50/bare':>8} {'CPU p50':>8} {'CPU p95':>8} "
          f"{'CPU p95/bare':>12}")
    for r in table:
        print(f"{r['event']:<52} {r['p50_ms']:>7} {r['p95_ms']:>7} {r['max_ms']:>7} {r['p50_vs_bare']:>8} "
              f"{r['cpu_p50_ms']:>8} {r['cpu_p95_ms']:>8} {r['cpu_p95_vs_bare']:>12}")
    worst = max(table[1:], key=lambda r: r["p95_ms"])
    worst_cpu = max(table[1:], key=lambda r: r["cpu_p95_vs_bare"])
    print(f"worst hook p95: {worst['p95_ms']} ms (budget 100 ms); worst CPU p95: {worst_cpu['cpu_p95_vs_bare']}x "
          f"the bare interpreter ({worst_cpu['event']})")
    with tempfile.TemporaryDirectory(prefix="bench-filter-") as tmp:
        print_filter_cost(filter_cost(events(Path(tmp)), args.runs, Path(tmp)), False)


def hook_table(samples: dict[str, Samples], bare_name: str) -> list[dict]:
    """A row per event: wall and CPU percentiles, and their ratios to the bare interpreter's."""
    bare_wall, bare_cpu = statistics.median(samples[bare_name].wall), percentile(samples[bare_name].cpu, 0.95)
    return [{"event": k, "p50_ms": round(statistics.median(v.wall), 1), "p95_ms": round(percentile(v.wall, 0.95), 1),
             "max_ms": round(max(v.wall), 1), "p50_vs_bare": round(statistics.median(v.wall) / bare_wall, 2),
             "cpu_p50_ms": round(statistics.median(v.cpu), 1), "cpu_p95_ms": round(percentile(v.cpu, 0.95), 1),
             "cpu_p95_vs_bare": round(percentile(v.cpu, 0.95) / bare_cpu, 2)}
            for k, v in samples.items()]


def print_filter_cost(rows: list[dict], as_json: bool) -> None:
    if as_json:
        print_json({"filter": rows})
        return
    if not rows:
        print("privacy filter: no git baseline here, cost not measured")
        return
    print(f"\nprivacy filter per event, fresh process per sample (import of re and pattern compiles included; "
          f"before = {FILTER_BEFORE[:10]})")
    print(f"{'event':<40} {'chars':>7} {'before us':>10} {'after us':>10} {'after p95':>10} {'CPU before':>11} "
          f"{'CPU after':>10}")
    for r in rows:
        print(f"{r['event']:<40} {r['chars']:>7} {r['before_us_p50']:>10} {r['after_us_p50']:>10} "
              f"{r['after_us_p95']:>10} {r['before_cpu_us_p50']:>11} {r['after_cpu_us_p50']:>10}")


if __name__ == "__main__":
    main()
