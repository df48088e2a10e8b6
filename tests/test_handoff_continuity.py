"""Which handoff reaches the model, through real hook processes: after a compaction whose SessionStart
context was lost (issue 13.2), and at startup after sessions that did no real work (issue 13.9)."""

from __future__ import annotations

from helpers import HookRunner

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
