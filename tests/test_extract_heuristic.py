"""The offline extractor on the real transcripts in shared/data: the learnings it yields name files,
commands, errors and decisions; the transcript reader, the signals, and the reduced model input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memory.capture import transcript
from memory.learn import heuristic, signals
from memory.learn.prompt import build_input, parse_answer
from tests.support.helpers import TRANSCRIPTS

ALL = sorted(TRANSCRIPTS.glob("*.jsonl"))
BIG = TRANSCRIPTS / "spotter__ae4a77f8-aedd-4bc1-888f-c94edc91af04.prefix.jsonl"
NEXT = TRANSCRIPTS / "claude-code-viewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
PLAN = TRANSCRIPTS / "spotter__subagent.jsonl"
# Something concrete: a `code span`, a file name with an extension, an identifier, an error class, a tag.
SPECIFIC = re.compile(r"`[^`]+`|\b[\w/-]+\.\w{1,5}\b|\b\w+_\w+\b|\b[a-z]+[A-Z]\w+|\b\w+(?:Error|Exception)\b"
                      r"|\[[A-Z]+\]|\b\w+\(\)")
BOILERPLATE = {"fixed a bug", "tests pass", "the code works", "updated the code", "made changes",
               "completed the task", "it works now"}


def _extract(path: Path) -> tuple[transcript.Digest, list]:
    d = transcript.read(str(path))
    return d, heuristic.extract(d).learnings


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name[:40])
def test_every_learning_is_specific(path: Path) -> None:
    _, learnings = _extract(path)
    assert len(learnings) <= 5
    for lr in learnings:
        text = f"{lr.title} {lr.content}"
        assert SPECIFIC.search(text), f"not specific: {lr}"
        assert lr.title.lower().strip(". ") not in BOILERPLATE
        assert 10 <= len(lr.title) <= 160 and len(lr.content) >= len(lr.title) // 2
        assert lr.type in ("learning", "decision", "bugfix", "discovery", "fact")


def test_long_session_yields_its_errors_fixes_and_api_facts() -> None:
    _, learnings = _extract(BIG)
    assert 3 <= len(learnings) <= 5
    text = "\n".join(f"{lr.title}\n{lr.content}" for lr in learnings)
    # From the compaction summary: the API that does not exist and what replaced it.
    assert "set_text_map_propagators" in text and "app environment" in text
    # A command that failed and then passed, with how it was fixed.
    fmt = next(lr for lr in learnings if "[FORMAT] Code is not formatted" in lr.content)
    assert fmt.type == "bugfix" and "`mix format`" in fmt.content and "`git commit`" in fmt.title
    # The test failure fixed by editing named files, with the assistant's diagnosis.
    tests = next(lr for lr in learnings if "`mix test`" in lr.title)
    assert "otel_trace_helpers.ex" in " ".join(tests.files) and "with_span" in tests.content


def test_unresolved_build_error_and_fixed_type_error() -> None:
    _, learnings = _extract(NEXT)
    text = "\n".join(f"{lr.title}\n{lr.content}" for lr in learnings)
    unresolved = next(lr for lr in learnings if lr.title.startswith("Unresolved"))
    assert "`npm run build`" in unresolved.title and "generate is not a function" in unresolved.title
    assert "4 times" in unresolved.content
    assert "TS2307" in text and "@testing-library/react" in text


def test_findings_the_assistant_listed_become_learnings() -> None:
    _, learnings = _extract(PLAN)
    assert any("No Igniter installers exist for credo" in lr.title for lr in learnings)
    assert any("mix.exs" in lr.files for lr in learnings)


def test_summary_says_what_was_asked_done_learned_and_left() -> None:
    d = transcript.read(str(NEXT))
    s = heuristic.extract(d).summary
    assert s.asked == "/orchestrator create TODO app by Next.js"
    assert "components/TodoItem.tsx" in s.done and "fixed `npx tsc`" in s.done
    assert s.learned and "`npm run build` still fails" in s.next
    assert len(s.text()) <= 1000


def _user(text: str) -> dict:
    return {"type": "user", "sessionId": "s", "cwd": "/p", "message": {"role": "user", "content": text}}


def test_user_decisions_and_repeated_corrections() -> None:
    edit = {"type": "tool_use", "id": "t1", "name": "Edit", "input": {"file_path": "/p/api.py"}}
    lines = [
        _user("Add a cache to api.py. We will use Redis, not memcached, for the cache."),
        {"type": "assistant", "message": {"role": "assistant", "content": [edit]}},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}},
        _user("No, don't put the TTL in api.py, use settings.py"),
        _user("Still doesn't work: the TTL must come from settings.CACHE_TTL"),
    ]
    d = transcript.from_lines(lines)
    learnings = heuristic.extract(d).learnings
    decision = next(lr for lr in learnings if lr.type == "decision")
    assert "Redis" in decision.content and decision.importance >= 0.8
    corr = next(lr for lr in learnings if "corrections" in lr.title.lower())
    assert "settings.py" in corr.content and "2 times" in corr.content


def test_without_a_transcript_the_hooks_state_is_used() -> None:
    state = {"task": "fix login", "fixed": ["`pytest tests/test_auth.py` failed with: KeyError: 'exp'. It passes "
                                            "now after changes to auth.py."], "decisions": []}
    x = heuristic.extract(transcript.Digest(), state)
    assert x.learnings and "KeyError" in x.learnings[0].content
    assert x.summary.asked == "fix login"


# -- the transcript reader -------------------------------------------------------------------------


def test_reader_is_defensive_and_resumes_at_an_offset(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    good = [json.dumps({"type": "user", "sessionId": "abc", "cwd": "/w", "timestamp": "2026-01-02T03:04:05Z",
                        "message": {"role": "user", "content": "first task please"}}),
            "not json at all", json.dumps(["a", "list"]), json.dumps({"type": "weird", "message": 5})]
    path.write_text("\n".join(good) + "\n" + '{"type": "user", "message": {"role": "us')  # half-written line
    d = transcript.read(str(path))
    assert (d.session_id, d.cwd, d.task, d.bad_lines) == ("abc", "/w", "first task please", 2)
    assert d.started_at == transcript.parse_time("2026-01-02T03:04:05Z")
    assert d.end_offset == len(("\n".join(good) + "\n").encode())  # the partial line is left for later
    with path.open("a") as fh:
        fh.write('er", "content": "second"}}\n')
    later = transcript.read(str(path), d.end_offset)
    assert [t.text for t in later.prompts] == ["second"]


def test_reader_separates_commands_meta_subagents_and_compaction() -> None:
    d = transcript.read(str(BIG))
    roles = {t.role for t in d.texts}
    assert {"user", "assistant", "compact-summary", "command"} <= roles
    assert d.task.startswith("Work on bead spotter-4te")
    assert not any(t.text.startswith(("<command", "Caveat", "<local-command")) for t in d.prompts)
    d2 = transcript.read(str(NEXT))
    assert len([t for t in d2.texts if t.role == "subagent-prompt"]) == 5  # Task prompts are not the user's
    assert d2.prompts[0].text == "/orchestrator create TODO app by Next.js"


@pytest.mark.parametrize(("command", "family"), [
    ('git add -A && git commit -m "feat: x; y"', "git commit"),
    ("cd /a && npm run build 2>&1 | tail -5", "npm run build"),
    ("MIX_ENV=test mix run -e 'require Logger; Logger.info(1)'", "mix run"),
    (".venv/bin/python -m pytest tests -x", "python pytest"),
    ("npx tsc --noEmit", "npx tsc"),
    ("pytest tests/test_a.py::test_b", "pytest"),
])
def test_command_family(command: str, family: str) -> None:
    assert signals.command_family(command) == family


def test_error_lines_pick_the_headline() -> None:
    out = "npm warn Unknown env config\n\n> Build error occurred\n[TypeError: generate is not a function]\n"
    assert signals.error_lines(out)[0] == "[TypeError: generate is not a function]"
    escaped = "Pre-commit validation failed:\\n\\n[FORMAT] Code is not formatted.\\nRun 'mix format' to fix."
    assert signals.error_lines(escaped) == ["[FORMAT] Code is not formatted."]


# -- the model input and answer ------------------------------------------------------------------------


@pytest.mark.parametrize("limit", [3000, 12000, 40000])
def test_model_input_keeps_what_matters_within_the_cap(limit: int) -> None:
    d = transcript.read(str(BIG))
    text = build_input(d, signals.analyse(d), None, "spotter", limit)
    assert len(text) <= limit
    for must in ("Work on bead spotter-4te", "## Errors and how they were resolved",
                 "[FORMAT] Code is not formatted", "## Files changed", "otel.ex"):
        assert must in text, (limit, must)
    if limit >= 12000:
        assert "## End of the conversation" in text


def test_parse_answer_coerces_and_rejects() -> None:
    learnings, summary = parse_answer({"learnings": [
        {"type": "convention", "title": " Use   ruff ", "content": "Lint with `ruff check .`", "importance": "0.9",
         "files": ["pyproject.toml", 3]},
        {"title": "", "content": "no title"}, "junk"], "summary": {"asked": "lint", "next": None}})
    assert [(x.type, x.title, x.importance, x.files) for x in learnings] == [
        ("learning", "Use ruff", 0.9, ["pyproject.toml"])]
    assert summary.asked == "lint" and summary.next == ""
    for bad in (None, [], {"learnings": "x"}, {"learnings": [{"title": "", "content": ""}]}):
        with pytest.raises(ValueError):
            parse_answer(bad)
    assert parse_answer({"learnings": [], "summary": {}})[0] == []  # nothing to learn is an answer
