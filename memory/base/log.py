"""The hook log: one line per entry in <data>/logs/hooks.log, owner-only, passed through the privacy filter.
Its folder and file are opened without following symlinks (open_append)."""

from __future__ import annotations

import os
import time

from memory.base.config import env, log_path

_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC
_LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40}
MAX_BYTES = 5 * 1024 * 1024
MAX_MESSAGE = 2000  # characters of one entry kept, once filtered: callers pass the whole text, never a cut one


def log(level: str, message: str, *, event: str = "") -> None:
    if _LEVELS.get(level, 30) < _LEVELS.get(env("MEMORY_LOG_LEVEL").lower(), 30):
        return
    try:
        path = log_path()
        line = f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {level.upper()} {event} pid={os.getpid()} {filtered(message)}"
        fd = open_append(path)
        try:
            if os.fstat(fd).st_size > MAX_BYTES:  # rotated: renaming moves the file, never a link's target
                os.replace(path, path + ".1")
                os.close(fd)
                fd = open_append(path)
            os.write(fd, (line.replace("\n", "\n    ") + "\n").encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except OSError as exc:
        # A read-only or full data dir must not break the hook; the user hears of it once (notices).
        from memory.base import notices

        notices.add("unwritable", f"cannot write to the data dir ({exc.strerror or exc}): the hook log is not "
                                  f"written, and events only where a spool can keep them. Run `memory doctor`.")


def filtered(text: str, limit: int = MAX_MESSAGE) -> str:
    """A text as the data dir may keep it: through the privacy filter whole, then cut to `limit` characters
    (a cut first could split a secret so that no rule matched what is left)."""
    # Imported here: a hook that logs nothing (PreToolUse on almost every Read) does not load the filter,
    # ~3.7 M instructions (10% of that hook).
    from memory.base.privacy import clean

    text = clean(text)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def described(exc: BaseException) -> str:
    """An error as text: its type and message (never repr(), whose escaped `\\n` hides a line's start from
    the privacy filter)."""
    return f"{type(exc).__name__}: {exc}"


def open_append(path: str) -> int:
    """An owner-only file opened for appending (created if missing) whose folder and name are not symlinks.
    A symlink planted at either (to make the plugin write elsewhere) is removed and a real one made."""
    folder, name = os.path.split(path)
    for _ in range(3):
        try:
            dfd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW)
        except FileNotFoundError:
            os.makedirs(folder, mode=0o700, exist_ok=True)
            continue
        except OSError:
            if not os.path.islink(folder):
                raise
            _planted(folder)
            continue
        try:
            return os.open(name, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW, 0o600, dir_fd=dfd)
        except OSError:
            if not os.path.islink(path):
                raise
            _planted(path)
        finally:
            os.close(dfd)
    raise OSError(f"cannot open {path} without following a symlink")


def _planted(path: str) -> None:
    os.unlink(path)  # the link itself, never its target
    from memory.base import notices

    notices.add("symlink", f"a symlink at {path} was removed (the plugin never writes through one)")


def log_exception(event: str, exc: BaseException) -> None:
    # Only the stack (file, line, function), never the exception's locals or the event: no data leaks.
    import traceback  # only on the error path: it is slow to import

    frames = traceback.extract_tb(exc.__traceback__)
    where = " <- ".join(f"{os.path.basename(f.filename)}:{f.lineno}:{f.name}" for f in reversed(frames[-6:]))
    log("error", f"{described(exc)} at {where}", event=event)
