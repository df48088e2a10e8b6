"""Outlined files on every client: a `file_unchanged` answer to the second whole Read (Claude Code 2.1.197) is
replaced by the file, and a whole Read the client refuses (size or token cap) is denied in PreToolUse with the
outline as the reason. Real hook processes on the committed fixture."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import HookRunner
from tests.test_outline_hook import PY_SOURCE, _imported, db, outlined, read_event


@pytest.fixture
def big(project: Path) -> Path:
    path = project / "service.py"
    path.write_text(PY_SOURCE)  # 25,880 bytes, ~7,000 tokens
    return path


@pytest.fixture(autouse=True)
def _client_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS", raising=False)
    monkeypatch.delenv("MEMORY_OUTLINE_CLIENT_MAX_BYTES", raising=False)


def unchanged_event(hooks: HookRunner, path: Path, **extra: object) -> dict:
    """The PostToolUse event of a whole Read that Claude Code 2.1.197 answered from its read-state."""
    return hooks.event("PostToolUse", tool_name="Read", tool_input={"file_path": str(path)},
                       tool_response={"type": "file_unchanged", "file": {"filePath": str(path)}}, **extra)


def pre_read(hooks: HookRunner, path: Path, **tool_input: object) -> dict | None:
    return hooks.run("pre_tool_use", hooks.event("PreToolUse", tool_name="Read",
                                                 tool_input={"file_path": str(path), **tool_input}))["json"]


def denied(answer: dict | None) -> str:
    assert answer is not None
    out = answer["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse" and out["permissionDecision"] == "deny"
    return str(out["permissionDecisionReason"])


# --- read again ---------------------------------------------------------------------------------------


def test_file_unchanged_after_an_outline_gets_the_whole_file(hooks: HookRunner, big: Path) -> None:
    assert outlined(hooks.run("post_tool_use", read_event(hooks, big)))
    out = hooks.run("post_tool_use", unchanged_event(hooks, big))["json"]
    result = out["hookSpecificOutput"]["updatedToolOutput"]
    assert result["type"] == "text"
    file = result["file"]
    assert file["content"] == PY_SOURCE and file["filePath"] == str(big) and file["startLine"] == 1
    assert file["numLines"] == file["totalLines"] == PY_SOURCE.count("\n") + 1  # as the client counts
    # Again: the client keeps saying file_unchanged, the hook keeps giving the file.
    assert outlined(hooks.run("post_tool_use", unchanged_event(hooks, big))) == PY_SOURCE


def test_file_unchanged_of_a_file_the_model_saw_whole_is_left_alone(hooks: HookRunner, big: Path,
                                                                     project: Path) -> None:
    small = project / "small.py"
    small.write_text("def f():\n    return 1\n")
    assert hooks.run("post_tool_use", read_event(hooks, small))["json"] is None  # too short to outline
    assert hooks.run("post_tool_use", unchanged_event(hooks, small))["json"] is None
    assert outlined(hooks.run("post_tool_use", read_event(hooks, big)))
    # A subagent that never got the outline read it whole: its file_unchanged is true.
    assert hooks.run("post_tool_use", unchanged_event(hooks, big, agent_id="agent-3"))["json"] is None
    # A ranged read's file_unchanged is the client's business.
    ranged = unchanged_event(hooks, big)
    ranged["tool_input"].update(offset=10, limit=5)
    assert hooks.run("post_tool_use", ranged)["json"] is None


def test_a_file_with_a_secret_is_not_repeated_but_read_by_range(hooks: HookRunner, project: Path) -> None:
    path = project / "settings.py"
    path.write_text(PY_SOURCE + '\nAWS_SECRET_ACCESS_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"\n')
    assert outlined(hooks.run("post_tool_use", read_event(hooks, path)))
    text = outlined(hooks.run("post_tool_use", unchanged_event(hooks, path)))
    lines = path.read_text().count("\n") + 1
    assert text is not None and "wJalrXUtnFEMI" not in text
    assert f"Read it with offset=1 limit={lines}" in text


# --- refused whole reads ------------------------------------------------------------------------------


def test_a_read_over_the_client_byte_cap_is_denied_with_the_outline(hooks: HookRunner, home: Path, big: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_OUTLINE_CLIENT_MAX_BYTES", "20000")
    reason = denied(pre_read(hooks, big))
    assert reason.startswith("[memory plugin] Too large for a whole Read (25 KB, ~")
    assert "over 19 KB). Its outline: " in reason and "Code: Read offset+limit." in reason
    assert " search(" in reason and "click.echo(" not in reason  # signatures, no bodies
    # Through the cache: PostToolUse of a later read of the same file is a hit.
    row = db(home, hooks.project).execute("SELECT path, symbols FROM file_signatures").fetchone()
    assert row["path"] == str(big) and row["symbols"] > 10


def test_a_read_over_the_client_token_cap_is_denied(hooks: HookRunner, big: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS", "5000")
    assert "over 5000 tokens)" in denied(pre_read(hooks, big))
    # Under the token cap (~7,000 tokens < 8,000) the client reads it: decided before any parse, and PostToolUse
    # outlines it.
    big.write_text(PY_SOURCE + "\n")  # not the version cached above
    monkeypatch.setenv("CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS", "8000")
    monkeypatch.setenv("PYTHONPROFILEIMPORTTIME", "1")
    before = hooks.run("pre_tool_use", hooks.event("PreToolUse", tool_name="Read",
                                                   tool_input={"file_path": str(big)}))
    assert before["json"] is None and "parser.extract" not in _imported(before)
    assert outlined(hooks.run("post_tool_use", read_event(hooks, big)))


def test_what_the_client_reads_or_has_no_outline_passes(hooks: HookRunner, home: Path, project: Path, big: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_OUTLINE_CLIENT_MAX_BYTES", "100")
    notes = project / "notes.txt"
    notes.write_text("words\n" * 1000)
    binary = project / "blob.py"
    binary.write_bytes(b"\x00\x01binary" * 500)
    flat = project / "flat.py"
    flat.write_text("print('step')\n" * 400)
    for path in (notes, binary, flat, project / "missing.py"):
        assert pre_read(hooks, path) is None, path
    for ranged in ({"offset": 1}, {"limit": 100}, {"pages": "1-2"}):
        assert pre_read(hooks, big, **ranged) is None
    monkeypatch.setenv("MEMORY_OUTLINE", "off")
    assert pre_read(hooks, big) is None
    monkeypatch.setenv("MEMORY_OUTLINE", "on")
    monkeypatch.setenv("MEMORY_OUTLINE_MAX_BYTES", "20000")  # too big to parse in a hook: the client's error stands
    assert pre_read(hooks, big) is None


def test_a_small_file_costs_one_stat_no_database(hooks: HookRunner, home: Path, big: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPROFILEIMPORTTIME", "1")
    result = hooks.run("pre_tool_use", hooks.event("PreToolUse", tool_name="Read",
                                                   tool_input={"file_path": str(big)}))
    assert result["json"] is None
    assert not _imported(result) & {"sqlite3", "_sqlite3", "memory.store", "memory.outline.read", "parser"}
    assert not (home / "projects").exists()  # no database opened, none made


def test_a_long_outline_is_cut_at_a_row_with_where_the_rest_starts() -> None:
    from memory.outline.read import _bounded_rows

    rows = "imports: os\n" + "".join(f"{10 * i}-{10 * i + 8} helper_{i}(a: int) -> str\n" for i in range(1, 40))
    out = _bounded_rows(rows.rstrip("\n"), 200)
    assert len(out) < 260 and out.splitlines()[0] == "imports: os"
    kept = len(out.splitlines()) - 2
    assert out.endswith(f"[... {39 - kept} more rows from line {10 * (kept + 1)}: Read offset+limit]")
    assert _bounded_rows("1-2 f()", 200) == "1-2 f()"


# --- a file too large to parse within the hook's budget -------------------------------------------------


def _generated(functions: int) -> str:
    """A Python module of `functions` functions and a class every 50: ~120 bytes a function."""
    parts = ['"""A generated module."""\n\nimport os\n']
    for i in range(functions):
        if i % 50 == 0:
            parts.append(f"\n\nclass Group{i}:\n    \"\"\"A group.\n\n    type checking is done here\n    \"\"\"\n")
        parts.append(f"\n    def method_{i}(self, value: int = {i}) -> int:\n        return value * {i}\n")
    return "".join(parts)


def test_a_huge_file_is_parsed_within_its_budget_and_the_rest_scanned(hooks: HookRunner, home: Path,
                                                                        project: Path) -> None:
    path = project / "huge.py"
    source = _generated(3500)  # ~330 KB: over the client's 256 KB
    path.write_text(source)
    reason = denied(pre_read(hooks, path))
    total = source.count("\n")  # it ends with a newline
    assert f"Its outline: {total} lines." in reason
    assert "not parsed (over the hook's parse budget)" in reason and "definitions without a keyword" in reason
    # Parsed rows first (ranges), then scanned ones (start line only); every name is shown, or a note says
    # from which line nothing was scanned or shown.
    assert "-1" in reason.split("method_0(value: int = 0) -> int")[0][-8:]  # a parsed row: its range
    note = next(line for line in reason.splitlines() if "not parsed" in line)
    shown = int(note.split("; lines ")[-1].split("-")[0]) if "not scanned" in note else total + 1
    if reason.endswith(": Read offset+limit]") and "more rows from line" in reason.splitlines()[-1]:
        shown = min(shown, int(reason.splitlines()[-1].split("from line ")[1].split(":")[0]))
    assert shown > 2000
    for row, line in enumerate(source.splitlines(), 1):
        if line.strip().startswith(("def ", "class ")) and row < shown:
            name = line.split()[1].split("(")[0].rstrip(":")
            assert name in reason, (row, name)
    scanned = reason.split(note, 1)[1]
    assert " def method_" in scanned
    assert "type checking is done" not in scanned  # a docstring's prose is not a definition
    # Cached under its own key: a hit here, never served as the full outline.
    row = db(home, hooks.project).execute("SELECT content_hash FROM file_signatures").fetchone()
    assert "/p" in row["content_hash"]
    assert denied(pre_read(hooks, path)) == reason


def test_the_parse_stops_at_the_budget() -> None:
    from memory.outline.partial import PARSE_MAX_BYTES, PROBE_BYTES, outline_within

    data = _generated(6000).encode()
    outline, cut = outline_within(data, "big.py", budget_units=0)  # no work left: the probe alone
    assert PROBE_BYTES // 2 <= cut <= PROBE_BYTES and data[cut - 1:cut] == b"\n"
    assert outline.parsed and outline.symbols and outline.error_ratio == 0  # cut where a top-level line starts
    outline, cut = outline_within(data, "big.py", budget_units=10**9)  # all the work: up to the cap
    assert PARSE_MAX_BYTES - 16 * 1024 <= cut <= PARSE_MAX_BYTES
    small = _generated(40).encode()
    assert outline_within(small, "small.py")[1] == len(small)


def test_a_partial_outline_is_the_same_however_slow_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """The part parsed is counted in tree-sitter's work units, not CPU time: a machine three times as slow (each
    CPU second read as three) gives the same cut and the same rows."""
    import time as clock

    from memory.outline.partial import outline_within

    data = _generated(6000).encode()
    outline, cut = outline_within(data, "big.py")
    assert 2 * 16 * 1024 < cut < len(data)
    real = clock.process_time
    monkeypatch.setattr(clock, "process_time", lambda: 3 * real())
    slow, slow_cut = outline_within(data, "big.py")
    assert (slow_cut, slow.render()) == (cut, outline.render())


def test_a_part_costlier_than_its_probe_ends_where_the_work_does() -> None:
    """A file whose first part is cheap to parse (a licence, comments) and the rest is not: the probe's rate
    over-promises, and the parse of the longer part stops where its units run out; the rest is scanned and the
    note names its lines."""
    from memory.outline.partial import outline_within, scanned_tail

    comment = "".join(f"# licence line {i}: permission is hereby granted to any person\n" for i in range(400))
    data = (comment + "\n" + _generated(6000)).encode()
    outline, cut = outline_within(data, "lic.py")
    assert outline.parsed_bytes is not None and cut == outline.parsed_bytes < 256 * 1024
    assert outline_within(data, "lic.py")[1] == cut  # the same every time
    total = data.count(b"\n") + 1
    first = data.count(b"\n", 0, cut) + 1
    note = f"[lines {first}-{total} not parsed (over the hook's parse budget)"
    assert scanned_tail(data, cut, total).startswith(note)
    assert outline.symbols[-1].start_line < first


def test_keyword_rows_find_definitions_not_prose() -> None:
    from memory.outline.partial import keyword_rows

    src = (b"x = 1\n\ndef foo(a):\n    type checking is done\n    class of things\nclass Bar(Base):\n"
           b"    async def baz(self):\nfunc (r *T) Name(x int) {\nimpl<T> Foo for Bar {\npub(crate) fn go<T>(x: T) {\n"
           b"type Foo struct {\nexport class X extends Y {\ntypedef struct foo {\nstruct a b;\nfunction q() {}\n")
    rows, stopped = keyword_rows(src, 6)
    assert stopped is None
    assert [r.split()[0] for r in rows] == ["3", "6", "7", "8", "9", "10", "11", "12", "13", "15"]
    assert rows[2] == "  7 async def baz(self):"
    rows, stopped = keyword_rows(src, 6, max_chars=30)
    assert len(rows) == 2 and stopped == 6  # scanned up to line 6
