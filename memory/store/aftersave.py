"""What follows a stored memory: the daily log line, and the cheap check that may queue an eviction.

Called by store.save and store.save_many after their transaction. Neither may ever fail a save (a hook must
not lose a memory because the log folder is read-only), so errors are logged and swallowed.
"""

from __future__ import annotations

import sqlite3

from memory.store import daily_log, limits

TYPE_CHECKING = False  # not the typing module: importing it costs a hook several ms
if TYPE_CHECKING:
    from memory.store import Saved

# Markdown files are indexed on every change: logging each section would flood the log with copies of
# files that are already on disk.
UNLOGGED_SOURCES = ("markdown",)


def after_save_many(db: sqlite3.Connection, project: str, saved: list[tuple[Saved, str]], *,
                    sampled: bool = False) -> None:
    """The log lines of saved memories (each with its source) in one append, then one size check. A batch
    counts its rows (`sampled` off: ~3 ms per 100,000) where a single save counts at one insert in 32
    (limits.may_be_over): one check per batch must not miss a cap the batch passed."""
    try:
        home = limits.home_of(limits.db_file(db))
        if home:
            daily_log.append_many(home, [(project, s.id, *s.stored, s.action) for s, source in saved
                                         if s.id is not None and s.stored and source not in UNLOGGED_SOURCES])
        if any(s.action == "inserted" for s, _ in saved):
            limits.check_after_insert(db, sampled=sampled)
    except Exception as exc:  # never break a save
        from memory.base.log import log

        log("warning", f"after-save housekeeping failed: {exc!r}", event="store")
