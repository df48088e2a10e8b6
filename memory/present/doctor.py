"""`memory doctor`: what is installed, which providers are reachable, where the data is, database health."""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import sqlite3
import sys
import time
from typing import Any

from memory import __version__
from memory.base.bootstrap import ROOT, recorded_root, setup_command, setup_running, venv_python
from memory.base.config import data_home, log_path
from memory.base.words import count
from memory.store import ctx_rows
from memory.store.db import DatabaseCorrupt, Tx, connect, schema_version
from memory.store.migrations import MIGRATIONS
from memory.store.workspace import Workspace, all_projects

OPTIONAL = {
    "tree_sitter": "Read outlines",
    "lancedb": "semantic recall (vector store)",
    "sentence_transformers": "local embeddings",
    "anthropic": "Claude Haiku extraction",
    "ollama": "Ollama embeddings and extraction",
    "mcp": "MCP server",
    "tqdm": "progress bars",
}


def _ollama_up(host: str) -> bool:
    hostport = host.split("://", 1)[-1].split("/", 1)[0]
    name, _, port = hostport.rpartition(":")
    try:
        with socket.create_connection((name or "127.0.0.1", int(port or 11434)), timeout=0.3):
            return True
    except (OSError, ValueError):
        return False


def check_db(path: str) -> dict[str, Any]:
    if not os.path.exists(path):  # nothing is created here: a read-only command leaves no database behind
        return {"exists": False, "ok": True, "note": "no memory for this project yet"}
    try:
        db = connect(path, migrate=False)
    except DatabaseCorrupt as exc:
        return {"exists": True, "ok": False, "problem": str(exc)}
    try:
        integrity = db.execute("PRAGMA quick_check").fetchone()[0]
        if integrity != "ok":  # confirmed by the full check: SQLite 3.40's quick_check (Debian 12's) reports
            # "NULL value in memory_files.memory_id" for every row of that WITHOUT ROWID table, which holds
            # none, and `doctor --repair` then salvaged a healthy database into a fresh one
            integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
        version = schema_version(db)
        fts_ok = True
        try:
            # rank=1 also compares the external-content index with the memories table
            db.execute("INSERT INTO memories_fts(memories_fts, rank) VALUES('integrity-check', 1)")
        except sqlite3.DatabaseError:
            fts_ok = False
        n = db.execute("SELECT count(*) FROM memories").fetchone()[0] if version else 0
        return {"exists": True, "ok": integrity == "ok" and fts_ok, "integrity": integrity, "fts_ok": fts_ok,
                "schema_version": version, "schema_latest": len(MIGRATIONS), "memories": n}
    except sqlite3.DatabaseError as exc:
        return {"exists": True, "ok": False, "problem": f"{type(exc).__name__}: {exc}"}
    finally:
        db.close()


def _aside(ws: Workspace) -> dict[str, Any]:
    """Damaged databases a hook moved aside whose rows `--repair` has not recovered yet."""
    names = sorted(n for n in os.listdir(ws.dir) if n.startswith("memory.db.corrupt-")
                   and not n.endswith(("-wal", "-shm", ".recovered"))) if os.path.isdir(ws.dir) else []
    if not names:
        return {}
    return {"damaged copies aside": [os.path.join(ws.dir, n) for n in names],
            "to recover their rows": "memory doctor --repair"}


def _vector_index(ws: Workspace) -> dict[str, Any]:
    """The semantic index as SQLite knows it (no LanceDB import): built or not, and damaged stores set aside."""
    from memory.recall.vectors import DIRNAME

    here = os.path.join(ws.dir, DIRNAME)
    out: dict[str, Any] = {"path": here, "exists": os.path.isdir(here)}
    names = os.listdir(ws.dir) if os.path.isdir(ws.dir) else []
    aside = sorted(n for n in names if n.startswith(DIRNAME + ".corrupt-"))
    if aside:
        out["damaged and set aside"] = f"{aside[-1]} (rebuilt from SQLite by the worker, or `memory reindex`)"
    if os.path.exists(ws.db_path):
        try:
            from memory import store

            indexed, total = store.vector_coverage(ws.db)
            out["memories embedded"] = f"{indexed:,} of {total:,}"
        except Exception as exc:  # noqa: BLE001 - a damaged database is reported by check_db
            out["memories embedded"] = f"unknown ({type(exc).__name__})"
    return out


def _notices() -> list[dict[str, object]]:
    from memory.base import notices

    return notices.pending()


def _extraction(home: str) -> dict[str, Any]:
    """The extractor chain as configured (memory/learn/run.py) and today's paid-token budget."""
    from memory.base.config import env
    from memory.learn.run import chain
    from memory.store import budget, consent

    chosen, source = consent.choice(home)
    return {"choice": f"{chosen} ({source}; change with `memory config extraction`)",
            "MEMORY_EXTRACTOR": env("MEMORY_EXTRACTOR"), "chain": " -> ".join(chain()) or "off",
            "paid tokens today (all projects)": f"{budget.spent_today(home):,} of {budget.daily_budget():,}",
            "spend by day and provider (all projects, last 7 days)":
                budget.spend_lines(budget.spend_by_day(home)) or "none"}


def report(ws: Workspace) -> dict[str, Any]:
    home = data_home()
    deps = {name: importlib.util.find_spec(name) is not None for name in OPTIONAL}
    ollama_host = os.environ.get("OLLAMA_HOST", "http://127.0.0.1:11434")
    errors = 0
    log = log_path()
    if os.path.exists(log):
        with open(log, encoding="utf-8", errors="replace") as fh:
            errors = sum(1 for line in fh if " ERROR " in line)
    venv = venv_python()
    return {
        "version": __version__,
        "python": f"{sys.version.split()[0]} at {sys.executable}",
        "hook_interpreter": venv or "python3 from PATH (no venv yet: stdlib-only hooks)",
        "fast_path": _fast_path(),
        "setup": _setup(home, venv),
        "venv_shared": _shared(venv),
        "worker": _worker(home),
        "plugin_root": ROOT,
        "hooks_root": recorded_root(home) or "not known yet (recorded at the next SessionStart)",
        "data_dir": home,
        "data_dir_writable": os.access(home, os.W_OK) if os.path.exists(home) else os.access(
            os.path.dirname(home) or ".", os.W_OK),
        "dependencies": {f"{k} ({OPTIONAL[k]})": v for k, v in deps.items()},
        "providers": {
            "anthropic (ANTHROPIC_API_KEY set)": bool(os.environ.get("ANTHROPIC_API_KEY")) and deps["anthropic"],
            f"ollama at {ollama_host}": _ollama_up(ollama_host),
            "keyword recall (FTS5)": True,
        },
        "extraction": _extraction(home),
        "project": {"name": ws.project.name, "key": ws.project.key, "root": ws.project.root,
                    "remote": ws.project.remote},
        "database": {"path": ws.db_path, **check_db(ws.db_path), **_aside(ws)},
        "vector_index": _vector_index(ws),
        "projects_known": len(all_projects(home)),
        "hook_log": log,
        "hook_errors_logged": errors,
        "notices": [str(n.get("message")) for n in _notices()],
        "spooled_events": _spooled(),
        "flagged_memories": flagged(ws),
        "hosts": _hosts(),
    }


def _fast_path() -> dict[str, str]:
    """Each part of the hooks' fast path (memory/fastpath/): on, off by MEMORY_FASTPATH, or refused by its check on
    this Python, with the reason (the hooks then run the standard library for it)."""
    from memory.fastpath import check

    return check.report()


def _hosts() -> dict[str, str] | str:
    """Each coding agent found on this machine and the last hook event seen from it (memory/present/hosts.py)."""
    from memory.present.hosts import seen

    return seen() or "none found"


def flagged(ws: Workspace, limit: int = 20) -> dict[str, Any]:
    """Memories flagged as instruction-shaped (memory/base/fence.py): never injected automatically, listed here
    for a person to review (`memory get ID`, then `memory forget ID` or keep)."""
    from memory.base.fence import FLAG, row_label

    if not os.path.exists(ws.db_path):  # doctor creates no database
        return {"count": 0}
    try:
        n = ws.db.execute("SELECT count(*) FROM memories WHERE project = ? AND flags != ''",
                          (ws.project.key,)).fetchone()[0]
        rows = ws.db.execute("SELECT * FROM memories WHERE project = ? AND flags != '' "
                             "ORDER BY created_at DESC LIMIT ?", (ws.project.key, limit)).fetchall()
    except Exception as exc:  # noqa: BLE001 - a damaged database is reported by check_db
        return {"error": repr(exc)}
    out: dict[str, Any] = {"count": n, "flag": f"{FLAG}: reads as orders to the agent; never injected "
                           "automatically; review with `memory get ID`, remove with `memory forget ID`"}
    for r in rows:
        day = time.strftime("%Y-%m-%d", time.localtime(r["created_at"]))
        out[f"#{r['id']}"] = f"{r['title'][:100]} ({row_label(r)}, {day})"
    return out


def _setup(home: str, venv: str | None) -> str:
    """The installed plugin's venv setup (memory/base/bootstrap.py): done, under way, or what stopped it."""
    setup_log = os.path.join(home, "logs", "setup.log")
    if setup_running(home):
        return f"running (about a minute; log: {setup_log})"
    if venv:
        return "done"
    if os.path.exists(setup_log):
        return f"not finished: see {setup_log}, or run {setup_command(home)}"
    return "not started (the first session starts it)"


def _shared(venv: str | None) -> str:
    """The venv shared by versions and checkouts (scripts/venv_store.py) that the hooks' venv stands on."""
    if not venv:
        return "none yet"
    try:
        with open(os.path.join(os.path.dirname(os.path.dirname(venv)), ".memory-shared"), encoding="utf-8") as fh:
            return fh.read().strip()
    except OSError:
        return "none: a venv of its own (made before venvs were shared, or not by scripts/setup)"


def _worker(home: str) -> str:
    """Alive, or why not: a failed start is recorded (memory/worker/process.py) and hooks wait before retrying."""
    from memory.base import worker_client

    if not worker_client.enabled():
        return "disabled (MEMORY_WORKER)"
    if worker_client.alive(home):
        return "running"
    try:
        with open(worker_client.failed_path(home), encoding="utf-8") as fh:
            info = json.load(fh)
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(info.get("at", 0))))
        return (f"failed to start at {when} on {info.get('python')}: {info.get('error')}; hooks retry "
                f"{worker_client.FAILED_BACKOFF_S // 60} min later, or run `memory worker start`")
    except (OSError, ValueError, TypeError, AttributeError):
        return "not running (hooks start it when there is work)"


def _spooled() -> dict[str, Any]:
    """Events a locked database, a full or read-only disk or a damaged database refused, waiting for a
    later hook (or `--repair`) to write them, folder by folder; the last failure; the reserve kept for a
    full disk; the data dir's disk (free space, read-only)."""
    from memory.hook import spool

    waiting = bad = 0
    out: dict[str, Any] = {}
    for folder in spool.folders():
        try:
            names = os.listdir(folder)
            size = sum(os.path.getsize(os.path.join(folder, n)) for n in names if n.endswith(".json"))
        except OSError:
            names, size = [], 0
        bad += sum(1 for n in names if n.endswith(".bad"))
        here = len(spool.pending(folder))
        waiting += here
        if here:
            out[f"in {folder}"] = f"{count(here, 'event')}, {size / 1024:,.0f} KiB (at most "\
                                  f"{spool.MAX_EVENTS:,} events, {spool.MAX_BYTES // 2**20} MiB)"
    out = {"waiting": waiting, "unreadable": bad, **out}
    fault = spool.read_fault()
    if fault:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(fault.get("last") or 0)))
        out["last failure"] = f"{when}: {fault.get('kind')} ({fault.get('reason')})"
        out["what the user is told"] = spool.describe(fault, waiting)
        out["lost"] = int(fault.get("lost") or 0)
    home = data_home()
    reserve = os.path.exists(os.path.join(home, spool.RESERVE_NAME))
    out["disk reserve"] = "kept (1 MB, freed when the disk fills)" if reserve else \
        "freed or not made yet: the disk was full, or no session has started (remade at SessionStart)"
    try:
        st = os.statvfs(home)
        out["free space on the data dir's disk"] = f"{st.f_bavail * st.f_frsize / 2**20:,.1f} MiB"
        out["data dir's disk read-only"] = bool(st.f_flag & os.ST_RDONLY)
    except OSError as exc:
        out["data dir's disk"] = f"not reachable: {exc.strerror or exc}"
    return out


def repair(ws: Workspace) -> list[str]:
    """Bring a project's store back to health; returns what was done. Nothing is deleted: a database that
    fails its integrity check is salvaged row by row into a fresh one and the old file is kept aside, and
    the rows of a database a hook moved aside are copied into the current one."""
    from memory.base import notices
    from memory.store.db import Tx, quarantine

    done: list[str] = []
    path = ws.db_path
    health = check_db(path)
    if health.get("exists") and not health.get("ok") and os.path.exists(path):  # else a hook moved it aside
        if health.get("integrity") == "ok" and not health.get("fts_ok"):
            db = connect(path)
            db.execute("INSERT INTO memories_fts(memories_fts) VALUES('rebuild')")
            db.close()
            done.append("rebuilt the full-text index from the memories table")
        else:
            salvaged = _salvage(path)
            moved = quarantine(path)
            os.replace(salvaged, path)
            done.append(f"salvaged what could be read into a fresh database; the damaged file is at {moved}")
    ws.close()
    db = ws.db
    done += recover_aside(ws)
    with Tx(db):
        stale = db.execute(
            "UPDATE queue SET status = 'pending', locked_by = NULL WHERE status = 'running' AND locked_at < ?",
            (time.time() - 300,)).rowcount
    if stale:
        done.append(f"released {count(stale, 'queue job')} left running by a dead worker")
    from memory.hook import spool
    from memory.hook.run import dispatch

    for folder in spool.folders():
        waiting = len(spool.pending(folder))
        if waiting:
            written = spool.replay(dispatch, budget_s=60.0, folder=folder)
            done.append(f"wrote {written} of {count(waiting, 'spooled event')} from {folder}")
    if spool.read_fault() and spool.clear_fault_if_over():
        done.append("cleared the record of the refused writes (all written, the data dir takes writes)")
    items = notices.pending()
    if items:
        done.append(f"cleared {count(len(items), 'notice')}: " + notices.summary(items).replace("\n", "; "))
        notices.clear()
    return done or ["nothing to repair"]


def _salvage(path: str) -> str:
    """Copy every readable row of every table into a new database (schema from the migrations)."""
    target = f"{path}.salvage-{os.getpid()}"
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(target + suffix):
            os.remove(target + suffix)
    fresh = connect(target)
    try:
        old = _readable(path)
        pending = ctx_rows.unconverted(old) if old is not None else {}  # rows the worker had not converted
        _copy_rows(old, fresh, keep_ids=True)
        with Tx(fresh):
            ctx_rows.restore(fresh, pending)  # the neighbour index from the ledger's copy of its rows
    finally:
        fresh.close()
    return target


# Tables copied from a database moved aside into the one made since: what a person would miss. Caches,
# logs and the queue are left (the worker rebuilds the derived indexes from the memories).
_MERGED = ("memories", "sessions", "session_state", "handoffs", "extractions", "imports", "team_link",
           "team_types")


def recover_aside(ws: Workspace) -> list[str]:
    """Rows of the databases a hook moved aside (`memory.db.corrupt-*`) copied into the current one: every
    row that can still be read, an unreadable header rebuilt first; the damaged file is kept, renamed
    `.recovered`. A memory the current database already holds (same text or title) is not copied twice."""
    done = []
    for name in sorted(os.listdir(ws.dir)) if os.path.isdir(ws.dir) else []:
        if not name.startswith("memory.db.corrupt-") or name.endswith(("-wal", "-shm", ".recovered")):
            continue
        src = os.path.join(ws.dir, name)
        before = ws.db.execute("SELECT count(*) FROM memories").fetchone()[0]
        try:
            _copy_rows(_readable(src), ws.db, keep_ids=False, tables=_MERGED)
        finally:
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(src + ".readable" + suffix):
                    os.remove(src + ".readable" + suffix)
        got = ws.db.execute("SELECT count(*) FROM memories").fetchone()[0] - before
        for suffix in ("-wal", "-shm", ""):
            if os.path.exists(src + suffix):
                os.rename(src + suffix, src + ".recovered" + suffix)
        done.append(f"recovered {count(got, 'memory', 'memories')} from {src} (kept as {src}.recovered)")
    return done


SQLITE_MAGIC = b"SQLite format 3\x00"


def _readable(path: str) -> sqlite3.Connection | None:
    """The damaged file opened read-only; with an unreadable header (garbage over its first 100 bytes), a
    copy with a rebuilt one, the page size found by trying each until the schema reads. None when no
    page size works."""
    with open(path, "rb") as fh:
        head = fh.read(100)
    if head.startswith(SQLITE_MAGIC):
        try:
            db = _open_damaged(path)
            db.execute("SELECT name FROM sqlite_master").fetchall()
            return db
        except sqlite3.DatabaseError:
            pass
    size = os.path.getsize(path)
    copy = path + ".readable"
    for page in (4096, 1024, 2048, 8192, 16384, 32768, 65536):
        if size < page or size % page:
            continue
        import shutil

        shutil.copyfile(path, copy)
        with open(copy, "r+b") as fh:
            fh.write(_header(page, size // page))
        try:
            db = _open_damaged(copy)
            if db.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'").fetchone()[0]:
                return db
            db.close()
        except sqlite3.DatabaseError:
            continue
    return None


def _open_damaged(path: str) -> sqlite3.Connection:
    """Read-only, with `writable_schema` on: SQLite then reads a file shorter than its header says (a
    truncated file), which it otherwise refuses whole as malformed."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    db.execute("PRAGMA writable_schema = ON")
    return db


def _header(page: int, pages: int) -> bytes:
    """A SQLite file header (https://sqlite.org/fileformat.html#the_database_header) for `pages` pages of
    `page` bytes: rollback journal, no free list, UTF-8, schema format 4."""
    import struct

    return (SQLITE_MAGIC + struct.pack(">HBBBBBB", page if page < 65536 else 1, 1, 1, 0, 64, 32, 32)
            + struct.pack(">IIIIIIIIIIII", 1, pages, 0, 0, 1, 4, 0, 0, 1, 0, 0, 0)
            + bytes(20) + struct.pack(">II", 1, sqlite3.sqlite_version_info[0] * 1_000_000
                                      + sqlite3.sqlite_version_info[1] * 1000 + sqlite3.sqlite_version_info[2]))


def _copy_rows(old: sqlite3.Connection | None, fresh: sqlite3.Connection, *, keep_ids: bool,
               tables: tuple[str, ...] | None = None) -> None:
    """Every row of `old` that can be read, into the same tables of `fresh` (their shared columns);
    keep_ids False: the integer primary key is left for `fresh` to give (its rows stay)."""
    if old is None:
        return
    old.row_factory = sqlite3.Row
    try:
        names = [r[0] for r in fresh.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'memories_fts%' "
            "AND name NOT LIKE 'memories_ctx%' AND name NOT LIKE 'sqlite_%'")]
        for table in names if tables is None else [t for t in tables if t in names]:
            info = list(fresh.execute(f"PRAGMA table_info({table})"))
            columns = [r[1] for r in info if keep_ids or not (r[5] and r[2].upper() == "INTEGER")]
            for row in _readable_rows(old, table):
                keep = [c for c in row.keys() if c in columns]
                try:
                    fresh.execute(f"INSERT OR IGNORE INTO {table} ({', '.join(keep)}) VALUES "
                                  f"({', '.join('?' * len(keep))})", [row[c] for c in keep])
                except sqlite3.DatabaseError:
                    continue
    finally:
        old.close()


def _readable_rows(old: sqlite3.Connection, table: str) -> Any:
    """The rows of `table` in rowid order, past damaged pages: a read that fails is tried again further on,
    twice as far each time, until rows come again or none are left."""
    last, step = -(2**63), 1
    while True:
        try:
            cursor = old.execute(f"SELECT rowid AS _rowid_, * FROM {table} WHERE rowid > ? ORDER BY rowid",
                                 (last,))
        except sqlite3.DatabaseError:
            return  # not even the table's root could be read
        try:
            for row in cursor:
                yield row
                last, step = row["_rowid_"], 1
            return
        except sqlite3.DatabaseError:
            if last > 2**62 or step > 2**40:
                return
            last, step = last + step, step * 2
