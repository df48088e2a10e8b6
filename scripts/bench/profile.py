"""Storage bytes per memory and the worker's memory, per embedding provider.

Storage: --memories memories (scripts/bench/fill.py's prose: runs of real text, 400 sessions) written into a scratch
data dir and indexed as `memory reindex` does (contexts, ledger, vectors, the ANN index past
MEMORY_VECTOR_INDEX_MIN_ROWS); LanceDB's versions and bytes as the reindex left them are given; then
the WAL is checkpointed and old LanceDB versions dropped. Bytes on
disk of SQLite (memory.db with its -wal and -shm: rows, FTS5 index, contexts, ledger, queue) and of LanceDB,
divided by the number of memories. Both apparent size and allocated blocks are given.

Worker memory: a real worker (`python -m memory.worker`) on that data dir, warm: the provider loaded,
the project opened, its in-memory search lists built (memory/recall/warm_index.py) and 24 hybrid queries answered
over its socket. VmRSS (now) and VmHWM (peak) from /proc/<pid>/status, of the worker and of its vector
process (memory/recall/vector_host.py: LanceDB, while it is up). Then (--burst N) N new memories saved and
indexed by the worker (what a session's hooks queue), RSS again; then, once the vector process has exited,
24 more queries: the steady figure. --checkout DIR runs the worker from another checkout (the same data
dir, written by this one): before and after a change in one run.

Idle footprint (--idle SECONDS): after that burst nothing touches the worker; its VmRSS is read from /proc
at 0, 5, 15, 30, 60, ... seconds of idle time, with MEMORY_WORKER_RELEASE_SECONDS from --release (default:
the plugin's; 0 keeps everything loaded, as before that setting existed). The load average is printed:
other processes on the machine do not change RSS, but they slow the warm-up.

    .venv/bin/python -m scripts.bench.profile [--memories 10000] [--embedders hashing,sentence-transformers]
        [--idle 150] [--release 120] [--stand-in] [--burst 64] [--checkout DIR] [--storage-only] [--json]
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

from memory.base import worker_client
from memory.base.config import env_int
from memory.base.project import Project
from memory.recall import embed
from memory.store.workspace import Workspace
from scripts.bench.common import ROOT, arguments, machine, machine_line, print_json
from scripts.bench.fill import populate


def disk(paths: list[Path]) -> dict[str, int]:
    apparent = allocated = 0
    for top in paths:
        for p in ([top] if top.is_file() else top.rglob("*")) if top.exists() else []:
            if p.is_file():
                st = p.stat()
                apparent += st.st_size
                allocated += st.st_blocks * 512
    return {"apparent": apparent, "allocated": allocated}


class StandIn:
    """A model's name, model and dimension, with the hashing embedder's vectors at that dimension: a store
    of the same shapes (bytes on disk, the worker's RSS) in seconds where the model takes an hour."""

    def __init__(self, real: embed.Embedder) -> None:
        from memory.recall.embed.hashing import embed_one

        self.name, self.model, self.dim, self._one = real.name, real.model, real.dim, embed_one
        del real

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [self._one(t, self.dim) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text, self.dim)


def storage(n: int, embedder_name: str, home: Path, stand_in: bool = False) -> dict[str, object]:
    from memory.cli.semantic import reindex_project

    os.environ["MEMORY_HOME"] = str(home)
    os.environ["MEMORY_EMBEDDER"] = embedder_name
    ws = Workspace(Project("bench-profile", "bench-profile", str(home / "root"), None), str(home))
    t0 = time.perf_counter()
    populate(ws, n)
    ws.close()
    written = time.perf_counter() - t0
    e = embed.choose(embedder_name)
    if stand_in:
        e = StandIn(e)
    t0 = time.perf_counter()
    result = reindex_project(str(home), ws.project.key, e, progress=False)
    indexed = time.perf_counter() - t0
    folder = home / "projects" / ws.project.key
    db = sqlite3.connect(folder / "memory.db")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    memories = db.execute("SELECT count(*) FROM memories").fetchone()[0]
    db.close()
    from memory.recall.vectors import VectorStore

    vs = VectorStore(str(folder), embed.key(e), e.dim)
    left = {"lancedb_versions_as_left": vs.versions(),
            "lancedb_bytes_per_memory_as_left": round(disk([folder / "vectors.lance"])["apparent"] / memories)}
    with warnings.catch_warnings():  # "removes every version except the latest": nothing else runs here
        warnings.simplefilter("ignore")
        vs.table.optimize(cleanup_older_than=timedelta(0), delete_unverified=True)
    sqlite_bytes = disk([folder / "memory.db", folder / "memory.db-wal", folder / "memory.db-shm"])
    lance_bytes = disk([folder / "vectors.lance"])
    return {
        **left, "embedder": embed.key(e), "memories": memories, "write_seconds": round(written, 1),
        "index_seconds": round(indexed, 1), "ann_index": result.get("index"),
        "sqlite_bytes": sqlite_bytes["apparent"], "lancedb_bytes": lance_bytes["apparent"],
        "sqlite_bytes_per_memory": round(sqlite_bytes["apparent"] / memories),
        "lancedb_bytes_per_memory": round(lance_bytes["apparent"] / memories),
        "total_bytes_per_memory": round((sqlite_bytes["apparent"] + lance_bytes["apparent"]) / memories),
        "total_allocated_bytes_per_memory": round((sqlite_bytes["allocated"] + lance_bytes["allocated"]) / memories),
        "sqlite_breakdown": sqlite_breakdown(folder / "memory.db"),
        "lancedb_breakdown": lance_breakdown(folder / "vectors.lance"),
    }


def sqlite_breakdown(db_path: Path) -> dict[str, int]:
    """Bytes per table or index (an FTS5 table's shadow tables summed under its name), from dbstat."""
    db = sqlite3.connect(db_path)
    try:
        rows = db.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name").fetchall()
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
        free = db.execute("PRAGMA freelist_count").fetchone()[0] * page_size
    finally:
        db.close()
    out: dict[str, int] = {}
    for name, size in rows:
        for fts in ("memories_fts", "memories_ctx"):
            if name.startswith(fts + "_"):
                name = fts
        out[name] = out.get(name, 0) + size
    if free:
        out["(free pages)"] = free
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def lance_breakdown(folder: Path) -> dict[str, int]:
    """Bytes per kind of LanceDB file: data, _indices, _versions, _transactions, _deletions."""
    out: dict[str, int] = {}
    for p in folder.rglob("*") if folder.exists() else []:
        if p.is_file():
            part = next((x for x in p.relative_to(folder).parts if x in
                         ("data", "_indices", "_versions", "_transactions", "_deletions")), "other")
            out[part] = out.get(part, 0) + p.stat().st_size
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def proc_status(pid: int) -> dict[str, int]:
    out = {}
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0]) * 1024
    return out


IDLE_POINTS = (0, 5, 15, 30, 60, 90, 120, 150, 180, 240, 300, 420, 600)
QUERIES = ("open the file and read lines", "decode unicode errors", "thread lock timeout", "path join",
           "return the default value", "socket connection refused", "parse the header", "format string") * 3


def children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(c) for c in fh.read().split()]
    except OSError:
        return []


def memory_of(pid: int) -> dict[str, int]:
    """The worker's VmRSS and VmHWM, and its children's (the vector process), 0 when there is none."""
    mem = proc_status(pid)
    kids = []
    for c in children(pid):
        try:
            kids.append(proc_status(c))
        except OSError:  # it exited meanwhile
            pass
    return {"rss": mem["VmRSS"], "peak": mem["VmHWM"], "child_rss": sum(k.get("VmRSS", 0) for k in kids),
            "child_peak": sum(k.get("VmHWM", 0) for k in kids)}


def burst(home: Path, key: str, n: int, timeout: float = 900) -> float:
    """n new memories saved as the hooks save them, then indexed by the worker: seconds until done."""
    from memory import store

    ws = Workspace(Project(key, key, str(home / "root"), None), str(home))
    try:
        for i in range(n):
            text = f"burst {i}: the retry loop in module m{i % 13} needed a longer deadline after run {i * 7}"
            store.save(ws.db, key, store.NewMemory(text[:60], text, type="observation", session_id="burst"),
                       filter_low_value=False)
        store.mark_dirty(ws.db, None)
        worker_client.ask(str(home), {"op": "wake"}, timeout=5)
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            left = ws.db.execute("SELECT count(*) FROM queue WHERE kind = 'vector' AND status IN "
                                 "('pending', 'running')").fetchone()[0]
            if not left:
                break
            time.sleep(0.5)
        return round(time.monotonic() - t0, 1)
    finally:
        ws.close()


@contextmanager
def worker_process(home: Path, env: dict[str, str], checkout: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A real worker (`python -m memory.worker`) run from `checkout` on `home`, its stderr in the data dir's
    worker log; asked to shut down at the end (killed if it does not within 120 s)."""
    os.makedirs(os.path.dirname(worker_client.log_file(str(home))), exist_ok=True)
    with open(worker_client.log_file(str(home)), "ab") as log:
        # cwd too: `python -m` puts the current directory first on sys.path, before PYTHONPATH
        proc = subprocess.Popen([sys.executable, "-m", "memory.worker"], env={**env, "PYTHONPATH": str(checkout)},
                                stdout=subprocess.DEVNULL, stderr=log, start_new_session=True, cwd=str(checkout))
        try:
            yield proc
        finally:
            worker_client.ask(str(home), {"op": "shutdown"}, timeout=10)
            try:
                proc.wait(120)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def worker_memory(home: Path, embedder_name: str, key: str, idle: int = 0, release: int | None = None,
                  burst_n: int = 0, checkout: Path | None = None) -> dict[str, object]:
    release = env_int("MEMORY_WORKER_RELEASE_SECONDS") if release is None else release
    env = {**os.environ, "MEMORY_HOME": str(home), "MEMORY_EMBEDDER": embedder_name,
           "MEMORY_WORKER_IDLE_SECONDS": str(max(300, idle + 60)), "MEMORY_WORKER_RELEASE_SECONDS": str(release)}
    t0 = time.perf_counter()
    with worker_process(home, env, checkout or ROOT) as proc:
        answered = None
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            answered = worker_client.ask(str(home), {"op": "search", "project": key, "query": "parser token cache",
                                                     "limit": 10}, timeout=5)
            if answered and answered.get("ok"):
                break
            time.sleep(0.2)
        warm = time.perf_counter() - t0
        if not answered or not answered.get("ok"):
            return {"embedder": embedder_name, "error": f"no answer from the worker ({answered})"}
        while time.monotonic() < deadline and not answered.get("warm"):  # its in-memory lists built
            time.sleep(0.2)
            answered = worker_client.ask(str(home), {"op": "search", "project": key, "query": "parser token cache",
                                                     "limit": 10}, timeout=5) or answered
        in_memory = time.perf_counter() - t0
        for q in QUERIES:
            worker_client.ask(str(home), {"op": "search", "project": key, "query": q, "limit": 10}, timeout=10)
        mem = proc_status(proc.pid)
        stages = {"warm": memory_of(proc.pid)}
        if burst_n:
            stages["burst_seconds"] = burst(home, key, burst_n)  # type: ignore[assignment]
            stages["after_indexing"] = memory_of(proc.pid)
            deadline = time.monotonic() + 120  # the vector process exits after the clean-up and a quiet spell
            while time.monotonic() < deadline and children(proc.pid):
                time.sleep(1)
            for q in QUERIES:
                worker_client.ask(str(home), {"op": "search", "project": key, "query": q, "limit": 10}, timeout=10)
            stages["steady"] = memory_of(proc.pid)
        idle_rss = []
        t_idle = time.monotonic()
        for at in [a for a in IDLE_POINTS if a <= idle]:
            time.sleep(max(0.0, t_idle + at - time.monotonic()))
            idle_rss.append((at, proc_status(proc.pid)["VmRSS"]))
        return {"embedder": answered.get("provider"), "rss_bytes": mem["VmRSS"], "peak_rss_bytes": mem["VmHWM"],
                "seconds_to_first_answer": round(warm, 1), "seconds_to_in_memory_answer": round(in_memory, 1),
                "release_seconds": release, "idle_rss_bytes": idle_rss, "stages": stages}


def mib(n: int) -> str:
    return f"{n / 2**20:.0f} MiB"


def main() -> None:
    ap = arguments(__doc__)
    ap.add_argument("--memories", type=int, default=10000)
    ap.add_argument("--embedders", default="hashing,sentence-transformers",
                    help="Comma-separated providers (one not available here is skipped).")
    ap.add_argument("--idle", type=int, default=0, help="Seconds of idle time to sample the worker's RSS over.")
    ap.add_argument("--release", type=int, default=None,
                    help="MEMORY_WORKER_RELEASE_SECONDS for the worker (0: never free the model and lists).")
    ap.add_argument("--stand-in", action="store_true",
                    help="Write the vectors with a hashing stand-in of the model's key and dimension (same shapes"
                         " on disk and in the worker, which loads the real model for its queries).")
    ap.add_argument("--burst", type=int, default=0,
                    help="After the warm queries, this many new memories indexed by the worker, then the steady RSS.")
    ap.add_argument("--checkout", type=Path, default=None, help="Run the worker from this checkout's code.")
    ap.add_argument("--storage-only", action="store_true", help="Only the bytes on disk, no worker.")
    args = ap.parse_args()
    results = []
    for name in [n.strip() for n in args.embedders.split(",") if n.strip()]:
        try:
            embed.make(name)
        except embed.NoEmbedder as exc:
            results.append({"embedder": name, "skipped": str(exc)})
            continue
        home = Path(tempfile.mkdtemp(prefix="bench-profile-"))
        try:
            s = {**storage(args.memories, name, home, args.stand_in), "stand_in": args.stand_in}
            w = ({"skipped": "--storage-only"} if args.storage_only else
                 worker_memory(home, name, "bench-profile", args.idle, args.release, args.burst, args.checkout))
            results.append({**s, "worker": w})
        finally:
            shutil.rmtree(home, ignore_errors=True)
    info = machine()
    if args.json:
        print_json({"results": results}, info)
        return
    print(f"{machine_line(info)} (load at the end)")
    for r in results:
        if "skipped" in r:
            print(f"{r['embedder']}: skipped ({r['skipped']})")
            continue
        w = r["worker"]
        print(f"{r['embedder']}: {r['memories']:,} memories; per memory {r['total_bytes_per_memory']:,} B "
              f"(SQLite {r['sqlite_bytes_per_memory']:,} + LanceDB {r['lancedb_bytes_per_memory']:,}; allocated "
              f"{r['total_allocated_bytes_per_memory']:,}); written {r['write_seconds']} s, indexed "
              f"{r['index_seconds']} s; {r['ann_index'] or 'no ANN index'}")
        print(f"  LanceDB as the reindex left it: {r['lancedb_versions_as_left']} version(s), "
              f"{r['lancedb_bytes_per_memory_as_left']:,} B per memory")
        for part in ("sqlite", "lancedb"):
            print(f"  {part} per memory: " + ", ".join(f"{k} {v / r['memories']:,.0f}"
                                                    for k, v in r[f"{part}_breakdown"].items()
                                                    if v >= r["memories"]))
        if "skipped" in w:
            continue
        if "error" in w:
            print(f"  worker: {w['error']}")
        else:
            print(f"  warm worker: RSS {mib(w['rss_bytes'])} (peak {mib(w['peak_rss_bytes'])}), first answer "
                  f"{w['seconds_to_first_answer']} s after start, from its in-memory lists "
                  f"{w['seconds_to_in_memory_answer']} s")
            for stage, m in w["stages"].items():
                if isinstance(m, dict):
                    print(f"  {stage}: worker {mib(m['rss'])} (peak {mib(m['peak'])}), vector process "
                          f"{mib(m['child_rss'])} (peak {mib(m['child_peak'])})")
                else:
                    print(f"  {stage}: {m}")
            if w["idle_rss_bytes"]:
                print(f"  idle (MEMORY_WORKER_RELEASE_SECONDS={w['release_seconds']}): "
                      + ", ".join(f"{at} s {mib(b)}" for at, b in w["idle_rss_bytes"]))


if __name__ == "__main__":
    main()
