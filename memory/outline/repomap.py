"""The repository map at SessionStart: read the map the worker last built, queue the next build; never build.

Hot: SessionStart calls `session_map` only when MEMORY_SESSION_MAP_TOKENS is above 0 (off by default). It
costs one indexed SELECT of the stored map (`repo_maps`) and one queue write; building (parsing every file,
ranking) is the worker's `repo_map` job in memory/outline/mapbuild.py, incremental by file hash."""

from __future__ import annotations

import sqlite3

JOB = "repo_map"


def stored(db: sqlite3.Connection, root: str, tokens: int) -> str | None:
    """The map last built for `root` with this budget, or None."""
    row = db.execute("SELECT text FROM repo_maps WHERE root = ? AND tokens = ?", (root, tokens)).fetchone()
    return row[0] if row and row[0] else None


def queue_build(db: sqlite3.Connection, root: str, tokens: int) -> None:
    """Ask the worker to bring the stored map of `root` up to date (one pending job per root and budget)."""
    from memory.store import queue

    queue.enqueue(db, JOB, {"root": root, "tokens": tokens}, dedup_key=f"{JOB}:{tokens}:{root}")


def session_map(db: sqlite3.Connection, root: str, tokens: int) -> str | None:
    """SessionStart's map section: the stored map under a heading (None before the first build); the build
    of the next one is queued either way, so a changed repository is mapped again in the background."""
    if not root or tokens <= 0:
        return None
    import os.path

    root = os.path.realpath(root)  # as the builder keys it (a symlinked checkout is one repository)
    text = stored(db, root, tokens)
    queue_build(db, root, tokens)
    if not text:
        return None
    return "## Repository map (most referenced definitions)\n" + text
