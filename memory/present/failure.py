"""What a failed command or tool says to a person: one line (what went wrong, where, what to do), never a
traceback. The traceback goes to the data dir's log when it can be written, and to stderr as well with
MEMORY_DEBUG set. Used by the CLI's group (memory/cli/failure.py) and the MCP server's tools."""

from __future__ import annotations

import os
import sys

from memory.base.config import data_home, log_path


def _todo(exc: BaseException) -> str:
    """What is wrong and what to do, by the kind of failure."""
    from memory.hook import spool
    from memory.recall.vectors import is_index_damage

    home = data_home()
    if spool.is_corrupt_error(exc):
        return f"the database in {home} is damaged ({exc}). Run `memory doctor --repair`"
    if spool.is_lock_error(exc):
        why = str(exc).partition(": ")[2]  # a reason given after SQLite's own words (memory/store/db.py)
        return f"{why or 'the database stayed locked by another process past the busy timeout'}. Try again"
    if spool.is_space_error(exc):
        kind = spool.fault_kind(exc)
        what = {"full": f"the data disk is full ({home})", "read-only": f"the data dir {home} is read-only"}.get(
            kind, f"the data dir {home} cannot be written ({getattr(exc, 'strerror', None) or exc})")
        todo = {"full": "Free some space", "read-only": "Make it writable"}.get(kind, "Fix the path or MEMORY_HOME")
        return f"{what}. {todo}; `memory doctor` shows more"
    if is_index_damage(exc):
        return f"the semantic index is damaged ({str(exc)[:200]}). Run `memory reindex`"
    return (f"{type(exc).__name__}: {str(exc)[:300]}. The details are in {log_path()}; `memory doctor` checks "
            "the install")


def explain(command: str, exc: BaseException) -> str:
    """The one line for a failed command (privacy-filtered: an error may quote recorded text)."""
    from memory.base.privacy import clean

    try:
        text = _todo(exc)
    except Exception:  # noqa: BLE001 - classifying must not fail the message itself
        text = f"{type(exc).__name__}: {str(exc)[:300]}"
    return clean(f"memory {command} failed: {text}.".replace("..", ".").replace("\n", " "))


def report(command: str, exc: BaseException) -> str:
    """Log the traceback (to stderr too with MEMORY_DEBUG) and return the line."""
    from memory.base.log import log_exception

    try:
        log_exception(f"cli {command}", exc)
    except Exception:  # noqa: BLE001 - a log that cannot be written must not hide the line
        pass
    if os.environ.get("MEMORY_DEBUG"):
        import traceback

        traceback.print_exception(exc, file=sys.stderr)
    return explain(command, exc)
