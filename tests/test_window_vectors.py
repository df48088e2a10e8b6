"""The window rules of the worker's vectors (memory/recall/context.py, ProjectIndex._embed): "mean" makes a
memory's window vector from its neighbours' own vectors, so indexing embeds each memory's own text once;
incremental indexing gives the vectors a full reindex gives; a change of rule re-embeds the project."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from memory import store
from memory.base.project import Project
from memory.recall import context, embed
from memory.store.workspace import Workspace
from memory.worker import ProjectIndex

TURNS = ["The deploy failed on the staging cluster", "It was the database migration timing out",
         "We raised the lock timeout to thirty seconds", "The migration passed after that",
         "Next we move the cron jobs to the new scheduler", "The scheduler needs a service account",
         "Asked ops for the service account", "Ops granted it this afternoon"]


class Counting:
    """The hashing embedder, recording every text it is asked to embed."""

    def __init__(self) -> None:
        self.inner = embed.make("hashing")
        self.name, self.model, self.dim = self.inner.name, self.inner.model, self.inner.dim
        self.texts: list[str] = []

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.texts += texts
        return self.inner.embed(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)


def workspace(home: Path, turns: list[str] = TURNS) -> tuple[Workspace, list[int]]:
    ws = Workspace(Project("proj-w", "proj", "/nowhere/proj", None), str(home))
    t0 = time.time() - 3600
    ids = [store.save(ws.db, "proj-w", store.NewMemory(title=t, content=t, type="observation", session_id="s1",
                                                       created_at=t0 + i), filter_low_value=False).id
           for i, t in enumerate(turns)]
    return ws, ids


F16 = 2.0**-10  # the stored vectors are float16: ~3 significant digits


def stored(p: ProjectIndex) -> dict[int, Any]:
    t = p.vectors.table.to_arrow()
    return {i: np.array(v, dtype=np.float32) for i, v in zip(t.column("id").to_pylist(),
                                                             t.column("vector").to_pylist(), strict=True)}


def test_a_mean_window_is_the_normalised_mean_of_the_members_own_vectors(home: Path) -> None:
    ws, ids = workspace(home)
    e = Counting()
    p = ProjectIndex(str(home), ws.project.key, e, window="mean")
    p.check_provider()
    p.index(ids)
    own = {t: np.array(v, dtype=np.float32) for t, v in zip(TURNS, e.inner.embed(TURNS), strict=True)}
    got = stored(p)
    for i, mid in enumerate(ids):
        members = TURNS[max(0, i - 2):i + 3]  # two neighbours on each side, the memory itself between
        window = np.sum([own[t] for t in members], axis=0)
        want = 0.5 * (own[TURNS[i]] + window / np.linalg.norm(window))
        assert np.allclose(got[mid], want, rtol=F16, atol=F16 / 16), i
    assert sorted(e.texts) == sorted(TURNS)  # each memory's own text, once; no window text


def test_indexing_one_memory_at_a_time_embeds_only_its_text_and_matches_a_full_reindex(home: Path) -> None:
    ws, ids = workspace(home)
    e = Counting()
    p = ProjectIndex(str(home), ws.project.key, e, window="mean")
    p.check_provider()
    for mid in ids:  # as the worker gets them, one save at a time
        p.index([mid])
    assert sorted(e.texts) == sorted(TURNS)  # the neighbours' own vectors were kept, not embedded again
    incremental = stored(p)
    p.close()
    fresh = ProjectIndex(str(home), ws.project.key, Counting(), window="mean")
    fresh.db.execute("DELETE FROM meta WHERE key = 'vectors:provider'")
    fresh.db.commit()
    fresh.check_provider()
    fresh.index(ids)
    full = stored(fresh)
    assert all(np.allclose(incremental[i], full[i], atol=1e-6) for i in ids)
    # A restarted worker keeps nothing: a new memory then costs its own text and its neighbours' members.
    e2 = Counting()
    again = ProjectIndex(str(home), ws.project.key, e2, window="mean")
    new = store.save(ws.db, "proj-w", store.NewMemory(title="Closed the ticket", content="Closed the ticket",
                                                      type="observation", session_id="s1",
                                                      created_at=time.time()), filter_low_value=False).id
    assert again.index([new])["embedded"] == 3  # the new memory and the two before it, whose window changed
    assert e2.texts[0] == "Closed the ticket" or "Closed the ticket" in e2.texts
    assert len(e2.texts) == 5  # the members of the earliest changed window: four kept texts and the new one


def test_a_change_of_window_rule_re_embeds_the_project(home: Path) -> None:
    ws, ids = workspace(home)
    p = ProjectIndex(str(home), ws.project.key, Counting(), window="text")
    p.check_provider()
    p.index(ids)
    assert p.provider == embed.key(p.embedder)  # "text": the key indexes have always had
    q = ProjectIndex(str(home), ws.project.key, Counting(), window="mean")
    assert q.provider == context.index_key(embed.key(q.embedder), "mean") != p.provider
    assert q.check_provider() is True  # re-embedded: the ledger emptied, the other table dropped
    assert ws.db.execute("SELECT count(*) FROM memory_index").fetchone()[0] == 0
    q.index(ids)
    assert q.vectors.count() == len(ids)
