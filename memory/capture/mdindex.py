"""The project's own markdown (CLAUDE.md, docs, notes) indexed as `fact` memories, one per section.

They are repository content, not memories of earlier sessions: saved with origin `repo-doc` and the file,
never injected at SessionStart, and labelled as repository docs when a prompt recalls them. Indexing is off
everywhere with MEMORY_REPO_DOCS=off, or for one project with `memory index-markdown --off`.

A file is re-indexed only when its content hash changes (the hashes live in the `meta` table), its old
sections are replaced, and a file that disappeared takes its sections with it. Files over 100 KB are
skipped (generated or vendored, not notes), and so is everything under the data dir: the daily log lives
there and must never be fed back into memory. Text goes through store.save, so the privacy filter applies.

SessionStart calls `maybe_enqueue` (one SELECT, at most one write): the indexing itself is a queued job
for the worker, at most once per MEMORY_MARKDOWN_INTERVAL_MINUTES; `memory index-markdown` runs it now.
"""

from __future__ import annotations

import os
import time

from memory import store
from memory.base.config import env, env_int
from memory.fastpath import jsonlite as json  # not the json package: it imports re (~5 ms a hook)
from memory.store.db import Tx
from memory.store.workspace import Workspace

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

JOB = "index_markdown"
MAX_FILE_BYTES = 100 * 1024
MAX_FILES = 500
MAX_WALK_ENTRIES = 50000
SECTION_CHARS = 1800
META_FILE = "mdindex:file:"
META_ENQUEUED = "mdindex:enqueued_at"
META_OFF = "mdindex:off"  # present: this project's docs are not indexed (`memory index-markdown --off`)
# Folders never walked: dependencies, builds, caches and VCS data are not the project's notes.
SKIP_DIRS = frozenset("node_modules .git .hg .svn .venv venv env __pycache__ build dist target vendor "
                      "site-packages .tox .mypy_cache .pytest_cache .ruff_cache .next .cache coverage".split())
_HEADING = r"^(#{1,6})\s+(.+?)\s*#*\s*$"  # compiled on first use: SessionStart imports this module
_FENCE = r"^\s*(```|~~~)"


# -- configuration and scheduling (runs in the SessionStart hook: keep it cheap) ----------------------


def patterns() -> list[str]:
    # str.split, not re.split(r"[,\s]+"): the same pieces, and SessionStart does not import re (~6 ms CPU)
    return env("MEMORY_MARKDOWN_GLOBS").replace(",", " ").split()


def enabled_everywhere() -> bool:
    """MEMORY_REPO_DOCS=off turns repository doc indexing off for every project."""
    return env("MEMORY_REPO_DOCS").strip().lower() not in ("off", "0", "false", "no") and bool(patterns())


def project_off(ws: Workspace) -> bool:
    """`memory index-markdown --off` turned indexing off for this project (a meta row)."""
    return ws.db.execute("SELECT 1 FROM meta WHERE key = ?", (META_OFF,)).fetchone() is not None


def set_project(ws: Workspace, on: bool) -> int:
    """Turn this project's repository doc indexing on or off. Off also removes the sections indexed so far
    (they are copies of files in the repository, not memories); returns how many were removed."""
    with Tx(ws.db):
        if on:
            ws.db.execute("DELETE FROM meta WHERE key = ?", (META_OFF,))
            return 0
        ws.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (META_OFF, repr(time.time())))
    removed = 0
    for rel, before in _meta(ws).items():
        removed += _drop(ws, _ids(before))
        _set_meta(ws, rel, None)
    rest = [r[0] for r in ws.db.execute("SELECT id FROM memories WHERE source = 'markdown'")]
    if rest:
        from memory.store.evict import remove

        removed += remove(ws, rest)[0]
    return removed


def maybe_enqueue(ws: Workspace, now: float | None = None) -> bool:
    """Queue an indexing job unless one was queued within the interval or indexing is off (everywhere or
    for this project). Returns True when queued."""
    if not enabled_everywhere():
        return False
    now = time.time() if now is None else now
    rows = dict(ws.db.execute("SELECT key, value FROM meta WHERE key IN (?, ?)", (META_ENQUEUED, META_OFF)))
    if META_OFF in rows:
        return False
    interval = max(0, env_int("MEMORY_MARKDOWN_INTERVAL_MINUTES")) * 60
    if META_ENQUEUED in rows and now - float(rows[META_ENQUEUED] or 0) < interval:
        return False
    from memory.store import queue

    queue.enqueue(ws.db, JOB, {"root": ws.project.root}, dedup_key=JOB)
    with Tx(ws.db):
        ws.db.execute("INSERT INTO meta (key, value) VALUES (?, ?) "
                      "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (META_ENQUEUED, repr(now)))
    return True


# -- finding files ----------------------------------------------------------------------------------


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob relative to the project root: `**/` any folders (or none), `*` and `?` within one name."""
    import re  # the worker's: the SessionStart hook imports this module, and re costs it ~6 ms CPU
    out = ""
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
        elif pattern.startswith("**", i):
            out += ".*"
            i += 2
        elif pattern[i] == "*":
            out += "[^/]*"
            i += 1
        elif pattern[i] == "?":
            out += "[^/]"
            i += 1
        else:
            out += re.escape(pattern[i])
            i += 1
    return re.compile(out + r"\Z")


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def find_files(root: str, globs: list[str], exclude: list[str]) -> list[str]:
    """Project-relative paths of the files matching any glob, sorted, bounded in number and walk size.
    Symlinked folders are not followed; a symlinked file counts only if it resolves inside the root."""
    regexes = [glob_regex(g.strip("/")) for g in globs]
    real_root = os.path.realpath(root)
    excluded = [os.path.realpath(e) for e in exclude if e]
    found: list[str] = []
    seen = 0
    for folder, dirs, files in os.walk(real_root):
        if any(_inside(folder, e) for e in excluded):
            dirs[:] = []
            continue
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and (not d.startswith(".") or d == ".claude"))
        for name in sorted(files):
            seen += 1
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, real_root).replace(os.sep, "/")
            if not any(rx.match(rel) for rx in regexes):
                continue
            real = os.path.realpath(path)
            if not _inside(real, real_root) or any(_inside(real, e) for e in excluded):
                continue
            found.append(rel)
        if seen > MAX_WALK_ENTRIES or len(found) >= MAX_FILES:
            break
    return sorted(found)[:MAX_FILES]


# -- splitting --------------------------------------------------------------------------------------


def sections(text: str) -> list[tuple[str, str]]:
    """(heading path, body) per section; headings inside code fences do not count; long sections are cut
    at paragraph boundaries into pieces of at most SECTION_CHARS."""
    out: list[tuple[str, str]] = []
    trail: list[tuple[int, str]] = []
    body: list[str] = []
    fenced = False
    import re

    def flush() -> None:
        text_ = "\n".join(body).strip()
        if text_:
            name = " > ".join(t for _, t in trail)
            out.extend((name, piece) for piece in _pieces(text_))
        body.clear()

    for line in text.splitlines():
        if re.match(_FENCE, line):
            fenced = not fenced
        m = None if fenced else re.match(_HEADING, line)
        if m:
            flush()
            level = len(m.group(1))
            trail[:] = [t for t in trail if t[0] < level] + [(level, m.group(2).strip())]
            continue
        body.append(line)
    flush()
    return out


def _pieces(text: str) -> list[str]:
    if len(text) <= SECTION_CHARS:
        return [text]
    import re

    pieces: list[str] = []
    current = ""
    for para in re.split(r"\n\s*\n", text):
        while len(para) > SECTION_CHARS:  # one huge paragraph: cut it hard
            if current:
                pieces.append(current)
                current = ""
            pieces.append(para[:SECTION_CHARS])
            para = para[SECTION_CHARS:]
        if current and len(current) + len(para) + 2 > SECTION_CHARS:
            pieces.append(current)
            current = ""
        current = f"{current}\n\n{para}" if current else para
    if current.strip():
        pieces.append(current)
    return pieces


# -- indexing ---------------------------------------------------------------------------------------


def _meta(ws: Workspace) -> dict[str, dict[str, object]]:
    rows = ws.db.execute("SELECT key, value FROM meta WHERE key LIKE ?", (META_FILE + "%",))
    out = {}
    for key, value in rows:
        try:
            out[key[len(META_FILE):]] = json.loads(value)
        except ValueError:
            continue
    return out


def _set_meta(ws: Workspace, rel: str, value: dict[str, object] | None) -> None:
    with Tx(ws.db):
        if value is None:
            ws.db.execute("DELETE FROM meta WHERE key = ?", (META_FILE + rel,))
        else:
            ws.db.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET "
                          "value = excluded.value", (META_FILE + rel, json.dumps(value)))


def _drop(ws: Workspace, ids: list[int]) -> int:
    """Delete a file's earlier sections (only rows the indexer wrote: a section can have matched a memory
    saved by hand, which is not the indexer's to delete)."""
    if not ids:
        return 0
    marks = ",".join("?" * len(ids))
    ours = [r[0] for r in ws.db.execute(f"SELECT id FROM memories WHERE source = 'markdown' AND id IN ({marks})", ids)]
    if not ours:
        return 0
    from memory.store.evict import remove

    return remove(ws, ours)[0]


def index_file(ws: Workspace, rel: str, text: str) -> list[int]:
    ids: list[int] = []
    used: dict[str, int] = {}
    for heading, body in sections(text):
        title = f"{rel} § {heading}" if heading else rel
        used[title] = used.get(title, 0) + 1
        if used[title] > 1:  # titles are unique per project: a repeated heading would overwrite the first
            title = f"{title} ({used[title]})"
        content = f"{heading}\n\n{body}" if heading else body
        saved = store.save(ws.db, ws.project.key, store.NewMemory(
            title=title, content=content, type="fact", importance=0.55, tags=["markdown"], files=[rel],
            source="markdown", origin="repo-doc", origin_detail=rel), filter_low_value=False)
        if saved.id is not None and ws.db.execute("SELECT source FROM memories WHERE id = ?",
                                                  (saved.id,)).fetchone()["source"] == "markdown":
            ids.append(saved.id)
    return ids


def _ids(entry: object) -> list[int]:
    ids = entry.get("ids", []) if isinstance(entry, dict) else []
    return [i for i in ids if isinstance(i, int)] if isinstance(ids, list) else []


def index_project(ws: Workspace, *, force: bool = False) -> dict[str, object]:
    """Index the project's markdown now. Returns counts of what happened."""
    root = ws.project.root
    globs = patterns() if env("MEMORY_REPO_DOCS").strip().lower() not in ("off", "0", "false", "no") and \
        not project_off(ws) else []
    files = find_files(root, globs, exclude=[ws.home]) if globs and root and os.path.isdir(root) else []
    import hashlib  # here, not at the top: SessionStart imports this module for maybe_enqueue

    known = _meta(ws)
    indexed = unchanged = removed = section_count = 0
    skipped: list[str] = []
    present: set[str] = set()
    for rel in files:
        path = os.path.join(os.path.realpath(root), rel)
        try:
            if os.path.getsize(path) > MAX_FILE_BYTES:
                skipped.append(rel)
                continue
            with open(path, "rb") as fh:
                raw = fh.read(MAX_FILE_BYTES + 1)
        except OSError:
            continue
        present.add(rel)
        digest = hashlib.sha256(raw).hexdigest()
        before = known.get(rel, {})
        if not force and before.get("hash") == digest:
            unchanged += 1
            continue
        _drop(ws, _ids(before))
        ids = index_file(ws, rel, raw.decode("utf-8", "replace"))
        _set_meta(ws, rel, {"hash": digest, "ids": ids, "at": time.time()})
        indexed += 1
        section_count += len(ids)
    if globs:  # with indexing off, what was indexed stays (turning it off is not asking to forget)
        for rel, before in known.items():
            if rel not in present:  # deleted, renamed, grown past the limit, or no longer matched
                removed += _drop(ws, _ids(before))
                _set_meta(ws, rel, None)
    return {"root": root, "files": len(files), "indexed": indexed, "unchanged": unchanged, "sections": section_count,
            "removed": removed, "skipped_large": skipped}


def handle_job(ws: Workspace, payload: dict[str, object]) -> dict[str, object]:
    """The worker's entry point for an `index_markdown` job."""
    return index_project(ws)
