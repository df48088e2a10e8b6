"""The repository map at SessionStart: read the map the worker last built, queue the next build; never build.

Hot: SessionStart calls `session_map` only when MEMORY_SESSION_MAP_TOKENS is above 0 (off by default). It
costs one indexed SELECT of the stored map (`repo_maps`) and one queue write; building (parsing every file,
ranking) is the worker's `repo_map` job in memory/outline/mapbuild.py, incremental by file hash."""

from __future__ import annotations

import sqlite3

JOB = "repo_map"
# A stored map younger than this is not rebuilt at a session's start: sessions started one after another
# cost no queue write (~10 ms of the hook) and no worker run.
REFRESH_S = 300


def stored(db: sqlite3.Connection, root: str, tokens: int) -> tuple[str, float] | None:
    """(text, built_at) of the map last built for `root` with this budget, or None."""
    row = db.execute("SELECT text, built_at FROM repo_maps WHERE root = ? AND tokens = ?", (root, tokens)).fetchone()
    return (row[0], row[1]) if row else None


def queue_build(db: sqlite3.Connection, root: str, tokens: int) -> None:
    """Ask the worker to bring the stored map of `root` up to date (one pending job per root and budget)."""
    from memory.store import queue

    queue.enqueue(db, JOB, {"root": root, "tokens": tokens}, dedup_key=f"{JOB}:{tokens}:{root}")


def session_map(db: sqlite3.Connection, root: str, tokens: int) -> str | None:
    """SessionStart's map section: the stored map under a heading (None before the first build); a new build
    is queued when there is none or it is over REFRESH_S old, so a changed repository is mapped again in the
    background."""
    if not root or tokens <= 0:
        return None
    import os.path

    root = os.path.realpath(root)  # as the builder keys it (a symlinked checkout is one repository)
    found = stored(db, root, tokens)
    import time

    if found is None or time.time() - found[1] > REFRESH_S:
        queue_build(db, root, tokens)
    if found is None or not found[0]:
        return None
    from memory.base import fence

    # Signature lines are the repository's text: data, inside the one untrusted block (memory/base/fence.py).
    return fence.wrap("## Repository map (most referenced definitions)\n" + found[0])
