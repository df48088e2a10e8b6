"""The hook process contract: read one JSON event, run the event's handler, print at most one JSON
object, exit 0 whatever happens. Errors go to the log in the data dir, never to the session."""

from __future__ import annotations

import os
import sys
import time

from memory.base.log import log, log_exception
from memory.fastpath import jsonlite as json  # not the json package: it imports re (~5-10 ms a hook)

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from collections.abc import Callable
    from typing import Any

    from memory.base.event import Event

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


def session_id(event: Event) -> str:
    return (event.session or os.environ.get("CLAUDE_CODE_SESSION_ID") or "unknown")[:128]


class Answered(Exception):
    """A handler's answer was ready when a write after it failed: the answer still goes out (recall works
    on a full or read-only data dir), and the write's error is handled as any other (the event kept)."""

    def __init__(self, out: dict[str, Any] | None, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.out, self.cause = out, cause


# The hooks whose answer may carry the one line about a fault (memory/hook/spool.py fault_line).
TELLS = ("session_start", "user_prompt_submit")


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


# Payload keys only another host's events carry (memory/hook/hosts.py detect): without them, and without
# `--host`, the event is Claude Code's and the adapters are not even imported.
_OTHER_HOST_KEYS = ("conversation_id", "cursor_version", "clineVersion", "hookName", "sessionId")


def _typed(name: str, raw: dict[str, Any]) -> Event:
    """The typed event the handlers read, made by its host's adapter (memory/hook/hosts.py)."""
    if len(sys.argv) < 2 and not os.environ.get("MEMORY_HOOK_HOST") and not any(k in raw for k in _OTHER_HOST_KEYS):
        from memory.base.event import from_claude

        return from_claude(name, raw)
    from memory.hook import hosts

    return hosts.adapt(hosts.host_name(sys.argv[1:]), name, raw)


def run(name: str) -> None:
    os.umask(0o077)  # every folder this hook (or the worker it starts) creates is 0700, every file 0600
    out: dict[str, Any] | None = None
    event: Event | None = None
    kept = False
    try:
        raw = read_event()
        if raw is None:
            log("warning", "no JSON object on stdin", event=name)
        else:
            event = _typed(name, _bounded(name, raw))
            out = dispatch(name, event)
    except BaseException as exc:  # noqa: BLE001 - a hook must never break the session
        out = None
        if isinstance(exc, Answered):
            out, exc = exc.out, exc.cause
        if type(exc).__name__ == "NotAProject":  # memory/hook/common.py: nothing to record, no error
            log("info", str(exc), event=name)
            os._exit(0)
        if isinstance(exc, TooLarge):
            from memory.base import notices

            log("warning", str(exc), event=name)
            notices.add("too-large", f"{exc} ({name} hook)")
            os._exit(0)
        kept = event is not None and _keep(name, event, exc)
        if not kept:
            log_exception(name, exc)
    if event is not None and name in TELLS:
        out = _with_fault_line(event, out)
    host = event.host if event is not None else "claude"
    if host != "claude" and out:
        from memory.hook import hosts

        out = hosts.write(host, name, out)  # how that host takes context back, or that it takes none
    try:
        if out:
            sys.stdout.write(json.dumps(out, ensure_ascii=False))
        sys.stdout.flush()
    except BaseException:  # noqa: BLE001
        pass
    if event is not None:
        _seen(host, name)
    if not kept:  # a write just refused: a replay now would only be refused again
        _replay_spool()
    for fn in _AT_EXIT:
        try:
            fn()
        except BaseException as exc:  # noqa: BLE001
            log_exception(f"{name} (at exit)", exc)
    os._exit(0)  # skip interpreter teardown: it is pure cost here, and the exit code must be 0


def _seen(host: str, name: str) -> None:
    """Record the last event seen from this host, after the answer is out (`memory doctor` lists them)."""
    try:
        from memory.base.config import data_home

        folder = os.path.join(data_home(), "hosts")
        try:
            f = open(os.path.join(folder, host), "w")
        except FileNotFoundError:
            os.makedirs(folder, exist_ok=True)
            f = open(os.path.join(folder, host), "w")
        with f:
            f.write(f"{name} {time.time():.0f}\n")
    except OSError:
        pass  # a full or read-only data dir: the hook's own work is what matters


def _bounded(name: str, event: dict[str, Any]) -> dict[str, Any]:
    """The event cut to memory/base/bounds.py's limits before any handler reads it (a 20 MB prompt took 6.7 s)."""
    from memory.base.bounds import bound

    event, cut = bound(event)
    if cut:
        log("info", f"input too large: {cut} string(s) cut or item(s) dropped", event=name)
    return event


def dispatch(name: str, event: Event, project_dir: str | None = None, replayed: bool = False
             ) -> dict[str, Any] | None:
    """Run the handler of a hook entry (HANDLERS) on one event; a spool replay gives the project folder the
    event was recorded in."""
    from memory.base import quiet

    why = quiet.reason(event, project_dir)
    if why is not None:  # paused or excluded: nothing recorded, nothing injected (memory/base/quiet.py)
        log("debug", f"{why[0]}: {why[1]}", event=name)
        if name == "session_start" and event.source != "compact" and not replayed \
                and quiet.tell(why, event, project_dir):  # compaction keeps it; an exclusion once a day
            return {"systemMessage": quiet.message(why)}
        return None
    # __import__ with a fromlist returns the module itself; not importlib.import_module: importing
    # importlib costs a hook ~0.5 ms.
    return __import__(HANDLERS[name], fromlist=("handle",)).handle(event, Call(project_dir, replayed))


# A fault this hook met and could record nowhere (memory/hook/spool.py): told in this hook's own answer.
_UNRECORDED: list[dict[str, Any]] = []


def _keep(name: str, event: Event, exc: BaseException) -> bool:
    """An event the database or the disk refused is kept for a later hook (memory/hook/spool.py) instead of
    lost: a database locked past its busy timeout in the data dir's spool; a full, read-only or unreachable
    data dir or a damaged database outside it, with the fault recorded for the user. False when the error
    was of another kind (logged as an error by the caller)."""
    try:
        from memory.hook import spool

        if spool.is_lock_error(exc):
            try:
                path = spool.save(name, event.claude())  # kept in Claude Code's shape
                log("warning", "write lock not granted within the busy timeout: event spooled as "
                    f"{os.path.basename(path)} for a later hook", event=name)
                return True
            except OSError:
                pass  # the data dir refuses the spool too: kept outside it, below
        elif not (spool.is_space_error(exc) or spool.is_corrupt_error(exc)):
            return False
        kept = spool.save_anywhere(name, event.claude(), exc)
        if spool.read_fault() is None:
            _UNRECORDED.append({"kind": spool.fault_kind(exc), "reason": str(exc)[:160],
                                "since": time.time(), "lost": 0 if kept else 1})
        log("warning", f"the data dir refused a write ({exc}): event "
            + (f"kept as {kept}" if kept else "lost: no room to keep it"), event=name)
        return True
    except BaseException as err:  # noqa: BLE001 - a hook must never break the session
        log_exception(f"{name} (spooling)", err)
        return False


def _spool_may_exist() -> bool:
    """Whether a spool of this data dir may exist: a stat and a few small listdirs when none does
    (importing spool.py costs ~0.6 M instructions, 1% of a cached Read hook). Only when a fallback folder
    holds a spool folder (this data dir's or another's) is this data dir's own spool in it looked for:
    its name imports notices and hashes the data dir's path (~1 M instructions with sha)."""
    from memory.base.config import data_home, fallback_dirs

    if os.path.isdir(os.path.join(data_home(), "spool")):
        return True
    bases = []
    for base in fallback_dirs():
        try:
            if any(n.startswith("spool-") for n in os.listdir(base)):  # an emptied spool folder is removed
                bases.append(base)
        except OSError:
            continue
    if not bases:
        return False
    from memory.base import notices

    return any(os.path.isdir(os.path.join(b, notices.fallback_spool_name())) for b in bases)


def _with_fault_line(event: Event, out: dict[str, Any] | None) -> dict[str, Any] | None:
    """The answer with what the user has not been told yet (shown to the user, not the model): the notices
    (memory/base/notices.py: a database moved aside, ...), once, and the one line about a fault, once a
    session."""
    try:
        from memory.base import notices

        problems = notices.pending()  # a few failed opens when there are none
        line, fault = None, bool(_UNRECORDED)
        if _UNRECORDED:
            from memory.hook import spool

            line = spool.describe(_UNRECORDED[-1], 0)
        elif _spool_may_exist():
            from memory.hook import spool

            line = spool.fault_line(session_id(event))
            fault = line is not None or spool.read_fault() is not None
        if problems:
            notices.clear()
        if fault:  # the fault's line says what the data dir's own notice would
            problems = [p for p in problems if p.get("kind") != "unwritable"]
        told = [t for t in (notices.summary(problems) if problems else None, line) if t]
        if not told:
            return out
        out = dict(out or {})
        out["systemMessage"] = "\n".join([*([out["systemMessage"]] if out.get("systemMessage") else []), *told])
        return out
    except BaseException as exc:  # noqa: BLE001 - a hook must never break the session
        log_exception("fault line", exc)
        return out


def _replay_spool() -> None:
    """Replay events an earlier hook spooled, within a small budget, after this hook's own answer is out,
    and forget the fault once all are written. Costs a few stat calls when there is no spool."""
    try:
        if not _spool_may_exist():
            return
        from memory.hook import spool

        deadline = time.monotonic() + spool.REPLAY_BUDGET_S
        written = 0
        for folder in spool.folders():  # a folder replays one event whatever its budget: the next only in time
            if written and time.monotonic() > deadline:
                break
            written += spool.replay(dispatch, budget_s=deadline - time.monotonic(), folder=folder)
        spool.clear_fault_if_over()
    except BaseException as exc:  # noqa: BLE001
        log_exception("spool replay", exc)


def context_output(event_name: str, text: str) -> dict[str, Any] | None:
    if not text:
        return None
    return {"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": text}}
