"""Against real code on this machine: Universal Ctags as the oracle for which
definitions exist, and the token reduction of the rendered outline.

Files come from tests/support/outline_corpus.py: the Python standard library, npm's own
JavaScript, Go's and Rust's sources when installed (golang-1.19-src,
rust-src); a sample of files of 300+ lines, picked deterministically.
"""

from __future__ import annotations

import statistics

import pytest

from parser import estimate_tokens, outline_source
from tests.support import outline_corpus as corpus
from tests.support.ctags_oracle import ctags_available, ctags_tags, missing

LANGUAGES = ["python", "javascript", "go", "rust"]
# C and C++ headers (CPython's, LLVM's, libstdc++'s) and PHP: recall only; C++ headers are mostly
# declarations, so their outlines are long by nature.
RECALL_ONLY = ["c", "cpp", "php"]
FILES_PER_LANGUAGE = 30
MIN_RECALL = 0.99
MIN_MEDIAN_REDUCTION = 0.80


def _files(language: str) -> list[str]:
    files = corpus.find_files(language, FILES_PER_LANGUAGE)
    if not files:
        how = corpus.HOW_TO_GET.get(language, "")
        pytest.skip(f"no {language} source of {corpus.MIN_LINES}+ lines on this machine; {how}")
    return files


def _outline(path: str, language: str):
    with open(path, "rb") as fh:
        source = fh.read()
    return source, outline_source(source, path, language)


@pytest.mark.parametrize("language", LANGUAGES + RECALL_ONLY)
def test_recall_against_ctags(language: str, capsys: pytest.CaptureFixture[str]) -> None:
    if not ctags_available():
        pytest.skip("Universal Ctags not installed (apt-get install universal-ctags)")
    files = _files(language)
    total, misses = 0, []
    for path in files:
        _, result = _outline(path, language)
        assert result.parsed, (path, result.reason)
        tags = ctags_tags(path, language)
        total += len(tags)
        misses += [(path, t) for t in missing(result, tags)]
    assert total > 100, f"ctags found only {total} definitions in {len(files)} {language} files"
    recall = 1 - len(misses) / total
    with capsys.disabled():
        print(f"\n[outline] {language}: ctags recall {recall:.2%} ({total - len(misses)}/{total} "
              f"definitions, {len(files)} files)", end="")
    assert recall >= MIN_RECALL, "\n".join(f"{p}:{t.line} {t.kind} {t.name}" for p, t in misses[:40])


@pytest.mark.parametrize("language", LANGUAGES)
def test_token_reduction(language: str, capsys: pytest.CaptureFixture[str]) -> None:
    reductions = []
    for path in _files(language):
        source, result = _outline(path, language)
        original = estimate_tokens(source)
        reductions.append(1 - estimate_tokens(result.render()) / original)
    median = statistics.median(reductions)
    with capsys.disabled():
        print(f"\n[outline] {language}: median token reduction {median:.1%}, "
              f"min {min(reductions):.1%} ({len(reductions)} files of {corpus.MIN_LINES}+ lines)", end="")
    assert median >= MIN_MEDIAN_REDUCTION
    # Never counterproductive, even for the densest declaration-only file.
    assert min(reductions) > 0.25
