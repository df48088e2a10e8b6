"""Continuity across /compact and across sessions, with the real plugin loaded from the repo root."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.e2e_harness import REPO, ClaudeRun, RunClaude, hook_timings, make_git_repo, transcript_entries
from tests.support.fake_anthropic import Turns, all_text, is_compaction, text, tool_use

pytestmark = pytest.mark.e2e

TASK = "Fix the greeting in app.py"
PRIVATE = "hunter2-PRIVATE-MARKER"
AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
PROMPT_1 = (
    f"{TASK}; we decided to use f-strings everywhere. "
    f"<private>{PRIVATE}</private> The deploy key is {AWS_KEY}, do not store it."
)
DECISION = "Decision: use f-strings for all string formatting in app.py."
OLD = '    return "Hello, " + name + "!"'
NEW = '    return f"Hello, {name}!"'

APP = '''"""A tiny greeting app used by the end-to-end tests."""

import sys

DEFAULT_NAME = "world"


def greeting(name):
    """Return the greeting for name."""
    return "Hello, " + name + "!"


def farewell(name):
    """Return the farewell for name."""
    return "Goodbye, %s." % name


def shout(text):
    return text.upper()


def parse_args(argv):
    if len(argv) > 1:
        return argv[1]
    return DEFAULT_NAME


def main(argv=None):
    argv = sys.argv if argv is None else argv
    name = parse_args(argv)
    print(greeting(name))
    print(farewell(name))
    return 0


class Greeter:
    def __init__(self, name):
        self.name = name

    def greet(self):
        return greeting(self.name)


if __name__ == "__main__":
    raise SystemExit(main())
'''


def _our_timings(*transcripts: Path | None) -> list[tuple[str, int | None]]:
    timings: list[tuple[str, int | None]] = []
    for path in dict.fromkeys(transcripts):  # /compact and its session share one transcript
        assert path is not None and path.is_file()
        timings += hook_timings(path, "hooks/run")
    return timings


def _diagnose(run: ClaudeRun, memory_home: Path) -> str:
    """Our hooks' transcript records and the tail of the plugin's log, for failure messages."""
    records = [
        json.dumps(e["attachment"])[:600]
        for e in (transcript_entries(run.transcript) if run.transcript else [])
        if isinstance(e.get("attachment"), dict) and "hooks/run" in json.dumps(e["attachment"])
    ]
    logs = [p.read_text(errors="replace")[-3000:] for p in memory_home.rglob("*.log")]
    return "\n".join([run.describe(), "hook records:", *records, "plugin logs:", *logs])


def _files_containing(root: Path, needles: list[bytes]) -> list[str]:
    hits = []
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            hits += [f"{path}: {n.decode()}" for n in needles if n in data]
    return hits


def test_handoff_survives_compact_and_reaches_next_session(
    run_claude: RunClaude, tmp_path: Path, memory_home: Path
) -> None:
    project = make_git_repo(tmp_path / "project", {"app.py": APP})
    app = project / "app.py"
    common = {"cwd": project, "home": tmp_path / "home", "plugin_dir": REPO}

    # Session 1: read app.py, edit it, state a decision.
    work = Turns(
        [
            tool_use("Read", {"file_path": str(app)}),
            tool_use("Edit", {"file_path": str(app), "old_string": OLD, "new_string": NEW}),
            text(f"Switched greeting() to an f-string. {DECISION}"),
        ],
        summary="The user asked to fix the greeting in app.py; greeting() now uses an f-string.",
    )
    first = run_claude(PROMPT_1, script=work, **common)
    assert first.returncode == 0, first.describe()
    assert NEW in app.read_text() and OLD not in app.read_text()
    session = first.session_id
    assert session

    # /compact on that session: PreCompact writes the handoff, SessionStart(compact) injects it.
    compact = run_claude("/compact", resume=session, script=work, **common)
    assert compact.returncode == 0, compact.describe()
    assert any(is_compaction(r) for r in compact.requests), "no compaction request reached the API"
    assert compact.transcript is not None
    injected = [
        str(e["attachment"].get("stdout", ""))
        for e in transcript_entries(compact.transcript)
        if isinstance(e.get("attachment"), dict)
        and e["attachment"].get("hookName") == "SessionStart:compact"
        and "hooks/run" in str(e["attachment"].get("command", ""))
    ]
    assert injected, "our SessionStart(compact) hook printed nothing\n" + _diagnose(compact, memory_home)
    assert "Handoff" in injected[-1] and TASK in injected[-1] and "app.py" in injected[-1], injected[-1]

    # In -p mode /compact makes no model request after compacting: the next prompt on the session
    # is the first request that carries the post-compaction context.
    follow = run_claude("Carry on.", resume=session, script=Turns([text("Nothing left to do.")]), **common)
    assert follow.returncode == 0, follow.describe()
    assert follow.main_requests, "no request after compaction"
    after = all_text(follow.main_requests[0])
    assert "Handoff" in after
    assert TASK in after
    assert "app.py" in after

    # Session 2: a brand-new session in the same project recalls the work.
    second = run_claude("Continue the greeting work in app.py", script=Turns([text("Nothing left to do.")]), **common)
    assert second.returncode == 0, second.describe()
    assert second.session_id != session
    assert second.main_requests
    seen = all_text(second.main_requests[0])
    assert TASK in seen or "f-strings" in seen, "neither the task nor the decision was recalled"

    # Every hook run of ours that the transcript recorded has its wall time.
    timings = _our_timings(first.transcript, compact.transcript, second.transcript)
    print("memory plugin hook timings (ms):", timings)
    assert timings, "no hook run of the memory plugin recorded in the transcripts"
    for name, ms in timings:
        assert isinstance(ms, int), (name, ms)
        assert ms < 1000, (name, ms)

    # Privacy: neither the <private> text nor the AWS key was stored anywhere by the plugin.
    stores = [memory_home, tmp_path / "home" / ".claude" / "plugins" / "data"]
    assert any(p.is_file() for p in memory_home.rglob("*")), "the plugin stored nothing in MEMORY_HOME"
    needles = [PRIVATE.encode(), b"hunter2", AWS_KEY.encode()]
    leaks = [hit for root in stores if root.exists() for hit in _files_containing(root, needles)]
    assert not leaks, leaks
