"""Privacy filter benchmark (memory/base/privacy.py), in process, CPU time (time.process_time):

* cost on ordinary text: `clean` over real code and docs from the repository histories in shared/data/git
  (the false-positive sample, tests/support/privacy_sample.py), CPU per MB, against the filter of another
  revision (`--baseline REV`, loaded from git into this process) in the same run, rounds interleaved;
* a fuzz run: random texts (letters, digits, separators, quotes and the filter's triggers mixed) and the
  adversarial texts of tests/test_privacy_linear.py (runs after each trigger, pieces repeated) at several
  sizes: CPU per KB, the worst text and its start, and how the cost grows with the size;
* the false positives: lines of the sample the filter changes.

    .venv/bin/python -m scripts.bench.privacy [--baseline REV] [--rounds 3] [--fuzz 300] [--json]
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from memory.base import privacy
from scripts.bench.common import ROOT, machine, machine_line, print_json


def baseline(rev: str) -> Callable[[str], str]:
    """`clean` of memory/base/privacy.py at a revision, loaded as its own module."""
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:memory/base/privacy.py"], capture_output=True,
                            text=True, check=True).stdout
    path = Path(tempfile.mkdtemp(prefix="bench-privacy-")) / "privacy_baseline.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("privacy_baseline", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.clean


def cpu(work: Callable[[str], object], texts: list[str]) -> float:
    start = time.process_time()
    for text in texts:
        work(text)
    return time.process_time() - start


def ordinary(texts: list[str], filters: dict[str, Callable[[str], str]], rounds: int) -> dict[str, dict]:
    mb = sum(len(t) for t in texts) / 1e6
    for clean in filters.values():
        cpu(clean, texts[:20])  # compile what the texts set off
    runs: dict[str, list[float]] = {name: [] for name in filters}
    for r in range(rounds):
        for name, clean in (list(filters.items()) if r % 2 == 0 else list(filters.items())[::-1]):
            runs[name].append(cpu(clean, texts))
    return {name: {"cpu_ms_per_mb": round(min(v) / mb * 1000, 1), "runs_s": [round(x, 3) for x in v]}
            for name, v in runs.items()}


def random_texts(n: int, size: int, rng: random.Random) -> list[str]:
    pieces = [*privacy._ALL_TRIGGERS, "private", "<private>", "=", ":", " ", "\n", "\\n", '"', "'", "://", "@",
              "-----BEGIN ", "PRIVATE KEY", "password is ", "machine ", "Bearer ", "-p", "--token "]
    alphabet = "abcXYZ019_-./+=:@ \t\n\"'\\"
    out = []
    for _ in range(n):
        parts: list[str] = []
        length = 0
        while length < size:
            piece = rng.choice(pieces) if rng.random() < 0.3 else "".join(
                rng.choice(alphabet) for _ in range(rng.randint(1, 40)))
            parts.append(piece)
            length += len(piece)
        out.append("".join(parts)[:size])
    return out


def adversarial_texts(size: int) -> list[str]:
    from tests.test_privacy_linear import adversarial

    triggers = list(privacy._ALL_TRIGGERS)[::5] + ["token", "password", "key", ""]
    return [t for trig in triggers for t in adversarial(trig, size)]


def fuzz(n: int, rng: random.Random) -> dict[str, dict]:
    out = {}
    for size in (1_000, 10_000):
        texts = random_texts(n, size, rng) + adversarial_texts(size)
        worst, which, total = 0.0, "", 0.0
        for text in texts:
            start = time.process_time()
            privacy.clean(text)
            spent = time.process_time() - start
            total += spent
            if spent > worst:
                worst, which = spent, text[:30]
        kb = sum(len(t) for t in texts) / 1000
        out[f"{size // 1000} KB"] = {"texts": len(texts), "cpu_ms_per_kb": round(total / kb * 1000, 3),
                                     "worst_ms": round(worst * 1000, 2), "worst_starts": which,
                                     "total_s": round(total, 2)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default="4e91f4e", help="a revision whose filter is measured beside this one")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--fuzz", type=int, default=300, help="random texts per size")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from tests.support.privacy_sample import changed_lines, files

    paths = files()
    texts = [p.read_text(errors="replace") for p in paths]
    results = {
        "ordinary": ordinary(texts, {"this": privacy.clean, args.baseline: baseline(args.baseline)}, args.rounds),
        "ordinary_mb": round(sum(len(t) for t in texts) / 1e6, 2),
        "fuzz": fuzz(args.fuzz, random.Random(25)),
    }
    total, changed = changed_lines(privacy.clean, paths)
    results["false_positives"] = {"files": len(paths), "lines": total, "changed": len(changed),
                                  "one_in": round(total / max(1, len(changed)))}
    info = machine()
    if args.json:
        print_json(results, info)
        return
    print(machine_line(info))
    print(f"ordinary text ({results['ordinary_mb']} MB, {len(paths)} files), CPU per MB, best of {args.rounds}:")
    for name, row in results["ordinary"].items():
        print(f"  {name:>10}: {row['cpu_ms_per_mb']} ms/MB  (runs {row['runs_s']} s)")
    print("fuzz (random and adversarial texts):")
    for size, row in results["fuzz"].items():
        print(f"  {size}: {row['texts']} texts, {row['cpu_ms_per_kb']} ms/KB, worst {row['worst_ms']} ms "
              f"({row['worst_starts']!r}...)")
    fp = results["false_positives"]
    print(f"false positives: {fp['changed']} of {fp['lines']} lines in {fp['files']} files (1 in {fp['one_in']})")


if __name__ == "__main__":
    main()
