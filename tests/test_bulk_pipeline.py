"""A pipelined bulk import (memory/store/bulk.py): rows made in a forked child are the rows a single save
writes, an error of the rules surfaces at its batch, and no child process outlives the import."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memory import store
from memory.cli.memories import JSONL_BATCH, _batches
from memory.store import NewMemory, bulk
from memory.store.db import connect
from tests.test_bulk_equivalence import _fts, _memories, _rows

pytestmark = pytest.mark.skipif(not bulk.can_fork(), reason="no second CPU, or not Linux")


def _no_child_left() -> None:
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)


def test_rows_made_in_the_child_are_written_as_single_saves_write_them(tmp_path: Path) -> None:
    memories = _memories(1200)
    one, many = connect(str(tmp_path / "one.db")), connect(str(tmp_path / "many.db"))
    single = [store.save(one, "p", m, filter_low_value=False) for m in memories]
    batches = [("p", memories[start:start + 300]) for start in range(0, len(memories), 300)]
    made = bulk.rows(batches, False, pipeline=True)
    saved = []
    for (_, part), rows in zip(batches, made, strict=True):
        saved += store.save_many(many, "p", part, rows=rows)
    assert [(s.id, s.action) for s in saved] == [(s.id, s.action) for s in single]
    assert _rows(many) == _rows(one)
    assert _fts(many, "memories_fts") == _fts(one, "memories_fts")
    queue = "SELECT kind, payload, dedup_key, status FROM queue ORDER BY id"
    assert many.execute(queue).fetchall() == one.execute(queue).fetchall()
    _no_child_left()


def test_an_error_of_the_rules_in_the_child_is_raised_at_its_batch() -> None:
    good = [NewMemory(f"note {i}", f"a plain note {i}") for i in range(10)]
    bad = [*good[:3], NewMemory("odd", "an odd type", type="nonsense")]
    made = bulk.rows([("p", good), ("p", bad), ("p", good)], False, pipeline=True)
    assert [r.title for r in next(made) if r] == [m.title for m in good]
    with pytest.raises(ValueError, match="unknown memory type 'nonsense'"):
        next(made)
    _no_child_left()


def test_an_import_stopped_early_leaves_no_child() -> None:
    memories = [NewMemory(f"note {i}", f"a plain note {i} " * 20) for i in range(2000)]
    made = bulk.rows([("p", memories)] * 5, False, pipeline=True)
    next(made)
    made.close()  # as `save --jsonl` does when a write fails
    _no_child_left()


def test_the_child_is_forked_at_once_and_closing_before_any_batch_reaps_it() -> None:
    memories = [NewMemory(f"note {i}", f"a plain note {i} " * 20) for i in range(1000)]
    made = bulk.rows([("p", memories)] * 3, False, pipeline=True)  # ~1 MB: more than the pipe holds
    assert os.waitpid(-1, os.WNOHANG) == (0, 0)  # running already: forked before any thread a caller starts
    made.close()
    _no_child_left()


def test_a_pipelined_import_starts_small_and_grows_to_the_batch_size() -> None:
    items = list(range(20_000))
    assert [len(b) for b in _batches(items, True)] == [500, 1000, 2000, 4000, 5000, 5000, 2500]
    assert [len(b) for b in _batches(items, False)] == [JSONL_BATCH] * 4
    assert sum(_batches(items, True), []) == items
    assert not bulk.pipelined(bulk.PIPELINE_MIN - 1)
