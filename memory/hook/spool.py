"""Events a hook could not write are kept in a small spool and replayed by a later hook, so none is lost.
A database locked past the busy timeout (many sessions and the worker writing at once on a loaded machine)
keeps its event in `<data dir>/spool/`. A data dir that refuses writes (disk full, read-only, not
reachable, a damaged database) keeps it outside the data dir, in a private folder of the runtime dir
($XDG_RUNTIME_DIR, a tmpfs: another disk than the full one) or else the temp dir, one per data dir; past
those, the data dir's small reserve file (RESERVE_NAME, made at SessionStart) is freed to make room. Each
folder is bounded (MAX_EVENTS, MAX_BYTES): past it an event is counted as lost, not kept. What is spooled
has passed the privacy filter: nothing private reaches the disk.

The fault is recorded beside the events (FAULT_NAME: what refused, since when, how many were lost) and
becomes one line for the user at the next SessionStart or prompt, once a session (fault_line); it is
cleared once the events are written and the data dir takes writes again.

One file per event, written to a temporary name and renamed (a reader never sees half a file); a replayer
claims a file by renaming it, so two hooks never replay the same event; a claim left by a killed replayer
is taken back after CLAIM_STALE_S. Standard library only: this runs inside hooks."""

from __future__ import annotations

import os
import time

from memory.base.config import data_home, fallback_dirs
from memory.fastpath import jsonlite as json

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from collections.abc import Callable
    from typing import Any

    from memory.base.event import Event

    # memory/hook/run.py's dispatch(name, event, project_dir, replayed), passed in: run imports this
    # module, so this one does not import it back.
    Dispatch = Callable[[str, Event, str | None, bool], object]

REPLAY_BUDGET_S = 0.03  # a hook spends at most this replaying spooled events after its own work
CLAIM_STALE_S = 60.0
RESERVE_NAME = "reserve"
RESERVE_BYTES = 1024 * 1024  # ~200 spooled events of a few KB (a bounded event is at most ~300 KB)
# A spool folder's bounds: the runtime dir is memory (tmpfs), and a spool is a stopgap, not a store.
MAX_EVENTS = 2000
MAX_BYTES = 16 * 1024 * 1024
FAULT_NAME = "fault.json"
# ENOSPC, EDQUOT, EROFS, EFBIG (a file size limit), ENOTDIR, EACCES, EPERM (the data dir's path is blocked
# or not ours): numbers, so a hook need not import errno
_SPACE_ERRNOS = (28, 122, 30, 27, 20, 13, 1)
_SPACE_WORDS = ("disk is full", "readonly database", "disk i/o error", "unable to open database file")
_CORRUPT_WORDS = ("malformed", "not a database", "database corruption")


def spool_dir() -> str:
    return os.path.join(data_home(), "spool")


def fallback_spool_dirs() -> list[str]:
    """This data dir's spool folders outside it, best first (runtime dir, temp dir, /dev/shm)."""
    from memory.base import notices

    return [os.path.join(base, notices.fallback_spool_name()) for base in fallback_dirs()]


def _made(folder: str) -> bool:
    """A fallback spool folder made if missing, when its parent is private and ours."""
    from memory.base import notices

    if notices.private_fallback_dir(os.path.dirname(folder)) is None:
        return False
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        return True
    except OSError:
        return False


def folders() -> list[str]:
    """The spool folders of this data dir that exist: the data dir's own, then those outside it."""
    return [f for f in (spool_dir(), *fallback_spool_dirs()) if os.path.isdir(f)]


def is_corrupt_error(exc: BaseException) -> bool:
    """SQLite's word for a damaged database file (a truncated file or a bad page read mid-query)."""
    text = str(exc).lower()
    return type(exc).__name__ in ("DatabaseError", "OperationalError", "DatabaseCorrupt") and \
        any(w in text for w in _CORRUPT_WORDS)


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
    """Keep an event for a later replay in the data dir's spool (a locked database); returns the file
    written. Raises OSError if the disk refuses or the spool is past its bounds."""
    record = _record(hook, event)
    written = _write_bounded(spool_dir(), record, hook, len(json.dumps(record, ensure_ascii=False).encode()))
    if written is None:
        raise OSError(f"the spool {spool_dir()} is full or refused the event")
    return written


def save_anywhere(hook: str, event: dict[str, Any], exc: BaseException) -> str | None:
    """Keep an event the data dir refused (`exc`): outside the data dir (runtime dir, temp dir), else in
    its spool after freeing the reserve, and record the fault for the user. Returns the file written, or
    None when no folder would take it (full, or past its bounds): the event is counted as lost."""
    record = _record(hook, event)
    size = len(json.dumps(record, ensure_ascii=False).encode())
    written = None
    for folder in fallback_spool_dirs():
        written = _made(folder) and _write_bounded(folder, record, hook, size) or None
        if written:
            break
        _drop_if_empty(folder)
    if written is None and free_reserve(data_home()):
        written = _write_bounded(spool_dir(), record, hook, size)
    record_fault(exc, kept=written is not None)
    return written


def _drop_if_empty(folder: str) -> None:
    """A spool folder made for a write the disk then refused is not left behind (hooks look for one)."""
    try:
        os.rmdir(folder)
    except OSError:
        pass


def _write_bounded(folder: str, record: dict[str, Any], hook: str, size: int) -> str | None:
    """The event written in `folder` when the folder stays within its bounds and the disk takes it."""
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        names = [e for e in os.scandir(folder) if e.name.endswith(".json") and not e.name.startswith(".")
                 and e.name != FAULT_NAME]
        if len(names) >= MAX_EVENTS or sum(e.stat().st_size for e in names) + size > MAX_BYTES:
            return None
        return _write(folder, record, hook)
    except OSError:
        return None


def fault_kind(exc: BaseException) -> str:
    """What refused the write, as the user would say it: the data dir's state first (SQLite says "disk
    I/O error" for a full disk), else the error's own."""
    if is_corrupt_error(exc):
        return "corrupt"
    if is_lock_error(exc):
        return "busy"
    home = data_home()
    try:
        st = os.statvfs(home)
        if st.f_flag & os.ST_RDONLY:
            return "read-only"
        if st.f_bavail * st.f_frsize < RESERVE_BYTES:
            return "full"
    except OSError:
        pass
    errno = getattr(exc, "errno", None)
    text = str(exc).lower()
    if errno in (28, 122, 27) or "full" in text:
        return "full"
    if errno == 30 or "readonly" in text or "read-only" in text:
        return "read-only"
    return "unwritable"


def _fault_paths() -> list[str]:
    return [os.path.join(f, FAULT_NAME) for f in (*fallback_spool_dirs(), spool_dir())]


def read_fault() -> dict[str, Any] | None:
    """The recorded fault of this data dir (the newest, if several folders hold one)."""
    found = []
    for path in _fault_paths():
        try:
            with open(path, encoding="utf-8") as f:
                item = json.loads(f.read())
            if isinstance(item, dict):
                found.append(item)
        except (OSError, ValueError):
            continue
    return max(found, key=lambda f: float(f.get("last") or 0)) if found else None


def record_fault(exc: BaseException, kept: bool) -> None:
    """Note the refused write beside the events: its kind, the first and last time, how many were lost.
    Written where an event would be (the first folder that takes it)."""
    from memory.base.privacy import clean

    now = time.time()
    fault = read_fault() or {"since": now, "lost": 0, "told": []}
    reason = getattr(exc, "strerror", None) or str(exc)[:160]
    fault.update(kind=fault_kind(exc), reason=clean(str(reason)), last=now, data_dir=data_home())
    if not kept:
        fault["lost"] = int(fault.get("lost") or 0) + 1
    text = json.dumps(fault, ensure_ascii=False)
    for folder in (*fallback_spool_dirs(), spool_dir()):
        try:
            if folder != spool_dir() and not _made(folder):
                continue
            _replace(os.path.join(folder, FAULT_NAME), text)
            return
        except OSError:
            _drop_if_empty(folder)


def _replace(path: str, text: str) -> None:
    from memory.store.workspace import write_private  # atomic and owner-only

    write_private(path, text)


def waiting() -> int:
    return sum(len(pending(f)) for f in folders())


def _when(at: float) -> str:
    now = time.time()
    fmt = "%H:%M" if time.localtime(at)[:3] == time.localtime(now)[:3] else "%b %d %H:%M"
    return time.strftime(fmt, time.localtime(at))


def describe(fault: dict[str, Any], kept: int) -> str:
    """One line: what is wrong, what became of the events, what to do."""
    home = str(fault.get("data_dir") or data_home())
    kind = fault.get("kind")
    what = {"full": f"the data disk is full ({home})",
            "read-only": f"the data dir {home} is read-only",
            "corrupt": f"the database in {home} is damaged",
            "busy": "the database stayed locked"}.get(str(kind), f"the data dir {home} cannot be written "
                                                                f"({fault.get('reason')})")
    lost = int(fault.get("lost") or 0)
    parts = [f"{kept} event{'s' if kept != 1 else ''} kept aside"] if kept else []
    if lost:
        parts.append(f"{lost} lost (no room to keep them)")
    since = _when(float(fault.get("since") or time.time()))
    todo = {"full": "free some space", "read-only": "make it writable", "corrupt": "run `memory doctor --repair`",
            "busy": "find what holds the database (`memory worker status`)"}.get(str(kind),
                                                                                   "fix the path or MEMORY_HOME")
    return (f"memory: {what}; {', '.join(parts) or 'nothing kept'}, nothing recorded since {since}. "
            f"To fix: {todo} (`memory doctor` shows more).")


def fault_line(session_id: str) -> str | None:
    """The fault's line for this session, once: None when there is none or this session was told."""
    fault = read_fault()
    if fault is None or fault.get("kind") == "busy" and not fault.get("lost"):  # a lock passes: said if it cost
        return None
    from memory.fastpath.sha import sha256

    told = [str(t) for t in fault.get("told") or []]
    me = sha256(session_id.encode()).hexdigest()[:12]
    if me in told:
        return None
    line = describe(fault, waiting())
    fault["told"] = [*told[-20:], me]
    text = json.dumps(fault, ensure_ascii=False)
    for path in _fault_paths():
        if os.path.exists(path):
            try:
                _replace(path, text)
            except OSError:
                pass
    return line


def clear_fault_if_over() -> bool:
    """Forget the fault once nothing waits, the data dir takes writes again and what was lost was told;
    an emptied spool folder outside the data dir is removed (hooks look for one: memory/hook/run.py)."""
    fault = read_fault()
    if fault is None:
        for folder in fallback_spool_dirs():
            _drop_if_empty(folder)
        return False
    if waiting() or disk_refuses(data_home()):
        return False
    if int(fault.get("lost") or 0) and not fault.get("told"):
        return False
    for path in _fault_paths():
        try:
            os.unlink(path)
        except OSError:
            pass
    clear_fault_if_over()  # and the emptied folders
    return True


def _record(hook: str, event: dict[str, Any]) -> dict[str, Any]:
    from memory.base.bounds import bound
    from memory.base.privacy import clean_obj
    from memory.base.project import event_folder

    # The project the hook resolved, so a replay in another project's hook writes to the right database.
    cwd = event.get("cwd")
    project_dir = event_folder(cwd if isinstance(cwd, str) else "") or ""
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
        if n.endswith(".json") and not n.startswith(".") and n != FAULT_NAME:
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
    recorded in (their output is dropped: the session they belonged to has moved on) until the budget is
    spent, the first event whatever the budget. An event still refused by a locked database goes back to
    the spool. Returns how many were written."""
    folder = folder or spool_dir()
    names = pending(folder)
    if not names:
        return 0
    from memory.base.log import log, log_exception

    deadline = time.monotonic() + budget_s
    done = tried = 0
    for name in names:
        # At least one event a call whatever the budget: on a loaded machine a hook may be descheduled past its
        # whole budget before it starts, and a spool must still drain by one event a hook.
        if tried and time.monotonic() > deadline:
            break
        claimed = _claim(folder, name)
        if claimed is None:
            continue
        tried += 1
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
            from memory.base.event import from_claude  # kept in Claude Code's shape (memory/hook/run.py _keep)

            dispatch(hook, from_claude(hook, event), str(record.get("project_dir") or "") or None, True)
        except Exception as err:
            cause = getattr(err, "cause", None) or err  # memory/hook/run.py Answered: the write's own error
            if type(cause).__name__ == "NotAProject":  # its folder is gone: nothing to record it in
                log("warning", f"spool: {cause}; event {name} dropped", event="spool")
                os.unlink(claimed)
                continue
            if is_lock_error(cause) or is_corrupt_error(cause) or is_space_error(cause) and disk_refuses(data_home()):
                os.replace(claimed, os.path.join(folder, name.split(".json", 1)[0] + ".json"))
                break  # still locked, damaged (until `memory doctor --repair`) or full: a later hook tries again
            log_exception(f"spool replay of {hook}", cause)
            os.replace(claimed, claimed + ".bad")
            continue
        os.unlink(claimed)
        done += 1
    if done:
        log("info", f"spool: replayed {done} event(s) the data dir had refused", event="spool")
    return done
