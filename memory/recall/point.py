"""Recall at the point of action: before an Edit, Write or MultiEdit of a file (or a Bash command that names
one), the few past sessions that did something to that file, one line each (their decision, fix, failure or
change), those about the definition the edit is in or sharing its identifiers first; once per file per
session, and nothing when nothing relates.

Hot side (a PreToolUse hook): standard library and SQLite only; the memories that name the file are found by
index (`memory_files`, kept by triggers from memories.files), at most CANDIDATES of them ranked. What is stored
of a path (memories.files, memory_symbols, the note's injections row and text) is its privacy-filtered form: the
file is read by its path and looked up, named and logged by that form (`stored`)."""

from __future__ import annotations

import math
import os
import time

from memory.base import clock, fence
from memory.base.definitions import enclosing, symbol_name
from memory.base.privacy import clean as stored
from memory.base.words import title_and_text
from memory.recall.search import hit_from_row
from memory.store import log_access, mark_checked, stored_query, symbols
from memory.store.workspace import Workspace

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    import sqlite3

KIND = "inject-edit"  # access_log / injections kind: `memory why` shows it; prompt recall skips what it showed
SHOWN = 3  # lines at most: a note beside an edit, not a search result page
CANDIDATES = 60  # newest memories naming the file that are ranked (a file edited in every session stays cheap)
# Which of a session's memories of the file is its line: what was decided and what broke first, then what was
# learned, then what was changed (a change names the session's task, the "why" of that edit).
_WEIGHT = {"decision": 1.0, "bugfix": 0.9, "learning": 0.8, "discovery": 0.6, "fact": 0.6, "change": 0.5,
           "feature": 0.5, "refactor": 0.5, "observation": 0.3}
ABOUT = 1.0  # each of the three signals is worth 1 at its best: no signal's scale is fitted to a repository
# Past the first line, a session scoring less is not shown: the two latest to touch the file (recency 1 and 1/2)
# always pass; an older one must be about the definition or share a good part of the best overlap.
FLOOR = 0.5
STALE = 0.5  # what a memory whose code has changed since counts for, of its score (not one about the edit's)
# Everything but letters, digits and `_` (ASCII; other letters kept) read as a break: str.translate, not re.
_NON_WORD = str.maketrans({c: " " for c in map(chr, range(128)) if not (c.isalnum() or c == "_")})
_COLUMNS = ("m.id, m.title, m.type, m.created_at, m.session_id, m.content, m.importance, m.project, m.origin, "
            "m.origin_detail, m.source, m.tags, m.files, m.author, m.machine, m.flags, m.checked")


def recall(ws: Workspace, session_id: str, path: str, old_text: str = "", new_text: str = "") -> str:
    """The fenced note for an edit of `path` (absolute), or '' when nothing relates or it was given already."""
    if not path or _given(ws.db, session_id, path):
        return ""
    return _note(ws, session_id, path, old_text, _identifiers(old_text + "\n" + new_text), [])


def recall_command(ws: Workspace, session_id: str, paths: list[str], words: list[str]) -> str:
    """The note for the first of the files a shell command names (absolute) that the store has memories
    about and the session was not told of yet; `words`, the command's other identifiers, name the symbols
    it may be about (`pytest a.py::test_b`)."""
    keys = [stored(p) for p in paths]
    known = {r[0] for r in ws.db.execute(
        f"SELECT DISTINCT path FROM memory_files WHERE path IN ({','.join('?' * len(keys))})", keys)}
    for path, key in zip(paths, keys, strict=True):
        if key in known and not _given(ws.db, session_id, path):
            text = _note(ws, session_id, path, "", set(words), words)
            if text:
                return text
    return ""


def _note(ws: Workspace, session_id: str, path: str, old_text: str, said: set[str], words: list[str]) -> str:
    """The note about `path`, logged as given; '' when nothing relates."""
    chosen, names, old = rank(ws, session_id, path, old_text, said, words)
    if not chosen:
        return ""
    ranked = [r for _, r in chosen]
    hits = [hit_from_row(r, score) for score, r in chosen]
    body = _render(ws, path, ranked, names, old)
    text = fence.wrap(body, 2000)
    log_access(ws.db, [h.id for h in hits], KIND, session_id, path,
               parts={h.id: {"score": h.score} for h in hits}, text=text, mode="file")
    return text


def rank(ws: Workspace, session_id: str, path: str, old_text: str, said: set[str], words: list[str],
         stale: float = STALE, spare_about: bool = True) -> tuple[list[tuple[float, sqlite3.Row]], list[str],
                                                                   dict[int, str]]:
    """The sessions to show for `path`, (score, its line's memory) best first, with the definitions the edit
    or command is about and the memories whose code changed since. For an edit, its definitions come from
    where `old_text` is in the file; for a command, from the `words` that name a definition a memory of the
    file recorded. `said`: the identifiers the edit or command holds, which a memory's own are weighed
    against. `stale`: what a memory whose code changed since counts for; `spare_about`: except one about the
    definition the edit is in (the benchmark measures other values beside these)."""
    key = stored(path)
    rows = _candidates(ws.db, session_id, key)
    if not rows:
        return [], [], {}
    data = symbols.read(path)  # read once: the staleness check and placing the edit both need it
    if data is not None:  # what changed in the file since a memory was made labels it, lazily
        symbols.check(ws.db, path, data)
    old = symbols.stale(ws.db, [r["id"] for r in rows])
    names = _recorded(ws.db, key, words) if words else _touched(ws.db, key, old_text, data or b"")
    about = _about(ws.db, [r["id"] for r in rows], key, names)
    scores = _scores(rows, names, about, said, old, stale, spare_about)
    # One line a session, sessions ranked by their best memory: a session is the unit of "what happened to
    # this file last time"; its line is its weightiest kind of memory (the fix over the change it made).
    # Rows saved before the flag knew their form are read again (memory/base/fence.py is_flagged): the flag
    # withholds a memory here as at startup and per prompt.
    by: dict[str, list[sqlite3.Row]] = {}
    verdicts = {r["id"]: fence.is_flagged(r, r["title"], r["content"]) for r in rows}
    mark_checked(ws.db, rows, verdicts)
    for r in rows:
        if not verdicts[r["id"]]:
            by.setdefault(r["session_id"] or "", []).append(r)
    best = sorted(((max(scores[r["id"]] for r in group), group) for group in by.values()), key=lambda x: -x[0])
    chosen = [(score, max(group, key=lambda r: (_WEIGHT.get(r["type"], 0.3), scores[r["id"]])))
              for i, (score, group) in enumerate(best[:SHOWN]) if i == 0 or score >= FLOOR]
    return chosen, names, old


def _given(db: sqlite3.Connection, session_id: str, path: str) -> bool:
    """Whether the session was given the file's note: its injections row, whose query is stored filtered."""
    return db.execute("SELECT 1 FROM injections WHERE session_id = ? AND kind = ? AND query = ? LIMIT 1",
                      (session_id, KIND, stored_query(path))).fetchone() is not None


def _candidates(db: sqlite3.Connection, session_id: str, path: str) -> list[sqlite3.Row]:
    """Memories of other sessions that name the file in `files`, newest first; prompts and reads left out."""
    return db.execute(
        f"""SELECT {_COLUMNS} FROM memory_files f JOIN memories m ON m.id = f.memory_id
            WHERE f.path = ? AND coalesce(m.session_id, '') != ? AND m.type NOT IN ('prompt', 'handoff')
              AND m.title NOT LIKE 'Read %' AND (m.expires_at IS NULL OR m.expires_at > ?)
              AND (m.flags IS NULL OR m.flags = '')
            ORDER BY m.created_at DESC LIMIT {CANDIDATES}""", (path, session_id, clock.now())).fetchall()


def _recorded(db: sqlite3.Connection, path: str, words: list[str]) -> list[str]:
    """Which of `words` name a definition of the file that memories recorded, in the order given."""
    found = {r[0] for r in db.execute(f"SELECT DISTINCT name FROM memory_symbols WHERE path = ? AND name IN "
                                      f"({','.join('?' * len(words))})", [path, *words])}
    return [w for w in words if w in found]


def _about(db: sqlite3.Connection, ids: list[int], path: str, names: list[str]) -> set[int]:
    """Which memories recorded one of `names` of this file as a definition they are about (memory_symbols)."""
    if not ids or not names:
        return set()
    return {r[0] for r in db.execute(
        f"SELECT memory_id FROM memory_symbols WHERE path = ? AND name IN ({','.join('?' * len(names))}) "
        f"AND memory_id IN ({','.join('?' * len(ids))})", [path, *names, *ids])}


def _scores(rows: list[sqlite3.Row], names: list[str], about: set[int], said: set[str],
            old: dict[int, str], stale: float, spare_about: bool) -> dict[int, float]:
    """Each memory's worth beside this edit, from three signals that need no tuning to a repository's scale:
    whether it is about a definition the edit is in (recorded so, or naming it); how much of what the edit
    says it shares, each shared identifier weighed by how few of the file's memories hold it, as a share of
    the best such overlap; and how recently its session touched the file (1 for the latest, 1/2, 1/3 ...).
    A memory whose code has changed since counts `stale` of its score, unless (`spare_about`) it is about the
    definition being edited: that definition's change is what made it stale, and its history is what the edit
    needs (the line says the code changed since)."""
    held = {r["id"]: _identifiers(r["title"] + "\n" + r["content"]) & said for r in rows}
    count: dict[str, int] = {}
    for words in held.values():
        for w in words:
            count[w] = count.get(w, 0) + 1
    weight = {w: math.log(1 + len(rows) / n) for w, n in count.items()}
    overlap = {mid: sum(weight[w] for w in words) for mid, words in held.items()}
    best = max(overlap.values(), default=0.0) or 1.0
    order: dict[str, int] = {}
    for r in rows:  # newest first: a session's rank is where its latest memory of the file stands
        order.setdefault(r["session_id"] or "", len(order))
    out: dict[int, float] = {}
    for r in rows:
        on = r["id"] in about or bool(names) and _mentions(r["title"] + "\n" + r["content"], names)
        score = ABOUT * on + overlap[r["id"]] / best + 1 / (1 + order[r["session_id"] or ""])
        out[r["id"]] = score * stale if r["id"] in old and not (spare_about and on) else score
    return out


def _identifiers(text: str) -> set[str]:
    """The identifiers of a text (three characters or more): what an edit and a memory may share."""
    return {w for w in text.translate(_NON_WORD).split() if len(w) > 2 and not w[0].isdigit()}


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


def _outline(db: sqlite3.Connection, key: str) -> str:
    row = db.execute("SELECT outline FROM file_signatures WHERE path = ?", (key,)).fetchone()
    return row[0] if row else ""


def _touched(db: sqlite3.Connection, key: str, old_text: str, data: bytes) -> list[str]:
    """The definitions the edit is in, innermost first: from the file's cached outline (under `key`, the stored
    path), or (a file too short to be outlined) from the definition lines above the edit. `data`: the file as
    it is now, before the edit."""
    at = data.find(old_text.encode("utf-8", "replace")) if old_text.strip() else -1
    if at < 0:
        return []
    line = data.count(b"\n", 0, at) + 1
    return symbols_at(_outline(db, key), line) or enclosing(data, line)


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
    """A heading naming the file (and the symbol the edit is in), one line a memory with its provenance. The
    file is named by its stored form: the note's text is recorded (injections.text)."""
    key = stored(path)
    rel = os.path.relpath(key, ws.project.root) if key.startswith(ws.project.root + os.sep) else key
    where = f"{rel} ({names[0]})" if names else rel
    tasks = _tasks(ws.db, [r["session_id"] for r in rows if r["type"] == "change"])
    lines = [f"Recorded in past sessions about {where}:"]
    for r in rows:
        title, body = title_and_text(r["title"], r["content"])
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
