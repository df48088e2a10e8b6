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
* names visible: of every name ctags reports (its default kinds, less
  references, `<lambda>` and other anonymous rows, locals (a Kotlin `init` block's and getter's too) and data
  members, include guards, macro calls it takes for functions or enumerators, attribute macros after a
  class or struct body it takes for variables (`} _GLIBCXX11_DEPRECATED;`: a `variable` in ALL_CAPS on a
  `} NAME;` or `} NAME(...);` line), and the keys
  of JavaScript/TypeScript object literals inside another's: data, where the
  outline lists a file's object's own keys: tests/support/ctags_oracle.py
  ctags_names), the share that appears as a word in the text the model
  receives (a file passed through whole shows every name). Recall counts
  symbols extracted; this counts what survives rendering (grouped rows,
  cut signatures);
* files with parse errors, and the names lost after an error: ctags names defined after a file's first
  broken line (and not on a broken line) that the model does not see;
* in-process outline time (grammar already loaded), median and p90;
* the Read hook itself, spawned as Claude Code spawns it (hooks/run
  post_tool_use, a Read event on stdin) on a copy of sample files in a
  scratch project: cold (a file it has not seen: parse, cache write) and
  cached (the same file, another session), against a bare interpreter start
  (`python -S -c pass`) started just before each hook run. Wall time and
  CPU time (user+sys of the hook process: steadier on a shared machine); the
  CPU ratio of the medians with a 95% bootstrap interval.

With ``--corpus DIR`` the files are DIR's code files of ``--min-lines``+ lines (any language the outliner
knows, by extension), up to ``--files`` per language, instead of the machine's.

Usage: .venv/bin/python -m scripts.bench.outline [--corpus DIR] [--min-lines N] [--files N] [--hook-files N]
       [--rounds N] [--languages a,b] [--against OTHER_CHECKOUT]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

from parser import estimate_tokens, language_for_path, outline_source
from parser.languages import refine_language
from parser.render import read_text
from scripts.bench.common import BARE, ROOT, machine_line, percentile, print_json, python, run_timed
from tests.support import outline_corpus as corpus
from tests.support.ctags_oracle import CTAGS_LANGUAGE, ctags_available, ctags_names, ctags_tags, missing, visible


def bench_language(language: str, files: list[str], use_ctags: bool) -> dict[str, float | int]:
    reductions, bare, times = [], [], []
    passed_through = tags_total = tags_missing = names_total = names_seen = broken = lost = 0
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
        broken += bool(outline.error_lines)
        reductions.append(0.0 if shown is None else 1 - shown[1] / original)
        bare.append(1 - estimate_tokens(text) / original)
        if use_ctags and language in CTAGS_LANGUAGE:
            tags = ctags_tags(path, language)
            tags_total += len(tags)
            tags_missing += len(missing(outline, tags))
            names = ctags_names(path, language)
            names_total += len(names)
            seen = names if shown is None else visible(shown[0], names)
            names_seen += len(seen)
            lost += len(lost_after_error(outline, names, seen))
    return {
        "files": len(files),
        "red_median": statistics.median(reductions),
        "red_p10": percentile(reductions, 0.10),
        "bare_median": statistics.median(bare),
        "passed": passed_through,
        "tags": tags_total,
        "recall": 1 - tags_missing / tags_total if tags_total else float("nan"),
        "names": names_total,
        "visible": names_seen / names_total if names_total else float("nan"),
        "broken": broken,
        "lost": lost,
        "ms_median": statistics.median(times),
        "ms_p90": percentile(times, 0.90),
    }


def lost_after_error(outline: Any, names: list, seen: list) -> list:
    """The names (ctags') defined after a file's first broken line, on a line that is not broken, that the model
    does not see: what a parse error lost beyond its own lines."""
    if not outline.error_lines:
        return []
    first = outline.error_lines[0][0]
    bad = {row for a, b in outline.error_lines for row in range(a, b + 1)}
    shown = {id(tag) for tag in seen}
    return [tag for tag in names if tag.line > first and tag.line not in bad and id(tag) not in shown]


def corpus_files(root: str, min_lines: int, limit: int) -> dict[str, list[str]]:
    """Per language, up to `limit` code files of `min_lines`+ lines under `root`, sampled evenly by path."""
    found: dict[str, list[str]] = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            path = os.path.join(folder, name)
            guess = language_for_path(path)
            if guess is None or not os.path.isfile(path):
                continue
            with open(path, "rb") as fh:
                data = fh.read()
            language = refine_language(guess, path, data)  # as the hook: a C++ `.h` is C++, Objective-C none
            if language is not None and data.count(b"\n") >= min_lines:
                found.setdefault(language, []).append(path)
    return {lang: paths if len(paths) <= limit else [paths[int(i * len(paths) / limit)] for i in range(limit)]
            for lang, paths in sorted(found.items())}


def _read_event(project: str, path: str, session: str) -> bytes:
    lines = sum(1 for _ in open(path, "rb"))
    return json.dumps({
        "session_id": session, "transcript_path": "", "cwd": project, "permission_mode": "default",
        "hook_event_name": "PostToolUse", "tool_name": "Read", "tool_input": {"file_path": path},
        "tool_response": {"type": "text", "file": {"filePath": path, "content": "(body)", "numLines": lines,
                                                   "startLine": 1, "totalLines": lines}},
    }).encode()


def bench_hook(samples: dict[str, list[str]], rounds: int,
               against: str | None = None) -> dict[str, dict[str, list[float]]]:
    """Per language: wall and CPU ms of cold and cached Read hooks; "bare" holds the interpreter start. With
    `against` (another checkout), its hook is timed on the same files in the same rounds, first or second in
    turn, under "<language> (against)" (its own data dir, so neither reads the other's cache)."""
    py = python()
    roots = [("", str(ROOT))] + ([(" (against)", os.path.abspath(against))] if against else [])
    # As scripts/setup leaves the plugin: byte-compiled (PYTHONDONTWRITEBYTECODE may be set here).
    for _, root in roots:
        subprocess.run([py, "-m", "compileall", "-q", *(os.path.join(root, d) for d in ("memory", "parser", "hooks"))],
                       check=False, capture_output=True)
    results: dict[str, dict[str, list[float]]] = {"bare": {"wall": [], "cpu": []}}
    with tempfile.TemporaryDirectory(prefix="bench-outline-") as tmp:
        project = os.path.join(tmp, "project")
        os.makedirs(project)
        subprocess.run(["git", "init", "-q", project], check=True)
        envs = []
        for k, _ in enumerate(roots):
            env = {**os.environ, "MEMORY_HOME": os.path.join(tmp, f"data{k}"), "MEMORY_WORKER": "off"}
            for name in ("CLAUDE_PLUGIN_DATA", "CLAUDE_PROJECT_DIR", "MEMORY_PROJECT_DIR", "PYTHONPATH"):
                env.pop(name, None)
            envs.append(env)
        warm = os.path.join(project, "warm.py")
        with open(warm, "w") as fh:
            fh.write("x = 1\n" * 300)
        for (_, root), env in zip(roots, envs, strict=True):  # db created, .pyc read
            run_timed([os.path.join(root, "hooks", "run"), "post_tool_use"], _read_event(project, warm, "warm"), env)
        for r in range(rounds):
            for language, files in samples.items():
                for i, src in enumerate(files):
                    order = list(zip(roots, envs, strict=True))
                    for (label, root), env in order if (r + i) % 2 == 0 else order[::-1]:
                        # A new path is a cache miss; the same path in another session is a hit.
                        path = os.path.join(project, language, f"r{r}_{i}_{len(label)}_{os.path.basename(src)}")
                        os.makedirs(os.path.dirname(path), exist_ok=True)
                        shutil.copyfile(src, path)
                        got = results.setdefault(language + label,
                                                 {k: [] for k in ("cold", "cold_cpu", "hit", "hit_cpu")})
                        for mode in ("cold", "hit"):
                            # A bare start beside every hook run: the ratio's denominator gets as many samples as
                            # its numerator, taken under the same load (one per round moved it 7.8-11.6 ms).
                            bare = run_timed([py, *BARE], b"", env)
                            results["bare"]["wall"].append(bare.wall_ms)
                            results["bare"]["cpu"].append(bare.cpu_ms)
                            t = run_timed([os.path.join(root, "hooks", "run"), "post_tool_use"],
                                          _read_event(project, path, f"{mode}-{r}-{i}-{language}{label}"), env)
                            if b"updatedToolOutput" not in t.stdout:
                                break  # passed through (not worth an outline): not a Read hook timing
                            got[mode].append(t.wall_ms)
                            got[f"{mode}_cpu"].append(t.cpu_ms)
    return results


def hook_rows(res: dict[str, dict[str, list[float]]]) -> dict[str, dict[str, float]]:
    """p50 and p95 of each series per language, of all languages together ("all") and of the bare start."""
    bare = res.pop("bare")
    every: dict[str, dict[str, list[float]]] = {}  # per checkout (the label after the language)
    rows = {}
    for language, got in res.items():
        if not got["cold"]:
            continue
        label = language[language.find(" "):] if " " in language else ""
        for k, v in got.items():
            every.setdefault(label, {}).setdefault(k, []).extend(v)
        rows[language] = got
    rows.update((f"all{label}", got) for label, got in every.items())
    out = {name: {f"{k}_{q}": round(statistics.median(v) if q == "p50" else percentile(v, .95), 1)
                  for k, v in got.items() for q in ("p50", "p95")} for name, got in rows.items()}
    out["bare python"] = {f"{k}_{q}": round(statistics.median(v) if q == "p50" else percentile(v, .95), 1)
                          for k, v in bare.items() for q in ("p50", "p95")}
    for name, got in rows.items():
        for k in ("cold", "hit"):
            out[name][f"{k}_ratio"] = round(statistics.median(got[f"{k}_cpu"]) / statistics.median(bare["cpu"]), 2)
            out[name][f"{k}_ratio_ci"] = ratio_ci(got[f"{k}_cpu"], bare["cpu"])
    return out


def ratio_ci(num: list[float], den: list[float], reps: int = 2000, seed: int = 17) -> list[float]:
    """95% bootstrap interval (seeded) of median(num) / median(den), each list resampled on its own."""
    rng = random.Random(seed)
    ratios = sorted(statistics.median(rng.choices(num, k=len(num))) / statistics.median(rng.choices(den, k=len(den)))
                    for _ in range(reps))
    return [round(ratios[int(0.025 * reps)], 2), round(ratios[int(0.975 * reps) - 1], 2)]


def _ratio(row: dict[str, Any], mode: str) -> str:
    lo, hi = row[f"{mode}_ratio_ci"]
    return f"{row[f'{mode}_ratio']:.2f}x ({lo:.2f}-{hi:.2f})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=60, help="files per language (default 60)")
    ap.add_argument("--hook-files", type=int, default=3, help="files per language timed through the hook")
    ap.add_argument("--rounds", type=int, default=7, help="rounds of hook timings (default 7)")
    ap.add_argument("--languages", default=None, help="comma-separated (default: every language found)")
    ap.add_argument("--corpus", default=None, help="a folder of code to outline instead of the machine's")
    ap.add_argument("--min-lines", type=int, default=corpus.MIN_LINES, help="smallest file outlined")
    ap.add_argument("--against", default=None,
                    help="another checkout (say main's) whose Read hook is timed in the same interleaved rounds")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    say = (lambda *_: None) if args.json else print

    use_ctags = ctags_available()
    if not use_ctags:
        say("note: Universal Ctags not found; recall not measured")
    wanted = args.languages.split(",") if args.languages else None
    corpora = {}
    if args.corpus:
        corpora = {lang: files for lang, files in corpus_files(args.corpus, args.min_lines, args.files).items()
                   if wanted is None or lang in wanted}
    else:
        for language in wanted or corpus.languages():
            files = corpus.find_files(language, args.files, args.min_lines)
            if files:
                corpora[language] = files
            else:
                say(f"note: no {language} source of {args.min_lines}+ lines here; skipped")

    header = (f"{'language':<11}{'files':>6}{'red.med':>9}{'red.p10':>9}{'no hdr':>8}{'whole':>6}{'tags':>7}"
              f"{'recall':>9}{'names':>7}{'visible':>9}{'broken':>7}{'lost':>6}{'ms med':>8}{'ms p90':>8}")
    say(header)
    say("-" * len(header))
    total_files = 0
    outlines = {}
    for language, files in corpora.items():
        r = outlines[language] = bench_language(language, files, use_ctags)
        total_files += int(r["files"])
        say(f"{language:<11}{r['files']:>6}{r['red_median']:>9.1%}{r['red_p10']:>9.1%}{r['bare_median']:>8.1%}"
            f"{r['passed']:>6}{r['tags']:>7}{r['recall']:>9.2%}{r['names']:>7}{r['visible']:>9.2%}"
            f"{r['broken']:>7}{r['lost']:>6}{r['ms_median']:>8.1f}{r['ms_p90']:>8.1f}")
    say(f"{total_files} files in {len(corpora)} languages (red.: header + outline as the hook returns it, "
        f"whole files count 0%; no hdr: the outline alone; whole: files the hook passes through; tags/recall: "
        f"ctags definitions found as symbols; names/visible: ctags names found as words in what the model reads; "
        f"broken: files with syntax errors; lost: ctags names after a file's first broken line, not on one, not "
        f"visible)")

    hooks = {}
    if args.rounds > 0 and args.hook_files > 0:
        samples = {lang: files[:: max(1, len(files) // args.hook_files)][: args.hook_files]
                   for lang, files in corpora.items()}
        hooks = hook_rows(bench_hook(samples, args.rounds, args.against))
    if args.json:
        print_json({"outlines": outlines, "read_hook_ms": hooks})
        return 0
    if not hooks:
        return 0
    print(f"\nRead hook (hooks/run post_tool_use), {args.rounds} rounds x {args.hook_files} files per language, "
          f"empty project db, {machine_line()}:")
    width = max(11, *(len(name) + 1 for name in hooks))
    print(f"{'':<{width}}{'cold p50':>9}{'p95':>7}{'cached p50':>11}{'p95':>7}  |  cpu ms: {'cold p50':>8}{'p95':>6}"
          f"{'cached p50':>11}{'p95':>6}  |  cpu p50 / bare (95% CI): cold, cached")
    for name, r in hooks.items():
        if name == "bare python":
            print(f"{name:<{width}}{r['wall_p50']:>9.1f}{r['wall_p95']:>7.1f}{'':>18}  |  {'':>8}{r['cpu_p50']:>8.1f}"
                  f"{r['cpu_p95']:>6.1f}")
        else:
            print(f"{name:<{width}}{r['cold_p50']:>9.1f}{r['cold_p95']:>7.1f}{r['hit_p50']:>11.1f}"
                  f"{r['hit_p95']:>7.1f}  |  {'':>8}{r['cold_cpu_p50']:>8.1f}{r['cold_cpu_p95']:>6.1f}"
                  f"{r['hit_cpu_p50']:>11.1f}{r['hit_cpu_p95']:>6.1f}  |  {_ratio(r, 'cold')}, {_ratio(r, 'hit')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
