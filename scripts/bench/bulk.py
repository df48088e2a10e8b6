"""Bulk import: `memory save --jsonl` throughput, in memories per second, into the keyword index.

Each run is one real `bin/memory save --jsonl` process under `ulimit -n 256` into a fresh data dir: the
whole command (interpreter start, reading and checking every line, the privacy filter and trust flags per
memory, the rows, FTS5 and the vector jobs, the daily log) timed wall and CPU. The lines are chat turns as
LongMemEval's (scripts/bench/fill.py's prose of real words, 12-60 words, a title, a session every 20
lines, a date string), split over `--projects` projects. The worker is off: what it does later (embedding)
is not an import's cost. Sizes run interleaved, `--rounds` times each; the median is reported.

`--text longmemeval` imports the user turns of the LongMemEval development split instead (real chat, with
its punctuation, numbers and names). `--stages` runs the command in-process once per size with each stage
wrapped in a CPU timer: where the time goes (in one process: the second one of a pipelined import,
memory/store/bulk.py, is left out). `--split` runs it in-process as it is and gives the wall time and each
process's CPU time: what the wall time would be on an idle machine.

    .venv/bin/python -m scripts.bench.bulk [--sizes 10000,100000] [--rounds 3] [--projects 1]
        [--text prose|longmemeval] [--stages | --split] [--json]
"""

from __future__ import annotations

import gzip
import json
import os
import random
import sqlite3
import statistics
import subprocess
import tempfile
from pathlib import Path

from memory.base.project import identify
from memory.store import normalise
from scripts.bench.common import (
    ROOT,
    SHARED,
    arguments,
    interleaved,
    machine,
    machine_line,
    print_json,
    python,
    run_timed,
)
from scripts.bench.fill import corpus_words, prose

OPEN_FILES = 256


def lines(n: int, folders: list[str], seed: int = 11, text: str = "prose") -> bytes:
    """`text` prose: runs of scripts/bench/fill.py's words with a numbered title; longmemeval: the user turns
    of the LongMemEval development split, untitled (the first line becomes the title), each once, then again
    with "(again k) " in front once all were used."""
    out = []
    if text == "longmemeval":
        turns = longmemeval_turns()
        for i in range(n):
            content = (f"(again {i // len(turns)}) " if i >= len(turns) else "") + turns[i % len(turns)]
            out.append(json.dumps({"content": content, "session_id": f"s{i // 20}",
                                   "created_at": f"2023-05-{1 + i % 28:02d} {i % 24:02d}:00",
                                   "project": folders[i % len(folders)]}))
        return ("\n".join(out) + "\n").encode()
    rng = random.Random(seed)
    pick = prose(corpus_words())
    for i in range(n):
        words = pick(rng)
        out.append(json.dumps({
            "title": f"turn {i}: {' '.join(words[:6])}", "content": " ".join(words), "session_id": f"s{i // 20}",
            "created_at": f"2023-05-{1 + i % 28:02d} {i % 24:02d}:00", "project": folders[i % len(folders)]}))
    return ("\n".join(out) + "\n").encode()


def longmemeval_turns() -> list[str]:
    """The user turns of the LongMemEval development split, in file order, each first line once (a turn whose
    title, its first line, was seen already would update that memory, not add one)."""
    path = SHARED / "data" / "longmemeval" / "longmemeval_s_dev120.jsonl.gz"
    seen: dict[str, str] = {}
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            for session in json.loads(line)["haystack_sessions"]:
                for t in session:
                    text = t["content"].strip()
                    if t["role"] == "user" and text:
                        # 100, not the title's 120 characters: "(again k) " in front must not make two the same
                        seen.setdefault(normalise(text.splitlines()[0][:100]), text)
    return list(seen.values())


def count(home: Path, folder: str) -> int:
    db = sqlite3.connect(home / "projects" / identify(folder).key / "memory.db")
    try:
        rows = db.execute("SELECT count(*) FROM memories").fetchone()[0]
        indexed = db.execute("SELECT count(*) FROM memories_fts_docsize").fetchone()[0]  # FTS5's own rows
        return int(min(rows, indexed))
    finally:
        db.close()


# The stages `--stages` times, as (label, module, attribute): each function is wrapped with a CPU timer.
STAGES = (("read and check the lines", "memory.cli.memories", "_parse_jsonl_line"),
          ("privacy filter", "memory.base.privacy", "Cleaner.__call__"),
          ("trust flags", "memory.base.fence", "Flagger.__call__"),
          ("a memory's row, all rules (the three above included)", "memory.store", "_row"),
          ("SQLite: dedup, rows, indexes, FTS5", "memory.store", "_save_batch"),
          ("vector jobs", "memory.store", "queue_vector_jobs"),
          ("daily log and size check", "memory.store.aftersave", "after_save_many"),
          ("save_many: the writes and what follows (its rows made before)", "memory.store", "save_many"))


def save_jsonl_here(path: str) -> None:
    """`memory save --jsonl < path` in this process, its output dropped."""
    import sys

    from memory.cli import main as cli

    with open(path, encoding="utf-8") as stdin, open(os.devnull, "w") as out:
        sys.stdin, sys.stdout, sys.argv = stdin, out, ["memory", "save", "--jsonl"]
        try:
            cli()
        except SystemExit as exc:
            if exc.code:
                raise
        finally:
            sys.stdin, sys.stdout = sys.__stdin__, sys.__stdout__


def stage_run(path: str) -> dict[str, float]:
    """`memory save --jsonl < path` in this process, each of STAGES timed (CPU seconds, wrappers included:
    ~1 us a call), and the whole command."""
    import importlib
    import time

    spent: dict[str, float] = {}

    def timed(label: str, f):  # noqa: ANN001, ANN202
        def g(*a, **k):  # noqa: ANN002, ANN003, ANN202
            start = time.process_time()
            try:
                return f(*a, **k)
            finally:
                spent[label] = spent.get(label, 0.0) + time.process_time() - start
        return g

    for label, module, name in STAGES:
        owner = importlib.import_module(module)
        *outer, attr = name.split(".")
        for part in outer:
            owner = getattr(owner, part, None)
        if hasattr(owner, attr):  # an older tree (a before/after run) may lack a stage
            setattr(owner, attr, timed(label, getattr(owner, attr)))
    try:
        from memory.store import bulk

        bulk.pipelined = lambda total: False  # one process: every stage's CPU time is seen here
    except ImportError:  # an older tree (a before/after run): one process anyway
        pass

    start = time.process_time()
    save_jsonl_here(path)
    spent["whole command (after imports)"] = time.process_time() - start
    return spent


def split_run(path: str) -> dict[str, float]:
    """`memory save --jsonl < path` in this process: wall seconds, and the CPU seconds of this process (the
    writes) and of its forked child (the rules, memory/store/bulk.py). On an idle machine with two cores
    the wall time is about the larger of the two, plus the time to the first rows."""
    import resource
    import time

    before, wall, cpu = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter(), time.process_time()
    save_jsonl_here(path)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    child = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return {"wall": time.perf_counter() - wall, "writes (this process)": time.process_time() - cpu,
            "rules (the child)": child}


def stages(sizes: list[int], folders: list[str], tmp: str, text: str, run: str = "stage_run") -> None:
    for n in sizes:
        path = Path(tmp) / f"stages-{n}.jsonl"
        path.write_bytes(lines(n, folders, text=text))
        env = {**os.environ, "MEMORY_HOME": str(Path(tmp) / f"stages-home-{n}"), "MEMORY_WORKER": "off",
               "MEMORY_PROJECT_DIR": folders[0], "PYTHONPATH": str(ROOT)}
        code = f"import json; from scripts.bench.bulk import {run}; print(json.dumps({run}({str(path)!r})))"
        out = subprocess.run([python(), "-c", code], env=env, cwd=ROOT, capture_output=True, text=True)
        if out.returncode:
            raise SystemExit(out.stderr[-2000:])
        spent = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{n} lines ({text}): us a line" + ("" if run == "split_run" else " (CPU)"))
        for label, seconds in spent.items():
            print(f"  {label:<55} {seconds / n * 1e6:7.1f}")


def main() -> None:
    ap = arguments(__doc__)
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--projects", type=int, default=1)
    ap.add_argument("--text", choices=("prose", "longmemeval"), default="prose")
    ap.add_argument("--stages", action="store_true", help="time each stage in one process instead (CPU)")
    ap.add_argument("--split", action="store_true", help="wall, and the CPU of each process of a pipelined import")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench-bulk-") as tmp:
        folders = []
        for p in range(args.projects):
            folder = Path(tmp) / f"proj{p}"
            subprocess.run(["git", "init", "-q", str(folder)], check=True)
            folders.append(str(folder))
        if args.stages or args.split:
            print(machine_line())
            stages(sizes, folders, tmp, args.text, "split_run" if args.split else "stage_run")
            return
        inputs = {n: lines(n, folders, text=args.text) for n in sizes}

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
        results[str(n)] = {"lines": n, "text": args.text, "projects": args.projects, "rounds": args.rounds,
                           "wall_s": round(wall, 2),
                           "cpu_s": round(cpu, 2), "memories_per_s": round(n / wall),
                           "memories_per_cpu_s": round(n / cpu)}
    info = machine()
    if args.json:
        print_json({"bulk_save": results}, info)
        return
    print(machine_line(info))
    for r in results.values():
        print(f"{r['lines']:>7} lines ({r['text']}), {r['projects']} project(s): {r['memories_per_s']:>6}/s wall "
              f"({r['wall_s']} s), {r['memories_per_cpu_s']:>6}/CPU-s ({r['cpu_s']} s), median of {r['rounds']}")


if __name__ == "__main__":
    main()
