"""Export and import of memories: one JSON object a memory (`memory export`, read back by `memory save
--jsonl`, which keeps type, dates, session, provenance and trust flags; ids are new), a readable Markdown
bundle (one file a project), and the fields a JSONL line may carry."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from typing import Any

from memory.base.classify import TYPES
from memory.base.fence import ORIGINS, row_label
from memory.base.timeparse import parse_when
from memory.present.why import host_of
from memory.store.workspace import Workspace

FORMAT = "claude-memory-export/1"  # the "format" of every exported line, for a reader to recognise


def memory_rows(ws: Workspace) -> Iterator[sqlite3.Row]:
    """The project's memories, oldest first (expired ones included: an export is a copy)."""
    yield from ws.db.execute("SELECT * FROM memories WHERE project = ? ORDER BY created_at, id", (ws.project.key,))


def line(ws: Workspace, r: sqlite3.Row) -> dict[str, Any]:
    """One memory as an exported JSON object: everything `save --jsonl` restores, and where it came from."""
    return {"format": FORMAT, "record": "memory", "id": r["id"], "project": ws.project.key,
            "project_name": ws.project.name, "project_root": ws.project.root, "project_remote": ws.project.remote,
            "type": r["type"], "title": r["title"], "content": r["content"], "importance": r["importance"],
            "confidence": r["confidence"], "tags": [t for t in r["tags"].split(",") if t],
            "files": [f for f in r["files"].split("\n") if f], "session_id": r["session_id"], "source": r["source"],
            "created_at": r["created_at"], "updated_at": r["updated_at"], "expires_at": r["expires_at"],
            "origin": r["origin"], "origin_detail": r["origin_detail"],
            "flags": [f for f in (r["flags"] or "").split(",") if f], "author": r["author"], "machine": r["machine"],
            "uid": r["uid"], "scope": r["scope"], "host": host_of(ws.db, r["session_id"])}


# The columns of the session and handoff records an export carries besides the memories (their id is kept
# for a session, new for a handoff).
SESSION_COLUMNS = ("id", "status", "source", "cwd", "transcript_path", "started_at", "ended_at", "end_reason",
                   "summary", "prompt_count", "tool_call_count", "last_event_at")
HANDOFF_COLUMNS = ("session_id", "trigger", "content", "created_at")
RECORDS = {"session": ("sessions", SESSION_COLUMNS), "handoff": ("handoffs", HANDOFF_COLUMNS)}


def record_lines(ws: Workspace) -> Iterator[dict[str, Any]]:
    """The project's sessions and handoffs as exported objects, oldest first (sessions, then handoffs)."""
    place = {"project": ws.project.key, "project_name": ws.project.name, "project_root": ws.project.root,
             "project_remote": ws.project.remote}
    for kind, (table, columns) in RECORDS.items():
        order = "started_at" if kind == "session" else "created_at, id"
        for r in ws.db.execute(f"SELECT {', '.join(columns)} FROM {table} WHERE project = ? ORDER BY {order}",
                               (ws.project.key,)):
            yield {"format": FORMAT, "record": kind, **place, **dict(r)}


def restore_record(db: sqlite3.Connection, project: str, obj: dict[str, Any]) -> tuple[str | int | None, str]:
    """Write one exported session or handoff (inside the caller's transaction); (its id, inserted or
    duplicate). Text goes through the privacy filter again, as every write does."""
    from memory.base.privacy import clean

    table, columns = RECORDS[obj["record"]]
    values = {c: clean(v) if isinstance(v, str) else v for c, v in obj.items() if c in columns}
    if obj["record"] == "handoff":
        found = db.execute("SELECT id FROM handoffs WHERE project = ? AND session_id = ? AND trigger = ? AND "
                           "created_at = ?", (project, values.get("session_id"), values.get("trigger"),
                                              values.get("created_at"))).fetchone()
        if found is not None:
            return found[0], "duplicate"
    names = ["project", *values]
    cur = db.execute(f"INSERT INTO {table} ({', '.join(names)}) VALUES ({','.join('?' * len(names))}) "
                     "ON CONFLICT DO NOTHING", [project, *values.values()])
    if obj["record"] == "session":
        return values.get("id"), "inserted" if cur.rowcount else "duplicate"
    return cur.lastrowid, "inserted"


def check_record(obj: dict[str, Any]) -> None:
    """ValueError when an exported session or handoff cannot be written."""
    kind = obj.get("record")
    if kind == "session":
        if not isinstance(obj.get("id"), str) or not isinstance(obj.get("started_at"), int | float):
            raise ValueError("a session record needs a string \"id\" and a number \"started_at\"")
        if obj.get("status", "completed") not in ("active", "completed"):
            raise ValueError("a session's status is active or completed")
    elif not all(isinstance(obj.get(k), str) for k in ("session_id", "trigger", "content")) \
            or not isinstance(obj.get("created_at"), int | float):
        raise ValueError("a handoff record needs strings \"session_id\", \"trigger\", \"content\" and a "
                         "number \"created_at\"")
    bad = [k for k, v in obj.items() if k in RECORDS[kind][1] and v is not None
           and not isinstance(v, str | int | float)]
    if bad:
        raise ValueError(f"{', '.join(bad)} must be strings or numbers")


def _number(obj: dict[str, Any], name: str, default: float | None, low: float = 0.0, high: float = 1.0
            ) -> float | None:
    value = obj.get(name, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise ValueError(f"{name} must be a number from {low:g} to {high:g}")
    return float(value)


def _time(obj: dict[str, Any], name: str) -> float | None:
    value = obj.get(name)
    if isinstance(value, str):
        try:
            return parse_when(value)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None
    if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
        raise ValueError(f"{name} must be a date string or a unix time in seconds")
    return float(value) if value is not None else None


def _strings(obj: dict[str, Any], name: str) -> list[str]:
    value = obj.get(name, [])
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise ValueError(f"{name} must be a string or a list of strings")
    return value


def _text(obj: dict[str, Any], name: str) -> str | None:
    value = obj.get(name)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{name} must be a string")
    return value or None


def jsonl_fields(obj: dict[str, Any]) -> dict[str, Any]:
    """The store.NewMemory arguments of one `save --jsonl` object; ValueError says what is wrong. Only
    `content` (or `title`) is needed; `uid`, `scope` and the `project_*` fields are not memory fields
    (`exported_project` reads the latter)."""
    content, title = obj.get("content"), obj.get("title")
    if not isinstance(content if content is not None else title, str) or not (content or title):
        raise ValueError("needs a non-empty string \"content\" (and \"title\")")
    if title is not None and not isinstance(title, str):
        raise ValueError("\"title\" must be a string")
    content = str(content or title)
    # No title: the store makes one from the content's first line once it is filtered (a cut first could split
    # a secret so that no rule matched).
    out: dict[str, Any] = {"content": content, "title": title or ""}
    out["type"] = obj.get("type", "observation")
    if out["type"] not in TYPES:
        raise ValueError(f"type must be one of {', '.join(TYPES)}")
    out["importance"] = _number(obj, "importance", 0.5)
    out["confidence"] = _number(obj, "confidence", 0.5)
    out["tags"], out["files"] = _strings(obj, "tags"), _strings(obj, "files")
    for name in ("created_at", "updated_at", "expires_at"):
        out[name] = _time(obj, name)
    for name in ("session_id", "origin_detail", "author", "machine"):
        out[name] = _text(obj, name)
    out["source"] = _text(obj, "source") or "cli"
    out["origin"] = _text(obj, "origin")
    if out["origin"] is not None and out["origin"] not in ORIGINS:
        raise ValueError(f"origin must be one of {', '.join(ORIGINS)}")
    out["flags"] = ",".join(sorted(set(_strings(obj, "flags"))))
    return out


def exported_project(obj: dict[str, Any]) -> Workspace | None:
    """The workspace of an exported line's project that this data dir does not know: its folder when it
    exists here, else made by its key, name and root (`memory projects` lists it then), or None."""
    import os

    from memory.base.project import Project

    key, name, root = obj.get("project"), obj.get("project_name"), obj.get("project_root")
    if not all(isinstance(x, str) and x for x in (key, name, root)):
        return None
    here = Workspace.for_dir(root) if os.path.isdir(root) else None
    if here is not None and here.project.key == key:
        return here
    remote = obj.get("project_remote")
    return Workspace(Project(key, name, root, remote if isinstance(remote, str) else None))


def _when(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts)) if ts else "-"


def markdown(ws: Workspace) -> str:
    """The project's memories as one readable Markdown file: by type, newest first, each with its date,
    session, importance, tags, files, provenance and trust flag."""
    rows = list(memory_rows(ws))
    out = [f"# Memories of {ws.project.name}", "",
           f"Exported {_when(time.time())} from the memory plugin: project `{ws.project.key}` "
           f"({ws.project.root}), {len(rows)} memor{'y' if len(rows) == 1 else 'ies'}. Recorded data, not "
           "instructions.", ""]
    for type_ in TYPES:
        of_type = sorted((r for r in rows if r["type"] == type_), key=lambda r: (-r["created_at"], -r["id"]))
        if not of_type:
            continue
        out += [f"## {type_} ({len(of_type)})", ""]
        for r in of_type:
            out += _memory_md(r)
    return "\n".join(out).rstrip() + "\n"


def _memory_md(r: sqlite3.Row) -> list[str]:
    facts = [_when(r["created_at"]), f"session `{r['session_id']}`" if r["session_id"] else "",
             f"importance {r['importance']:.2f}", f"from: {row_label(r)}",
             f"tags: {r['tags'].replace(',', ', ')}" if r["tags"] else "",
             f"expires {_when(r['expires_at'])}" if r["expires_at"] else ""]
    lines = [f"### #{r['id']} {' '.join(r['title'].split())}", "", " · ".join(f for f in facts if f)]
    if r["files"]:
        lines.append("files: " + ", ".join(f"`{f}`" for f in r["files"].splitlines()))
    if r["flags"]:
        lines.append(f"**flagged: {r['flags']}** (never injected automatically)")
    body = r["content"].strip()
    fence = "````" if "```" in body else "```"
    return [*lines, "", fence, body, fence, ""]
