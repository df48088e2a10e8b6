"""Bulk import: `memory save --jsonl` throughput, in memories per second, into the keyword index.

Each run is one real `bin/memory save --jsonl` process under `ulimit -n 256` into a fresh data dir: the
whole command (interpreter start, reading and checking every line, the privacy filter and trust flags per
memory, the rows, FTS5 and the vector jobs, the daily log) timed wall and CPU. The lines are chat turns as
LongMemEval's (scripts/bench/fill.py's prose of real words, 12-60 words, a title, a session every 20
lines, a date string), split over `--projects` projects. The worker is off: what it does later (embedding)
is not an import's cost. Sizes run interleaved, `--rounds` times each; the median is reported.

    .venv/bin/python -m scripts.bench.bulk [--sizes 10000,100000] [--rounds 3] [--projects 1] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import subprocess
import tempfile
from pathlib import Path

from memory.base.project import identify
from scripts.bench.common import ROOT, interleaved, machine, machine_line, print_json, run_timed
from scripts.bench.fill import corpus_words, prose

OPEN_FILES = 256


def lines(n: int, folders: list[str], seed: int = 11) -> bytes:
    rng = random.Random(seed)
    pick = prose(corpus_words())
    out = []
    for i in range(n):
        words = pick(rng)
        out.append(json.dumps({
            "title": f"turn {i}: {' '.join(words[:6])}", "content": " ".join(words), "session_id": f"s{i // 20}",
            "created_at": f"2023-05-{1 + i % 28:02d} {i % 24:02d}:00", "project": folders[i % len(folders)]}))
    return ("\n".join(out) + "\n").encode()


def count(home: Path, folder: str) -> int:
    db = sqlite3.connect(home / "projects" / identify(folder).key / "memory.db")
    try:
        return int(db.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'turn'").fetchone()[0])
    finally:
        db.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--projects", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench-bulk-") as tmp:
        folders = []
        for p in range(args.projects):
            folder = Path(tmp) / f"proj{p}"
            subprocess.run(["git", "init", "-q", str(folder)], check=True)
            folders.append(str(folder))
        inputs = {n: lines(n, folders) for n in sizes}

        def case(n: int):  # noqa: ANN202 - a Timed
            def run(r: int):  # noqa: ANN202
                home = Path(tmp) / f"home-{n}-{r}"
                env = {**os.environ, "MEMORY_HOME": str(home), "MEMORY_WORKER": "off",
                       "MEMORY_PROJECT_DIR": folders[0]}
                argv = ["sh", "-c", f'ulimit -n {OPEN_FILES} && exec "$0" "$@"', str(ROOT / "bin" / "memory"),
                        "save", "--jsonl"]
                timed = run_timed(argv, inputs[n], env)
                saved = sum(count(home, f) for f in folders)
                if saved != n:
                    raise SystemExit(f"{n} lines: {saved} memories searchable")
                return timed
            return run

        samples = interleaved(args.rounds, [(str(n), case(n)) for n in sizes])
    results = {}
    for n in sizes:
        s = samples[str(n)]
        wall, cpu = statistics.median(s.wall) / 1000, statistics.median(s.cpu) / 1000
        results[str(n)] = {"lines": n, "projects": args.projects, "rounds": args.rounds, "wall_s": round(wall, 2),
                           "cpu_s": round(cpu, 2), "memories_per_s": round(n / wall),
                           "memories_per_cpu_s": round(n / cpu)}
    info = machine()
    if args.json:
        print_json({"bulk_save": results}, info)
        return
    print(machine_line(info))
    for r in results.values():
        print(f"{r['lines']:>7} lines, {r['projects']} project(s): {r['memories_per_s']:>6}/s wall "
              f"({r['wall_s']} s), {r['memories_per_cpu_s']:>6}/CPU-s ({r['cpu_s']} s), median of {r['rounds']}")


if __name__ == "__main__":
    main()
