"""Each fact said once at SessionStart, and a command's outcome told only from what the client sends (issue 26
item 2), through the real hook processes with JSON on stdin."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import HookRunner
from tests.test_capture import db_for
from tests.test_handoff_continuity import unfenced

DECISION = "We decided to keep argparse vendored in cli/ because pip installs are blocked"
OTHER_DECISION = "We store auth tokens in httpOnly cookies, never localStorage"
# Claude Code's PostToolUse Bash response: stdout, stderr, interrupted, isImage; no exit code
# (../shared/data/claude-code/hook-payloads/PostToolUse.Bash.json, docs/claude-code-hooks.md).
PIPED = "pytest -q tests/test_cli.py | tail -1"
PIPED_RESPONSE = {"stdout": "1 failed, 3 passed in 0.21s", "stderr": "", "interrupted": False, "isImage": False}


def _earlier_session(project: Path) -> None:
    """A session before the one handed over, with a decision of its own: the startup memories' matter."""
    s = HookRunner(project, session="sess-0")
    s.start()
    s.prompt(f"{OTHER_DECISION}. Update auth/session.py to match")
    s.tool("Edit", {"file_path": str(project / "auth" / "session.py"), "old_string": "a", "new_string": "b"}, {})
    s.tool("Bash", {"command": "npm run lint"}, failed="Exit code 1\nerror: 'token' is never reassigned (prefer-const)")
    s.stop("Tokens moved to cookies.")
    s.end()


def _ordinary_session(hooks: HookRunner) -> None:
    """The issue's session: a prompt that states a decision, an Edit, a Bash run, Stop, SessionEnd."""
    hooks.start()
    hooks.prompt(f"{DECISION}; edit cli/args.py")
    args = str(hooks.project / "cli" / "args.py")
    hooks.tool("Edit", {"file_path": args, "old_string": "import argparse", "new_string": "from cli import argparse"},
               {"filePath": args, "oldString": "import argparse", "newString": "from cli import argparse"})
    hooks.tool("Bash", {"command": PIPED, "description": "Run the CLI tests"}, PIPED_RESPONSE)
    hooks.stop("Vendored argparse is now imported from cli/.")
    hooks.end()


def test_a_decision_stated_in_the_task_is_said_once_at_session_start(hooks: HookRunner, project: Path) -> None:
    _earlier_session(project)
    _ordinary_session(hooks)
    text = unfenced(HookRunner(project, session="sess-2").start())
    # Once, where the handoff (the train of thought) says it: the task; not again as the handoff's decision,
    # its note of the session, or a memory of the project.
    assert text.count(DECISION) == 1, text
    assert f"Task: {DECISION}; edit cli/args.py" in text
    assert "Decisions:" not in text and "Recorded this session:" not in text
    # The other sections keep what they say besides it.
    assert "Last action: Assistant (quoted): Vendored argparse is now imported from cli/." in text
    assert "Files modified: cli/args.py" in text and f"Recent commands: `{PIPED}`" in text
    assert "prefer-const" in text.split("Memories of project app from earlier sessions:")[1]
    assert "Recent sessions in this project" in text and "Changed: auth/session.py" in text
    # The earlier session's decision, once too: its session's line says it, its memory is not listed again,
    # nor is it "Decided" beside the task that states it.
    assert text.count(OTHER_DECISION) == 1, text


def test_a_memory_said_by_the_handoff_is_not_recalled_again_by_a_prompt(hooks: HookRunner, project: Path) -> None:
    _ordinary_session(hooks)
    later = HookRunner(project, session="sess-2")
    assert DECISION in later.start()
    # In this context already (the handoff said it): the prompt's recall does not bring it back.
    assert DECISION not in later.prompt("why is argparse vendored in cli/ instead of installed with pip?")


ERROR = "src/io.c:41: error: implicit declaration of function 'fdopen2'"
BUILT = {"stdout": "built", "stderr": "", "interrupted": False, "isImage": False}


def _fix(hooks: HookRunner, command: str, error: str, path: str) -> None:
    """A command fails, a file is edited, the command passes: a failure fixed in the session."""
    hooks.tool("Bash", {"command": command}, failed=f"Exit code 2\n{error}")
    hooks.tool("Edit", {"file_path": str(hooks.project / path), "old_string": "a", "new_string": "b"}, {})
    hooks.tool("Bash", {"command": command}, BUILT)


def _build_fixed(hooks: HookRunner) -> None:
    hooks.start()
    hooks.prompt("Make the build pass on the new compiler")
    _fix(hooks, "make build", ERROR, "src/io.c")
    hooks.stop("The build passes.")
    hooks.end()


def test_a_fixed_failure_is_said_once_at_the_next_session_start(hooks: HookRunner, project: Path) -> None:
    _build_fixed(hooks)
    text = unfenced(HookRunner(project, session="sess-2").start())
    # Once, in the handoff's line of the fix, whole; not again as the failure's memory ("Command failed"),
    # the fix's memory, or a note of either.
    assert text.count(ERROR) == 1, text
    assert f"Fixed this session: `make build` passes again after changes to io.c. It failed with: {ERROR}" in text
    assert "Command failed" not in text and "Memories of project" not in text
    assert "Recorded this session:" not in text


def test_a_fix_of_an_older_session_is_one_memory_line(hooks: HookRunner, project: Path) -> None:
    _build_fixed(hooks)
    later = HookRunner(project, session="sess-b")  # the handoff is this one's: the fix is history
    later.start()
    later.prompt("Add a --verbose flag to the CLI in cli/main.py")
    later.tool("Edit", {"file_path": str(project / "cli" / "main.py"), "old_string": "a", "new_string": "b"}, {})
    later.stop("Added the flag.")
    later.end()
    text = unfenced(HookRunner(project, session="sess-2").start())
    assert text.count(ERROR) == 1, text
    # The fix's memory says it, its label once: not "Fixed: `make build` passes again: `make build` passes
    # again ..."; the session's line says what was fixed, without the error; the failure is not listed.
    line = next(ln for ln in text.splitlines() if ERROR in ln)
    assert line.startswith("- [bugfix] Fixed: `make build` passes again after changes to io.c. It failed with: ")
    assert "Fixed: `make build` passes again after changes to io.c |" in text.split("Recent sessions")[1]
    assert "Command failed" not in text


def test_a_failure_after_its_fix_is_still_open(hooks: HookRunner, project: Path) -> None:
    hooks.start()
    hooks.prompt("Make the build pass on the new compiler")
    _fix(hooks, "make build", ERROR, "src/io.c")
    hooks.tool("Bash", {"command": "make build"}, failed="Exit code 2\nld: undefined reference to `fdopen'")
    hooks.stop("The link fails now.")
    hooks.end()
    text = unfenced(HookRunner(project, session="sess-2").start())
    assert "Unresolved errors:\n- `make build`: ld: undefined reference to `fdopen'" in text, text


def test_a_fix_the_handoff_line_cannot_hold_is_listed_once(hooks: HookRunner, project: Path, home: Path) -> None:
    hooks.start()
    hooks.prompt("Make the build pass on the new compiler")
    errors = [f"src/m{i}.c:{i}: error: unknown type name 'T{i}'" for i in range(5)]
    for i, error in enumerate(errors):
        _fix(hooks, f"make m{i}", error, f"src/m{i}.c")
    hooks.stop("All modules build.")
    hooks.end()
    stored = db_for(home, project).execute("SELECT content FROM handoffs").fetchone()[0]
    assert "Recorded this session:\n- [bugfix #" in stored and "] Fixed: `make m0` passes again" in stored, stored
    text = unfenced(HookRunner(project, session="sess-2").start())
    # The handoff's line holds the last four fixes; the first is its memory's line, listed once: the
    # handoff's note of that memory (its id) is left out, and no failure is listed beside its fix.
    assert all(text.count(e) == 1 for e in errors), text
    assert "] Fixed: `make m0` passes again after changes to m0.c" in text.split("Memories of project")[1]
    assert "Recorded this session:" not in text and "Command failed" not in text


def test_a_bash_result_without_an_exit_code_claims_no_outcome(hooks: HookRunner, home: Path) -> None:
    hooks.start()
    out = hooks.tool("Bash", {"command": PIPED, "description": "Run the CLI tests"}, PIPED_RESPONSE)
    assert out["exit_code"] == 0
    hooks.tool("Bash", {"command": "make build"}, failed="Exit code 2\nerror: missing header foo.h")
    hooks.tool("Bash", {"command": "sleep 100"}, {"stdout": "", "stderr": "", "interrupted": True, "isImage": False})
    rows = {r["title"]: r["content"] for r in db_for(home, hooks.project).execute("SELECT * FROM memories")}
    # Nothing in the payload says how the piped run ended (`| tail` exits 0 whatever pytest did): the title
    # says it ran, not "(ok)", and the output is kept as printed, not read for words like "failed".
    assert rows[f"Ran `{PIPED}`"] == "1 failed, 3 passed in 0.21s"
    assert not any("(ok)" in t for t in rows), rows
    # What the client does say is still told: a failure event, an interrupted run.
    assert "Command failed: `make build`" in rows and "Command failed: `sleep 100`" in rows


def test_a_recent_sessions_line_says_its_task_once(hooks: HookRunner, project: Path) -> None:
    # A replayed commit's session: its subject is the prompt and the assistant's closing words alike.
    subject = "Add a unique args validator to the command parser (#2397)"
    s = HookRunner(project, session="sess-a")
    s.start()
    s.prompt(subject)
    s.tool("Edit", {"file_path": str(project / "args.go"), "old_string": "a", "new_string": "b"}, {})
    s.stop(subject)
    s.end()
    _ordinary_session(hooks)  # the handoff is this one's: sess-a is a recent session's line
    text = unfenced(HookRunner(project, session="sess-2").start())
    line = next(ln for ln in text.splitlines() if subject in ln)
    assert line.count(subject) == 1 and "Changed: args.go" in line, line
    assert text.count(subject) == 1, text


def test_a_prompt_its_decisions_say_whole_is_kept_once(hooks: HookRunner, home: Path) -> None:
    """A prompt that is all a stated decision is one memory, the decision; a prompt asking more keeps both."""
    hooks.start()
    hooks.prompt(DECISION)
    hooks.prompt(f"Fix the flaky login test in tests/test_auth.py. {OTHER_DECISION}.")
    rows = [(r["type"], r["content"]) for r in
            db_for(home, hooks.project).execute("SELECT type, content FROM memories ORDER BY id")]
    assert rows.count(("decision", DECISION)) == 1
    assert not [c for t, c in rows if t == "prompt" and DECISION in c], rows
    asked = [c for t, c in rows if t == "prompt"]
    assert asked == [f"Fix the flaky login test in tests/test_auth.py. {OTHER_DECISION}."], rows
    assert [c for t, c in rows if t == "decision" and OTHER_DECISION in c], rows


def _memory_lines(text: str) -> list[str]:
    section = text.split("Memories of project app from earlier sessions:\n")[1].split("\nRecent sessions")[0]
    return [ln for ln in section.splitlines() if ln.startswith("- [")]


def test_the_startup_list_of_memories_is_bounded_in_characters(hooks: HookRunner, project: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_SESSION_SUMMARIES", "0")  # the sessions' lines would say their decisions
    for i, topic in enumerate(("auth tokens", "retries", "logging", "config files", "timeouts")):
        s = HookRunner(project, session=f"sess-{i}")
        s.start()
        s.prompt(f"We decided to handle {topic} in module m{i}.py, with one owner and written tests for each "
                 f"case; decision {i} of the design review")
        s.stop(f"Noted for {topic}.")
        s.end()
    later = HookRunner(project, session="sess-new")
    lines = _memory_lines(unfenced(later.start()))
    # Whole lines, best first, while they fit in the room (the first always): not one per decision.
    assert 1 <= len(lines) < 4 and sum(len(ln) + 1 for ln in lines) <= 500, lines
    monkeypatch.setenv("MEMORY_STARTUP_MEMORY_CHARS", "100000")  # the cap is what left the others out:
    assert len(_memory_lines(unfenced(HookRunner(project, session="sess-new2").start()))) == 4  # (5th: handoff)


def test_the_recent_sessions_are_bounded_in_characters(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Three long summaries were the largest part of a start: the lines are whole, newest first, while they
    fit in MEMORY_STARTUP_SESSION_CHARS (the first always)."""
    topics = ("the auth token refresh in auth/tokens.py", "the upload retries in net/upload.py",
              "the log rotation in ops/logs.py", "the config loader in conf/load.py")
    for i, topic in enumerate(topics):
        s = HookRunner(project, session=f"sess-{i}")
        s.start()
        s.prompt(f"Rework {topic} so that each failure is reported once with its cause, its retry count and "
                 f"the request id; keep the public function names and add tests for the edge cases, case {i}")
        s.stop(f"Reworked {topic}; the edge cases have tests now, and the failures are reported once.")
        s.end()

    def sessions(name: str) -> list[str]:
        text = unfenced(HookRunner(project, session=name).start())
        return [ln for ln in text.split("Recent sessions in this project")[1].splitlines()[1:] if ln.startswith("- ")]

    lines = sessions("sess-new")
    assert lines and "ops/logs.py" in lines[0], lines  # newest first; conf/load.py's is the handoff above
    assert len(lines) == 1 or sum(len(ln) + 1 for ln in lines) <= 900, lines
    assert len(lines) < 3, [len(ln) for ln in lines]  # three of these do not fit
    monkeypatch.setenv("MEMORY_STARTUP_SESSION_CHARS", "100000")
    assert len(sessions("sess-new2")) == 3  # MEMORY_SESSION_SUMMARIES; the handoff's session is not repeated


def test_a_completed_todo_is_said_once_in_its_line(hooks: HookRunner, project: Path) -> None:
    """Its memory's line reads "Completed: X", not "Completed: X: Completed todo: X"."""
    todo = "Add a retry with backoff to the upload client in net/upload.py"
    hooks.start()
    hooks.prompt("Make the uploads survive a flaky network in net/upload.py")
    hooks.tool("TodoWrite", {"todos": [{"content": todo, "status": "completed"}]},
               {"oldTodos": [{"content": todo, "status": "in_progress"}]})
    hooks.end()
    later = HookRunner(project, session="sess-2")  # a later session's handoff, so the todo is a memory line
    later.start()
    later.prompt("Rename the settings loader in conf/load.py")
    later.tool("Edit", {"file_path": str(project / "conf" / "load.py"), "old_string": "a", "new_string": "b"}, {})
    later.end()
    now = HookRunner(project, session="sess-3")
    text = "\n".join(unfenced(t) for t in (now.start(), now.prompt("retry with backoff for the upload client")) if t)
    assert f"Completed: {todo} (" in text and text.count(todo) == 1, text
