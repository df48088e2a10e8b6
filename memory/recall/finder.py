"""Searching for the interfaces (CLI --all-projects, MCP): one project, or every project in the data dir.

One project is searched with the hybrid search (BM25 + vectors, memory/recall/hybrid.py) when the background
worker is running and answers (it holds the embedding model and the vector table), else with BM25 alone.
Across projects each database is searched on its own and the hits are merged by score, each labelled
with its project. BM25 scores of different databases are not strictly comparable (each has its own
document frequencies), which is fine for a merged list the user reads.
"""

from __future__ import annotations

import os

from memory import store
from memory.base.project import Project
from memory.recall import layers
from memory.recall.search import Filters, Hit
from memory.store.workspace import Workspace, all_projects


class Labelled:
    """A hit and the project it came from."""

    __slots__ = ("hit", "project", "key")

    def __init__(self, hit: Hit, project: str, key: str) -> None:
        self.hit, self.project, self.key = hit, project, key


WORKER_TIMEOUT_S = 1.5  # an interactive tool can wait longer than a hook (40 ms) for the warm worker


def search_project(ws: Workspace, query: str, *, limit: int = 10, filters: Filters | None = None) -> list[Hit]:
    """Hybrid hits from the running worker (warm model, open vector table), else BM25 alone: a CLI or MCP
    process never loads the model itself (seconds)."""
    return layers.search(ws, query, limit=limit, filters=filters, timeout=WORKER_TIMEOUT_S)[0]


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
