"""The web viewer's time to first paint, in the real browser (Debian's headless Chromium through Selenium):
the search page (the newest 50 memories) and a search answer (a query's page), at 10,000 and 100,000 memories.

First paint is the browser's own first-contentful-paint entry, counted from the navigation's start: the
request, the server's query and rendering, the transfer and the layout are all in it. The server is a real
`memory ui` process; the worker is off, so the default (hybrid) mode answers with BM25, as it does on a store
without a semantic index, and `mode=keyword` is timed beside it.

    .venv/bin/python -m scripts.bench.ui [--sizes 10000,100000] [--rounds 15] [--embedder hashing]

With --embedder the store is indexed first (as the worker indexes it) and a warm worker answers the
default mode's searches: hybrid, keyword and vectors fused.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from scripts.bench.common import ROOT, machine, percentile, print_json, python
from scripts.bench.fill import corpus_words, populate

PAINT = """const p = performance.getEntriesByName('first-contentful-paint')[0];
const n = performance.getEntriesByType('navigation')[0];
return p ? [p.startTime, n.responseStart, n.responseEnd] : null;"""


def _paint(driver: Any, url: str) -> list[float]:
    driver.get(url)
    deadline = time.monotonic() + 10
    while (got := driver.execute_script(PAINT)) is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert got is not None, f"no first paint for {url}"
    return [float(x) for x in got]


def _stats(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 1), "p90": round(percentile(values, 0.9), 1),
            "min": round(min(values), 1)}


def _cpu_ms(pid: int) -> float:
    """User + system CPU of a process so far (/proc/PID/stat fields 14 and 15, in clock ticks)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def _index(home: Path, key: str, embedder: str) -> float:
    """Embed and index every memory as the worker does (scripts/bench/search.py's way); returns seconds."""
    from memory.recall import embed
    from memory.worker import ProjectIndex

    started = time.perf_counter()
    p = ProjectIndex(str(home), key, embed.make(embedder))
    p.check_provider()
    ids = [r[0] for r in p.db.execute("SELECT id FROM memories ORDER BY session_id, created_at, id")]
    for start in range(0, len(ids), 256):
        p.index(ids[start:start + 256])
    p.vectors.maintain(force=True)
    p.db.execute("DELETE FROM queue")
    p.db.close()
    return time.perf_counter() - started


def run_size(n: int, rounds: int, queries: list[str], embedder: str | None) -> dict[str, Any]:
    """One store of n memories; with `embedder`, indexed and answered by a warm worker (hybrid)."""
    from memory.store.workspace import Workspace
    from scripts.bench.search import warm_worker
    from tests.support.helpers import make_git_project
    from tests.support.ui import chromium

    with tempfile.TemporaryDirectory(prefix="bench-ui-") as tmp:
        home, project = Path(tmp) / "data", make_git_project(Path(tmp) / "app")
        env = {**os.environ, "MEMORY_HOME": str(home), "PYTHONPATH": str(ROOT), "MEMORY_DAILY_LOG": "off",
               **({"MEMORY_EMBEDDER": embedder, "MEMORY_WORKER_IDLE_SECONDS": "600"} if embedder
                  else {"MEMORY_WORKER": "off"})}
        os.environ.update(env)
        ws = Workspace.for_dir(str(project))
        started = time.perf_counter()
        populate(ws, n)
        fill_s = time.perf_counter() - started
        out: dict[str, Any] = {"memories": n, "fill_s": round(fill_s, 1), "embedder": embedder}
        worker = None
        if embedder:
            out["index_s"] = round(_index(home, ws.project.key, embedder), 1)
            worker, _ = warm_worker(str(home), env, {"op": "search", "project": ws.project.key, "limit": 10,
                                                     "filters": {}, "query": queries[0]})
        ws.close()
        proc = subprocess.Popen([python(), "-m", "memory", "ui", "--no-browser", "-p", str(project)], cwd=ROOT,
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        driver = None
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().strip()
            base = url.split("/?")[0]
            driver = chromium()
            driver.get(url)
            _paint(driver, f"{base}/")  # warm: the first request opens the database
            urls = {"search page": lambda q: f"{base}/",
                    "answer (default mode)": lambda q: f"{base}/?{urlencode({'q': q})}",
                    "answer (keyword)": lambda q: f"{base}/?{urlencode({'q': q, 'mode': 'keyword'})}"}
            runs: dict[str, list[list[float]]] = {name: [] for name in urls}
            cpu: dict[str, float] = dict.fromkeys(urls, 0.0)
            for i in range(rounds):  # interleaved: the cases share the machine's moments alike
                for name, url in urls.items():
                    before = _cpu_ms(proc.pid)
                    runs[name].append(_paint(driver, url(queries[i % len(queries)])))
                    cpu[name] += _cpu_ms(proc.pid) - before  # the page and its stylesheet and script
            _paint(driver, urls["answer (default mode)"](queries[0]))
            out["default_mode_answered"] = driver.execute_script(
                "return document.querySelector('.answered').textContent")
            for name in urls:
                out[name] = {"first_paint_ms": _stats([r[0] for r in runs[name]]),
                             "server_response_ms": _stats([r[1] for r in runs[name]]),
                             "server_cpu_ms_per_page": round(cpu[name] / rounds, 1)}
            return out
        finally:
            if driver is not None:
                driver.quit()
            proc.terminate()
            proc.wait(timeout=10)
            if worker is not None:
                from memory.base import worker_client

                worker_client.ask(str(home), {"op": "shutdown"}, timeout=5)
                worker.wait(60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--embedder", help="index with this embedder (hashing, minilm...) and run a warm worker, "
                        "so the default mode answers hybrid; default: no semantic index, BM25 answers")
    args = parser.parse_args()
    rng = random.Random(3)
    words = corpus_words()
    queries = [" ".join(rng.choice(words) for _ in range(3)) for _ in range(args.rounds)]
    results = [run_size(int(n), args.rounds, queries, args.embedder) for n in args.sizes.split(",")]
    print_json({"method": "first-contentful-paint of a fresh navigation, median/p90/min over interleaved rounds; "
                          "server_response_ms: the navigation's responseStart; server_cpu_ms_per_page: the "
                          "server process's CPU per navigation", "rounds": args.rounds, "results": results}, machine())


if __name__ == "__main__":
    main()
