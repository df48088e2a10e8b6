"""scripts/bench/outline.py on a folder: the files it picks and the names-visible measure it reports."""

from __future__ import annotations

import json
import os

import pytest

from scripts.bench.outline import bench_language, corpus_files, hook_rows, ratio_ci
from tests.support.ctags_oracle import ctags_available

CASES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "parser", "fixtures", "cases")


def test_corpus_files_groups_code_by_language_and_skips_short_files(tmp_path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n" * 5)
    (tmp_path / "b.py").write_text("x = 1\n")
    (tmp_path / "notes.md").write_text("# no\n" * 9)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "c.py").write_text("x = 1\n" * 9)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "d.kt").write_text("val x = 1\n" * 9)
    assert corpus_files(str(tmp_path), 3, 10) == {"kotlin": [str(tmp_path / "sub" / "d.kt")],
                                                  "python": [str(tmp_path / "a.py")]}


def test_hook_ratio_has_a_bootstrap_interval_around_it() -> None:
    """The CPU ratio to the bare start is the ratio of the medians; its 95% interval holds it and is seeded."""
    bare = [8.0, 8.5, 9.0, 7.5, 8.0, 12.0, 8.2, 8.1]
    res = {"bare": {"wall": bare, "cpu": bare},
           "cpp": {"cold": [1.0] * 8, "cold_cpu": [40.0, 42.0, 44.0, 41.0, 60.0, 43.0, 40.5, 41.5],
                   "hit": [1.0] * 8, "hit_cpu": [20.0] * 8}}
    row = hook_rows(res)["cpp"]
    assert row["cold_ratio"] == round(41.75 / 8.15, 2) and row["hit_ratio"] == round(20 / 8.15, 2)
    lo, hi = row["cold_ratio_ci"]
    assert lo <= row["cold_ratio"] <= hi and lo < hi
    assert ratio_ci([20.0] * 5, [10.0] * 5) == [2.0, 2.0]
    assert ratio_ci(res["cpp"]["cold_cpu"], bare) == row["cold_ratio_ci"]


@pytest.mark.skipif(not ctags_available(), reason="Universal Ctags not installed")
def test_names_visible_is_measured_beside_recall() -> None:
    files = [path for path in corpus_files(CASES, 1, 10)["c"] if path.endswith("connection.h")]
    row = bench_language("c", files, use_ctags=True)
    # connection.h: 35 names (6 enumerators, 24 #defines...), all in the outline; its include guard is not a name.
    assert row["names"] == 35 and row["visible"] == 1.0 and row["recall"] == 1.0
    assert row["broken"] == 0 and row["lost"] == 0


def test_outline_same_tells_a_changed_outline_from_an_unchanged_one(tmp_path) -> None:
    """scripts/bench/outline_same.py: two dumps of the same code agree; a renamed function is a difference."""
    from scripts.bench import outline_same

    code = tmp_path / "code"
    code.mkdir()
    body = "".join(f"    x = x + {i}\n" for i in range(60))
    (code / "a.py").write_text(f"def first(x):\n{body}    return x\n\n\ndef second(x):\n{body}    return x\n")
    (code / "short.py").write_text("x = 1\n")  # under MIN_LINES: not dumped
    before, same, after = (str(tmp_path / n) for n in ("before.json", "same.json", "after.json"))
    outline_same.dump(before, [str(code)], 10)
    outline_same.dump(same, [str(code)], 10)
    assert outline_same.diff(before, same) == 0
    (code / "a.py").write_text((code / "a.py").read_text().replace("def second", "def renamed"))
    outline_same.dump(after, [str(code)], 10)
    assert outline_same.diff(before, after) == 1
    with open(before) as fh:
        assert list(json.load(fh)) == [str(code / "a.py")]
