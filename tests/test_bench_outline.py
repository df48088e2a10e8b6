"""scripts/bench/outline.py on a folder: the files it picks and the names-visible measure it reports."""

from __future__ import annotations

import os

import pytest

from scripts.bench.outline import bench_language, corpus_files
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


@pytest.mark.skipif(not ctags_available(), reason="Universal Ctags not installed")
def test_names_visible_is_measured_beside_recall() -> None:
    files = corpus_files(CASES, 1, 10)
    row = bench_language("c", files["c"], use_ctags=True)
    # connection.h: 36 names (6 enumerators, 24 #defines...), all in the outline but its include guard.
    assert row["names"] == 36 and row["visible"] == 35 / 36 and row["recall"] == 1.0
