"""The hook process contract: read one JSON event, run the event's handler, print at most one JSON
object, exit 0 whatever happens. Errors go to the log in the data dir, never to the session."""

from __future__ import annotations

import os
import sys
import time

from memory.base import jsonlite as json  # not the json package: it imports re (~5-10 ms a hook)
from memory.base.log import log, log_exception

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from collections.abc import Callable
    from typing import Any

# Each entrypoint (hooks/<name>.py, the `args` of hooks/hooks.json) and the module whose handle(event, call)
# answers it; only the one module a hook needs is imported.
HANDLERS = {
    "session_start": "memory.hook.session_start",
    "user_prompt_submit": "memory.hook.user_prompt_submit",
    "pre_tool_use": "memory.hook.pre_tool_use",
    "post_tool_use": "memory.hook.post_tool_use",
    "pre_compact": "memory.hook.pre_compact",
    "stop": "memory.hook.stop",
    "session_end": "memory.hook.session_end",
}
MAX_STDIN = 64 * 1024 * 1024  # parsing 64 MB costs ~150 ms; memory/base/bounds.py then cuts the event to ~256 KB


class Call:
    """How a handler is run: for Claude Code's own event (project_dir None: the project comes from the
    environment and the event), or replayed from the spool with the project folder recorded then."""

    __slots__ = ("project_dir", "replayed")

    def __init__(self, project_dir: str | None = None, replayed: bool = False) -> None:
        self.project_dir, self.replayed = project_dir, replayed


# What a handler leaves to do once the answer is out (memory/hook/common.py: close its databases).
_AT_EXIT: list[Callable[[], None]] = []


def at_exit(fn: Callable[[], None]) -> None:
    """Run `fn` after this hook's answer and spool replay, before the process exits (os._exit runs nothing)."""
    if fn not in _AT_EXIT:
        _AT_EXIT.append(fn)


class TooLarge(Exception):
    """The event did not fit in MAX_STDIN: it cannot be parsed, so it is not recorded (and the user told)."""


def read_event() -> dict[str, Any] | None:
    raw = sys.stdin.buffer.read(MAX_STDIN)
    if len(raw) >= MAX_STDIN and sys.stdin.buffer.read(1):
        raise TooLarge(f"an event larger than {MAX_STDIN // 2**20} MB was not recorded")
    if not raw.strip():
        return None
    value = json.loads(raw.decode("utf-8", "replace"))
    return value if isinstance(value, dict) else None


def run(name: str) -> None:
    os.umask(0o077)  # every folder this hook (or the worker it starts) creates is 0700, every file 0600
    out: dict[str, Any] | None = None
    event: dict[str, Any] | None = None
    try:
        event = read_event()
        if event is None:
            log("warning", "no JSON object on stdin", event=name)
        else:
            event = _bounded(name, event)
            out = dispatch(name, event)
    except BaseException as exc:  # noqa: BLE001 - a hook must never break the session
        out = None
        if type(exc).__name__ == "NotAProject":  # memory/hook/common.py: nothing to record, no error
            log("info", str(exc), event=name)
            os._exit(0)
        if isinstance(exc, TooLarge):
            from memory.base import notices

            log("warning", str(exc), event=name)
            notices.add("too-large", f"{exc} ({name} hook)")
            os._exit(0)
        if event is not None and _spool_if_locked(name, event, exc):
            os._exit(0)  # the database is busy: the spooled event is left to a later hook (logged as such)
        if event is not None and _spool_if_refused(name, event, exc):
            os._exit(0)  # the disk is full or read-only: kept, the user told, replayed when it takes writes
        log_exception(name, exc)
    try:
        if out:
            sys.stdout.write(json.dumps(out, ensure_ascii=False))
        sys.stdout.flush()
    except BaseException:  # noqa: BLE001
        pass
    _replay_spool()
    for fn in _AT_EXIT:
        try:
            fn()
        except BaseException as exc:  # noqa: BLE001
            log_exception(f"{name} (at exit)", exc)
    os._exit(0)  # skip interpreter teardown: it is pure cost here, and the exit code must be 0


def _bounded(name: str, event: dict[str, Any]) -> dict[str, Any]:
    """The event cut to memory/base/bounds.py's limits before any handler reads it (a 20 MB prompt took 6.7 s)."""
    from memory.base.bounds import bound

    event, cut = bound(event)
    if cut:
        log("info", f"input too large: {cut} string(s) cut or item(s) dropped", event=name)
    return event


def dispatch(name: str, event: dict[str, Any], project_dir: str | None = None, replayed: bool = False
             ) -> dict[str, Any] | None:
    """Run the handler of a hook entry (HANDLERS) on one event; a spool replay gives the project folder the
    event was recorded in."""
    from memory.base import quiet

    why = quiet.reason(event, project_dir)
    if why is not None:  # paused or excluded: nothing recorded, nothing injected (memory/base/quiet.py)
        log("debug", f"{why[0]}: {why[1]}", event=name)
        if name == "session_start" and event.get("source") != "compact" and not replayed \
                and quiet.tell(why, event, project_dir):  # compaction keeps it; an exclusion once a day
            return {"systemMessage": quiet.message(why)}
        return None
    # __import__ with a fromlist returns the module itself; not importlib.import_module: importing
    # importlib costs a hook ~0.5 ms.
    return __import__(HANDLERS[name], fromlist=("handle",)).handle(event, Call(project_dir, replayed))


def _spool_if_locked(name: str, event: dict[str, Any], exc: BaseException) -> bool:
    """An event refused by a database locked past its busy timeout is kept for a later hook (memory/hook/spool.py)
    instead of lost."""
    try:
        from memory.hook import spool

        if not spool.is_lock_error(exc):
            return False
        path = spool.save(name, event)
        log("warning", f"write lock not granted within the busy timeout: event spooled as {os.path.basename(path)} "
            "for a later hook", event=name)
        return True
    except BaseException as err:  # noqa: BLE001 - a hook must never break the session
        log_exception(f"{name} (spooling)", err)
        return False


def _spool_if_refused(name: str, event: dict[str, Any], exc: BaseException) -> bool:
    """An event the data dir's disk refused (full, read-only, over quota) is kept (memory/hook/spool.py:
    save_anywhere) and a notice recorded for the next SessionStart and `memory doctor`."""
    try:
        from memory.base import notices
        from memory.hook import spool

        if not spool.is_space_error(exc):
            return False
        reason = getattr(exc, "strerror", None) or str(exc)[:120]
        try:
            path = spool.save_anywhere(name, event)
        except OSError as err:
            notices.add("disk-lost", f"the data dir could not be written ({reason}) and an event could not be "
                                     f"kept anywhere ({err.strerror or err}): it is lost. Free some space; run "
                                     "`memory doctor`.")
            return True
        notices.add("disk-full", f"the data dir could not be written ({reason}): events are kept in "
                                 f"{os.path.dirname(path)} and saved when it can be written again. Free some "
                                 "space; run `memory doctor`.")
        log("warning", f"the data dir refused a write ({reason}): event spooled as {path}", event=name)
        return True
    except BaseException as err:  # noqa: BLE001 - a hook must never break the session
        log_exception(f"{name} (spooling)", err)
        return False


def _replay_spool() -> None:
    """Replay events an earlier hook spooled, within a small budget, after this hook's own answer is out.
    Costs one failed listdir when there is no spool."""
    try:
        from memory.base.config import data_home, fallback_dir

        # Two stat calls when there is no spool: the data dir's, and the temp dir's fallback folder of the
        # full-disk case (importing spool.py costs ~0.6 M instructions, 1% of a cached Read hook). Only when
        # that folder exists (notices or another data dir may have made it) is this data dir's own spool in it
        # looked for: its name imports notices and hashes the data dir's path (~1 M instructions with sha).
        here = os.path.join(data_home(), "spool")
        if not os.path.isdir(here):
            fallback = fallback_dir()
            if not os.path.isdir(fallback):
                return
            from memory.base import notices

            if not os.path.isdir(os.path.join(fallback, notices.fallback_spool_name())):
                return
        from memory.hook import spool

        deadline = time.monotonic() + spool.REPLAY_BUDGET_S
        for folder in spool.folders():
            spool.replay(dispatch, budget_s=deadline - time.monotonic(), folder=folder)
    except BaseException as exc:  # noqa: BLE001
        log_exception("spool replay", exc)


def context_output(event_name: str, text: str) -> dict[str, Any] | None:
    if not text:
        return None
    return {"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": text}}
