"""Events a hook could not write are kept in `<data dir>/spool/` and replayed by a later hook, so none is
lost: the database stayed locked past the busy timeout (many sessions and the worker writing at once on a
loaded machine), or the data dir's disk is full or read-only. For the full disk the data dir holds a
small reserve file (RESERVE_NAME, made at SessionStart) that is freed to make room for the spool; past it,
or on a read-only data dir, events go to a private folder in the temp dir (another filesystem, often),
one per data dir, and are replayed from there into the right project when the data dir takes writes
again. The user is told (a notice: the next SessionStart and `memory doctor`). What is spooled has passed
the privacy filter: nothing private reaches the disk.

One file per event, written to a temporary name and renamed (a reader never sees half a file); a replayer
claims a file by renaming it, so two hooks never replay the same event; a claim left by a killed replayer
is taken back after CLAIM_STALE_S. Standard library only: this runs inside hooks."""

from __future__ import annotations

import os
import time

from memory.base import jsonlite as json
from memory.base.config import data_home

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from collections.abc import Callable
    from typing import Any

    # memory/hook/run.py's dispatch(name, event, project_dir, replayed), passed in: run imports this
    # module, so this one does not import it back.
    Dispatch = Callable[[str, dict[str, Any], str | None, bool], object]

REPLAY_BUDGET_S = 0.03  # a hook spends at most this replaying spooled events after its own work
CLAIM_STALE_S = 60.0
RESERVE_NAME = "reserve"
RESERVE_BYTES = 1024 * 1024  # ~200 spooled events of a few KB (a bounded event is at most ~300 KB)
# ENOSPC, EDQUOT, EROFS, EFBIG (a file size limit), ENOTDIR, EACCES, EPERM (the data dir's path is blocked
# or not ours): numbers, so a hook need not import errno
_SPACE_ERRNOS = (28, 122, 30, 27, 20, 13, 1)
_SPACE_WORDS = ("disk is full", "readonly database", "disk i/o error", "unable to open database file")


def spool_dir() -> str:
    return os.path.join(data_home(), "spool")


def fallback_spool_dir(create: bool = False) -> str | None:
    """The temp-dir spool of this data dir (private, ours), or None when there is none safe to use."""
    from memory.base import notices

    base = notices.private_fallback_dir() if create else notices.fallback_dir()
    if base is None:
        return None
    folder = os.path.join(base, notices.fallback_spool_name())
    if create:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    return folder


def folders() -> list[str]:
    """The spool folders of this data dir that exist: the data dir's own, then the temp dir's."""
    return [f for f in (spool_dir(), fallback_spool_dir()) if f and os.path.isdir(f)]


def is_space_error(exc: BaseException) -> bool:
    """A write the disk refused: full, over quota, read-only, or past a file size limit (OSError or SQLite)."""
    if isinstance(exc, OSError):
        return exc.errno in _SPACE_ERRNOS
    text = str(exc).lower()
    return type(exc).__name__ in ("OperationalError", "DatabaseError") and any(w in text for w in _SPACE_WORDS)


def disk_refuses(home: str) -> bool:
    """Whether the data dir's disk still refuses writes (read-only, less free space than the reserve, or
    not reachable): a replay that meets a refused write puts its event back only then; otherwise the
    error was the event's own and the file is set aside, so it never blocks the spool."""
    try:
        st = os.statvfs(home)
    except OSError:
        return True
    return bool(st.f_flag & os.ST_RDONLY) or st.f_bavail * st.f_frsize < RESERVE_BYTES or \
        not os.access(home, os.W_OK)


def ensure_reserve(home: str) -> None:
    """Keep the reserve file (one stat when it is there). Allocated for real (posix_fallocate), so a full
    disk still has its space to give back; made only while the disk has room, never half."""
    path = os.path.join(home, RESERVE_NAME)
    if os.path.exists(path) or not os.path.isdir(home):
        return
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            os.posix_fallocate(fd, 0, RESERVE_BYTES)
        finally:
            os.close(fd)
        os.rename(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def free_reserve(home: str) -> bool:
    try:
        os.unlink(os.path.join(home, RESERVE_NAME))
        return True
    except OSError:
        return False


def is_lock_error(exc: BaseException) -> bool:
    """SQLite's "database is locked" / "busy" (checked by name: a hook need not import sqlite3 for this)."""
    text = str(exc).lower()
    return type(exc).__name__ == "OperationalError" and ("locked" in text or "busy" in text)


def save(hook: str, event: dict[str, Any]) -> str:
    """Keep an event for a later replay in the data dir's spool; returns the file written. Raises OSError
    if the disk refuses."""
    return _write(spool_dir(), _record(hook, event), hook)


def save_anywhere(hook: str, event: dict[str, Any]) -> str:
    """Keep an event the data dir's disk refused: in the data dir's spool, else there after freeing the
    reserve, else in the temp dir's. Returns the file written; raises OSError when nowhere would take it."""
    record = _record(hook, event)
    try:
        return _write(spool_dir(), record, hook)
    except OSError as exc:
        if not is_space_error(exc):
            raise
    if free_reserve(data_home()):
        try:
            return _write(spool_dir(), record, hook)
        except OSError:
            pass
    folder = fallback_spool_dir(create=True)
    if folder is None:
        raise OSError("no private folder in the temp dir for the spool")
    return _write(folder, record, hook)


def _record(hook: str, event: dict[str, Any]) -> dict[str, Any]:
    from memory.base.bounds import bound
    from memory.base.privacy import clean_obj
    from memory.base.project import event_folder

    # The project the hook resolved, so a replay in another project's hook writes to the right database.
    project_dir = event_folder(event) or ""
    return {"hook": hook, "project_dir": clean_obj(project_dir), "spooled_at": time.time(),
            "event": clean_obj(bound(event)[0])}


def _write(folder: str, record: dict[str, Any], hook: str) -> str:
    os.makedirs(folder, mode=0o700, exist_ok=True)
    name = f"{time.time_ns():020d}-{os.getpid()}-{hook}.json"
    tmp = os.path.join(folder, f".{name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(json.dumps(record, ensure_ascii=False))
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    path = os.path.join(folder, name)
    os.rename(tmp, path)
    return path


def pending(folder: str | None = None) -> list[str]:
    """Spooled events, oldest first (claims left by a killed replayer count once stale)."""
    folder = folder or spool_dir()
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    now = time.time()
    out = []
    for n in names:
        if n.endswith(".json") and not n.startswith("."):
            out.append(n)
        elif n.endswith(".claimed"):
            try:
                if now - os.stat(os.path.join(folder, n)).st_mtime > CLAIM_STALE_S:
                    out.append(n)
            except OSError:
                pass
    return sorted(out)


def _claim(folder: str, name: str) -> str | None:
    base = name.split(".json", 1)[0]
    claimed = os.path.join(folder, f"{base}.json.{os.getpid()}.claimed")
    try:
        os.rename(os.path.join(folder, name), claimed)
    except OSError:
        return None  # another hook took it
    os.utime(claimed)
    return claimed


def replay(dispatch: Dispatch, budget_s: float = REPLAY_BUDGET_S, folder: str | None = None) -> int:
    """Replay spooled events through `dispatch` (memory/hook/run.py's), each in the project it was
    recorded in (their output is dropped: the session they belonged to
    has moved on) until the budget is spent. An event still refused by a locked database goes back to
    the spool. Returns how many were written."""
    folder = folder or spool_dir()
    names = pending(folder)
    if not names:
        return 0
    from memory.base.log import log, log_exception

    deadline = time.monotonic() + budget_s
    done = 0
    for name in names:
        if time.monotonic() > deadline:
            break
        claimed = _claim(folder, name)
        if claimed is None:
            continue
        try:
            with open(claimed, encoding="utf-8") as f:
                record = json.loads(f.read())
            hook, event = record["hook"], record["event"]
            if not isinstance(event, dict) or not isinstance(hook, str) or not hook.isidentifier():
                raise ValueError("not a spooled hook event")
        except Exception as exc:  # a damaged file: kept aside for `memory doctor`, never retried forever
            log("warning", f"spool: unreadable event {name}: {exc}", event="spool")
            os.replace(claimed, claimed + ".bad")
            continue
        try:
            dispatch(hook, event, str(record.get("project_dir") or "") or None, True)
        except Exception as exc:
            if type(exc).__name__ == "NotAProject":  # its folder is gone: nothing to record it in
                log("warning", f"spool: {exc}; event {name} dropped", event="spool")
                os.unlink(claimed)
                continue
            if is_lock_error(exc) or is_space_error(exc) and disk_refuses(data_home()):
                os.replace(claimed, os.path.join(folder, name.split(".json", 1)[0] + ".json"))
                break  # still locked, or the disk still full: the next hook tries again
            log_exception(f"spool replay of {hook}", exc)
            os.replace(claimed, claimed + ".bad")
            continue
        os.unlink(claimed)
        done += 1
    if done:
        log("info", f"spool: replayed {done} event(s) the data dir had refused", event="spool")
    return done
