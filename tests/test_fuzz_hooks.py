"""Property-based fuzzing of every hook entrypoint: whatever arrives on stdin, the hook exits 0 with no
output or one JSON object, writes nothing outside the data dir, and keeps private text off the disk."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.helpers import ROOT

ENTRIES = {"SessionStart": "session_start", "UserPromptSubmit": "user_prompt_submit",
           "PreToolUse": "pre_tool_use", "PostToolUse": "post_tool_use", "PostToolUseFailure": "post_tool_use",
           "PreCompact": "pre_compact", "Stop": "stop", "SessionEnd": "session_end"}
TOOLS = ["Read", "Edit", "Write", "MultiEdit", "Bash", "TodoWrite", "Grep", "Glob", "WebFetch", "Task", "Weird"]
SECRET = "PRIVATE-FUZZ-MARKER"

json_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=60))
json_value = st.recursive(json_leaf, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
    st.text(max_size=12), inner, max_size=4), max_leaves=12)
nasty_text = st.one_of(
    st.text(max_size=200),
    st.sampled_from([
        'NEAR("a" "b") OR * AND NOT "', "col:term ^ \"unbalanced", "../../../../etc/passwd", "\x00\x01\x02",
        f"<private>{SECRET}</private> tail", f"a </private> <private>{SECRET}", f"<private>x</private<{SECRET}",
        f"< PRIVATE >{SECRET}", "x" * 20000, "🙂" * 500, "DROP TABLE memories; --",
    ]),
)


def field_values(name: str) -> st.SearchStrategy[object]:
    if name in ("cwd",):
        return st.one_of(json_value, st.sampled_from(["/", "/nonexistent/dir", "../..", ""]))
    return st.one_of(json_value, nasty_text)


@st.composite
def events(draw: st.DrawFn, project: str) -> tuple[str, bytes]:
    name = draw(st.sampled_from(list(ENTRIES)))
    event: dict[str, object] = {"hook_event_name": name, "session_id": draw(st.one_of(st.text(max_size=20),
                                                                                      json_value)),
                                "cwd": project, "transcript_path": draw(st.sampled_from(["", "/nope.jsonl"]))}
    if name in ("PreToolUse", "PostToolUse", "PostToolUseFailure"):
        event["tool_name"] = draw(st.sampled_from(TOOLS))
        event["tool_input"] = draw(st.one_of(json_value, st.fixed_dictionaries({
            "file_path": st.one_of(nasty_text, st.sampled_from([f"{project}/../../etc/passwd", "/etc/passwd",
                                                                 f"{project}/link-out"])),
            "command": nasty_text, "old_string": nasty_text, "new_string": nasty_text, "content": nasty_text,
            "todos": json_value, "offset": json_value, "limit": json_value})))
        event["tool_response"] = draw(st.one_of(json_value, st.fixed_dictionaries({
            "stdout": nasty_text, "stderr": nasty_text, "type": st.just("text"),
            "file": st.fixed_dictionaries({"content": nasty_text, "totalLines": json_value})})))
        event["error"] = draw(st.one_of(st.none(), nasty_text))
    for key in ("prompt", "source", "last_assistant_message", "reason", "trigger", "custom_instructions",
                "agent_id"):
        if draw(st.booleans()):
            event[key] = draw(field_values(key))
    mode = draw(st.sampled_from(["json", "json", "json", "truncated", "bytes"]))
    data = json.dumps(event).encode()
    if mode == "truncated":
        data = data[: draw(st.integers(0, len(data)))]
    elif mode == "bytes":
        data = draw(st.binary(max_size=300))
    return ENTRIES[name], data


def run(entry: str, data: bytes, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([str(ROOT / "hooks" / "run"), entry], input=data, capture_output=True, env=env,
                          timeout=60)


def test_fuzzed_events(tmp_path: Path) -> None:
    home, project, outside = tmp_path / "data", tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "link-out").symlink_to(outside)
    env = {**os.environ, "MEMORY_HOME": str(home), "TMPDIR": str(tmp_path / "tmp")}
    env.pop("CLAUDE_PROJECT_DIR", None)
    before = {p for p in tmp_path.rglob("*")}

    @settings(max_examples=int(os.environ.get("MEMORY_FUZZ_EXAMPLES", "60")), deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(events(str(project)))
    def check(case: tuple[str, bytes]) -> None:
        entry, data = case
        proc = run(entry, data, env)
        assert proc.returncode == 0, (entry, data[:300], proc.stderr)
        assert proc.stderr == b"", proc.stderr
        out = proc.stdout.decode()
        if out.strip():
            assert isinstance(json.loads(out), dict)

    check()
    created = {p for p in tmp_path.rglob("*")} - before
    stray = [p for p in created if not (p.is_relative_to(home) or p.is_relative_to(tmp_path / "tmp"))]
    assert stray == [], f"written outside the data dir: {stray[:5]}"
    assert not list(outside.iterdir()), "nothing is written through a symlink out of the project"
    leaked = [p for p in home.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert leaked == [], f"private text reached {leaked}"


def test_a_10_mb_tool_response_is_handled(tmp_path: Path) -> None:
    home, project = tmp_path / "data", tmp_path / "project"
    project.mkdir()
    env = {**os.environ, "MEMORY_HOME": str(home)}
    event = {"hook_event_name": "PostToolUse", "session_id": "big", "cwd": str(project), "tool_name": "Bash",
             "tool_input": {"command": "cat huge.log"},
             "tool_response": {"stdout": "line of log output\n" * 560_000, "stderr": ""}}
    proc = run("post_tool_use", json.dumps(event).encode(), env)
    assert proc.returncode == 0 and proc.stderr == b""
    db_size = sum(p.stat().st_size for p in home.rglob("memory.db*"))
    assert db_size < 2_000_000, "a huge output is capped, not stored whole"
