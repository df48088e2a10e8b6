"""`memory reindex` and `memory worker`: the semantic-recall commands."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from typing import Any

import click

from memory.base import worker_client
from memory.base.config import data_home
from memory.base.progress import Rate, duration, line
from memory.base.words import count
from memory.cli import processes
from memory.cli.common import emit, json_option, opened, project_option, workspace

STOP_WAIT_S = 60.0  # a worker asked to stop finishes its batch and flushes its staged writes first
KILL_WAIT_S = 10.0


def _holder(home: str) -> int | None:
    """The pid the lock's holder wrote into worker.lock (the same pid across its light re-exec)."""
    try:
        with open(worker_client.lock_path(home), encoding="ascii") as fh:
            return int(fh.read().strip() or 0) or None
    except (OSError, ValueError):
        return None


def _ask_to_stop(home: str) -> None:
    """On the socket when the worker answers; else (loading its model before it serves, re-executing light)
    SIGTERM to the lock holder's pid. Asked again while it lives: a worker that re-executed light after the
    first ask starts afresh."""
    if worker_client.ask(home, {"op": "shutdown"}, timeout=1.0) is None:
        pid = _holder(home)
        if pid and processes.ours(pid):
            processes.signal_pid(pid, signal.SIGTERM)


def stop_worker(home: str, wait: float = STOP_WAIT_S) -> str | None:
    """Stop the data dir's worker in one call, however far its start got, and return once it has exited:
    what happened, or None when it still runs. One not exited `wait` seconds after being asked is killed
    (the worker is crash-safe: its unfinished jobs are redone). One spawned but not yet holding the lock
    exits as it takes it (worker.stop)."""
    from memory.store.workspace import write_private

    if os.path.isdir(home):
        write_private(worker_client.stop_path(home), repr(time.time()))
    if not worker_client.alive(home):
        return "not running"
    pid = _holder(home)
    gone = lambda: not worker_client.alive(home)  # noqa: E731 - the lock is free once the process is gone
    if processes.wait_until(gone, wait, every=lambda: _ask_to_stop(home)):
        return f"stopped (pid {pid})" if pid else "stopped"
    pid = _holder(home)
    if pid and processes.ours(pid) and processes.kill_hard(pid, gone, KILL_WAIT_S):
        return f"killed pid {pid}: it had not exited {wait:.0f} s after being asked to stop"
    return None


PROGRESS_EVERY_S = 30.0


def reindex_project(home: str, key: str, embedder: Any, progress: bool = True) -> dict[str, Any]:
    """Rebuild one project's derived indexes from SQLite: memories_ctx, the ledger and the vectors.
    The caller holds the worker lock."""
    from memory.worker import META_PROVIDER, ProjectIndex

    p = ProjectIndex(home, key, embedder)
    try:
        with p.db:
            pass
        p.db.execute("DELETE FROM meta WHERE key = ?", (META_PROVIDER,))
        p.check_provider()  # a reset: empty ledger, memories_ctx and table
        ids = [r[0] for r in p.db.execute("SELECT id FROM memories ORDER BY session_id, created_at, id")]
        t0 = time.perf_counter()
        bar = None
        if progress and sys.stderr.isatty():
            # Only on a terminal, where each render overwrites the last: captured (a pipe, the Bash tool of
            # Claude Code) every render is a line of its own, and the summary line says what was done.
            from tqdm import tqdm

            bar = tqdm(total=len(ids), unit="memory", desc=key[:30], leave=True, file=sys.stderr)
        embedded, rate, told = 0, Rate(), time.monotonic()
        for start in range(0, len(ids), 64):
            chunk, t1 = ids[start:start + 64], time.perf_counter()
            embedded += p.index(chunk)["embedded"]
            rate.add(len(chunk), time.perf_counter() - t1)
            if bar is not None and start + 64 < len(ids):
                bar.update(len(chunk))
            elif bar is None and progress and time.monotonic() - told > PROGRESS_EVERY_S:
                told = time.monotonic()  # not a terminal: a line now and then, each its own line
                click.echo(f"{key}: {line(start + len(chunk), len(ids), rate.per_s)}", err=True)
        if bar is not None:
            bar.n = len(ids)  # the last step is drawn by close() alone: update() would draw 100% a first time
            bar.close()
        p.db.execute("UPDATE queue SET status = 'done', finished_at = ? WHERE kind = 'vector' AND status = 'pending'",
                     (time.time(),))
        # We hold the worker lock and have finished writing: no version but the latest is needed.
        built = p.vectors.maintain(force=True, keep_s=0)
        return {"project": key, "memories": len(ids), "embedded": embedded, "provider": p.provider,
                "seconds": round(time.perf_counter() - t0, 1), "index": built}
    finally:
        p.db.close()


@click.command()
@project_option
@click.option("--all", "all_projects", is_flag=True, help="Every project in the data dir.")
@click.option("--embedder", type=click.Choice(["auto", "ollama", "sentence-transformers", "minilm", "hashing"]),
              help="Provider to use (default: MEMORY_EMBEDDER).")
@json_option
def reindex(project: str | None, all_projects: bool, embedder: str | None, as_json: bool) -> None:
    """Re-embed memories and rebuild the vector and context indexes from SQLite (after a change of
    embedding provider or model, or to repair them)."""
    # One BLAS thread, as in the worker: OpenBLAS's two threads on the loaded 2-core machine took 2.5 times
    # the CPU for the same MiniLM batches (docs/benchmarks.md, Embedding throughput). Before numpy loads.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from memory.recall import embed
    from memory.worker import Worker

    home = data_home()
    if embedder:
        os.environ["MEMORY_EMBEDDER"] = embedder
    keys = ([d for d in sorted(os.listdir(os.path.join(home, "projects")))
             if os.path.exists(os.path.join(home, "projects", d, "memory.db"))]
            if all_projects else [workspace(project).project.key])
    if not stop_worker(home):
        raise click.ClickException("the worker did not stop; try again, or `memory worker stop`")
    holder = Worker(home)
    if not holder.acquire(attempts=100):
        raise click.ClickException("could not take the worker lock")
    try:
        try:
            e = embed.Background(embed.choose())  # at low priority: hooks go on meanwhile
        except embed.NoEmbedder as exc:
            raise click.ClickException(str(exc)) from None
        results = [reindex_project(home, key, e, progress=not as_json) for key in keys]
    finally:
        holder.close()
    if as_json:
        emit(results)
    else:
        for r in results:
            click.echo(f"{r['project']}: {count(r['memories'], 'memory')}, {r['embedded']} embedded with "
                       f"{r['provider']} in {r['seconds']} s" + (f"; {r['index']}" if r["index"] else ""))


def _start_worker(home: str, wait_s: float = 30.0) -> str:
    """Start the worker and wait until it answers, so the answer says what happened: running, started,
    disabled, or failed (with the error the worker recorded). An earlier failure is forgotten first."""
    if not worker_client.enabled():
        raise click.ClickException("the worker is disabled (MEMORY_WORKER is off)")
    if worker_client.alive(home):
        return "already running"
    try:
        os.unlink(worker_client.failed_path(home))
    except OSError:
        pass
    pid = worker_client.start(home, force=True)
    if pid is None:
        raise click.ClickException(f"could not start {sys.executable} -m memory.worker")
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if worker_client.ask(home, {"op": "ping"}, timeout=0.5) is not None:
            return f"started pid {pid}"
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            try:
                with open(worker_client.failed_path(home), encoding="utf-8") as fh:
                    error = json.loads(fh.read()).get("error", "")
            except (OSError, ValueError):
                error = ""
            if not error and worker_client.alive(home):
                return "already running"  # another start won the race
            raise click.ClickException(f"the worker exited at start (status {os.waitstatus_to_exitcode(status)})"
                                       f"{': ' + error if error else ''}; log: {worker_client.log_file(home)}")
        time.sleep(0.2)
    return f"started pid {pid} (not answering yet; log: {worker_client.log_file(home)})"


@click.command()
@click.argument("action", type=click.Choice(["status", "start", "stop", "run"]), default="status")
@json_option
def worker(action: str, as_json: bool) -> None:
    """The background worker: status, start (detached), stop, or run in the foreground."""
    home = data_home()
    if action == "run":
        from memory.worker import Worker

        w = Worker(home)
        signal.signal(signal.SIGTERM, w.on_sigterm)  # `memory worker stop` without its socket: a clean stop
        raise SystemExit(w.run())
    if action == "stop":
        said = stop_worker(home)
        if said is None:
            pid = _holder(home)
            raise click.ClickException(f"the worker{f' (pid {pid})' if pid else ''} did not exit, not even "
                                       f"killed; log: {worker_client.log_file(home)}")
        click.echo(said)
        return
    if action == "start":
        click.echo(_start_worker(home))
        return
    info = worker_client.ask(home, {"op": "ping"}, timeout=2.0)
    data = {"alive": worker_client.alive(home), "answers": info is not None, **(info or {}),
            "socket": worker_client.socket_path(home), "log": worker_client.log_file(home)}
    ws = workspace(None)
    data["project"] = ws.project.key
    if not os.path.exists(ws.db_path):  # a status must not create the project's database
        data["project_indexed"] = "no memory for this project yet"
    else:
        _project_index_status(opened(ws), data, (info or {}).get("projects", {}).get(ws.project.key, {}))
    if as_json:
        emit(data)
    else:
        for k, v in data.items():
            click.echo(f"{k}: {v}")


def _project_index_status(ws: Any, data: dict[str, Any], loaded: dict[str, Any]) -> None:
    provider = ws.db.execute("SELECT value FROM meta WHERE key = 'vectors:provider'").fetchone()
    data["project_provider"] = provider[0] if provider else None
    from memory import store

    indexed, total = store.vector_coverage(ws.db)  # the count a search's "index N% built" comes from
    data["project_indexed"] = f"{indexed} of {count(total, 'memory')}"
    data["project_vector_jobs"] = {r[0]: r[1] for r in ws.db.execute(
        "SELECT status, count(*) FROM queue WHERE kind = 'vector' GROUP BY status")}
    left = total - indexed
    if left > 0:  # the rate is the worker's, over its last batches of this project
        rate = loaded.get("index_rate")
        data["project_indexing"] = (f"{count(left, 'memory')} to embed, "
                                    + (f"{rate:.1f}/s, about {duration(left / rate)} left" if rate
                                       else "rate unknown (the worker has not indexed this project yet)"))


COMMANDS = [reindex, worker]
