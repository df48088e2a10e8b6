"""A long session's prompt and edit cost what a fresh one's do: its live state's update filters what the
change brought, not the whole state again, and what the session was shown or given is read by index alone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memory import store
from memory.base import privacy
from memory.fastpath import jsonlite as json
from memory.recall import inject, point
from memory.store import NewMemory
from memory.store import state as session_state
from memory.store.state import LIST_CAPS
from memory.store.workspace import Workspace

TOKEN = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"  # a GitHub token: the filter redacts it


@pytest.fixture
def ws(home: Path, project: Path) -> Iterator[Workspace]:
    w = Workspace.for_dir(str(project), home=str(home))
    yield w
    w.close()


def _long_session(s: session_state.State) -> None:
    """A state at its caps, as a long session leaves it (hundreds of paths, prompts, commands, todos)."""
    for key in ("files_modified", "files_read", "outlined", "commands", "errors", "decisions", "prompts"):
        s[key] = [f"/home/dev/shop/src/{key}/module_{i}.py line {i}" for i in range(LIST_CAPS[key])]
    s["todos"] = [{"content": f"step {i} of the refactor", "status": "pending"} for i in range(12)]


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts privacy.clean is given from now on."""
    seen: list[str] = []
    real = privacy.clean

    def clean(text: str) -> str:
        seen.append(text)
        return real(text)

    monkeypatch.setattr(privacy, "clean", clean)
    return seen


def test_a_long_sessions_update_filters_only_what_changed(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    session_state.update(ws, "s1", _long_session)
    stored = sum(len(v) for v in session_state.load(ws, "s1").values() if isinstance(v, list))
    assert stored > 650
    seen = _counting(monkeypatch)

    def prompt(s: session_state.State) -> None:
        session_state.push_unique(s, "prompts", f"deploy with {TOKEN} please")
        s["last_action"] = "User asked: deploy"
        s["todos"][3]["status"] = f"blocked on {TOKEN}"  # a dict inside a list, changed in place

    after = session_state.update(ws, "s1", prompt)
    # The new prompt, the last action and the changed todo's two texts: not the hundreds stored before.
    assert len(seen) <= 6, seen
    assert TOKEN not in json.dumps(after)
    assert TOKEN not in ws.db.execute("SELECT state FROM session_state WHERE session_id = 's1'").fetchone()[0]
    assert TOKEN not in Path(ws.state_path).read_text()
    assert after["todos"][3]["content"] == "step 3 of the refactor"
    assert after["prompts"][-1].startswith("deploy with ") and len(after["prompts"]) == LIST_CAPS["prompts"]


def test_an_update_stores_what_filtering_the_whole_state_would(ws: Workspace) -> None:
    session_state.update(ws, "s2", _long_session)

    def change(s: session_state.State) -> None:
        session_state.push_unique(s, "commands", f"curl -H 'Authorization: token {TOKEN}' api")
        session_state.push_unique(s, "files_read", s["files_read"][0])  # an old value moved to the end
        s["task"] = f"<private>{TOKEN}</private> rotate the keys"
        s["todos"].append({"content": f"revoke {TOKEN}", "status": "pending"})

    expected = session_state.load(ws, "s2")
    change(expected)
    after = session_state.update(ws, "s2", change)
    assert {k: v for k, v in after.items() if k != "updated_at"} == \
        {k: v for k, v in privacy.clean_obj(expected).items() if k != "updated_at"}  # type: ignore[union-attr]
    assert TOKEN not in json.dumps(after)


def test_what_a_long_session_was_shown_is_read_from_the_index_alone(ws: Workspace) -> None:
    ids = [store.save(ws.db, ws.project.key, NewMemory(
        title=f"Parser note {i}", content=f"the parser raises when the encoding of file {i} is missing",
        session_id="earlier"), filter_low_value=False).id for i in range(40)]
    searched = ids[0]  # found by a search in the session, never injected: still recalled
    store.log_access(ws.db, [searched], "search", "long", "parser encoding")
    for n in range(1000):  # 1,000 prompts shown 5 memories each, another session's between them
        shown = [ids[1 + n % 20]] if n < 20 else []
        store.log_access(ws.db, shown + [100_000 + 5 * n + j for j in range(5 - len(shown))], "inject-prompt",
                         "long", f"prompt {n}", parts={})
        store.log_access(ws.db, [ids[1 + n % 39]], "inject-prompt", "other", f"prompt {n}", parts={})
    statements: list[str] = []
    ws.db.set_trace_callback(statements.append)
    text, got = inject.prompt_recall_body(ws, "long", "why does the parser raise when the encoding is missing?", 3000)
    ws.db.set_trace_callback(None)
    assert got and searched in got and not set(got) & set(ids[1:21]), text
    reads = [sql for sql in statements if "access_log" in sql and sql.lstrip().startswith(("SELECT", "WITH"))]
    assert len(reads) >= 2  # whether the session was shown any, and what, left out in the ranking
    for sql in reads:  # no row of the log read for its kind: the session's range of the index is all it reads
        steps = [row[3] for row in ws.db.execute(f"EXPLAIN QUERY PLAN {sql}") if "access_log" in row[3]]
        assert steps and all("COVERING INDEX access_log_session" in step for step in steps), (sql, steps)


def _plans(ws: Workspace, statements: list[str], table: str) -> list[tuple[str, list[str]]]:
    """Each SELECT on `table` traced, with its query plan's steps on that table."""
    return [(sql, [row[3] for row in ws.db.execute(f"EXPLAIN QUERY PLAN {sql}") if table in row[3]])
            for sql in statements if table in sql and sql.lstrip().startswith(("SELECT", "WITH"))]


def test_a_long_sessions_point_of_action_check_is_one_probe_of_the_index(ws: Workspace, project: Path) -> None:
    src = project / "billing"
    src.mkdir()
    noted, fresh = src / "limits.py", src / "report.py"
    for path in (noted, fresh):
        path.write_text("def apply_limit(amount, cap):\n    return min(amount, cap)\n")
        store.save(ws.db, ws.project.key, NewMemory(
            title=f"Fixed the cap check in {path.name}", content="amounts equal to the cap were rejected",
            type="bugfix", files=[str(path)], session_id="earlier"), filter_low_value=False)
    store.log_access(ws.db, [], "inject-start", "long", None, parts={}, text="## Memory\n- the handoff")
    for n in range(1000):  # 1,000 Edits, a prompt's recall every other one, another session's between them
        if n % 2 == 0:
            for session in ("long", "other"):
                store.log_access(ws.db, [1], "inject-prompt", session, f"prompt {n}", parts={}, text="x" * 500)
        path = str(src / f"module_{n % 250}.py")  # a note given once for each of 250 files
        if not point._given(ws.db, "long", path):
            store.log_access(ws.db, [1], point.KIND, "long", path, parts={}, text="y" * 300)
    statements: list[str] = []
    ws.db.set_trace_callback(statements.append)
    first = point.recall(ws, "long", str(noted), "return min(amount, cap)", "return max(amount, cap)")
    again = point.recall(ws, "long", str(noted), "return min(amount, cap)", "return cap")
    said = inject._said_at_start(ws, "long")
    ws.db.set_trace_callback(None)
    assert "Fixed the cap check in limits.py" in first and again == "", first  # once per file per session
    assert said  # the session's startup text, read back as prompt recall reads it
    assert point.recall(ws, "other", str(fresh), "", "return cap")  # another session is still told
    plans = _plans(ws, statements, "injections")
    assert len(plans) >= 3  # the two checks and the startup text
    for sql, steps in plans:  # no walk of the session's rows: the index holds what each read asks
        assert steps and all("INDEX injections_session (session_id=? AND kind=?" in s for s in steps), (sql, steps)
    checks = [steps for sql, steps in plans if "AND query =" in sql]  # whether the file's note was given
    assert len(checks) >= 2 and all(
        steps == ["SEARCH injections USING COVERING INDEX injections_session (session_id=? AND kind=? AND query=?)"]
        for steps in checks), checks
