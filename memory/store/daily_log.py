"""A human-readable daily log of what was saved: <data dir>/daily/YYYY-MM-DD.md, one line per memory.

It is written from store.save (so from hooks): one append, no reads. The text is what the store kept,
after the privacy filter, and the content is cut at 200 characters. The markdown indexer never reads
the data dir, so the log is not fed back into memory.
"""

from __future__ import annotations

import os
import time

from memory.base.config import env
from memory.base.log import open_append

MAX_CONTENT_CHARS = 200
FOLDER = "daily"


def path_for(home: str, when: float | None = None) -> str:
    return os.path.join(home, FOLDER, time.strftime("%Y-%m-%d", time.localtime(when)) + ".md")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def entry(project: str, memory_id: int, type_: str, title: str, content: str, action: str,
          when: float | None = None, stamp: str | None = None) -> str:
    """One line; `stamp` (HH:MM of `when`) when the caller has it: a batch formats its time once."""
    body = _one_line(content)
    if body.lower().startswith(_one_line(title).lower()):
        body = body[len(_one_line(title)):].lstrip(" :-")
    if len(body) > MAX_CONTENT_CHARS:
        body = body[: MAX_CONTENT_CHARS - 3].rstrip() + "..."
    stamp = stamp or time.strftime("%H:%M", time.localtime(when))
    verb = "" if action == "inserted" else f" ({action})"
    line = f"- {stamp} `{project}` #{memory_id} [{type_}]{verb} **{_one_line(title)}**"
    return f"{line}: {body}\n" if body else line + "\n"


def append(home: str, project: str, memory_id: int, type_: str, title: str, content: str, action: str) -> str | None:
    """Append one entry; returns the log's path (None when the log is off)."""
    return append_many(home, [(project, memory_id, type_, title, content, action)])


def append_many(home: str, entries: list[tuple[str, int, str, str, str, str]]) -> str | None:
    """Append entries (project, id, type, title, content, action) in one write; the log's path or None."""
    if env("MEMORY_DAILY_LOG").strip().lower() in ("off", "0", "false", "no") or not entries:
        return None
    now = time.time()
    path = path_for(home, now)
    fd = open_append(path)  # no symlink followed, at the file or its folder
    with os.fdopen(fd, "a", encoding="utf-8") as fh:
        if fh.tell() == 0:
            fh.write(f"# Memories saved on {time.strftime('%Y-%m-%d', time.localtime(now))}\n\n")
        stamp = time.strftime("%H:%M", time.localtime(now))
        fh.write("".join(entry(*e, stamp=stamp) for e in entries))
    return path
