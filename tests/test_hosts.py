"""Every host's recorded payloads (tests/fixtures/hosts/, each naming its source) through the real hook
processes with `--host`: what is stored, what is printed back in that host's shape, exit 0, one JSON object
or nothing; and a following Claude Code session in the same project recalls what the other host recorded."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from memory.base.event import EVENT_NAMES
from memory.base.project import identify
from memory.hook import hosts
from tests.support.helpers import ROOT, HookRunner

FIXTURES = Path(__file__).parent / "fixtures" / "hosts"
HOST_FILES = sorted(p.stem for p in FIXTURES.glob("*.json"))
# The keys each host reads in a hook's answer (memory/hook/hosts.py write); Copilot CLI and OpenCode none.
ANSWER_KEYS = {"codex": {"hookSpecificOutput", "systemMessage"}, "gemini": {"hookSpecificOutput", "systemMessage"},
               "cursor": {"additional_context"}, "cline": {"cancel", "contextModification"},
               "copilot": set(), "opencode": set(), "qwen": {"hookSpecificOutput", "systemMessage"}}


def _load(host: str, project: Path) -> dict[str, Any]:
    text = (FIXTURES / f"{host}.json").read_text()
    file = str(project / "app.py")
    return json.loads(text.replace("{cwd}", str(project)).replace("{file}", file))


def _run(entry: str, payload: dict[str, Any], host: str | None) -> dict[str, Any]:
    args = [str(ROOT / "hooks" / "run"), entry] + (["--host", host] if host else [])
    proc = subprocess.run(args, input=json.dumps(payload).encode(), capture_output=True, timeout=60)
    out = proc.stdout.decode()
    assert proc.returncode == 0, proc.stderr.decode()
    parsed = json.loads(out) if out.strip() else None  # one JSON object or nothing
    assert parsed is None or isinstance(parsed, dict), out
    return {"stdout": out, "json": parsed}


def _db(home: Path, project: Path) -> sqlite3.Connection:
    db = sqlite3.connect(home / "projects" / identify(str(project)).key / "memory.db")
    db.row_factory = sqlite3.Row
    return db


def _seed(hooks: HookRunner) -> None:
    """A Claude Code session before: something for the other host's session start to bring back."""
    hooks.start()
    hooks.prompt("Always run the billing tests with --no-cov; we decided coverage slows the CI too much.")
    hooks.tool("Bash", {"command": "make migrate-billing"}, {"stdout": "migrated 3 tables", "stderr": ""})
    hooks.run("session_end", hooks.event("SessionEnd", reason="exit"))


def test_every_fixture_names_its_source_and_maps_known_entries() -> None:
    assert set(HOST_FILES) == set(ANSWER_KEYS)
    for host in HOST_FILES:
        data = json.loads((FIXTURES / f"{host}.json").read_text())
        assert data["host"] == host and data["source"] and all(s.startswith("https://") for s in data["source"])
        assert {e["entry"] for e in data["events"]} <= set(EVENT_NAMES)


@pytest.mark.parametrize("host", HOST_FILES)
def test_host_session_is_recorded_answered_in_its_shape_and_recalled_by_claude(
        host: str, hooks: HookRunner, home: Path) -> None:
    project = hooks.project
    _seed(hooks)
    data = _load(host, project)
    answers = {}
    for ev in data["events"]:
        res = _run(ev["entry"], ev["payload"], host)
        if res["json"] is not None:
            assert set(res["json"]) <= ANSWER_KEYS[host], (ev["entry"], res["json"])
            answers[ev["entry"]] = res["json"]
    # Context back: the host's session start (or first prompt) carries what Claude Code recorded before.
    key = data["expect"]["context_key"]
    if key is None:
        assert not answers, answers  # a host that reads no context is given none
    else:
        start = answers.get("session_start") or answers.get("user_prompt_submit")
        assert start is not None and key in start, answers
        assert "no-cov" in json.dumps(start) or "migrate-billing" in json.dumps(start), start
    db = _db(home, project)
    session = db.execute("SELECT * FROM sessions WHERE host = ?", (host,)).fetchone()
    assert session is not None and session["tool_call_count"] == 2 and session["prompt_count"] == 1
    sid = session["id"]
    state = json.loads(db.execute("SELECT state FROM session_state WHERE session_id = ?", (sid,)).fetchone()[0])
    assert state["task"].startswith("We decided to use PostgreSQL")
    assert state["files_modified"] == [str(project / "app.py")]
    texts = " ".join(f"{r['title']} {r['content']}" for r in
                     db.execute("SELECT title, content FROM memories WHERE session_id = ?", (sid,)))
    assert "app.py" in texts and data["expect"]["edit"] in texts, texts
    assert data["expect"]["shell"] in texts, texts
    # One project, every host: Claude Code's next session start brings back the other host's work.
    claude = HookRunner(project, session="claude-after")
    context = claude.start()
    assert "app.py" in context and ("PostgreSQL" in context or "greet_billing_customer" in context), context
    assert (home / "hosts" / host).read_text().split()[0] in {e["entry"] for e in data["events"]}


def test_claude_code_events_pass_through_untouched(hooks: HookRunner, home: Path) -> None:
    hooks.start()
    db = _db(home, hooks.project)
    assert db.execute("SELECT host FROM sessions").fetchone()[0] == "claude"
    assert (home / "hosts" / "claude").read_text().startswith("session_start ")


def test_hosts_are_detected_without_a_host_flag(hooks: HookRunner, home: Path) -> None:
    for host in ("cursor", "cline", "copilot"):
        first = _load(host, hooks.project)["events"][0]
        _run(first["entry"], first["payload"], None)
    found = {r[0] for r in _db(home, hooks.project).execute("SELECT host FROM sessions")}
    assert found == {"cursor", "cline", "copilot"}


def test_tool_kinds_map_to_the_claude_tools_capture_knows() -> None:
    from memory.base.event import TOOL_KINDS
    from memory.base.hosttools import CLAUDE_TOOL

    assert all(TOOL_KINDS[name] == kind for kind, name in CLAUDE_TOOL.items())
    cases = {("gemini", "run_shell_command"): "Bash", ("gemini", "replace"): "Edit", ("gemini", "write_file"): "Write",
             ("gemini", "read_file"): "Read", ("copilot", "view"): "Read", ("cline", "write_to_file"): "Write",
             ("opencode", "webfetch"): "WebFetch", ("codex", "mcp__memory__search"): "mcp__memory__search"}
    for (host, tool), want in cases.items():
        ev = hosts.Event(host, "post_tool_use")
        hosts.set_tool(ev, tool, {"path": "/x"})
        assert ev.tool == want and ev.claude()["tool_name"] == want, (host, tool)
        assert ev.tool_input.get("file_path") == "/x"


def test_codex_apply_patch_becomes_an_edit_of_its_file() -> None:
    ev = hosts.Event("codex", "post_tool_use")
    patch = "*** Begin Patch\n*** Update File: a.py\n@@\n-old line\n+new line\n*** Update File: b.py\n+x\n*** End Patch"
    hosts.set_tool(ev, "apply_patch", {"command": patch})
    assert ev.tool_input == {"file_path": "a.py", "old_string": "old line", "new_string": "new line"}


@pytest.mark.fastpath  # what the fast path spares a hook: checked with it on in both passes (tests/conftest.py)
def test_a_host_tool_hook_stays_off_the_slow_imports(tmp_path: Path) -> None:
    from tests.test_hook_hot_path import _hook_modules

    heavy = {"importlib", "typing", "hashlib", "dataclasses", "pathlib", "logging", "re", "json", "enum"}
    event = {"hook_event_name": "AfterTool", "tool_name": "run_shell_command",
             "tool_input": {"command": "pytest -q"}, "tool_response": {"llmContent": "1 passed", "error": None}}
    modules = _hook_modules(tmp_path, event, MEMORY_HOOK_HOST="gemini")
    assert "memory.hook.hosts" in modules and not modules & heavy, sorted(modules & heavy)
    copilot = {"sessionId": "c1", "toolName": "bash", "toolArgs": "{\"command\": \"ls -la src\"}",
               "toolResult": {"resultType": "success", "textResultForLlm": "a b"}}
    modules = _hook_modules(tmp_path, copilot)  # detected by its fields; toolArgs parsed by jsonlite, not json
    assert "memory.hook.hosts" in modules and not modules & heavy, sorted(modules & heavy)


def test_the_opencode_plugin_runs_in_node_and_records_through_the_hook(
        tmp_path: Path, hooks: HookRunner, home: Path) -> None:
    import shutil

    from memory.present.hosts import opencode_plugin

    node = shutil.which("node")
    if node is None:
        pytest.skip("no node on PATH")
    plugin = tmp_path / "memory.mjs"
    plugin.write_text(opencode_plugin("opencode"))
    project = hooks.project
    driver = tmp_path / "drive.mjs"
    driver.write_text(f"""
const {{ MemoryPlugin }} = await import({json.dumps(plugin.as_uri())});
const h = await MemoryPlugin({{ directory: {json.dumps(str(project))} }});
await h.event({{ event: {{ type: "session.created", properties: {{ info: {{ id: "ses_node" }} }} }} }});
await h["chat.message"]({{ sessionID: "ses_node" }},
  {{ parts: [{{ type: "text", text: "Rename greet for billing" }}] }});
await h["tool.execute.before"]({{ tool: "edit", sessionID: "ses_node", callID: "c1" }},
  {{ args: {{ filePath: {json.dumps(str(project / "app.py"))}, oldString: "def greet(name):",
             newString: "def greet_billing_customer(name):" }} }});
await h["tool.execute.after"]({{ tool: "edit", sessionID: "ses_node", callID: "c1" }},
  {{ title: "app.py", output: "", metadata: {{}} }});
await h.event({{ event: {{ type: "session.idle", properties: {{ sessionID: "ses_node" }} }} }});
""")
    proc = subprocess.run([node, str(driver)], capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    db = _db(home, project)
    session = db.execute("SELECT * FROM sessions WHERE id = 'ses_node'").fetchone()
    assert session["host"] == "opencode" and session["prompt_count"] == 1 and session["tool_call_count"] == 1
    titles = [r[0] for r in db.execute("SELECT title FROM memories WHERE session_id = 'ses_node'")]
    assert "Modified app.py" in titles, titles


def test_every_host_event_keeps_its_fields_through_the_spool_shape(tmp_path: Path) -> None:
    """The spool keeps an event as Event.claude() and replays it through from_claude: every field the handlers
    read comes back, for each host's recorded events."""
    from memory.base.event import Event, from_claude

    for host in HOST_FILES:
        for item in _load(host, tmp_path)["events"]:
            ev = hosts.adapt(host, item["entry"], item["payload"])
            back = from_claude(item["entry"], json.loads(json.dumps(ev.claude())))
            differ = [k for k in Event.__slots__ if k != "host_tool" and getattr(back, k) != getattr(ev, k)]
            assert not differ, (host, item["entry"], differ)
            assert ev.host == host and ev.session


def test_handlers_and_capture_read_only_the_typed_event() -> None:
    """No handler or capture module goes back to the payload's dict (`event.get`, `isinstance(event, dict)`):
    the adapters (memory/hook/hosts.py, memory/base/event.py) are the one place that reads it."""
    modules = [*sorted((ROOT / "memory" / "hook").glob("*.py")), ROOT / "memory" / "capture" / "tools.py",
               ROOT / "memory" / "capture" / "screen.py", ROOT / "memory" / "outline" / "read.py"]
    for path in modules:
        if path.name in ("hosts.py", "replay.py", "spool.py"):  # the boundary, a replay tool, the kept dicts
            continue
        text = path.read_text()
        assert "event.get(" not in text and "isinstance(event, dict)" not in text, path


def test_the_cline_cli_events_map_by_their_data_key(tmp_path: Path) -> None:
    """What the Cline CLI 3.0.65 sends (recorded from tests/e2e/test_cline_cli.py's run, ids and times its own):
    hookName tool_result / agent_end rather than the docs' PostToolUse / TaskComplete, the data under the
    docs' keys, parameters as JSON text, its own tools run_commands and editor."""
    base = {"clineVersion": "", "timestamp": "2026-12-07T11:47:07.222Z", "taskId": "conv_1796644026381_c54cpyl",
            "sessionContext": {"rootSessionId": "1796644024915_ira4j"}, "workspaceRoots": [str(tmp_path)],
            "workspaceInfo": {"rootPath": str(tmp_path), "hint": "project"}, "userId": "unknown",
            "agent_id": "agent_1796644025992_hm4jmt", "parent_agent_id": None}
    shell = hosts.adapt(None, "post_tool_use", {**base, "hookName": "tool_result", "iteration": 1, "postToolUse": {
        "toolName": "run_commands", "parameters": {"commands": "[\"grep -c total billing.py\"]"},
        "result": "[{\"query\":\"grep -c total billing.py\",\"result\":\"1\\n\",\"success\":true}]", "success": True,
        "executionTimeMs": 41}})
    assert (shell.host, shell.tool, shell.tool_input, shell.failed) == (
        "cline", "Bash", {"command": "grep -c total billing.py"}, False)
    path = str(tmp_path / "billing.py")
    edit = hosts.adapt(None, "post_tool_use", {**base, "hookName": "tool_result", "iteration": 2, "postToolUse": {
        "toolName": "editor", "parameters": {"path": path, "old_text": "def total(amount):",
                                             "new_text": "def total_with_tax(amount):"},
        "result": f"{{\"query\":\"edit:{path}\",\"success\":true}}", "success": True}})
    assert (edit.tool, edit.tool_input) == ("Edit", {"file_path": path, "old_string": "def total(amount):",
                                                     "new_string": "def total_with_tax(amount):"})
    end = hosts.adapt(None, "session_end", {**base, "hookName": "agent_end", "iteration": 3, "turn": {
        "outputText": "Renamed total to total_with_tax.", "status": "completed"}, "taskComplete": {"taskMetadata": {}}})
    assert (end.reason, end.last_message, end.session) == ("complete", "Renamed total to total_with_tax.",
                                                           "conv_1796644026381_c54cpyl")


def test_what_gemini_gave_back_before_the_prompt_is_no_words_of_the_user(hooks: HookRunner, home: Path) -> None:
    """Gemini CLI 0.61.0 puts a SessionStart hook's context before the person's words in BeforeAgent's prompt,
    in a <hook_context> block (recorded by tests/e2e/test_gemini_cli.py): that is recalled text, and a decision
    it quotes must not become the user's decision in this session."""
    recalled = ("<hook_context>&lt;recalled-data trust=\"untrusted\"&gt;\nDecisions:\n- We decided invoices round to "
                "cents with Decimal, never float.\n&lt;/recalled-data&gt;</hook_context>\n\n")
    base = {"session_id": "gem-ctx", "transcript_path": "", "cwd": str(hooks.project),
            "timestamp": "2026-12-07T11:59:00Z"}
    _run("session_start", {**base, "hook_event_name": "SessionStart", "source": "startup"}, "gemini")
    _run("user_prompt_submit", {**base, "hook_event_name": "BeforeAgent",
                                "prompt": recalled + "Rename total to total_with_tax"}, "gemini")
    db = _db(home, hooks.project)
    state = json.loads(db.execute("SELECT state FROM session_state WHERE session_id = 'gem-ctx'").fetchone()[0])
    assert state["task"] == "Rename total to total_with_tax"
    texts = [r[0] for r in db.execute("SELECT title || ' ' || content FROM memories WHERE session_id = 'gem-ctx'")]
    assert texts and not any("Decimal" in t or "hook_context" in t for t in texts), texts
