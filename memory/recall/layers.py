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
from memory.base import clock, worker_client
from memory.base.config import env, env_int
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
# How long an interactive search (the CLI, the MCP tool) waits for a worker that is starting (loading its
# libraries, its model or the project) before it answers with keyword results: a hashing worker answered
# its first search 1.8 s after its start (scripts/bench/profile.py). Hooks wait for nothing.
STARTING_WAIT_S = 2.5


def _date(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(ts)) if ts else "-"


def filters_json(f: Filters) -> dict[str, Any]:
    return {"types": f.types, "since": f.since, "until": f.until, "session_id": f.session_id,
            "exclude_session": f.exclude_session, "include_expired": f.include_expired,
            # the asker's now, not the worker's: a replayed hook (MEMORY_NOW, memory/base/clock.py) counts from its own
            "as_of": clock.now() if f.as_of is None else f.as_of}


def rows_by_id(db: sqlite3.Connection, ids: list[int]) -> dict[int, sqlite3.Row]:
    return {r["id"]: r for r in store.get_many(db, ids)}


def _ask_search(ws: Workspace, query: str, limit: int, filters: Filters,
                timeout: float | None) -> dict[str, Any] | None:
    return worker_client.ask_raw(ws.home, {"op": "search", "project": ws.project.key, "query": query,
                                           "limit": limit, "filters": filters_json(filters)}, timeout)


def _hits(ws: Workspace, answer: dict[str, Any]) -> list[tuple[Hit, dict[str, Any]]]:
    parts = answer.get("hits") or []
    rows = rows_by_id(ws.db, [int(p["id"]) for p in parts])
    return [(hit_from_row(rows[int(p["id"])], float(p["score"]), p.get("parts") or None), p)
            for p in parts if int(p["id"]) in rows]


def hybrid_via_worker(ws: Workspace, query: str, limit: int, filters: Filters,
                      timeout: float | None = None) -> list[tuple[Hit, dict[str, Any]]] | None:
    """Hybrid hits from a warm worker within `timeout`; None when it does not answer or answers that
    keyword results are due (hooks then fall back to keyword recall). Each hit comes with its parts
    (keyword and vector scores)."""
    answer = _ask_search(ws, query, limit, filters, timeout)
    if answer is None or not answer.get("ok") or not isinstance(answer.get("hits"), list):
        return None
    return _hits(ws, answer)


class KeywordOnly(Exception):
    """A hybrid search in this process (`in_process`) that cannot use the vectors (a damaged store): the
    search answers with keywords, and its message says why."""


class Answered:
    """Which mode produced a search's hits and, for keyword results, why: asked for; no worker running;
    worker starting; index N% built (the worker's count of embedded memories); no semantic index;
    timeout."""

    __slots__ = ("mode", "why", "indexed", "total")

    def __init__(self, mode: str, why: str | None = None, indexed: int | None = None,
                 total: int | None = None) -> None:
        self.mode, self.why, self.indexed, self.total = mode, why, indexed, total

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"mode": self.mode, "why": self.why}
        if self.total is not None:
            out.update(indexed=self.indexed, total=self.total)
        return out

    def line(self) -> str:
        """One line for a person: `memory search` prints it on stderr, the MCP tool after its hits."""
        if self.mode == "hybrid":
            return "hybrid results (keywords and vectors)"
        return f"keyword results ({self.why})" if self.why else "keyword results"


def _ask_worker(ws: Workspace, query: str, limit: int, filters: Filters, timeout: float | None,
                wait: float) -> tuple[list[tuple[Hit, dict[str, Any]]] | None, Answered]:
    """The worker's hybrid hits, or None and why not. A worker that is starting (alive, no socket yet, or
    loading the project) is asked again for up to `wait` seconds; one that times out is not."""
    if not worker_client.enabled():
        return None, Answered("keyword", "worker off (MEMORY_WORKER)")
    deadline = time.monotonic() + wait
    while True:
        t0 = time.monotonic()
        answer = _ask_search(ws, query, limit, filters, timeout)
        if answer is not None and answer.get("ok"):
            indexed, total = answer.get("indexed"), answer.get("total")
            if isinstance(answer.get("hits"), list):
                return _hits(ws, answer), Answered("hybrid", None, indexed, total)
            return None, Answered("keyword", str(answer.get("keyword") or "worker gave no hits"), indexed, total)
        if answer is None and not worker_client.alive(ws.home):
            return None, Answered("keyword", "no worker running")
        budget = timeout if timeout is not None else env_int("MEMORY_WORKER_TIMEOUT_MS") / 1000
        if answer is None and os.path.exists(worker_client.socket_path(ws.home)) \
                and time.monotonic() - t0 >= 0.9 * budget:
            return None, Answered("keyword", f"worker did not answer in {budget:g} s")
        if time.monotonic() + 0.1 > deadline:
            return None, Answered("keyword", "worker starting")
        time.sleep(0.1)


def indexed_provider(ws: Workspace) -> str | None:
    """The provider key (name:model:dim) that built the project's vector index, as the worker records it."""
    row = ws.db.execute("SELECT value FROM meta WHERE key = 'vectors:provider'").fetchone()
    return str(row[0]) if row else None


def _indexed_cheaply(ws: Workspace) -> bool:
    """The vector index was built by the built-in hashing embedder, which needs no model to load."""
    return (indexed_provider(ws) or "").startswith("hashing")


def _start_worker(ws: Workspace) -> None:
    if worker_client.enabled() and not worker_client.alive(ws.home):
        worker_client.start(ws.home)


def has_semantic_index(ws: Workspace) -> bool:
    return os.path.isdir(os.path.join(ws.dir, "vectors.lance"))


def search(ws: Workspace, query: str, *, limit: int = 10, filters: Filters | None = None, mode: str | None = None,
           timeout: float | None = None, in_process: InProcess | None = None,
           wait: float = 0.0) -> tuple[list[Hit], Answered]:
    """Layer 1. Returns the hits and what produced them (Answered): hybrid, or keyword (asked for, or the
    fallback when neither the worker nor `in_process` (the CLI passes memory/recall/hybrid.py's, which
    this hot module cannot import) could answer, and why). `wait`: seconds a starting worker is waited
    for (the CLI and the MCP tool; a hook waits for nothing)."""
    filters = filters or Filters()
    mode = (mode or env("MEMORY_SEARCH_MODE")).lower()
    if mode != "hybrid":
        return keyword_search(ws.db, query, limit=limit, filters=filters), Answered("keyword", "asked for keyword")
    got, answered = _ask_worker(ws, query, limit, filters, timeout, 0.0 if in_process else wait)
    if got is None and answered.total is None and not has_semantic_index(ws):
        answered.why = "no semantic index"
    elif got is None and answered.total is None and in_process:
        if _indexed_cheaply(ws):
            try:
                got, answered = in_process(ws, query, limit, filters), Answered("hybrid")
            except KeywordOnly as exc:
                answered = Answered("keyword", str(exc))
        elif answered.why in ("no worker running", "worker starting"):
            # A model (MiniLM, Ollama) would take seconds to load here at every search: start the
            # worker instead, which keeps it warm; a short wait may catch it ready, else this search
            # answers with BM25 and the next with both.
            _start_worker(ws)
            got, answered = _ask_worker(ws, query, limit, filters, timeout, wait)
    if got is not None:
        return [h for h, _ in got], answered
    return keyword_search(ws.db, query, limit=limit, filters=filters), answered


def log_search(ws: Workspace, hits: list[Hit], query: str, mode: str | None = None, kind: str = "search",
               session_id: str | None = None) -> None:
    """Record a search's hits as shown, each with its rank and score parts (`memory why`)."""
    store.log_access(ws.db, [h.id for h in hits], kind, session_id, query,
                     parts={h.id: h.parts or {"score": h.score} for h in hits}, mode=mode)


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
