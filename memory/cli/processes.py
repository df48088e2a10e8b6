"""Stopping the plugin's own background processes (the worker, the viewer) by the pid they recorded."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable

from memory.base.provenance import read_stat

POLL_S = 0.1


def alive(pid: int) -> bool:
    """The process exists and has not exited (a zombie, exited but not yet reaped by its parent, has)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive, and not ours to stop (ours() says so)
    stat = read_stat(pid)
    return stat is None or stat.state != "Z"  # no /proc (macOS): kill(0) is the answer


def ours(pid: int) -> bool:
    """A recorded pid still names one of the plugin's processes: not a reused pid of another program. Where
    /proc shows the command line it must run the `memory` package with this user's uid; elsewhere the
    uid check of kill() is what remains."""
    if pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    if not sys.platform.startswith("linux"):
        return True
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            argv = fh.read().split(b"\0")
    except OSError:
        return False
    return any(a == b"memory" or a.startswith(b"memory.") or a.endswith(b"/memory") for a in argv)


def signal_pid(pid: int, sig: int) -> bool:
    try:
        os.kill(pid, sig)
        return True
    except OSError:
        return False


def wait_until(done: Callable[[], bool], seconds: float, every: Callable[[], object] | None = None,
               every_s: float = 1.0) -> bool:
    """Poll `done` for up to `seconds`; `every` (asking again) runs at once and then every `every_s`."""
    deadline = time.monotonic() + seconds
    next_call = 0.0
    while not done():
        now = time.monotonic()
        if now > deadline:
            return False
        if every is not None and now >= next_call:
            every()
            next_call = now + every_s
        time.sleep(POLL_S)
    return True


def kill_hard(pid: int, gone: Callable[[], bool], seconds: float) -> bool:
    """SIGKILL, for a process that did not exit when asked; True once `gone`."""
    signal_pid(pid, signal.SIGKILL)
    return wait_until(gone, seconds)
