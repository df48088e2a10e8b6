#!/usr/bin/env python3
"""Benchmark the outliner on real code found on this machine.

For each language with source on disk (parser/corpus.py says where), over
files of 300+ lines picked deterministically, prints:

* token reduction of the rendered outline against the file (median, p10),
  both measured with parser.tokens.estimate_tokens;
* symbol recall against Universal Ctags (functions, methods, classes,
  structs, interfaces, enums it reports that the outline also lists);
* in-process outline time (grammar already loaded), median and p90;
* cold time: a fresh interpreter that imports the package, tree_sitter and
  one grammar, outlines and renders one file (a sample of files, run with
  subprocess), next to the bare interpreter start-up for reference.

Usage: python scripts/bench_outline.py [--files N] [--cold N] [--languages a,b]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)  # `parser` must be this repo's package

from parser import corpus, estimate_tokens, outline_source  # noqa: E402
from parser.oracle import CTAGS_LANGUAGE, ctags_available, ctags_tags, missing  # noqa: E402

COLD_SNIPPET = """
import sys
sys.path.insert(0, sys.argv[1])
from parser import outline_source
with open(sys.argv[2], 'rb') as fh:
    text = outline_source(fh.read(), sys.argv[2], sys.argv[3]).render()
"""


def pct(values: list[float], q: float) -> float:
    """The q-quantile (0..1) by nearest rank; values need not be sorted."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def run_process(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1000


def bench_language(language: str, files: list[str], use_ctags: bool) -> dict[str, float | int]:
    reductions, times = [], []
    tags_total = tags_missing = 0
    outline_source(b"", "warmup", language)  # load the grammar outside the timings
    for path in files:
        with open(path, "rb") as fh:
            source = fh.read()
        start = time.perf_counter()
        outline = outline_source(source, path, language)
        text = outline.render()
        times.append((time.perf_counter() - start) * 1000)
        original = estimate_tokens(source)
        reductions.append(1 - estimate_tokens(text) / max(original, 1))
        if use_ctags and language in CTAGS_LANGUAGE:
            tags = ctags_tags(path, language)
            tags_total += len(tags)
            tags_missing += len(missing(outline, tags))
    return {
        "files": len(files),
        "red_median": statistics.median(reductions),
        "red_p10": pct(reductions, 0.10),
        "tags": tags_total,
        "recall": 1 - tags_missing / tags_total if tags_total else float("nan"),
        "ms_median": statistics.median(times),
        "ms_p90": pct(times, 0.90),
    }


def bench_cold(samples: list[tuple[str, str]]) -> tuple[float, dict[str, list[float]]]:
    bare = statistics.median(run_process([sys.executable, "-c", "pass"]) for _ in range(5))
    by_language: dict[str, list[float]] = {}
    for language, path in samples:
        ms = run_process([sys.executable, "-c", COLD_SNIPPET, REPO, path, language])
        by_language.setdefault(language, []).append(ms)
    return bare, by_language


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=60, help="files per language (default 60)")
    ap.add_argument("--cold", type=int, default=21, help="files timed in fresh processes (default 21)")
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

    header = (f"{'language':<11}{'files':>6}{'red.med':>9}{'red.p10':>9}{'tags':>7}{'recall':>9}"
              f"{'ms med':>8}{'ms p90':>8}")
    print(header)
    print("-" * len(header))
    all_red: list[float] = []
    total_files = 0
    for language, files in corpora.items():
        r = bench_language(language, files, use_ctags)
        total_files += int(r["files"])
        all_red.append(float(r["red_median"]))
        print(f"{language:<11}{r['files']:>6}{r['red_median']:>9.1%}{r['red_p10']:>9.1%}{r['tags']:>7}"
              f"{r['recall']:>9.2%}{r['ms_median']:>8.1f}{r['ms_p90']:>8.1f}")
    print(f"{total_files} files in {len(corpora)} languages")

    # Cold runs: spread the sample over the languages, round robin.
    samples: list[tuple[str, str]] = []
    pools = {lang: files[:: max(1, len(files) // 4)] for lang, files in corpora.items()}
    while len(samples) < args.cold and any(pools.values()):
        for lang, pool in pools.items():
            if pool and len(samples) < args.cold:
                samples.append((lang, pool.pop(0)))
    if samples:
        bare, cold = bench_cold(samples)
        every = [ms for values in cold.values() for ms in values]
        print(f"\ncold process (import package + tree_sitter + 1 grammar, outline, render), "
              f"{len(every)} files: median {statistics.median(every):.0f} ms, "
              f"p90 {pct(every, 0.9):.0f} ms, max {max(every):.0f} ms; "
              f"bare interpreter start {bare:.0f} ms")
        print("  per language (median ms): " + ", ".join(
            f"{lang} {statistics.median(v):.0f}" for lang, v in cold.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
