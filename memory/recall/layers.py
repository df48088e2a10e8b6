"""The 3-layer search API, shared by the CLI and the MCP server.

Layer 1 `search`: compact hits (id, title, type, score, date), hybrid when the worker (or, for the CLI,
an in-process index it passes in) can answer, keyword otherwise. Layer 2 `timeline`: what was recorded around one
memory. Layer 3 `details`: the full memories for chosen ids. Each layer logs what it showed.
"""

from __future__ import annotations

import os
import sqlite3
import time

from memory import store
from memory.base import worker_client
from memory.base.config import env
from memory.recall.search import Filters, Hit, hit_from_row, keyword_search
from memory.recall.search import timeline as keyword_timeline
from memory.store.workspace import Workspace

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook ~4 ms (hooks import this module)
    from collections.abc import Callable
    from typing import Any

    # A hybrid search run in this process (memory/recall/hybrid.py's in_process): hits with their parts.
    InProcess = Callable[[Workspace, str, int, Filters], list[tuple[Hit, dict[str, Any]]]]

MODES = ("hybrid", "keyword")


def _date(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(ts)) if ts else "-"


def filters_json(f: Filters) -> dict[str, Any]:
    return {"types": f.types, "since": f.since, "until": f.until, "session_id": f.session_id,
            "exclude_session": f.exclude_session, "include_expired": f.include_expired}


def rows_by_id(db: sqlite3.Connection, ids: list[int]) -> dict[int, sqlite3.Row]:
    return {r["id"]: r for r in store.get_many(db, ids)}


def hybrid_via_worker(ws: Workspace, query: str, limit: int, filters: Filters,
                      timeout: float | None = None) -> list[tuple[Hit, dict[str, Any]]] | None:
    """Hybrid hits from a warm worker within `timeout`; None when it does not answer (hooks then fall
    back to keyword recall). Each hit comes with its parts (keyword and vector scores)."""
    answer = worker_client.ask(ws.home, {"op": "search", "project": ws.project.key, "query": query,
                                         "limit": limit, "filters": filters_json(filters)}, timeout)
    if answer is None:
        return None
    parts = answer.get("hits") or []
    rows = rows_by_id(ws.db, [int(p["id"]) for p in parts])
    return [(hit_from_row(rows[int(p["id"])], float(p["score"])), p) for p in parts if int(p["id"]) in rows]


def indexed_provider(ws: Workspace) -> str | None:
    """The provider key (name:model:dim) that built the project's vector index, as the worker records it."""
    row = ws.db.execute("SELECT value FROM meta WHERE key = 'vectors:provider'").fetchone()
    return str(row[0]) if row else None


def _indexed_cheaply(ws: Workspace) -> bool:
    """The vector index was built by the built-in hashing embedder, which needs no model to load."""
    return (indexed_provider(ws) or "").startswith("hashing")


def _start_worker(ws: Workspace) -> None:
    from memory.base import worker_client

    if worker_client.enabled() and not worker_client.alive(ws.home):
        worker_client.start(ws.home)


def has_semantic_index(ws: Workspace) -> bool:
    return os.path.isdir(os.path.join(ws.dir, "vectors.lance"))


def search(ws: Workspace, query: str, *, limit: int = 10, filters: Filters | None = None, mode: str | None = None,
           timeout: float | None = None, in_process: InProcess | None = None) -> tuple[list[Hit], str]:
    """Layer 1. Returns the hits and the mode that produced them: hybrid, or keyword (asked for, or the
    fallback when neither the worker nor `in_process` (the CLI passes memory/recall/hybrid.py's, which
    this hot module cannot import) could answer)."""
    filters = filters or Filters()
    mode = (mode or env("MEMORY_SEARCH_MODE")).lower()
    if mode == "hybrid":
        got = hybrid_via_worker(ws, query, limit, filters, timeout)
        if got is None and in_process and has_semantic_index(ws):
            if _indexed_cheaply(ws):
                got = in_process(ws, query, limit, filters)
            else:
                # A model (MiniLM, Ollama) would take seconds to load here at every search: start the
                # worker instead, which keeps it warm; this search answers with BM25, the next with both.
                _start_worker(ws)
        if got is not None:
            return [h for h, _ in got], "hybrid"
    return keyword_search(ws.db, query, limit=limit, filters=filters), "keyword"


def compact(hits: list[Hit]) -> list[dict[str, object]]:
    return [h.compact() for h in hits]


def timeline(ws: Workspace, anchor_id: int, before: int = 5, after: int = 5) -> list[dict[str, Any]]:
    """Layer 2: the memories recorded around one, oldest first, the anchor marked."""
    rows = keyword_timeline(ws.db, anchor_id, before, after)
    return [{"id": r["id"], "title": r["title"], "type": r["type"], "date": _date(r["created_at"]),
             "session_id": r["session_id"], "anchor": r["id"] == anchor_id} for r in rows]


def details(ws: Workspace, ids: list[int]) -> list[dict[str, Any]]:
    """Layer 3: full memories for chosen ids, in the order asked; access is logged."""
    rows = store.get_many(ws.db, ids)
    store.log_access(ws.db, [r["id"] for r in rows], "get")
    return [dict(r) for r in rows]
