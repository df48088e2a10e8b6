"""A real worker answers searches over its socket while it indexes a real LanceDB store: between the steps of
indexing (memory/worker/priority.py), from its in-memory lists, never after the whole index."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from memory.base import worker_client
from memory.recall import embed
from memory.recall.embed import numpy_minilm
from memory.recall.embed.hashing import embed_one
from memory.store.workspace import Workspace
from memory.worker import ProjectIndex
from scripts.bench.fill import populate
from tests.test_worker import counts, spawn, wait_for

MEMORIES = 1000
INDEXED_FIRST = 900  # 90%: searches are hybrid from the start, and 100 memories are left to index
QUERIES = ("retry the request", "parse the config file", "thread lock timeout", "unicode decode error",
           "cache the result", "socket connection refused")


class StandIn:
    """MiniLM's name, model and dimension with hashed vectors: the first 90% of the store written in seconds
    (the model takes minutes here); the worker indexes the rest with the real model."""

    def __init__(self) -> None:
        self.name, self.model, self.dim = numpy_minilm.NAME, numpy_minilm.MODEL, 384

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [embed_one(t, self.dim) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return embed_one(text, self.dim)


def ask(home: Path, key: str, query: str) -> dict[str, Any] | None:
    return worker_client.ask_raw(str(home), {"op": "search", "project": key, "query": query, "limit": 5},
                                 timeout=60)


def test_searches_are_answered_between_the_batches_of_a_first_index(home: Path, project: Path) -> None:
    if not numpy_minilm.available():
        pytest.skip("the packaged all-MiniLM-L6-v2 is not installed")
    ws = Workspace.for_dir(str(project), home=str(home))
    populate(ws, MEMORIES)
    key = ws.project.key
    ids = [r[0] for r in ws.db.execute("SELECT id FROM memories ORDER BY id")]
    stand_in = StandIn()
    assert embed.key(stand_in) == "minilm:all-MiniLM-L6-v2:384"
    p = ProjectIndex(str(home), key, stand_in)
    p.check_provider()
    for at in range(0, len(ids), 512):
        p.index(ids[at:at + 512])
    p.close()
    # The last 10% forgotten by the ledger: the worker's sweep queues them, and it embeds them again.
    with ws.db:
        ws.db.execute("DELETE FROM memory_index WHERE memory_id > ?", (ids[INDEXED_FIRST - 1],))
    ws.close()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1]), "MEMORY_HOME": str(home),
           "MEMORY_EMBEDDER": "minilm", "MEMORY_WORKER": "on", "MEMORY_WORKER_IDLE_SECONDS": "120",
           "MEMORY_WORKER_RELEASE_SECONDS": "0", "MEMORY_DAILY_LOG": "off"}
    proc = spawn(env)
    answers: list[dict[str, Any]] = []
    try:
        # Searches one after another while the worker indexes the last 10% with the real model.
        while (c := counts(ws.db_path))["ledger"] < c["memories"] and proc.poll() is None:
            answer = ask(home, key, QUERIES[len(answers) % len(QUERIES)])
            if answer is not None and answer.get("ok"):
                answers.append(answer)
        assert wait_for(lambda: (c := counts(ws.db_path))["ledger"] == c["memories"] == MEMORIES, 300, 0.5), \
            counts(ws.db_path)
        state = worker_client.ask(str(home), {"op": "ping"}, timeout=10)
    finally:
        worker_client.ask(str(home), {"op": "shutdown"}, timeout=10)
        proc.wait(timeout=60)
    during = [a for a in answers if a["indexed"] < a["total"]]
    hybrid = [a for a in during if isinstance(a.get("hits"), list)]
    # Answered while the index grew: from the in-memory lists (kept current batch by batch), with hits.
    assert len(hybrid) >= 3, [(a["indexed"], a.get("keyword")) for a in answers]
    assert len({a["indexed"] for a in hybrid}) >= 2, [a["indexed"] for a in hybrid]
    assert hybrid[-1]["warm"] and hybrid[-1]["hits"], hybrid[-1]  # the in-memory lists, kept current
    # No step of indexing (a batch, a chunk of its embedding or of the lists' build) began while a search
    # was in flight: each search ran beside at most the steps already under way.
    assert all(a["index_steps"] == 0 for a in during), [a["index_steps"] for a in during]
    assert state and state["projects"][key]["warm"], state
