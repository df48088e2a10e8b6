#!/usr/bin/env python3
"""Benchmark the outliner on real code found on this machine.

For each language with source on disk (tests/support/outline_corpus.py says where), over
files of 300+ lines picked deterministically, prints:

* token reduction of what a full Read returns (the hook's header plus the
  rendered outline, parser/render.py read_text) against the file, both
  measured with parser.tokens.estimate_tokens; a file the hook would pass
  through whole (no symbols, or an outline over half the file) counts as 0%;
  the reduction of the bare outline (no header) is shown for reference;
* symbol recall against Universal Ctags (functions, methods, classes,
  structs, interfaces, enums it reports that the outline also lists);
* in-process outline time (grammar already loaded), median and p90;
* the Read hook itself, spawned as Claude Code spawns it (hooks/run
  post_tool_use, a Read event on stdin) on a copy of sample files in a
  scratch project: cold (a file it has not seen: parse, cache write) and
  cached (the same file, another session), against a bare interpreter start
  (`python -S -c pass`) measured in the same interleaved rounds. Wall time
  and CPU time (user+sys of the hook process: steadier on a shared machine).

Usage: python scripts/bench_outline.py [--files N] [--hook-files N] [--rounds N] [--languages a,b]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)  # `parser` must be this repo's package

from parser import estimate_tokens, outline_source  # noqa: E402
from parser.render import read_text  # noqa: E402
from tests.support import outline_corpus as corpus  # noqa: E402
from tests.support.ctags_oracle import CTAGS_LANGUAGE, ctags_available, ctags_tags, missing  # noqa: E402


def pct(values: list[float], q: float) -> float:
    """The q-quantile (0..1) by nearest rank; values need not be sorted."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def bench_language(language: str, files: list[str], use_ctags: bool) -> dict[str, float | int]:
    reductions, bare, times = [], [], []
    passed_through = tags_total = tags_missing = 0
    outline_source(b"", "warmup", language)  # load the grammar outside the timings
    for path in files:
        with open(path, "rb") as fh:
            source = fh.read()
        start = time.perf_counter()
        outline = outline_source(source, path, language)
        text = outline.render()
        times.append((time.perf_counter() - start) * 1000)
        original = max(estimate_tokens(source), 1)
        shown = read_text(outline, original)
        passed_through += shown is None
        reductions.append(0.0 if shown is None else 1 - shown[1] / original)
        bare.append(1 - estimate_tokens(text) / original)
        if use_ctags and language in CTAGS_LANGUAGE:
            tags = ctags_tags(path, language)
            tags_total += len(tags)
            tags_missing += len(missing(outline, tags))
    return {
        "files": len(files),
        "red_median": statistics.median(reductions),
        "red_p10": pct(reductions, 0.10),
        "bare_median": statistics.median(bare),
        "passed": passed_through,
        "tags": tags_total,
        "recall": 1 - tags_missing / tags_total if tags_total else float("nan"),
        "ms_median": statistics.median(times),
        "ms_p90": pct(times, 0.90),
    }


def _timed(cmd: list[str], data: bytes, env: dict[str, str]) -> tuple[float, float, bytes]:
    """Wall ms, CPU ms (user+sys of the child) and stdout of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, input=data, capture_output=True, env=env, check=False)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000
    if proc.returncode != 0:
        raise SystemExit(f"{cmd} exited {proc.returncode}: {proc.stderr.decode()[:500]}")
    return wall, cpu, proc.stdout


def _read_event(project: str, path: str, session: str) -> bytes:
    lines = sum(1 for _ in open(path, "rb"))
    return json.dumps({
        "session_id": session, "transcript_path": "", "cwd": project, "permission_mode": "default",
        "hook_event_name": "PostToolUse", "tool_name": "Read", "tool_input": {"file_path": path},
        "tool_response": {"type": "text", "file": {"filePath": path, "content": "(body)", "numLines": lines,
                                                   "startLine": 1, "totalLines": lines}},
    }).encode()


def bench_hook(samples: dict[str, list[str]], rounds: int) -> dict[str, dict[str, list[float]]]:
    """Per language: wall and CPU ms of cold and cached Read hooks; "bare" holds the interpreter start."""
    venv_py = os.path.join(REPO, ".venv", "bin", "python")
    py = venv_py if os.path.exists(venv_py) else sys.executable
    launcher = os.path.join(REPO, "hooks", "run")
    # As scripts/setup leaves the plugin: byte-compiled (PYTHONDONTWRITEBYTECODE may be set here).
    subprocess.run([py, "-m", "compileall", "-q", *(os.path.join(REPO, d) for d in ("memory", "parser", "hooks"))],
                   check=False, capture_output=True)
    results: dict[str, dict[str, list[float]]] = {"bare": {"wall": [], "cpu": []}}
    with tempfile.TemporaryDirectory(prefix="bench-outline-") as tmp:
        project = os.path.join(tmp, "project")
        os.makedirs(project)
        subprocess.run(["git", "init", "-q", project], check=True)
        env = {**os.environ, "MEMORY_HOME": os.path.join(tmp, "data"), "MEMORY_WORKER": "off"}
        for name in ("CLAUDE_PLUGIN_DATA", "CLAUDE_PROJECT_DIR", "MEMORY_PROJECT_DIR"):
            env.pop(name, None)
        warm = os.path.join(project, "warm.py")
        with open(warm, "w") as fh:
            fh.write("x = 1\n" * 300)
        _timed([launcher, "post_tool_use"], _read_event(project, warm, "warm"), env)  # db created, .pyc read
        for r in range(rounds):
            wall, cpu, _ = _timed([py, "-S", "-c", "pass"], b"", env)
            results["bare"]["wall"].append(wall)
            results["bare"]["cpu"].append(cpu)
            for language, files in samples.items():
                for i, src in enumerate(files):
                    # A new path is a cache miss; the same path in another session is a hit.
                    path = os.path.join(project, language, f"r{r}_{i}_{os.path.basename(src)}")
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                    shutil.copyfile(src, path)
                    got = results.setdefault(language, {k: [] for k in ("cold", "cold_cpu", "hit", "hit_cpu")})
                    for mode in ("cold", "hit"):
                        wall, cpu, out = _timed([launcher, "post_tool_use"],
                                                _read_event(project, path, f"{mode}-{r}-{i}-{language}"), env)
                        if b"updatedToolOutput" not in out:
                            break  # passed through (not worth an outline): not a Read hook timing
                        got[mode].append(wall)
                        got[f"{mode}_cpu"].append(cpu)
    return results


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=60, help="files per language (default 60)")
    ap.add_argument("--hook-files", type=int, default=3, help="files per language timed through the hook")
    ap.add_argument("--rounds", type=int, default=7, help="rounds of hook timings (default 7)")
    ap.add_argument("--languages", default=",".join(corpus.languages()))
    args = ap.parse_args()

    use_ctags = ctags_available()
    if not use_ctags:
        print("note: Universal Ctags not found; recall not measured")
    corpora = {}
    for language in args.languages.split(","):
        files = corpus.find_files(language, args.files)
        if files:
            corpora[language] = files
        else:
            print(f"note: no {language} source of {corpus.MIN_LINES}+ lines here; skipped")

    header = (f"{'language':<11}{'files':>6}{'red.med':>9}{'red.p10':>9}{'no hdr':>8}{'whole':>6}{'tags':>7}"
              f"{'recall':>9}{'ms med':>8}{'ms p90':>8}")
    print(header)
    print("-" * len(header))
    total_files = 0
    for language, files in corpora.items():
        r = bench_language(language, files, use_ctags)
        total_files += int(r["files"])
        print(f"{language:<11}{r['files']:>6}{r['red_median']:>9.1%}{r['red_p10']:>9.1%}{r['bare_median']:>8.1%}"
              f"{r['passed']:>6}{r['tags']:>7}{r['recall']:>9.2%}{r['ms_median']:>8.1f}{r['ms_p90']:>8.1f}")
    print(f"{total_files} files in {len(corpora)} languages (red.: header + outline as the hook returns it, "
          f"whole files count 0%; no hdr: the outline alone; whole: files the hook passes through)")

    if args.rounds <= 0 or args.hook_files <= 0:
        return 0
    samples = {lang: files[:: max(1, len(files) // args.hook_files)][: args.hook_files]
               for lang, files in corpora.items()}
    res = bench_hook(samples, args.rounds)
    bare = res.pop("bare")
    print(f"\nRead hook (hooks/run post_tool_use), {args.rounds} rounds x {args.hook_files} files per language, "
          f"empty project db, load average {os.getloadavg()[0]:.1f}:")
    print(f"{'':<11}{'cold p50':>9}{'p95':>7}{'cached p50':>11}{'p95':>7}  |  cpu ms: {'cold p50':>8}{'p95':>6}"
          f"{'cached p50':>11}{'p95':>6}")
    every: dict[str, list[float]] = {k: [] for k in ("cold", "cold_cpu", "hit", "hit_cpu")}
    for language, got in res.items():
        if not got["cold"]:
            continue
        for k in every:
            every[k] += got[k]
        print(f"{language:<11}{statistics.median(got['cold']):>9.1f}{pct(got['cold'], .95):>7.1f}"
              f"{statistics.median(got['hit']):>11.1f}{pct(got['hit'], .95):>7.1f}  |  {'':>8}"
              f"{statistics.median(got['cold_cpu']):>8.1f}{pct(got['cold_cpu'], .95):>6.1f}"
              f"{statistics.median(got['hit_cpu']):>11.1f}{pct(got['hit_cpu'], .95):>6.1f}")
    print(f"{'all':<11}{statistics.median(every['cold']):>9.1f}{pct(every['cold'], .95):>7.1f}"
          f"{statistics.median(every['hit']):>11.1f}{pct(every['hit'], .95):>7.1f}  |  {'':>8}"
          f"{statistics.median(every['cold_cpu']):>8.1f}{pct(every['cold_cpu'], .95):>6.1f}"
          f"{statistics.median(every['hit_cpu']):>11.1f}{pct(every['hit_cpu'], .95):>6.1f}")
    print(f"{'bare python':<11}{statistics.median(bare['wall']):>9.1f}{pct(bare['wall'], .95):>7.1f}"
          f"{'':>18}  |  {'':>8}{statistics.median(bare['cpu']):>8.1f}{pct(bare['cpu'], .95):>6.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
