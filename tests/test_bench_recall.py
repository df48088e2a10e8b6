"""The recall benchmark's code path on a few questions of each dataset (hashing provider, small haystacks):
every row and measure is there and the numbers are what they say. The figures are in docs/benchmarks.md."""

from __future__ import annotations

import pytest

from scripts.bench import recall

pytestmark = pytest.mark.skipif(not (recall.LOCOMO.is_dir() and recall.LONGMEMEVAL.exists()),
                                reason="no evaluation data in ../shared/data")


def test_a_small_run_of_both_datasets_gives_every_row_and_measure() -> None:
    out = recall.run(["locomo", "longmemeval"], ["hashing"], questions=4, limit_haystack=60, quiet=True,
                     weights=["time=0.25,cap=3"])
    for name in ("locomo", "longmemeval"):
        s = out[name]
        assert s["questions"] == 4
        methods = s["methods"]
        assert list(methods)[:3] == ["plain FTS5 bm25", "keyword mode", "keyword + neighbours (no vectors)"]
        hybrid = [m for m in methods if m.startswith("hybrid, hashing")]
        assert hybrid and methods[hybrid[0]]["memories per second"] > 0
        for row in methods.values():
            for m in (*recall.MEASURES, "top-5 one session"):
                assert row[m] is None or 0 <= row[m] <= 1
            assert row["r@1"] is None or row["r@1"] <= row["r@5"] <= row["r@10"]
            assert sum(t["n"] for t in row["by type"].values()) == 4
        diff = s["differences"][f"{hybrid[0]} - keyword mode"]["r@5"]
        assert diff["ci"] is None or diff["ci"][0] <= diff["diff"] <= diff["ci"][1]
        # a --weights row is paired with the provider's default row on the same index
        assert s["differences"][f"{hybrid[0]}, weights time=0.25,cap=3 - {hybrid[0]}"]["r@10"]["n"] > 0


def test_every_question_carries_the_time_it_is_asked_at() -> None:
    """LongMemEval's question_date; LoCoMo's last turn: relative dates in a question count from there."""
    for ds in (recall.load_locomo(), recall.load_longmemeval()):
        last = {key: max(t.at for t in turns) for key, turns in ds.projects.items()}
        assert all(q.as_of and q.as_of >= last[q.project] - 86400 for q in ds.questions), ds.name


def test_plain_bm25_finds_the_turn_that_shares_the_words() -> None:
    turns = [recall.Turn("a", "s1", 0, "", "We adopted a puppy named Rex"),
             recall.Turn("b", "s1", 1, "", "The weather was grey all week"),
             recall.Turn("c", "s2", 2, "", "Rex chewed the sofa again")]
    db = recall.plain_index(turns)
    assert recall.plain_bm25(db, "What is the name of the puppy we adopted?")[0] == "a"
    q = recall.Question("q", "p", "Rex", "single", ["a", "c"], ["s1", "s2"])
    got = recall.measure(q, ["c", "b", "a"], {"a": "s1", "b": "s1", "c": "s2"})
    assert got["r@1"] == 0.5 and got["r@5"] == 1.0 and got["session r@10"] == 1.0
    assert got["top-5 one session"] == pytest.approx(2 / 3)


def test_the_embedding_cache_gives_the_same_vectors_and_says_they_came_from_it(tmp_path) -> None:
    args = (["longmemeval"], ["hashing"])
    kw = {"questions": 2, "limit_haystack": 40, "quiet": True, "embed_cache": str(tmp_path)}
    first = recall.run(*args, **kw)["longmemeval"]
    second = recall.run(*args, **kw)["longmemeval"]
    label = next(m for m in first["methods"] if m.startswith("hybrid, hashing"))
    one, two = first["methods"][label], second["methods"][label]
    assert one["vectors from cache"]["embedded"] > 0 and one["vectors from cache"]["hits"] >= 0
    assert two["vectors from cache"] == {"hits": one["vectors from cache"]["hits"]
                                         + one["vectors from cache"]["embedded"], "embedded": 0}
    assert [one[m] for m in recall.MEASURES] == [two[m] for m in recall.MEASURES]
    assert list(tmp_path.glob("*/*.npz"))  # numpy files, one folder per provider key
