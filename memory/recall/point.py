"""Recall at the point of action: before an Edit, Write or MultiEdit of a file (or a Bash command that names
one), the few decisions, fixes, failures and changes that other sessions recorded about that file, the ones
about the symbols the edit touches first; once per file per session, and nothing when nothing relates.

Hot side (a PreToolUse hook): standard library and SQLite only; the memories that name the file are found by
index (`memory_files`, kept by triggers from memories.files), at most CANDIDATES of them ranked."""

from __future__ import annotations

import os
import time

from memory.base import fence
from memory.base.definitions import enclosing, symbol_name
from memory.recall.search import hit_from_row
from memory.store import log_access, symbols
from memory.store.workspace import Workspace

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    import sqlite3

KIND = "inject-edit"  # access_log / injections kind: `memory why` shows it; prompt recall skips what it showed
SHOWN = 3  # lines at most: a note beside an edit, not a search result page
CANDIDATES = 60  # newest memories naming the file that are ranked (a file edited in every session stays cheap)
# What a memory about a file is worth beside an edit: what was decided and what broke first, then what was
# learned, then what was changed (a change names the session's task, the "why" of that edit).
_WEIGHT = {"decision": 1.0, "bugfix": 0.9, "learning": 0.8, "discovery": 0.6, "fact": 0.6, "change": 0.5,
           "feature": 0.5, "refactor": 0.5, "observation": 0.3}
_COLUMNS = ("m.id, m.title, m.type, m.created_at, m.session_id, m.content, m.importance, m.project, m.origin, "
            "m.origin_detail, m.source, m.tags, m.files, m.author, m.machine, m.flags")


def recall(ws: Workspace, session_id: str, path: str, old_text: str = "") -> str:
    """The fenced note for an edit of `path` (absolute), or '' when nothing relates or it was given already."""
    if not path or _given(ws.db, session_id, path):
        return ""
    rows = _candidates(ws.db, session_id, path)
    if not rows:
        return ""
    data = symbols.read(path)  # read once: the staleness check and placing the edit both need it
    if data is not None:  # what changed in the file since a memory was made labels it, lazily
        symbols.check(ws.db, path, data.decode("utf-8", "replace"))
    old = symbols.stale(ws.db, [r["id"] for r in rows])
    names = _touched(ws.db, path, old_text, data or b"")
    about = _about(ws.db, [r["id"] for r in rows], path, names)
    scores = {r["id"]: _score(r, names, r["id"] in old, r["id"] in about) for r in rows}
    # Rows saved before the flag knew their form are read again (memory/base/fence.py is_flagged), best first,
    # until SHOWN pass: the flag withholds a memory here as at startup and per prompt.
    ranked: list[sqlite3.Row] = []
    for r in sorted(rows, key=lambda r: -scores[r["id"]]):
        if len(ranked) == SHOWN:
            break
        if not fence.is_flagged(r, r["title"], r["content"]):
            ranked.append(r)
    if not ranked:
        return ""
    hits = [hit_from_row(r, scores[r["id"]]) for r in ranked]
    body = _render(ws, path, ranked, names, old)
    text = fence.wrap(body, 2000)
    log_access(ws.db, [h.id for h in hits], KIND, session_id, path,
               parts={h.id: {"score": h.score} for h in hits}, text=text, mode="file")
    return text


def _given(db: sqlite3.Connection, session_id: str, path: str) -> bool:
    return db.execute("SELECT 1 FROM injections WHERE session_id = ? AND kind = ? AND query = ? LIMIT 1",
                      (session_id, KIND, path[:200])).fetchone() is not None


def _candidates(db: sqlite3.Connection, session_id: str, path: str) -> list[sqlite3.Row]:
    """Memories of other sessions that name the file in `files`, newest first; prompts and reads left out."""
    return db.execute(
        f"""SELECT {_COLUMNS} FROM memory_files f JOIN memories m ON m.id = f.memory_id
            WHERE f.path = ? AND coalesce(m.session_id, '') != ? AND m.type NOT IN ('prompt', 'handoff')
              AND m.title NOT LIKE 'Read %' AND (m.expires_at IS NULL OR m.expires_at > ?)
              AND (m.flags IS NULL OR m.flags = '')
            ORDER BY m.created_at DESC LIMIT {CANDIDATES}""", (path, session_id, time.time())).fetchall()


def _about(db: sqlite3.Connection, ids: list[int], path: str, names: list[str]) -> set[int]:
    """Which memories recorded one of `names` of this file as a definition they are about (memory_symbols)."""
    if not ids or not names:
        return set()
    return {r[0] for r in db.execute(
        f"SELECT memory_id FROM memory_symbols WHERE path = ? AND name IN ({','.join('?' * len(names))}) "
        f"AND memory_id IN ({','.join('?' * len(ids))})", [path, *names, *ids])}


def _score(row: sqlite3.Row, names: list[str], stale: bool = False, recorded: bool = False) -> float:
    """Kind of memory first, then whether it is about a definition the edit is in (recorded so, or naming it),
    then how recent it is; a memory whose code has changed since counts half."""
    weight = _WEIGHT.get(row["type"], 0.3)
    about = 1.0 if recorded or names and _mentions(row["title"] + "\n" + row["content"], names) else 0.0
    age_days = max(0.0, (time.time() - row["created_at"]) / 86400)
    score = weight + 0.6 * about + 0.2 / (1 + age_days / 30)
    return score / 2 if stale else score


def _mentions(text: str, names: list[str]) -> bool:
    for name in names:
        at = text.find(name)
        while at >= 0:
            before = text[at - 1] if at else " "
            after = text[at + len(name)] if at + len(name) < len(text) else " "
            if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
                return True
            at = text.find(name, at + 1)
    return False


def _outline(db: sqlite3.Connection, path: str) -> str:
    row = db.execute("SELECT outline FROM file_signatures WHERE path = ?", (path,)).fetchone()
    return row[0] if row else ""


def _touched(db: sqlite3.Connection, path: str, old_text: str, data: bytes) -> list[str]:
    """The definitions the edit is in, innermost first: from the file's cached outline, or (a file too short to
    be outlined) from the definition lines above the edit. `data`: the file as it is now, before the edit."""
    at = data.find(old_text.encode("utf-8", "replace")) if old_text.strip() else -1
    if at < 0:
        return []
    line = data.count(b"\n", 0, at) + 1
    return symbols_at(_outline(db, path), line) or enclosing(data, line)


def symbols_at(outline: str, line: int) -> list[str]:
    """The names of the outline rows (`START-END signature`) whose range holds `line`, innermost first."""
    if not outline or line <= 0:
        return []
    found: list[tuple[int, int, str]] = []
    for row in outline.splitlines():
        head, _, rest = row.strip().partition(" ")
        start, _, end = head.partition("-")
        if not start.isdigit() or not rest:
            continue
        if int(start) <= line <= int(end or start):
            name = symbol_name(rest)
            if name:  # nested rows are indented: the deeper of two that start on one line is the inner one
                found.append((int(start), len(row) - len(row.lstrip()), name))
    return [n for _, _, n in sorted(found, reverse=True)]


def _render(ws: Workspace, path: str, rows: list[sqlite3.Row], names: list[str], old: dict[int, str]) -> str:
    """A heading naming the file (and the symbol the edit is in), one line a memory with its provenance."""
    rel = os.path.relpath(path, ws.project.root) if path.startswith(ws.project.root + os.sep) else path
    where = f"{rel} ({names[0]})" if names else rel
    tasks = _tasks(ws.db, [r["session_id"] for r in rows if r["type"] == "change"])
    lines = [f"Recorded in past sessions about {where}:"]
    for r in rows:
        title = " ".join(r["title"].split())
        body = " ".join(r["content"].split())
        if body.lower().startswith(title.lower()):
            body = body[len(title):].lstrip(" :-")
        text = f"- [{r['type']}] {title}"
        if r["type"] == "change" and tasks.get(r["session_id"]):
            text += f" (task: {tasks[r['session_id']][:120]})"
        elif body:
            text += f": {body[:200]}{'...' if len(body) > 200 else ''}"
        day = time.strftime("%Y-%m-%d", time.localtime(r["created_at"]))
        changed = f"; code changed since: {old[r['id']]}" if r["id"] in old else ""
        lines.append(f"{text} ({fence.row_label(r)}, {day}{changed}, #{r['id']})")
    return "\n".join(lines)


def _tasks(db: sqlite3.Connection, sessions: list[str | None]) -> dict[str, str]:
    """The task each session worked on (its state's task), the why of a change it made."""
    ids = [s for s in dict.fromkeys(sessions) if s]
    if not ids:
        return {}
    out: dict[str, str] = {}
    for sid, state in db.execute(f"SELECT session_id, state FROM session_state WHERE session_id IN "
                                 f"({','.join('?' * len(ids))})", ids):
        task = _task_of(state)
        if task:
            out[sid] = task
    return out


def _task_of(state: str) -> str:
    from memory.fastpath import jsonlite

    try:
        task = jsonlite.loads(state).get("task")
    except ValueError:
        return ""
    return " ".join(str(task).split()) if task else ""
