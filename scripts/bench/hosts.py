"""Hook cost per host: each host's recorded events (tests/fixtures/hosts/) spawned as that host spawns them
(`hooks/run <entry> --host NAME`, one JSON event on stdin), beside Claude Code's own event of the same entry
and a bare interpreter start, rounds interleaved so machine noise hits all alike. CPU (user + system of the
hook process) p50/p95 and its ratio to the bare interpreter's p95 are the figures to compare.

    .venv/bin/python -m scripts.bench.hosts [--runs 20] [--only codex,claude] [--compare CHECKOUT] [--json]

--compare runs another checkout's hooks on the same events in the same rounds (its own data dir), so a
change's cost is read beside the code before it, whatever the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
from pathlib import Path

from scripts.bench.common import BARE, ROOT, interleaved, machine_line, percentile, print_json, python, run_timed

FIXTURES = ROOT / "tests" / "fixtures" / "hosts"
ENTRIES = ("session_start", "user_prompt_submit", "post_tool_use")


def _cases(project: Path, root: Path = ROOT) -> dict[str, tuple[list[str], bytes]]:
    """Per host and entry, the hook's argv and its stdin (the fixture's first event of that entry)."""
    launcher = str(root / "hooks" / "run")
    out: dict[str, tuple[list[str], bytes]] = {}
    for path in sorted(FIXTURES.glob("*.json")):
        text = path.read_text().replace("{cwd}", str(project)).replace("{file}", str(project / "app.py"))
        data = json.loads(text)
        for entry in ENTRIES:
            ev = next((e for e in data["events"] if e["entry"] == entry), None)
            if ev is not None:
                out[f"{data['host']} {entry}"] = ([launcher, entry, "--host", data["host"]],
                                                  json.dumps(ev["payload"]).encode())
    # Claude Code's own hook on the same events: Codex's payloads are in Claude Code's shape, so without
    # --host they are Claude Code's, and the difference is the adapter and the writer alone.
    for entry in ENTRIES:
        argv, data = out[f"codex {entry}"]
        out[f"claude {entry}"] = (argv[:2], data)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--only", default="", help="Comma-separated substrings: measure only the cases that match.")
    ap.add_argument("--compare", metavar="CHECKOUT", help="Also run this checkout's hooks, in the same rounds.")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    only = [o.strip() for o in args.only.split(",") if o.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "app"
        project.mkdir()
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        (project / "app.py").write_text("def greet(name):\n    return 'hi ' + name\n")
        env = {**os.environ, "MEMORY_HOME": str(Path(tmp) / "data"), "MEMORY_WORKER": "off"}
        # PYTHONDONTWRITEBYTECODE (set in some shells) would compile every changed module in every hook: an
        # installed plugin's hooks write their .pyc once.
        for name in ("CLAUDE_PLUGIN_DATA", "CLAUDE_PROJECT_DIR", "MEMORY_PROJECT_DIR", "MEMORY_HOOK_HOST",
                     "PYTHONDONTWRITEBYTECODE"):
            env.pop(name, None)
        cases = {name: (case, env) for name, case in _cases(project).items()
                 if not only or any(o in name for o in only)}
        if args.compare:
            other = Path(args.compare).resolve()
            env2 = {**env, "MEMORY_HOME": str(Path(tmp) / "data-compare")}
            for name, (case, _) in list(cases.items()):
                argv = [str(other / "hooks" / "run"), *case[0][1:]]
                cases[f"{name} [{other.name}]"] = ((argv, case[1]), env2)
        for (argv, data), e in cases.values():  # warm: the project database made, the .pyc written
            run_timed(argv, data, e)
        py = python()
        runs = [("bare interpreter", lambda _: run_timed([py, *BARE], b"", env))]
        runs += [(name, (lambda a, d, en: lambda _: run_timed(a, d, en))(argv, data, e))
                 for name, ((argv, data), e) in sorted(cases.items())]
        samples = interleaved(args.runs, runs)
    bare95 = percentile(samples["bare interpreter"].cpu, 0.95)
    results = {name: {"cpu_p50_ms": round(percentile(s.cpu, 0.5), 1), "cpu_p95_ms": round(percentile(s.cpu, 0.95), 1),
                      "wall_p50_ms": round(percentile(s.wall, 0.5), 1),
                      "cpu_p95_x_bare": round(percentile(s.cpu, 0.95) / bare95, 2) if bare95 else None}
               for name, s in samples.items()}
    if args.json:
        print_json(results)
        return
    print(machine_line())
    print(f"{'case':44} {'cpu p50':>8} {'cpu p95':>8} {'wall p50':>9} {'p95/bare':>9}")
    for name, r in results.items():
        print(f"{name:44} {r['cpu_p50_ms']:8.1f} {r['cpu_p95_ms']:8.1f} {r['wall_p50_ms']:9.1f} "
              f"{r['cpu_p95_x_bare']:9.2f}")


if __name__ == "__main__":
    main()
