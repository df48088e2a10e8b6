"""Searching for the interfaces (CLI --all-projects, MCP): one project, or every project in the data dir.

One project is searched with the hybrid search (BM25 + vectors, memory/hybrid.py) when it is installed
and answers, else with BM25 alone; hooks never come here (they cannot afford the vector store).
Across projects each database is searched on its own and the hits are merged by score, each labelled
with its project. BM25 scores of different databases are not strictly comparable (each has its own
document frequencies), which is fine for a merged list the user reads.
"""

from __future__ import annotations

import os
from typing import Any

from memory import store
from memory.project import Project
from memory.search import Filters, Hit, keyword_search
from memory.workspace import Workspace, all_projects


class Labelled:
    """A hit and the project it came from."""

    __slots__ = ("hit", "project", "key")

    def __init__(self, hit: Hit, project: str, key: str) -> None:
        self.hit, self.project, self.key = hit, project, key


def _hybrid_search() -> Any:
    try:
        from memory import hybrid  # type: ignore[attr-defined]
    except ImportError:
        return None
    return getattr(hybrid, "search", None)


def search_project(ws: Workspace, query: str, *, limit: int = 10, filters: Filters | None = None) -> list[Hit]:
    hybrid = _hybrid_search()
    if hybrid is not None:
        try:
            hits = hybrid(ws, query, limit=limit, filters=filters)
            if isinstance(hits, list) and all(isinstance(h, Hit) for h in hits):
                return hits
        except Exception as exc:  # the vector side is optional: BM25 alone still answers
            from memory.log import log

            log("warning", f"hybrid search failed, BM25 only: {exc!r}", event="search")
    return keyword_search(ws.db, query, limit=limit, filters=filters)


def project_workspaces(home: str | None = None) -> list[Workspace]:
    """A workspace for every project that has a database (none is created)."""
    spaces = []
    for meta in all_projects(home):
        key = str(meta.get("key") or "")
        ws = Workspace(Project(key, str(meta.get("name") or key), str(meta.get("root") or ""), meta.get("remote")),
                       home)
        if key and os.path.exists(ws.db_path):
            spaces.append(ws)
    return spaces


def search_all(query: str, *, limit: int = 10, filters: Filters | None = None,
               home: str | None = None) -> list[Labelled]:
    """Every project's best hits merged; the ones returned count as accessed (LRU) in their database."""
    found: list[tuple[Workspace, Labelled]] = []
    spaces = project_workspaces(home)
    try:
        for ws in spaces:
            found += [(ws, Labelled(h, ws.project.name, ws.project.key))
                      for h in search_project(ws, query, limit=limit, filters=filters)]
        found.sort(key=lambda x: -x[1].hit.score)
        found = found[:limit]
        for ws in spaces:
            store.log_access(ws.db, [x.hit.id for w, x in found if w is ws], "search", None, query)
    finally:
        for ws in spaces:
            ws.close()
    return [x for _, x in found]
