"""The hook log: one line per entry in <data>/logs/hooks.log, owner-only, passed through the privacy filter."""

from __future__ import annotations

import os
import time

from memory.config import env, log_path
from memory.privacy import clean

_LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40}
MAX_BYTES = 5 * 1024 * 1024


def log(level: str, message: str, *, event: str = "") -> None:
    if _LEVELS.get(level, 30) < _LEVELS.get(env("MEMORY_LOG_LEVEL").lower(), 30):
        return
    try:
        path = log_path()
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        if os.path.exists(path) and os.path.getsize(path) > MAX_BYTES:
            os.replace(path, path + ".1")
        line = f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {level.upper()} {event} pid={os.getpid()} {clean(message)}"
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, (line.replace("\n", "\n    ") + "\n").encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except OSError as exc:
        # A read-only or full data dir must not break the hook; the user hears of it once (notices).
        from memory import notices

        notices.add("unwritable", f"cannot write to the data dir ({exc.strerror or exc}); memories are not "
                                  f"being saved. Run `memory doctor`.")


def log_exception(event: str, exc: BaseException) -> None:
    # Only the stack (file, line, function), never the exception's locals or the event: no data leaks.
    import traceback  # only on the error path: it is slow to import

    frames = traceback.extract_tb(exc.__traceback__)
    where = " <- ".join(f"{os.path.basename(f.filename)}:{f.lineno}:{f.name}" for f in reversed(frames[-6:]))
    log("error", f"{type(exc).__name__}: {str(exc)[:300]} at {where}", event=event)
