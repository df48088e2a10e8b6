"""Recall at the point of action (memory/recall/point.py) through the real PreToolUse hook process: an edit of a
file gets what other sessions recorded about it, about the symbol it touches first, once per session; an
unrelated file gets nothing."""

from __future__ import annotations

from pathlib import Path

from memory.hook.pre_tool_use import named_files
from memory.recall.point import symbol_name, symbols_at
from tests.support.helpers import HookRunner

LIMITS = """\
def apply_limit(amount, cap):
    if amount > cap:
        return cap
    return amount


def round_cents(value):
    return round(value, 2)
"""


def _pre_edit(hooks: HookRunner, path: Path, old: str, new: str, tool: str = "Edit") -> str:
    tin = {"file_path": str(path), "old_string": old, "new_string": new}
    if tool == "MultiEdit":
        tin = {"file_path": str(path), "edits": [{"old_string": old, "new_string": new}]}
    return hooks.context(hooks.run("pre_tool_use", hooks.event("PreToolUse", tool_name=tool, tool_input=tin)))


def _edit(hooks: HookRunner, path: Path, old: str, new: str) -> None:
    path.write_text(path.read_text().replace(old, new))
    hooks.tool("Edit", {"file_path": str(path), "old_string": old, "new_string": new}, {"filePath": str(path)})


def _session_with_a_fix(hooks: HookRunner, path: Path) -> None:
    """Session 1: reads the file (its outline is cached), edits apply_limit, a failing test then passes."""
    hooks.session = "s-one"
    hooks.start()
    hooks.prompt("Fix the cap check in billing/limits.py: amounts equal to the cap were rejected")
    hooks.tool("Read", {"file_path": str(path)}, {"type": "text", "file": {"filePath": str(path),
                                                                          "content": path.read_text()}})
    hooks.tool("Bash", {"command": "pytest tests/test_limits.py"}, failed="FAILED test_cap - assert 5 == 4")
    _edit(hooks, path, "if amount > cap:", "if amount >= cap:")
    hooks.tool("Bash", {"command": "pytest tests/test_limits.py"}, {"stdout": "1 passed", "stderr": ""})
    hooks.stop("Fixed: apply_limit now caps amounts equal to the cap.")
    hooks.end()


def test_an_edit_of_a_file_with_a_recorded_fix_gets_it_once(hooks: HookRunner, project: Path) -> None:
    path = project / "billing" / "limits.py"
    path.parent.mkdir()
    path.write_text(LIMITS)
    _session_with_a_fix(hooks, path)
    hooks.session = "s-two"
    hooks.start()
    old = "    if amount >= cap:\n        return cap"
    note = _pre_edit(hooks, path, old, old.replace("return cap", "return 0"))
    assert "Recorded in past sessions about billing/limits.py (apply_limit)" in note
    assert "Fixed: `pytest tests/test_limits.py` passes again" in note
    fix = next(ln for ln in note.splitlines() if "] Fixed" in ln)
    assert fix.count("`pytest tests/test_limits.py`") == 1, fix  # the fix's label, then its text: said once
    assert "<recalled-data" in note or "recalled" in note.lower()  # fenced as untrusted data
    assert note.count("\n- [") <= 3
    # Once per file per session: the next edit of the same file is not told again.
    assert _pre_edit(hooks, path, "return round(value, 2)", "return round(value, 3)") == ""
    # A later session is told again.
    hooks.session = "s-three"
    later = _pre_edit(hooks, path, "return round(value, 2)", "return round(value, 3)", tool="MultiEdit")
    assert "about billing/limits.py (round_cents)" in later and "passes again" in later


def test_an_unrelated_file_and_the_same_session_get_nothing(hooks: HookRunner, project: Path) -> None:
    path = project / "limits.py"
    path.write_text(LIMITS)
    _session_with_a_fix(hooks, path)
    other = project / "report.py"
    other.write_text("def render():\n    return ''\n")
    hooks.session = "s-two"
    assert _pre_edit(hooks, other, "return ''", "return 'x'") == ""
    assert _pre_edit(hooks, project / "new.py", "", "print(1)", tool="Write") == ""
    hooks.session = "s-one"  # what a session recorded itself is in its own context already
    assert _pre_edit(hooks, path, "return cap", "return cap + 0") == ""


def test_memories_about_the_touched_symbol_come_first(hooks: HookRunner, project: Path) -> None:
    path = project / "limits.py"
    path.write_text(LIMITS)
    hooks.session = "s-one"
    hooks.tool("Read", {"file_path": str(path)}, {"type": "text", "file": {"filePath": str(path),
                                                                          "content": path.read_text()}})
    _edit(hooks, path, "return round(value, 2)", "return round(value, 2)  # banker's rounding is wrong here")
    hooks.session = "s-zero"
    _edit(hooks, path, "return amount\n", "return amount  # apply_limit keeps amount\n")
    hooks.session = "s-two"
    note = _pre_edit(hooks, path, "return round(value, 2)", "return round(value, 4)")
    lines = [ln for ln in note.splitlines() if ln.startswith("- [")]
    assert lines and "banker" in lines[0] or "round_cents" in note


def _pre_bash(hooks: HookRunner, command: str) -> str:
    return hooks.context(hooks.run("pre_tool_use", hooks.event("PreToolUse", tool_name="Bash",
                                                                tool_input={"command": command})))


def test_a_command_naming_a_file_gets_its_note_once(hooks: HookRunner, project: Path) -> None:
    path = project / "billing" / "limits.py"
    path.parent.mkdir()
    path.write_text(LIMITS)
    (project / "README.md").write_text("# billing\n")
    _session_with_a_fix(hooks, path)
    hooks.session = "s-two"
    hooks.start()
    # Nothing when the command names no file the store has memories about, or no file at all.
    assert _pre_bash(hooks, "cat README.md | wc -l") == ""
    assert _pre_bash(hooks, "git status && ls -la") == ""
    note = _pre_bash(hooks, "sed -i 's/>= cap/> cap/' billing/limits.py && python -m pytest -q")
    assert "Recorded in past sessions about billing/limits.py" in note
    assert "Fixed: `pytest tests/test_limits.py` passes again" in note and "<recalled-data" in note
    # Once per file per session, whichever tool names it next.
    assert _pre_bash(hooks, f"git diff {path}") == ""
    assert _pre_edit(hooks, path, "return amount", "return int(amount)") == ""
    # A pytest node id names the definition: a later session is told which one.
    hooks.session = "s-three"
    later = _pre_bash(hooks, "python -m pytest billing/limits.py::apply_limit -x")
    assert "about billing/limits.py (apply_limit)" in later


def test_files_named_by_a_command(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    for name in ("src/a.rs", "b.py", "Makefile"):
        (tmp_path / name).write_text("x\n")
    cwd = str(tmp_path)
    paths, words = named_files("git diff -- src/a.rs && grep -n x b.py:3 \"$HOME/b.py\" src/*.rs", cwd)
    assert paths == [str(tmp_path / "src/a.rs"), str(tmp_path / "b.py")]
    assert "git" in words and "diff" in words
    paths, words = named_files(f"pytest {tmp_path}/b.py::TestB::test_c --file=Makefile >out.txt", cwd)
    assert paths == [str(tmp_path / "b.py"), str(tmp_path / "Makefile")] and ["TestB", "test_c"] == words[1:3]
    assert named_files("echo 'no files here' ; ls nothere.py", cwd)[0] == []
    assert named_files("x " * 5000 + "b.py", cwd)[0] == []  # read up to COMMAND_CHARS, STATS words at most


def test_symbol_names_from_outline_rows() -> None:
    assert symbol_name("def apply_limit(amount, cap)") == "apply_limit"
    assert symbol_name("func (s *Server) Serve(l net.Listener) error") == "Serve"
    assert symbol_name("(c *Command) SetArgs(a []string)") == "SetArgs"  # a Go method's outline row
    assert symbol_name("4 constants: A, B, C, D") == ""
    assert symbol_name("pub fn call(&self, req: Request) -> Result<Response>") == "call"
    assert symbol_name("class Foo(Base)") == "Foo"
    assert symbol_name("MAX_RETRIES = 3") == "MAX_RETRIES"
    outline = "1-4 apply_limit(amount, cap)\n7-8 round_cents(value)\n  7-7 inner()"
    assert symbols_at(outline, 7) == ["inner", "round_cents"]
    assert symbols_at(outline, 5) == []


def _memory(project: Path, *args: str) -> str:
    import os
    import subprocess
    import sys

    from tests.support.helpers import ROOT

    out = subprocess.run([sys.executable, "-m", "memory", *args], cwd=project, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


def _change_id(project: Path, session: str, name: str) -> int:
    import json

    rows = json.loads(_memory(project, "recent", "--type", "change", "--json", "-n", "50"))
    for r in rows:
        if r["session_id"] == session:
            got = json.loads(_memory(project, "get", str(r["id"]), "--json"))[0]
            if name in got["content"] or name in got["title"]:
                return int(r["id"])
    raise AssertionError(f"no change memory of {session} about {name}: {rows}")


def test_staleness_after_a_signature_change_and_a_rename(hooks: HookRunner, project: Path) -> None:
    import json

    path = project / "limits.py"
    path.write_text(LIMITS)
    hooks.session = "s-one"
    _edit(hooks, path, "if amount > cap:", "if amount >= cap:")  # in apply_limit
    hooks.session = "s-two"
    _edit(hooks, path, "return round(value, 2)", "return round(value, 3)")  # in round_cents
    first, second = _change_id(project, "s-one", "amount"), _change_id(project, "s-two", "round")
    assert json.loads(_memory(project, "get", str(first), "--json"))[0]["stale"] is None
    # A later session changes apply_limit's signature: the first memory is stale, the second is not.
    hooks.session = "s-three"
    _edit(hooks, path, "def apply_limit(amount, cap):", "def apply_limit(amount, cap, floor=0):")
    got = {m["id"]: m for m in json.loads(_memory(project, "get", str(first), str(second), "--json"))}
    assert got[first]["stale"] == "apply_limit: signature changed" and got[second]["stale"] is None
    assert "stale: the code changed since" in _memory(project, "get", str(first))
    assert "is stale" in _memory(project, "why", str(first))
    # A rename, seen when the file is next read (another tool changed it): round_cents is gone.
    path.write_text(path.read_text().replace("def round_cents(value):", "def round_money(value):"))
    hooks.session = "s-four"
    hooks.tool("Read", {"file_path": str(path)}, {"type": "text", "file": {"filePath": str(path),
                                                                          "content": path.read_text()}})
    assert json.loads(_memory(project, "get", str(second), "--json"))[0]["stale"] == "round_cents: gone"
    # Stale memories are labelled where they are injected, and ranked after the others.
    note = _pre_edit(hooks, path, "return amount", "return amount + 0")
    assert "code changed since: apply_limit: signature changed" in note


def test_a_stale_memory_about_the_edited_definition_is_not_demoted(hooks: HookRunner, project: Path) -> None:
    """Its definition's change is what made it stale: before an edit of that definition it ranks as it would
    fresh (labelled), ahead of a newer session about another definition."""
    import re

    path = project / "limits.py"
    path.write_text(LIMITS)
    hooks.session = "s-one"
    _edit(hooks, path, "if amount > cap:", "if amount >= cap:")  # in apply_limit
    hooks.session = "s-two"  # apply_limit's signature changes: s-one's memory is stale
    _edit(hooks, path, "def apply_limit(amount, cap):", "def apply_limit(amount, cap, floor=0):")
    for n, session in enumerate(("s-three", "s-four")):  # two newer sessions in round_cents
        hooks.session = session
        _edit(hooks, path, f"return round(value, {2 + n})", f"return round(value, {3 + n})")
    first, newest = _change_id(project, "s-one", "amount"), _change_id(project, "s-four", "round")
    hooks.session = "s-five"
    note = _pre_edit(hooks, path, "if amount >= cap:", "if amount >= cap + floor:")
    shown = [int(i) for i in re.findall(r", #(\d+)\)$", note, re.M)]
    assert "about limits.py (apply_limit)" in note and first in shown and newest in shown
    assert shown.index(first) < shown.index(newest)
    assert "code changed since: apply_limit: signature changed" in note


# A GitHub token's shape (the privacy filter redacts it: memory/base/privacy.py), joined here so this file
# holds no token-shaped literal.
TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"


def test_a_path_holding_a_secret_gets_its_note_once_and_keeps_it_off_disk(hooks: HookRunner, project: Path,
                                                                          home: Path) -> None:
    """What is stored of a path is its filtered form (memories.files, injections.query): the file's memories
    are found, and the note given once, by that form; the secret in the path never reaches the data dir."""
    from tests.support.helpers import all_bytes_under

    path = project / TOKEN / "limits.py"
    path.parent.mkdir()
    path.write_text(LIMITS)
    _session_with_a_fix(hooks, path)
    hooks.session = "s-two"
    hooks.start()
    notes = [_pre_edit(hooks, path, old, old.replace("cap", "limit")) for old in
             ("if amount >= cap:", "return cap", "def apply_limit(amount, cap):")]
    assert "Recorded in past sessions about [REDACTED:github-token]/limits.py (apply_limit)" in notes[0]
    assert "passes again" in notes[0] and TOKEN not in notes[0]
    assert notes[1:] == ["", ""]  # once per file per session
    assert _pre_bash(hooks, f"git diff {path}") == ""  # whichever tool names it next
    hooks.session = "s-three"  # a command naming the file finds its memories by that form too
    assert "about [REDACTED:github-token]/limits.py" in _pre_bash(hooks, f"python -m pytest {path} -x")
    assert _pre_edit(hooks, path, "return cap", "return 0") == ""
    assert all_bytes_under(home)(TOKEN.encode()) == []
