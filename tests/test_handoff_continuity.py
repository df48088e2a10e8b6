"""Which handoff reaches the model, through real hook processes: after a compaction whose SessionStart
context was lost (issue 13.2), and at startup after sessions that did no real work (issue 13.9)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from memory.base import clock, fence
from tests.support.helpers import HookRunner


def unfenced(text: str) -> str:
    """The context inside the untrusted block (memory/base/fence.py) that wraps all of it."""
    assert text.startswith(fence.OPEN + "\n") and text.endswith("\n" + fence.CLOSE), text[:300]
    return text[len(fence.OPEN) + 1:-len(fence.CLOSE) - 1]


HEADER = "Handoff from the memory plugin (state of the work before the compact"


def _work(hooks: HookRunner, task: str) -> None:
    hooks.start()
    hooks.prompt(task)
    hooks.tool("Edit", {"file_path": str(hooks.project / "store.py"), "old_string": "a", "new_string": "b"}, {})
    hooks.tool("Bash", {"command": "pytest -q tests/test_store.py"}, {"stdout": "3 passed", "stderr": ""})
    hooks.stop("The store now writes through Redis.")


def test_prompt_after_a_compaction_without_session_start_carries_the_handoff_once(hooks: HookRunner) -> None:
    _work(hooks, "Migrate the session store to Redis")
    assert hooks.compact()["json"] is None
    # Claude Code lost SessionStart(compact): no hook ran. The next prompt of the same session id carries it.
    text = hooks.prompt("carry on with the migration")
    assert text.count(HEADER) == 1
    assert "Task: Migrate the session store to Redis" in text and "store.py" in text
    # Once: the prompts after it do not repeat it.
    assert HEADER not in hooks.prompt("and now the session expiry please")
    assert HEADER not in hooks.prompt("carry on with the migration")


def test_a_delivered_session_start_compact_is_not_repeated_by_the_prompt(hooks: HookRunner) -> None:
    _work(hooks, "Migrate the session store to Redis")
    hooks.compact()
    start = hooks.start("compact")
    assert start.count(HEADER) == 1 and "Migrate the session store to Redis" in start
    assert HEADER not in hooks.prompt("carry on with the migration")


def test_each_compaction_is_delivered_again(hooks: HookRunner) -> None:
    _work(hooks, "Migrate the session store to Redis")
    hooks.compact()
    hooks.start("compact")
    hooks.prompt("now the session expiry")
    hooks.tool("Edit", {"file_path": str(hooks.project / "expiry.py"), "old_string": "a", "new_string": "b"}, {})
    hooks.stop("Expiry added.")
    hooks.compact()  # a second compaction, and this time SessionStart(compact) is lost
    text = hooks.prompt("go on")
    assert text.count(HEADER) == 1 and "expiry.py" in text


def test_an_ordinary_prompt_without_compaction_gets_no_handoff(hooks: HookRunner) -> None:
    _work(hooks, "Migrate the session store to Redis")
    assert "Handoff from the memory plugin" not in hooks.prompt("carry on with the migration")


def _short_session(project: Path, sid: str, prompt: str, reads: int = 0) -> HookRunner:
    s = HookRunner(project, session=sid)
    s.start()
    s.prompt(prompt)
    for i in range(reads):
        s.tool("Read", {"file_path": str(project / f"notes{i}.md")}, {})
    s.stop("Here are the statistics.")
    s.end()
    return s


def test_short_sessions_do_not_replace_the_last_meaningful_handoff(hooks: HookRunner, project: Path) -> None:
    _work(hooks, "Migrate the session store to Redis")
    hooks.end()
    for n in range(4):  # /memory:stats, a question, a look at a file: no edits, no commands, no decisions
        _short_session(project, f"short-{n}", ["/memory:stats", "what does app.py do?"][n % 2], reads=n % 2)
    text = HookRunner(project, session="next").start()
    assert unfenced(text).startswith("Handoff from the memory plugin (where the last session that did work in "
                                     "this project stopped")
    assert "; 4 later sessions did none" in unfenced(text).splitlines()[0]
    handoff = text.split("Memories of project")[0].split("Recent sessions in this project")[0]
    assert "Task: Migrate the session store to Redis" in handoff and "store.py" in handoff
    assert "/memory:stats" not in handoff and "what does app.py do" not in handoff


def test_the_latest_session_leads_when_it_did_work(hooks: HookRunner, project: Path) -> None:
    _work(hooks, "Migrate the session store to Redis")
    hooks.end()
    _short_session(project, "short", "/memory:stats")
    decided = HookRunner(project, session="decided")
    decided.start()
    decided.prompt("From now on auth tokens live in httpOnly cookies.")  # a decision is work
    decided.end()
    text = HookRunner(project, session="next").start()
    assert unfenced(text).startswith("Handoff from the memory plugin (where the previous session in this project "
                                     "stopped")
    assert "httpOnly cookies" in text.split("Memories of project")[0]


def test_without_any_meaningful_session_the_latest_handoff_still_leads(project: Path, home: Path) -> None:
    _short_session(project, "question", "what does app.py do?", reads=1)
    text = HookRunner(project, session="next").start()
    assert unfenced(text).startswith("Handoff from the memory plugin (where the previous session in this project "
                                     "stopped")
    assert "what does app.py do?" in text


def test_a_resume_that_delivers_the_handoff_settles_the_compaction(hooks: HookRunner) -> None:
    _work(hooks, "Migrate the session store to Redis")
    hooks.compact()  # SessionStart(compact) lost; the conversation is resumed later instead
    assert hooks.start("resume").count("Handoff from the memory plugin (state of the work before the resume") == 1
    assert "Handoff from the memory plugin" not in hooks.prompt("carry on with the migration")


def test_resume_after_a_compaction_injects_one_handoff(hooks: HookRunner) -> None:
    """The compaction's handoff is in the resumed conversation already: the newer one (written by the turns
    after it) is not injected beside it (issue 26)."""
    _work(hooks, "Migrate the session store to Redis")
    hooks.compact()
    assert hooks.start("compact").count("Handoff from the memory plugin") == 1
    hooks.prompt("now move the TTLs to the config file")
    hooks.stop("Moved the TTLs to config.py; next: update the docs.")
    assert "Handoff from the memory plugin" not in hooks.start("resume")
    # A /clear empties the context: the newest handoff comes back, once.
    assert hooks.start("clear").count("Handoff from the memory plugin") == 1


def test_trivial_sessions_fill_no_recent_sessions_line(project: Path, home: Path) -> None:
    """A greeting and an "ok" leave no summary: "Recent sessions" at the next start holds the session that
    worked, not "Asked: hello 14 | Last: ok" (issue 26)."""
    _short_session(project, "real", "Add retries to the HTTP client in client.py", reads=1)
    for i in range(3):
        trivial = HookRunner(project, session=f"hello-{i}")
        trivial.start()
        trivial.prompt(f"hello {i}")
        trivial.stop("ok")
        trivial.end()
    text = HookRunner(project, session="next").start()
    assert "hello" not in text and "(quoted): ok" not in text
    assert "Add retries to the HTTP client" in text


NEXT = "Next: add a test for format_usage in tests/test_usage.py"


def _usage_work(hooks: HookRunner) -> None:
    hooks.start()
    hooks.prompt("Fix the usage line that format_usage prints in src/usage.py")
    hooks.tool("Edit", {"file_path": str(hooks.project / "src/usage.py"), "old_string": "a", "new_string": "b"}, {})
    hooks.stop(f"The usage line is fixed. {NEXT}")


def test_a_turn_that_only_continued_after_a_compaction_keeps_the_next_step(hooks: HookRunner,
                                                                           project: Path) -> None:
    """The turn after a compaction that only says it continues (no tool, no request with content) does not
    replace the last action of the turn that worked (issue 26)."""
    _usage_work(hooks)
    hooks.compact()
    assert NEXT in hooks.start("compact")
    hooks.prompt("continue")
    hooks.stop("Continuing after compaction.")
    hooks.end()
    handoff = HookRunner(project, session="next").start().split("Recent sessions in this project")[0]
    assert NEXT in handoff and "Continuing after compaction" not in handoff
    assert "Task: Fix the usage line that format_usage prints in src/usage.py" in handoff


def test_a_session_that_only_continued_hands_over_the_task_and_next_step_of_the_last_that_worked(
        hooks: HookRunner, project: Path) -> None:
    """A new session that only continued is compacted: its handoff carries the task and the next step of the
    session that worked, not "Last action: ... Continuing after compaction." (issue 26)."""
    _usage_work(hooks)
    hooks.end()
    later = HookRunner(project, session="continued")
    later.start("resume")
    later.prompt("go on")
    later.stop("Continuing after compaction.")
    later.compact()
    handoff = unfenced(later.start("compact"))
    assert handoff.count("Handoff from the memory plugin") == 1
    assert "Task (of the last session that worked): Fix the usage line that format_usage prints" in handoff
    assert NEXT in handoff and "Continuing after compaction" not in handoff


# 2023-11-14 22:13 UTC: a replayed session years before the wall clock (scripts/bench/history.py).
LONG_AGO = 1_700_000_000.0
PREVIOUS = "Handoff from the memory plugin (where the previous session in this project stopped"


def test_a_replayed_sessions_handoff_is_shown_at_the_next_replayed_start(hooks: HookRunner, project: Path,
                                                                         home: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The hooks run at MEMORY_NOW: they date what they store by it and age the handoff by it, so a session
    replayed at an old date hands over to the next one replayed a day later, as its user saw it then."""
    monkeypatch.setenv("MEMORY_NOW", repr(LONG_AGO))
    _work(hooks, "Migrate the session store to Redis")
    hooks.end()
    with sqlite3.connect(next(home.rglob("memory.db"))) as db:
        assert {r[0] for r in db.execute("SELECT created_at FROM handoffs")} == {LONG_AGO}
        assert {r[0] for r in db.execute("SELECT started_at FROM sessions")} == {LONG_AGO}
        assert {r[0] for r in db.execute("SELECT created_at FROM memories")} == {LONG_AGO}
    monkeypatch.setenv("MEMORY_NOW", repr(LONG_AGO + 86400))  # the next day
    text = HookRunner(project, session="next-day").start()
    assert unfenced(text).startswith(f"{PREVIOUS}, {time.strftime('%Y-%m-%d', time.localtime(LONG_AGO))})")
    assert "Task: Migrate the session store to Redis" in text and "store.py" in text
    # Past MEMORY_HANDOFF_MAX_AGE_HOURS (72) by the replay's clock, it is not shown, as it is not to its user.
    monkeypatch.setenv("MEMORY_NOW", repr(LONG_AGO + 4 * 86400))
    assert PREVIOUS not in HookRunner(project, session="four-days-later").start()
    # Without a replay clock the hooks age by the wall clock: years later, no handoff.
    monkeypatch.delenv("MEMORY_NOW")
    assert PREVIOUS not in HookRunner(project, session="today").start()


def test_the_clock_is_the_wall_clock_unless_a_number_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_NOW", "1700000000.5")
    assert clock.now() == 1_700_000_000.5
    for unset in ("", "yesterday"):  # empty or unreadable: the wall clock, never a failure
        monkeypatch.setenv("MEMORY_NOW", unset)
        before = time.time()
        assert before <= clock.now() <= time.time()
