"""What follows a stored memory: the daily log line, and the cheap check that may queue an eviction.

Called by store.save after its transaction. Neither may ever fail a save (a hook must not lose a memory
because the log folder is read-only), so errors are logged and swallowed.
"""

from __future__ import annotations

import sqlite3

from memory.store import daily_log, limits

# Markdown files are indexed on every change: logging each section would flood the log with copies of
# files that are already on disk.
UNLOGGED_SOURCES = ("markdown",)


def after_save(db: sqlite3.Connection, project: str, memory_id: int, action: str, source: str) -> None:
    try:
        home = limits.home_of(limits.db_file(db))
        if home and source not in UNLOGGED_SOURCES:
            row = db.execute("SELECT type, title, content FROM memories WHERE id = ?", (memory_id,)).fetchone()
            if row:
                daily_log.append(home, project, memory_id, row["type"], row["title"], row["content"], action)
        if action == "inserted":
            limits.check_after_insert(db)
    except Exception as exc:  # never break a save
        from memory.base.log import log

        log("warning", f"after-save housekeeping failed: {exc!r}", event="store")
