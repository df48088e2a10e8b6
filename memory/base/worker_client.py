"""The hook side of the worker: is it alive, start it, ask it for hybrid results within a budget.

Standard library only and cheap to import (a hook's budget is 100 ms): fcntl for the liveness probe,
posix_spawn to start the worker (no `subprocess` import, ~5 ms saved), the C-level _socket only when a socket
exists.
"""

from __future__ import annotations

import os
import sys
import time

from memory import ROOT  # the plugin folder
from memory.base.config import env, env_int
from memory.fastpath import jsonlite as json  # not the json package: it imports re (~5 ms a hook)

# After the worker failed to start (no lancedb in this interpreter, say), hooks do not retry for this long.
FAILED_BACKOFF_S = 600

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from typing import Any


def lock_path(home: str) -> str:
    return os.path.join(home, "worker.lock")


def failed_path(home: str) -> str:
    return os.path.join(home, "worker.failed")


def stop_path(home: str) -> str:
    """When `memory worker stop` last ran (time.time()): a worker spawned before it exits as it takes the lock."""
    return os.path.join(home, "worker.stop")


def log_file(home: str) -> str:
    return os.path.join(home, "logs", "worker.log")


def socket_path(home: str) -> str:
    """<home>/worker.sock, or for a home too long for a unix socket address (108 bytes) a name in an
    owner-only folder under the temp dir, derived from the home so both sides agree."""
    path = os.path.join(home, "worker.sock")
    if len(path.encode()) < 100:
        return path
    from memory.fastpath.sha import sha256  # rare branch; hashlib loads OpenSSL (~4 ms) on every hook

    digest = sha256(os.path.abspath(home).encode()).hexdigest()[:20]
    return os.path.join(os.environ.get("TMPDIR") or "/tmp", f"claude-memory-{os.getuid()}", f"{digest}.sock")


def enabled() -> bool:
    return env("MEMORY_WORKER").lower() not in ("off", "0", "false", "no")


def alive(home: str) -> bool:
    """True when a worker holds the lock. The probe takes the lock for a moment when it is free; a worker
    starting at that instant retries for a while before it gives up."""
    import fcntl

    try:
        fd = os.open(lock_path(home), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing drops our probe lock, if we got it
    return False


def _recently_failed(home: str) -> bool:
    try:
        with open(failed_path(home), encoding="utf-8") as fh:
            info = json.loads(fh.read())
        return info.get("python") == sys.executable and time.time() - float(info.get("at", 0)) < FAILED_BACKOFF_S
    except (OSError, ValueError, AttributeError):
        return False


def _setup_running() -> bool:
    """An installed plugin's venv is being built (memory/base/bootstrap.py): a worker started now would run on
    python3 without lancedb and fail; scripts/setup starts one when it has finished."""
    data = os.environ.get("CLAUDE_PLUGIN_DATA")
    if not data or not os.path.exists(os.path.join(data, "venv.setup-running")):
        return False
    from memory.base.bootstrap import setup_running

    return setup_running(data)


def start(home: str, *, force: bool = False) -> int | None:
    """Start a detached worker (its own session, stdio to /dev/null and its log) unless one is alive.
    Returns the new process id. Two hooks racing here may both start one: the second exits at once.
    `force` (`memory worker start`) ignores an earlier failure and a setup under way."""
    if not enabled() or alive(home):
        return None
    if not force and (_recently_failed(home) or _setup_running()):
        return None
    os.makedirs(home, mode=0o700, exist_ok=True)  # makedirs gives intermediate folders the umask's mode
    os.makedirs(os.path.join(home, "logs"), mode=0o700, exist_ok=True)
    environ = dict(os.environ)
    environ["MEMORY_HOME"] = home
    environ.pop("MEMORY_NOW", None)  # the worker serves every session after this one: its clock is the wall's
    environ["MEMORY_WORKER_SPAWNED"] = repr(time.time())  # against worker.stop (stop_path)
    environ["PYTHONPATH"] = ROOT + (os.pathsep + environ["PYTHONPATH"] if environ.get("PYTHONPATH") else "")
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, log_file(home), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600),
        (os.POSIX_SPAWN_DUP2, 1, 2),
    ]
    try:
        # A fresh interpreter without -S: the worker needs the venv's site-packages (lancedb, models).
        return os.posix_spawn(sys.executable, [sys.executable, "-m", "memory.worker"], environ,
                              file_actions=actions, setsid=True)
    except OSError:
        return None


def ask(home: str, request: dict[str, Any], timeout: float | None = None) -> dict[str, Any] | None:
    """One request to the worker; None when there is no worker, it does not answer within `timeout`
    seconds (MEMORY_WORKER_TIMEOUT_MS by default) or its answer is not ok."""
    answer = ask_raw(home, request, timeout)
    return answer if answer is not None and answer.get("ok") else None


def ask_raw(home: str, request: dict[str, Any], timeout: float | None = None) -> dict[str, Any] | None:
    """`ask`, with the worker's answer as it is when it is not ok ("project not loaded yet")."""
    path = socket_path(home)
    if not os.path.exists(path):
        return None
    # The C module, not `socket`: that imports enum, selectors and functools, 8.7 ms CPU of every hook that
    # asks a running worker (a cached Read 20 -> 29 ms); _socket costs 0.8 ms and has all this needs.
    import _socket

    budget = timeout if timeout is not None else env_int("MEMORY_WORKER_TIMEOUT_MS") / 1000
    deadline = time.monotonic() + budget
    s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        s.settimeout(budget)
        s.connect(path)
        s.sendall(json.dumps(request).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            s.settimeout(left)
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        answer = json.loads(data.decode("utf-8", "replace")) if data.strip() else None
        return answer if isinstance(answer, dict) else None
    except (OSError, ValueError):
        return None
    finally:
        s.close()


def kick(home: str, key: str | None = None) -> None:
    """There is new work: a running worker is woken, none running is started."""
    if not enabled():
        return
    if ask(home, {"op": "wake", "project": key}, timeout=0.02) is None:
        start(home)
