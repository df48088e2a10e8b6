"""Issue 26, nothing said twice: a session's extraction does not store again, in other words, what the hooks
already stored for that session (a fix, a decision); a learning that adds to it (why) stays."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from memory.learn import importer, run
from memory.store.workspace import Workspace
from tests.support.helpers import TRANSCRIPTS, HookRunner


def _memories(ws: Workspace, sid: str, like: str) -> list[tuple[str, str, str]]:
    rows = ws.db.execute("SELECT type, title, source FROM memories WHERE session_id = ? AND content LIKE ?",
                         (sid, f"%{like}%")).fetchall()
    return [(r[0], r[1], r[2]) for r in rows]


@pytest.mark.parametrize(("name", "fact", "kept"), [
    # the hooks' "Fixed: `git add -A && git commit ...` passes again"; the extractor's "`git commit` failed
    # with "[FORMAT] Code is not formatted." - fixed" told it again
    ("spotter__ae4a77f8-aedd-4bc1-888f-c94edc91af04.prefix.jsonl", "not formatted",
     {"Command failed: `git add -A && git commit", "Fixed: `git add -A && git commit"}),
    # `npx tsc` failed, then passed: the same
    ("claude-code-viewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl", "TS2307",
     {"Command failed: `cd /path/to/Demo/todo-app && npx tsc", "Fixed: `cd /path/to/Demo/todo-app && npx tsc"}),
])
def test_a_fix_the_hooks_stored_is_not_extracted_again(offline: pytest.MonkeyPatch, project: Path, tmp_path: Path,
                                                       name: str, fact: str, kept: set[str]) -> None:
    copy = tmp_path / name
    shutil.copy(TRANSCRIPTS / name, copy)
    ws = Workspace.for_dir(str(project))
    out = importer.import_file(ws, str(copy), extract=True)
    rows = _memories(ws, out.session_id, fact)
    ws.close()
    assert {title[:len(prefix)] for _t, title, _s in rows for prefix in kept if title.startswith(prefix)} == kept
    assert len(rows) == len(kept), rows  # before: a third, source extract:heuristic
    assert all(not source.startswith("extract:") for _t, _title, source in rows)


def test_a_decision_told_by_the_hooks_is_one_memory_after_session_end(offline: pytest.MonkeyPatch, hooks: HookRunner,
                                                                      project: Path) -> None:
    """Through the real hook processes, then the session's extraction: one memory of the decision."""
    hooks.start()
    hooks.prompt("We store auth tokens in httpOnly cookies, never localStorage, in web/auth/session.ts.")
    hooks.end()
    ws = Workspace.for_dir(str(project))
    run.extract_session(ws, "sess-1", trigger="end", settle=False)
    rows = _memories(ws, "sess-1", "httpOnly cookies")
    ws.close()
    assert [t for t, _title, _s in rows] == ["decision"], rows


def test_a_learning_that_adds_an_explanation_stays() -> None:
    fix = run._words("Fixed: `npx tsc --noEmit` passes again after changes to index.ts. It failed with: TS2307")
    again = run._words("`npx tsc` failed with TS2307 - fixed. `npx tsc --noEmit` failed with: TS2307. "
                       "Fixed by changing index.ts")
    why = run._words("`npx tsc` failed with TS2307 - fixed. The test imported @testing-library/react, which the "
                     "project does not install; changing index.ts fixed it")
    assert run._same_fact(again, [fix])
    assert not run._same_fact(why, [fix]) and not run._same_fact(set(), [set()])
