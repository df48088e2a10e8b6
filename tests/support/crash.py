"""What the crash tests share: real hook and worker processes in a scratch data dir, the memories they
acknowledged, and the checks afterwards (doctor, SQLite, the queue, LanceDB against SQLite)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from memory.base import worker_client
from memory.base.project import identify
from scripts.bench.stress import vector_consistency
from tests.support.helpers import ROOT

LAUNCHER = str(ROOT / "hooks" / "run")
MEMORY = str(Path(sys.executable).parent / "memory")


def crash_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PLUGIN_DATA", "CLAUDE_PROJECT_DIR",
                                                             "MEMORY_PROJECT_DIR")}
    # Hooks start no worker of their own: the tests start (and kill) the only one, and know its pid.
    env.update({"MEMORY_HOME": str(home), "MEMORY_WORKER": "off", "MEMORY_EMBEDDER": "hashing",
                "MEMORY_DAILY_LOG": "off", "MEMORY_WORKER_IDLE_SECONDS": "2", "PYTHONPATH": str(ROOT)})
    return env


def bash_event(project: Path, session: str, marker: str) -> bytes:
    """A PostToolUse of a Bash command that becomes the memory "Ran `make <marker>`"."""
    return json.dumps({"session_id": session, "transcript_path": "", "cwd": str(project),
                       "hook_event_name": "PostToolUse", "tool_name": "Bash",
                       "tool_input": {"command": f"make {marker}"},
                       "tool_response": {"stdout": f"built {marker}", "stderr": ""}}).encode()


def prompt_event(project: Path, session: str, marker: str) -> bytes:
    return json.dumps({"session_id": session, "transcript_path": "", "cwd": str(project),
                       "hook_event_name": "UserPromptSubmit",
                       "prompt": f"Implement the {marker} feature for the billing queue"}).encode()


def start_hook(entry: str, data: bytes, env: dict[str, str]) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([LAUNCHER, entry], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    assert proc.stdin is not None
    try:
        proc.stdin.write(data)
        proc.stdin.close()
    except BrokenPipeError:
        pass
    proc.stdin = None  # closed: communicate() then only reads
    return proc


def spawn_worker(env: dict[str, str]) -> subprocess.Popen[bytes]:
    log = Path(worker_client.log_file(env["MEMORY_HOME"]))
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as fh:
        return subprocess.Popen([sys.executable, "-m", "memory.worker"], env=env, stdout=subprocess.DEVNULL,
                                stderr=fh, start_new_session=True)


def db_path(home: Path, project: Path) -> Path:
    return home / "projects" / identify(str(project)).key / "memory.db"


def titles(home: Path, project: Path) -> list[str]:
    db = sqlite3.connect(db_path(home, project))
    try:
        return [r[0] for r in db.execute("SELECT title FROM memories")]
    finally:
        db.close()


def queue_problems(home: Path, project: Path) -> dict[str, int]:
    db = sqlite3.connect(db_path(home, project))
    try:
        dups = db.execute("SELECT count(*) FROM (SELECT dedup_key FROM queue WHERE dedup_key IS NOT NULL "
                          "GROUP BY dedup_key HAVING count(*) > 1)").fetchone()[0]
        # A memory with neither an index entry nor a vector job waiting would never be indexed: lost work.
        orphans = db.execute(
            """SELECT count(*) FROM memories m WHERE NOT EXISTS (SELECT 1 FROM memory_index i WHERE i.memory_id = m.id)
               AND NOT EXISTS (SELECT 1 FROM queue q WHERE q.kind = 'vector' AND q.status IN ('pending', 'running')
                               AND CAST(json_extract(q.payload, '$.id') AS INTEGER) = m.id)""").fetchone()[0]
        failed = db.execute("SELECT count(*) FROM queue WHERE status = 'failed'").fetchone()[0]
        return {"duplicate_jobs": dups, "memories_without_job_or_index": orphans, "failed_jobs": failed}
    finally:
        db.close()


def doctor(home: Path, project: Path, *, repair: bool = False) -> dict[str, Any]:
    env = {**crash_env(home)}
    args = [MEMORY, "doctor", "--json", "-p", str(project)] + (["--repair"] if repair else [])
    proc = subprocess.run(args, capture_output=True, env=env, cwd=project, timeout=120)
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()
    report = json.loads(proc.stdout)
    report["exit_code"] = proc.returncode
    return report


def healthy_or_repaired(home: Path, project: Path) -> tuple[bool, bool]:
    """(healthy, needed a repair): doctor first, and --repair only when it reports a problem."""
    report = doctor(home, project)
    if report["database"].get("ok") and report["exit_code"] == 0:
        return True, False
    report = doctor(home, project, repair=True)
    return bool(report["database"].get("ok")) and report["exit_code"] == 0, True


def settle_worker(home: Path, project: Path, env: dict[str, str], timeout: float = 120.0) -> dict[str, Any]:
    """Run a worker until every memory is indexed and no vector job is open, stop it, compare LanceDB."""
    worker = spawn_worker({**env, "MEMORY_WORKER_IDLE_SECONDS": "60"})
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            db = sqlite3.connect(db_path(home, project))
            try:
                open_jobs = db.execute("SELECT count(*) FROM queue WHERE kind = 'vector' AND status IN "
                                       "('pending', 'running')").fetchone()[0]
                unindexed = db.execute("SELECT count(*) FROM memories m LEFT JOIN memory_index i ON "
                                       "i.memory_id = m.id WHERE i.memory_id IS NULL").fetchone()[0]
            finally:
                db.close()
            if not open_jobs and not unindexed:
                break
            time.sleep(0.2)
    finally:
        worker_client.ask(str(home), {"op": "shutdown"}, timeout=5)
        try:
            worker.wait(30)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait(10)
    return vector_consistency(home, identify(str(project)).key)
