"""Keyword mode and its fusion with plain BM25 (memory/recall/search.py KEYWORD_FUSION, off by default, a
benchmark variant), through the 3-layer search on a real SQLite store: fused, a query's stop words count where
they are evidence; alone they find nothing; a hook's bounded search keeps the content words' list alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory import store
from memory.base.project import Project
from memory.recall import layers, search
from memory.recall.search import keyword_search
from memory.store.workspace import Workspace


def _ws(home: Path) -> Workspace:
    ws = Workspace(Project("proj-1", "proj", "/nowhere/proj", None), str(home))
    # Six edits that name the query's content words in code, one whose comment says the subject in words, and
    # unrelated edits, so that the stop words are rare in the store (as in a code history, unlike a conversation).
    rows = [(f"s{i}", f"Modified cmd{i}.go", f"customizedFlag := flag.Customized(command{i}); customized flag command")
            for i in range(6)]
    rows.append(("told", "Modified completions.go",
                 "// The flag can be customized for a command, and for each of its subcommands: "
                 "flag customized command"))
    rows += [(f"f{i}", f"Modified other{i}.go", f"unrelated change number {i} in the parser") for i in range(12)]
    for session, title, content in rows:
        store.save(ws.db, ws.project.key, store.NewMemory(title=title, content=content, type="change", importance=0.35,
                                                           session_id=session), filter_low_value=False)
    return ws


def _sessions(ws: Workspace, query: str) -> list[str | None]:
    hits, answered = layers.search(ws, query, limit=5, mode="keyword")
    assert answered.mode == "keyword"
    return [h.session_id for h in hits]


def test_the_stop_words_a_memory_shares_with_the_query_count(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _ws(home)
    try:
        query = "The flag can be customized for a command"
        # by default, the reduced query alone: the six short code edits fill the top 5 and the memory that says it
        # in words is not there (the fusion is off: it did not win on every dataset)
        assert search.KEYWORD_FUSION == ""
        assert "told" not in _sessions(ws, query)
        monkeypatch.setattr(search, "KEYWORD_FUSION", "sum")
        assert _sessions(ws, query)[0] == "told"
        # a hook's bounded search ranks the content words' list alone whatever the setting (plain BM25's would
        # walk every stop word's matches)
        hook = keyword_search(ws.db, query, limit=5, max_candidates=1000)
        assert "told" not in [h.session_id for h in hook]
    finally:
        ws.close()


def test_stop_words_alone_find_nothing(home: Path) -> None:
    ws = _ws(home)
    try:
        assert _sessions(ws, "the zzqxv for a") == []
        assert _sessions(ws, "Customized") != []
    finally:
        ws.close()
