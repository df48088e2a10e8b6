"""Why a memory was recalled: each time it was injected (SessionStart, a prompt's recall) or returned by a
search, with the session, the time, what was asked, its rank and the parts of its score as the ranking
filled them (memory/recall/search.py PARTS; recorded by memory/store log_access). For `memory why` and
the viewer."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

# The order the parts are shown in: what matched, then what moved the score.
ORDER = ("keyword", "vector", "session", "time", "importance", "recency", "use", "diversity")
LABELS = {"inject-start": "injected at session start", "inject-prompt": "injected for a prompt",
          "inject-edit": "injected before an edit of its file",
          "search": "found by `memory search`", "mcp-search": "found by the MCP search tool",
          "ui-search": "found by a search in the viewer"}


def recalls(db: sqlite3.Connection, memory_id: int, session_id: str | None = None,
            limit: int = 50) -> list[dict[str, Any]]:
    """The memory's recalls, newest first: injections and searches (rows from before the parts were
    recorded have none). `session_id` keeps one session's."""
    where = "a.memory_id = ? AND (a.injection_id IS NOT NULL OR a.kind LIKE 'inject%')"
    args: list[Any] = [memory_id]
    if session_id:
        where += " AND a.session_id = ?"
        args.append(session_id)
    rows = db.execute(
        f"""SELECT a.kind, a.session_id, a.query, a.at, a.rank, a.score, a.parts, a.injection_id, i.mode,
                   (SELECT count(*) FROM access_log b WHERE b.injection_id = a.injection_id) AS shown
            FROM access_log a LEFT JOIN injections i ON i.id = a.injection_id
            WHERE {where} ORDER BY a.at DESC, a.id DESC LIMIT ?""", [*args, limit]).fetchall()
    return [_recall(r) for r in rows]


def _recall(r: sqlite3.Row) -> dict[str, Any]:
    try:
        parts = json.loads(r["parts"]) if r["parts"] else {}
    except ValueError:
        parts = {}
    return {"kind": r["kind"], "what": LABELS.get(r["kind"], r["kind"]), "session_id": r["session_id"],
            "query": r["query"], "at": r["at"], "mode": r["mode"], "rank": r["rank"],
            "of": r["shown"] if r["injection_id"] is not None else None, "score": r["score"],
            "parts": {k: parts[k] for k in (*ORDER, *sorted(set(parts) - set(ORDER))) if k in parts and k != "score"},
            "injection_id": r["injection_id"]}


def injection(db: sqlite3.Connection, injection_id: int) -> dict[str, Any] | None:
    """One injection: what it was (kind, session, mode, query, time), the exact text a hook gave the model
    (None for a search) and the memories it named in rank order with their parts."""
    row = db.execute("SELECT * FROM injections WHERE id = ?", (injection_id,)).fetchone()
    if row is None:
        return None
    named = db.execute("SELECT memory_id, rank, score, parts FROM access_log WHERE injection_id = ? "
                       "ORDER BY rank", (injection_id,)).fetchall()
    return {**dict(row), "memories": [{"id": m["memory_id"], "rank": m["rank"], "score": m["score"],
                                       "parts": json.loads(m["parts"]) if m["parts"] else {}} for m in named]}


def session_injections(db: sqlite3.Connection, session_id: str) -> list[dict[str, Any]]:
    """A session's injections, oldest first (kind, mode, query, time, text): the context the model received."""
    return [dict(r) for r in db.execute("SELECT * FROM injections WHERE session_id = ? ORDER BY at, id",
                                        (session_id,))]


def parts_line(parts: dict[str, float]) -> str:
    """keyword 0.92 · vector 0.41 · importance 0.70"""
    return " · ".join(f"{k} {v:.2f}" if isinstance(v, int | float) else f"{k} {v}" for k, v in parts.items())


def host_of(db: sqlite3.Connection, session_id: str | None) -> str | None:
    """The coding agent (memory/hook/hosts.py HOSTS) whose session recorded a memory, None when unknown."""
    if not session_id:
        return None
    row = db.execute("SELECT host FROM sessions WHERE id = ?", (session_id,)).fetchone()
    return row[0] if row else None
