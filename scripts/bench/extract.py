"""Benchmark `memory import --extract` on the real transcripts in shared/data/claude-code/transcripts.

Imports every transcript into a scratch data dir (a fresh git project), in-process, as the CLI does, and
prints: sessions, observations and learnings produced; time per session (capture and extraction
apart); the size of the input a model would get for each session (chars and estimated tokens, at the
MEMORY_EXTRACT_MAX_INPUT_TOKENS cap); the time of a second, idempotent import; and the peak resident
memory of the process (resource.getrusage).

The extractor is MEMORY_EXTRACTOR (default here: heuristic, so the figures need no key and no server).

--fake-anthropic runs the Claude provider instead, through the real `anthropic` client against a
loopback fake Messages API (tests/support/fake_llm.py) that answers every request with two learnings: the
figures then include the client's import and HTTP round trips, not a real model's latency.

Usage: .venv/bin/python -m scripts.bench.extract [--transcripts DIR] [--fake-anthropic] [--json]
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from scripts.bench.common import SHARED, arguments, machine, machine_line, print_json


def bench(transcripts: str) -> dict[str, object]:
    home = tempfile.mkdtemp(prefix="bench-extract-")
    project = os.path.join(home, "project")
    subprocess.run(["git", "init", "-q", project], check=True)
    os.environ["MEMORY_HOME"] = os.path.join(home, "data")
    os.environ["MEMORY_WORKER"] = "off"  # the vector jobs stay queued: this measures import and extraction

    from memory.base.config import env_int
    from memory.capture import transcript
    from memory.learn import importer, run, signals
    from memory.learn.prompt import build_input, estimate_tokens
    from memory.store.workspace import Workspace

    ws = Workspace.for_dir(project)
    files = importer.find_transcripts(transcripts)
    rows = []
    t0 = time.perf_counter()
    for path in files:
        began = time.perf_counter()
        res = importer.import_file(ws, path)
        captured = time.perf_counter() - began
        d = transcript.read(path)
        started = time.perf_counter()
        outcome = run.extract_session(ws, res.session_id, trigger="import", transcript_path=path, settle=False)
        extracted = time.perf_counter() - started
        cap = int(env_int("MEMORY_EXTRACT_MAX_INPUT_TOKENS") * 3.5)
        model_input = build_input(d, signals.analyse(d), None, ws.project.name, cap)
        rows.append({"file": os.path.basename(path), "bytes": os.path.getsize(path), "lines": d.lines,
                     "tool_calls": len(d.calls), "observations": res.observations,
                     "learnings": outcome.learnings, "provider": outcome.provider,
                     "capture_s": round(captured, 3), "extract_s": round(extracted, 3),
                     "model_input_chars": len(model_input), "model_input_tokens": estimate_tokens(model_input)})
    first_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    again = [importer.import_file(ws, p, extract=True) for p in files]
    second_s = time.perf_counter() - t1
    added = sum(r.observations + r.learnings for r in again if r.status != "skipped")
    ws.close()
    per = [r["capture_s"] + r["extract_s"] for r in rows]
    return {
        "extractor": os.environ.get("MEMORY_EXTRACTOR", "heuristic"),
        "sessions": len(rows),
        "observations": sum(r["observations"] for r in rows),
        "learnings": sum(r["learnings"] for r in rows),
        "total_s": round(first_s, 2),
        "per_session_mean_s": round(statistics.mean(per), 3) if per else 0,
        "per_session_max_s": round(max(per), 3) if per else 0,
        "second_import_s": round(second_s, 2),
        "second_import_added": added,
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "rows": rows,
    }


def main() -> int:
    ap = arguments(__doc__)
    ap.add_argument("--transcripts", default=str(SHARED / "data" / "claude-code" / "transcripts"))
    ap.add_argument("--fake-anthropic", action="store_true", help="Claude provider against a loopback fake API")
    args = ap.parse_args()
    os.environ.setdefault("MEMORY_EXTRACTOR", "heuristic")
    if args.fake_anthropic:
        from tests.support.fake_llm import FakeLLM, anthropic_tool_answer

        answer = {"learnings": [
            {"type": "fact", "title": f"Benchmark learning {i}", "content": f"Benchmark content {i} in `x{i}.py`.",
             "importance": 0.7, "files": [f"x{i}.py"]} for i in range(2)],
            "summary": {"asked": "a", "done": "d", "learned": "l", "next": ""}}
        with FakeLLM([anthropic_tool_answer(answer)]) as fake:
            os.environ.update(MEMORY_EXTRACTOR="anthropic", ANTHROPIC_API_KEY="sk-bench",
                              ANTHROPIC_BASE_URL=fake.url, MEMORY_DAILY_TOKEN_BUDGET="100000000")
            data = bench(args.transcripts)
    else:
        data = bench(args.transcripts)
    info = machine()
    if args.json:
        print_json(data, info)
        return 0
    print(f"{machine_line(info)}  extractor: {data['extractor']}")
    print(f"{'transcript':<44} {'KiB':>6} {'calls':>5} {'obs':>4} {'learn':>5} {'capture':>8} {'extract':>8} "
          f"{'model input':>12}")
    for r in data["rows"]:  # type: ignore[union-attr]
        print(f"{r['file'][:44]:<44} {r['bytes'] / 1024:>6.0f} {r['tool_calls']:>5} {r['observations']:>4} "
              f"{r['learnings']:>5} {r['capture_s']:>7.3f}s {r['extract_s']:>7.3f}s "
              f"{r['model_input_tokens']:>6} tok")
    print(f"sessions {data['sessions']}, observations {data['observations']}, learnings {data['learnings']}; "
          f"{data['total_s']} s in all, {data['per_session_mean_s']} s per session (max {data['per_session_max_s']} s)")
    print(f"second import: {data['second_import_s']} s, {data['second_import_added']} added; "
          f"peak RSS {data['peak_rss_mib']} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
