"""The worker's in-memory vectors (memory/resident.py) against the LanceDB store they copy: the same
neighbours, kept in step with upserts and deletes, filters before the cut, sparse and dense queries."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np

from memory import embed
from memory.resident import Resident
from memory.vectors import VectorStore, where_clause


def rows_for(n: int, dim: int, seed: int = 5) -> list[dict[str, object]]:
    rng = np.random.default_rng(seed)
    vecs = rng.normal(size=(n, dim)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    return [{"id": i + 1, "vector": vecs[i].tolist(), "type": "bugfix" if i % 3 == 0 else "observation",
             "session_id": f"s{i % 7}", "created_at": 1000.0 + i, "expires_at": None} for i in range(n)]


def test_same_neighbours_as_lancedb_and_in_step_with_writes(home: Path) -> None:
    vs = VectorStore(str(home / "p"), "test:model:64", 64)
    rows = rows_for(600, 64)
    vs.upsert(rows)
    r = Resident.from_store(vs)
    assert len(r) == 600
    q = rows_for(1, 64, seed=9)[0]["vector"]
    mine, theirs = r.search(q, 20), dict(vs.search(q, 20))
    assert set(mine) == set(theirs)
    for i in mine:  # LanceDB reports 1 - distance for the dot metric
        assert abs(mine[i] - theirs[i]) < 1e-4
    # Updates, deletes and new rows, mirrored as the worker does after each LanceDB commit.
    moved = {**rows[0], "vector": q}
    r.upsert([moved, {**rows[1], "id": 9999}])
    r.delete([2, 3])
    got = r.search(q, 5)
    assert max(got, key=got.get) == 1 and 2 not in r.search(rows[1]["vector"], 600)
    assert 9999 in r.search(rows[1]["vector"], 3) and len(r) == 599
    # Narrowing filters run before the cut: k rows that all pass, not a filtered top k.
    typed = r.search(q, 50, types=["bugfix"])
    assert len(typed) == 50 and all((i - 1) % 3 == 0 or i in (1, 9999) for i in typed)
    dated = r.search(q, 30, since=1100.0, until=1200.0)
    assert len(dated) == 30 and all(1100 <= 1000 + i - 1 < 1200 for i in dated)
    assert all((i - 1) % 7 == 4 for i in r.search(q, 40, session_id="s4"))
    assert set(r.search(q, 40, session_id="s4")) == set(dict(vs.search(q, 40, where_clause(session_id="s4"))))


def test_sparse_hashing_queries_read_only_their_columns_and_agree_with_dense(home: Path) -> None:
    e = embed.make("hashing")
    texts = [f"note {i}: the {w} cache {w2} fails on deploy" for i, (w, w2) in
             enumerate(zip(["redis", "disk", "dns", "tls"] * 50, ["timeout", "quota", "lookup", "expiry"] * 50,
                           strict=True))]
    r = Resident(e.dim)
    r.upsert([{"id": i + 1, "vector": v, "type": "observation", "session_id": None, "created_at": 0.0}
              for i, v in enumerate(e.embed(texts))])
    q = e.embed_query("dns lookup fails")
    assert np.count_nonzero(q) * 4 < e.dim  # sparse: the column path
    sparse, dense = r.search(q, 10), r.search_exact(q, 10)
    assert set(sparse) == set(dense)
    assert all("dns" in texts[i - 1] for i in sparse)


def test_compaction_while_queries_run(home: Path) -> None:
    r = Resident(32)
    rows = rows_for(3000, 32)
    r.upsert(rows)
    r.delete(list(range(1, 2001)))
    assert r.needs_compaction()
    q = rows[2500]["vector"]
    errors: list[BaseException] = []
    stop = time.monotonic() + 1.0

    def ask() -> None:
        try:
            while time.monotonic() < stop:
                got = r.search(q, 5)
                assert max(got, key=got.get) == 2501 and all(i > 2000 for i in got)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    t = threading.Thread(target=ask)
    t.start()
    assert r.compact() == "compacted to 1000 vectors"
    t.join()
    assert not errors and len(r) == 1000 and not r.needs_compaction()
    got = r.search(q, 1)
    assert list(got) == [2501]
