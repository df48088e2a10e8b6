"""What migration m014 costs the process that opens an older store first (usually a hook), and what the
worker's conversion of its neighbour rows (memory/store/ctx_rows.py convert) costs afterwards.

A schema-13 store of --memories rows is built (memories_ctx with its text: a memory's title and content and
its neighbours' text, ~1.9 KB a row as at 10,000 memories of the hooks benchmark's prose; every row in the
ledger), copied once per round, and opened by `memory.store.db.connect` in a fresh interpreter: the
migration's CPU (time.process_time around the open) and wall time (`-S`: no site-packages, so that the
code is PYTHONPATH's and not the editable install's; the store needs only the standard library).
--checkout DIR runs the same open with another checkout's code (before and after a change, in the same
rounds). Then the conversion, in this process, on the migrated copy. The load average is printed.

    .venv/bin/python -m scripts.bench.ctx_migration [--memories 10000] [--rounds 3] [--checkout DIR]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

from scripts.bench.common import ROOT, python

OPEN = ("import sys, time; from memory.store.db import connect; t, c = time.perf_counter(), time.process_time(); "
        "db = connect(sys.argv[1]); print(time.perf_counter() - t, time.process_time() - c); db.close()")


def build(path: str, n: int) -> None:
    from memory.store.migrations import MIGRATIONS

    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(3000)] + "the pool cache retry deadline parser token socket schema".split()
    db = sqlite3.connect(path, isolation_level=None)
    for m in MIGRATIONS[:13]:
        m(db)
    db.execute("PRAGMA user_version=13")
    db.execute("BEGIN")
    for i in range(1, n + 1):
        title = " ".join(rng.choices(vocab, k=8))
        content = " ".join(rng.choices(vocab, k=45))
        ctx = " ".join(rng.choices(vocab, k=260))  # the neighbours' text
        db.execute("INSERT INTO memories_ctx (rowid, title, content, tags, ctx) VALUES (?, ?, ?, '', ?)",
                   (i, title, content, ctx))
        db.execute("INSERT INTO memory_index (memory_id, session_id, created_at, provider, text_hash, "
                   "indexed_at) VALUES (?, ?, ?, 'p', 'h', 0)", (i, f"s{i // 25}", float(i)))
    db.execute("COMMIT")
    db.close()


def opened(path: str, code: str) -> tuple[float, float]:
    env = {**os.environ, "PYTHONPATH": code}
    out = subprocess.run([python(), "-S", "-c", OPEN, path], env=env, capture_output=True, text=True, check=True,
                         cwd=os.path.dirname(path))  # not this checkout's folder, which -c puts first
    wall, cpu = out.stdout.split()
    return float(wall), float(cpu)


def converted(path: str) -> tuple[float, float, int]:
    from memory.store import ctx_rows
    from memory.store.db import connect

    db = connect(path)
    t, c = time.perf_counter(), time.process_time()
    done = ctx_rows.convert(db)
    out = time.perf_counter() - t, time.process_time() - c, done
    db.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--checkout", help="another checkout whose migration to time beside this one's")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="ctx-migration-")
    try:
        base = os.path.join(tmp, "base.db")
        build(base, args.memories)
        codes = {"this": str(ROOT), **({"checkout": os.path.abspath(args.checkout)} if args.checkout else {})}
        print(f"{args.memories} memories, {os.path.getsize(base) >> 20} MiB, load {os.getloadavg()[0]:.1f}")
        for r in range(args.rounds):
            for name, code in codes.items():  # interleaved: both see the same load
                copy = os.path.join(tmp, f"{name}-{r}.db")
                shutil.copyfile(base, copy)
                wall, cpu = opened(copy, code)
                line = f"round {r} {name:8} migration {wall * 1000:8.1f} ms wall {cpu * 1000:8.1f} ms CPU"
                if name == "this":
                    cw, cc, done = converted(copy)
                    line += f" | worker conversion of {done} rows {cw:.2f} s wall {cc:.2f} s CPU"
                print(line, f"(load {os.getloadavg()[0]:.1f})", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
