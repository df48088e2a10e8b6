"""What every benchmark shares: the machine it ran on, timed processes (wall and CPU), interleaved rounds,
percentiles and the JSON it prints.

CPU time sits beside wall time everywhere: on a shared machine other processes stretch wall time far more
than the CPU time of the process measured, so CPU is the figure to compare across runs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("MEMORY_SHARED_DIR", ROOT.parent / "shared"))  # evaluation data, never shipped
BARE = ("-S", "-c", "pass")  # a bare interpreter start: the floor every hook pays


def python() -> str:
    """The plugin's interpreter (.venv, as hooks/run picks it), else this one."""
    venv = ROOT / ".venv" / "bin" / "python"
    return str(venv if venv.exists() else Path(sys.executable))


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict[str, Any]:
    """Where and when a run happened; its load average is read now (call it at the end of a run)."""
    return {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cpu": cpu_model(),
            "cores": os.cpu_count(), "load": [round(x, 2) for x in os.getloadavg()],
            "python": platform.python_version(), "platform": f"{sys.platform} {platform.machine()}"}


def machine_line(info: Mapping[str, Any] | None = None) -> str:
    m = info or machine()
    return (f"{m['date']}, {m['cpu']}, {m['cores']} cores, load {' '.join(str(x) for x in m['load'])}, "
            f"Python {m['python']}")


def print_json(results: Any, info: Mapping[str, Any] | None = None) -> None:
    """The run's results with the machine beside them: a dict gains a "machine" key, anything else is
    wrapped as {"machine": ..., "results": ...}."""
    m = dict(info or machine())
    out = {"machine": m, **results} if isinstance(results, dict) else {"machine": m, "results": results}
    print(json.dumps(out, indent=2))


def arguments(doc: str | None) -> argparse.ArgumentParser:
    """A bench script's command line: its module docstring as the help, kept as written (its usage lines),
    and --json (print_json's output instead of the table)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true", help="The results as JSON, with the machine beside them.")
    return ap


def percentile(values: Sequence[float], q: float) -> float:
    """The q-quantile (0..1) by nearest rank; values need not be sorted; NaN when there are none."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def summary(values: Sequence[float], digits: int = 2) -> dict[str, float]:
    return {"p50": round(statistics.median(values), digits), "p95": round(percentile(values, 0.95), digits),
            "p99": round(percentile(values, 0.99), digits), "n": len(values)}


@dataclass
class Timed:
    wall_ms: float
    cpu_ms: float  # user + system of the process (and its children), from the kernel's accounting
    stdout: bytes = b""


def run_timed(argv: Sequence[str], data: bytes = b"", env: Mapping[str, str] | None = None, *,
              check: bool = True) -> Timed:
    """One process fed `data` on stdin. CPU is the change in RUSAGE_CHILDREN across it (hooks/run's sh execs
    the interpreter, so a hook is one process); call it from one thread at a time. A failure (non-zero exit)
    ends the benchmark unless `check` is off."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(list(argv), input=data, capture_output=True, env=None if env is None else dict(env))
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if check and proc.returncode != 0:
        raise SystemExit(f"{list(argv)} exited {proc.returncode}: {proc.stderr.decode(errors='replace')[:500]}")
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return Timed(wall, cpu, proc.stdout)


@dataclass
class Samples:
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    def add(self, t: Timed) -> None:
        self.wall.append(t.wall_ms)
        self.cpu.append(t.cpu_ms)


def interleaved(rounds: int, cases: Iterable[tuple[str, Callable[[int], Timed]]], *,
                alternate: bool = False) -> dict[str, Samples]:
    """Every case once per round, so noise on the machine (another process, a cache) hits all cases alike
    rather than the one that happened to run during it. A case is called with the round's number;
    `alternate` runs the cases in reverse order on odd rounds (for A/B pairs, where going second may help)."""
    order = list(cases)
    out = {name: Samples() for name, _ in order}
    for r in range(rounds):
        for name, case in (order if not alternate or r % 2 == 0 else order[::-1]):
            out[name].add(case(r))
    return out


@contextmanager
def field_weights(weights: str) -> Iterator[None]:
    """Keyword mode with other bm25() weights of title, content and tags (search.KEYWORD_WEIGHTS, read at
    each search): "1,1,1" for FTS5's own, "0,1,0" for the content alone."""
    with keyword_variant(f"weights={weights}"):
        yield


@contextmanager
def keyword_variant(spec: str) -> Iterator[None]:
    """Keyword mode with some of its rules over plain FTS5 BM25 changed, '+' between them:
    "weights=T,C,G" (bm25() weights of title, content and tags), "importance=off" (ranked by the match alone,
    no importance boost), "query=words" (every word of the question OR-ed, stop words and short numbers
    included, as plain BM25 asks), "fusion=off" (keyword mode's list alone, not fused with plain BM25's),
    "fusion=rrf" or "fusion=sum" (search.fused). Read at each search, so a variant ranks the same store at the
    same moment."""
    from memory.recall import search

    kept = search.KEYWORD_WEIGHTS, search.relevance, search.fts_phrases, search.KEYWORD_FUSION
    try:
        for part in filter(None, spec.split("+")):
            key, _, value = part.strip().partition("=")
            if key == "weights":
                search.KEYWORD_WEIGHTS = ", ".join(str(float(w)) for w in value.split(","))
            elif (key, value) == ("importance", "off"):
                search.relevance = lambda match, importance: match
            elif (key, value) == ("query", "words"):
                search.fts_phrases = lambda text: [f'"{w}"' for w in dict.fromkeys(search.words(text.lower()))]
            elif key == "fusion" and value in ("rrf", "sum", "off"):
                search.KEYWORD_FUSION = "" if value == "off" else value
            else:
                raise ValueError(f"keyword variant: {part!r} (weights=T,C,G, importance=off, query=words, "
                                 "fusion=off|rrf|sum)")
        yield
    finally:
        search.KEYWORD_WEIGHTS, search.relevance, search.fts_phrases, search.KEYWORD_FUSION = kept
