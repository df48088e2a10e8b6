"""What the MCP tools do, without the MCP layer: argument checks, the library calls the CLI makes, and
text sized for the model. memory/mcp/server.py registers these with the SDK; tests call them directly too.

The three layers: `search` gives one compact line per memory (about 50-100 tokens: id, date, type, title
and the start of the content), `timeline` what was recorded around one memory, `get` the full content of
chosen ids. A tool touches only the data dir and the project: a project is named by its key or name from
the data dir, or by a folder inside the current project (memory/base/safepath.py).
"""

from __future__ import annotations

import os
import time
from typing import Any

from memory import store
from memory.base import fence
from memory.base.classify import TYPES
from memory.base.project import project_folder
from memory.base.safepath import PathRejected, confine
from memory.base.timeparse import parse_when
from memory.base.words import count
from memory.capture.deciders import settle
from memory.present.text import day, minute, size
from memory.recall import layers
from memory.recall.finder import WORKER_TIMEOUT_S, Labelled, project_workspaces, search_all, search_project
from memory.recall.search import Filters, Hit, timeline
from memory.store import expiry
from memory.store.workspace import Workspace

TITLE_CHARS = 100
SNIPPET_CHARS = 140
TIMELINE_SNIPPET_CHARS = 100
MAX_GET_CHARS = 12000  # the whole answer of one get: well under what a tool result should carry
MAX_ID = 2**63 - 1  # SQLite's largest integer: a larger id would be an OverflowError, not a tool error


class ToolInputError(ValueError):
    """Bad arguments: the message says what to send instead."""


def readable(value: Any) -> Any:
    """Text as SQLite takes it: JSON may carry lone surrogates (`"\\udce9"`), which no UTF-8 encoder accepts;
    they become U+FFFD, in strings and in lists of strings."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in value)
    if isinstance(value, list):
        return [readable(v) for v in value]
    return value


# -- where ------------------------------------------------------------------------------------------


def current_folder() -> str:
    """The project the server works for: as the hooks decide it (CLAUDE_PROJECT_DIR stays put when the
    agent cds), else the folder Claude Code started the server in."""
    return project_folder(os.getcwd())


class Places:
    """The current project's workspace, opened once, and any other project asked for by key or name."""

    def __init__(self, folder: str | None = None, home: str | None = None) -> None:
        self.folder = folder or current_folder()
        self.home = home
        self._current: Workspace | None = None

    @property
    def current(self) -> Workspace:
        if self._current is None:
            self._current = Workspace.for_dir(self.folder, self.home)
        return self._current

    def resolve(self, project: str | None) -> tuple[Workspace, bool]:
        """(workspace, close it after use). A key or a name from the data dir, else a folder inside the
        current project; anything else is refused."""
        if project is None or not project.strip():
            return self.current, False
        name = project.strip()
        known = project_workspaces(self.home or self.current.home)
        by_key = [ws for ws in known if ws.project.key == name]
        by_name = [ws for ws in known if ws.project.name == name]
        if by_key or len(by_name) == 1:
            ws = (by_key or by_name)[0]
            if ws.project.key == self.current.project.key:
                return self.current, False
            return ws, True
        if len(by_name) > 1:
            keys = ", ".join(ws.project.key for ws in by_name)
            raise ToolInputError(f"several projects are named {name!r}; give one of the keys: {keys}")
        try:
            real = confine(name, self.current.project.root)
        except PathRejected as exc:
            raise ToolInputError(f"{exc}. Name another project by its key or name (stats with "
                                 "all_projects=true lists them)") from None
        if not os.path.isdir(real):
            raise ToolInputError(f"no project {name!r}: give a key or name (stats with all_projects=true lists "
                                 "them) or a folder inside the current project")
        ws = Workspace.for_dir(real, self.home or self.current.home)
        if ws.project.key == self.current.project.key:
            return self.current, False
        return ws, True

    def close(self) -> None:
        if self._current is not None:
            self._current.close()


# -- formatting -------------------------------------------------------------------------------------


def _cut(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3].rstrip() + "..."


def snippet(title: str, content: str, width: int) -> str:
    body = " ".join(content.split())
    flat_title = " ".join(title.split())
    if body.lower().startswith(flat_title.lower()):
        body = body[len(flat_title):].lstrip(" :-")
    return _cut(body, width)


def _trust(row: Any, title: str, content: str) -> str:
    """A line's provenance and, when it reads as orders to the agent, its flag (memory/base/fence.py)."""
    flag = f" [flagged: {fence.FLAG}]" if fence.is_flagged(row, title, content) else ""
    return f" ({fence.row_label(row)}){flag}"


def hit_line(h: Hit, project: str | None = None, row: Any = None) -> str:
    label = f" ({project})" if project else ""
    line = f"#{h.id} {day(h.created_at)} [{h.type}]{label} {_cut(h.title, TITLE_CHARS)}"
    body = snippet(h.title, h.content, SNIPPET_CHARS)
    return (f"{line} | {body}" if body else line) + _trust(row, h.title, h.content)


# -- argument checks ---------------------------------------------------------------------------------


def _when(value: str | None, name: str) -> float | None:
    if value is None or not value.strip():
        return None
    try:
        return parse_when(value)
    except ValueError as exc:
        raise ToolInputError(f"{name}: {exc}") from None


def _types(types: list[str] | None) -> list[str] | None:
    if not types:
        return None
    bad = [t for t in types if t not in TYPES]
    if bad:
        raise ToolInputError(f"unknown type {bad[0]!r}; types are: {', '.join(TYPES)}")
    return list(dict.fromkeys(types))


def _ids(ids: list[int], most: int) -> list[int]:
    if not ids:
        raise ToolInputError("give at least one memory id (ids come from search or timeline)")
    if len(ids) > most:
        raise ToolInputError(f"at most {most} ids at once")
    if any(not 1 <= i <= MAX_ID for i in ids):
        raise ToolInputError("memory ids are positive integers (as search and timeline show them)")
    return list(dict.fromkeys(ids))


# -- the tools --------------------------------------------------------------------------------------


def search(places: Places, query: str, limit: int = 10, types: list[str] | None = None, project: str | None = None,
           since: str | None = None, until: str | None = None, all_projects: bool = False) -> str:
    if not query or not query.strip():
        raise ToolInputError("query must not be empty")
    if not 1 <= limit <= 50:
        raise ToolInputError("limit must be from 1 to 50")
    # The user's own requests ("Asked: ...") are kept as memories, but a search would mostly echo the
    # current one back: they are left out unless asked for.
    wanted = _types(types) or [t for t in TYPES if t != "prompt"]
    filters = Filters(types=wanted, since=_when(since, "since"), until=_when(until, "until"))
    if all_projects:
        if project:
            raise ToolInputError("give either project or all_projects, not both")
        found: list[Labelled] = search_all(query, limit=limit, filters=filters, home=places.home or places.current.home)
        if not found:
            return f"No memory in any project matches {query!r}."
        lines = [hit_line(x.hit, x.project) for x in found]
        head = (f"{count(len(found), 'memory')} across projects for {query!r} (id, date, type, project, "
                "title | start (where from)):")
        return fence.wrap("\n".join([head, *lines, "Ids are per project: pass project=<name> to timeline/get."]))
    ws, close = places.resolve(project)
    try:
        hits, answered = layers.search(ws, query, limit=limit, filters=filters, timeout=WORKER_TIMEOUT_S,
                                       wait=layers.STARTING_WAIT_S)
        layers.log_search(ws, hits, query, answered.mode, "mcp-search")
        if not hits:
            return f"No memory in project {ws.project.name} matches {query!r} ({answered.line()})."
        head = (f"{count(len(hits), 'memory')} in project {ws.project.name} for {query!r}, {answered.line()} "
                "(id, date, type, title | start (where from)):")
        prov = store.provenance(ws.db, [h.id for h in hits])
        lines = [hit_line(h, row=prov.get(h.id)) for h in hits]
        return fence.wrap("\n".join([head, *lines, "More: timeline(id) for context, get(ids) for full content."]))
    finally:
        if close:
            ws.close()


def timeline_tool(places: Places, id: int | None = None, query: str | None = None, before: int = 3, after: int = 3,
                  project: str | None = None) -> str:
    if (id is None) == (not query or not query.strip()):
        raise ToolInputError("give either id (a memory id from search) or query (the best match is the anchor)")
    if id is not None and not 1 <= id <= MAX_ID:
        raise ToolInputError("id is a positive integer: a memory id from search")
    if not (0 <= before <= 20 and 0 <= after <= 20):
        raise ToolInputError("before and after must be from 0 to 20")
    ws, close = places.resolve(project)
    try:
        anchor = id
        if anchor is None:
            hits = search_project(ws, str(query), limit=1)
            if not hits:
                return f"No memory in project {ws.project.name} matches {query!r}."
            anchor = hits[0].id
        rows = timeline(ws.db, anchor, before, after)
        now = time.time()  # expired neighbours are gone for the model, as they are for search
        rows = [r for r in rows if r["id"] == anchor or not r["expires_at"] or r["expires_at"] > now]
        if not rows:
            raise ToolInputError(f"no memory #{anchor} in project {ws.project.name}; ids come from search")
        lines = [f"Around #{anchor} in project {ws.project.name}, oldest first (> marks it):"]
        for r in rows:
            mark = ">" if r["id"] == anchor else " "
            body = snippet(r["title"], r["content"], TIMELINE_SNIPPET_CHARS)
            sess = f" s:{str(r['session_id'])[:8]}" if r["session_id"] else ""
            line = f"{mark} #{r['id']} {minute(r['created_at'])}{sess} [{r['type']}] {_cut(r['title'], TITLE_CHARS)}"
            lines.append((f"{line} | {body}" if body else line) + _trust(r, r["title"], r["content"]))
        return fence.wrap("\n".join(lines))
    finally:
        if close:
            ws.close()


def get(places: Places, ids: list[int], project: str | None = None) -> str:
    wanted = _ids(ids, 20)
    ws, close = places.resolve(project)
    try:
        rows = store.get_many(ws.db, wanted)
        store.log_access(ws.db, [r["id"] for r in rows], "get")
        parts = []
        for r in rows:
            head = (f"#{r['id']} [{r['type']}] {r['title']}\n"
                    f"date: {minute(r['created_at'])}  importance: {r['importance']:.2f}  "
                    f"session: {r['session_id'] or '-'}  tags: {r['tags'] or '-'}\n"
                    f"from:{_trust(r, r['title'], r['content'])}")
            if r["files"]:
                head += f"\nfiles: {', '.join(r['files'].splitlines())}"
            if r["expires_at"]:
                head += f"\nexpires: {minute(r['expires_at'])}"
            parts.append(f"{head}\n\n{r['content']}")
        missing = [i for i in wanted if i not in {r["id"] for r in rows}]
        if missing:
            parts.append(f"No memory with id {', '.join(f'#{i}' for i in missing)} in project {ws.project.name}.")
        text = "\n\n---\n\n".join(parts)
        if len(text) > MAX_GET_CHARS:
            text = text[:MAX_GET_CHARS] + "\n[... cut: ask for fewer ids at once ...]"
        return fence.wrap(text)
    finally:
        if close:
            ws.close()


def save(places: Places, content: str, title: str | None = None, type: str = "learning", importance: float = 0.7,
         tags: list[str] | None = None, files: list[str] | None = None, expires: str | None = None,
         project: str | None = None) -> str:
    if not content or not content.strip():
        raise ToolInputError("content must not be empty")
    if len(content) > 20000:
        raise ToolInputError("content is over 20,000 characters: save the essentials (long text is cut anyway)")
    if type not in TYPES:
        raise ToolInputError(f"unknown type {type!r}; types are: {', '.join(TYPES)}")
    if not 0 <= importance <= 1:
        raise ToolInputError("importance must be from 0 to 1")
    if tags and (len(tags) > 20 or any(not t.strip() or len(t) > 50 for t in tags)):
        raise ToolInputError("tags: at most 20, each 1-50 characters")
    try:
        until = expiry.parse_expires(expires) if expires else None
    except ValueError as exc:
        raise ToolInputError(f"expires: {exc}") from None
    ws, close = places.resolve(project)
    try:
        from memory.base.quiet import excluded_by

        excluded = excluded_by(os.path.realpath(ws.project.root), ws.home)
        if excluded:  # `memory exclude`: the model's saves are recorded no more than the hooks' (memory/base/quiet.py)
            return f"Not saved: project {ws.project.name} is excluded from memory ({excluded})."
        rel_files = []
        for f in (files or [])[:50]:
            try:
                real = confine(f, ws.project.root)
            except PathRejected as exc:
                raise ToolInputError(f"files: {exc}") from None
            rel_files.append(os.path.relpath(real, os.path.realpath(ws.project.root)))
        text = content.strip()
        # The model's own save: recorded as the model's, never a decision (memory/capture/deciders.py).
        saved = store.save(ws.db, ws.project.key, settle(store.NewMemory(
            title=title or "", content=text, type=type, importance=importance,
            tags=list(tags or []), files=rel_files, source="mcp", expires_at=until)), filter_low_value=False)
        if saved.id is None:
            raise ToolInputError("nothing left to save once private text and secrets were removed")
        note = f", expires {minute(until)}" if until else ""
        return f"Saved #{saved.id} ({saved.action}) in project {ws.project.name}{note}."
    finally:
        if close:
            ws.close()


def delete(places: Places, ids: list[int], project: str | None = None) -> str:
    wanted = _ids(ids, 100)
    ws, close = places.resolve(project)
    try:
        from memory.recall import vectors
        from memory.store.evict import remove

        present = [r["id"] for r in store.get_many(ws.db, wanted)]
        remove(ws, present, vectors.delete)
        missing = [i for i in wanted if i not in present]
        if not present:
            raise ToolInputError(f"no memory with id {', '.join(f'#{i}' for i in missing)} in project "
                                 f"{ws.project.name}")
        text = f"Deleted {', '.join(f'#{i}' for i in present)} from project {ws.project.name}."
        if missing:
            text += f" Not found: {', '.join(f'#{i}' for i in missing)}."
        return text
    finally:
        if close:
            ws.close()


def repo_map(places: Places, focus: list[str] | None = None, tokens: int = 1024) -> str:
    """The current project's map (memory/outline/mapbuild.py): its most referenced definitions by file, in
    `tokens`; `focus` (files or symbols the agent works on) leans the rank towards them. An excluded project's
    map is built in a scratch database: nothing of it is stored."""
    from memory.base.quiet import excluded_by
    from memory.outline import mapbuild
    from memory.store.db import connect

    if not 64 <= tokens <= 16000:
        raise ToolInputError("tokens must be from 64 to 16,000")
    if focus and (len(focus) > 50 or any(not f.strip() or len(f) > 500 for f in focus)):
        raise ToolInputError("focus: at most 50 files or symbols, each 1-500 characters")
    ws = places.current
    root = os.path.realpath(ws.project.root)
    db = connect(":memory:") if excluded_by(root, ws.home) else ws.db
    built = mapbuild.build(db, root, tokens, [f.strip() for f in focus or []])
    if not built.text:
        return f"No definitions found in {built.files} source files under {root}."
    # Signature lines are the repository's text: data, inside the one untrusted block.
    return fence.wrap(f"Repository map of {root} ({built.files} files; line: signature):\n{built.text}")


def stats(places: Places, project: str | None = None, all_projects: bool = False) -> str:
    from memory.store.evict import usage
    from memory.store.limits import max_bytes, max_memories

    home = places.home or places.current.home
    used = usage(home)
    lines = [f"Data dir {home}: {size(used['bytes'])} of a {size(max_bytes())} cap "
             f"(databases {size(used['databases'])}, vectors {size(used['vectors'])}); "
             f"at most {count(max_memories(), 'memory') if max_memories() else 'unlimited memories'} per project."]
    if all_projects:
        if project:
            raise ToolInputError("give either project or all_projects, not both")
        for ws in project_workspaces(home):
            try:
                n = ws.db.execute("SELECT count(*) FROM memories").fetchone()[0]
                last = ws.db.execute("SELECT max(created_at) FROM memories").fetchone()[0]
                lines.append(f"- {ws.project.name} (key {ws.project.key}): {count(n, 'memory')}, last {day(last)}, "
                             f"root {ws.project.root}")
            finally:
                ws.close()
        return "\n".join(lines)
    from memory.present.stats import project_stats

    ws, close = places.resolve(project)
    try:
        data: dict[str, Any] = project_stats(ws)
        by_type = ", ".join(f"{k} {v}" for k, v in data["by_type"].items()) or "none"
        sessions = ", ".join(f"{k} {v}" for k, v in data["sessions"].items()) or "none"
        queue = ", ".join(f"{k} {v}" for k, v in data["queue"].items()) or "empty"
        lines += [f"Project {data['project']} ({data['root']}): {count(data['memories'], 'memory')} ({by_type}).",
                  f"Sessions: {sessions}. Handoffs: {data['handoffs']}. Injections: {data['injections']}. "
                  f"Queue: {queue}. Database: {size(data['database_bytes'])}."]
        return "\n".join(lines)
    finally:
        if close:
            ws.close()
