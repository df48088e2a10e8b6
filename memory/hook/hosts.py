"""The hook boundary for every coding agent: one adapter per host turns its raw payload into the typed
Event the handlers and the capture code read (memory/base/event.py), and one output writer per host turns a
handler's answer into what that host takes back (or nothing). A Codex, Gemini, Copilot, Cursor, Cline or
OpenCode event is so recorded by the same code as Claude Code's. Hot path: standard library only, no `re`,
no `json` (memory/fastpath/jsonlite.py)."""

from __future__ import annotations

import os

from memory.base.event import Event, from_claude
from memory.base.hosttools import claude_tool, own_words

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from typing import Any

# The hosts an installed hook may name with `--host` (docs/hosts.md). "antigravity" (`agy`) is Gemini CLI's
# successor and takes Gemini's hooks; "qwen" takes Claude Code's.
HOSTS = ("claude", "codex", "cursor", "copilot", "gemini", "antigravity", "cline", "opencode", "qwen")
ALIASES = {"agy": "antigravity", "claude-code": "claude", "gemini-cli": "gemini", "copilot-cli": "copilot"}

def _text(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


def _prompt(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def set_tool(ev: Event, name: Any, args: Any, response: Any = None, failed: bool = False) -> None:
    """The tool of an event as a host-neutral kind and the Claude Code tool capture knows it by, its input
    under Claude Code's keys (memory/base/hosttools.py)."""
    ev.host_tool = _text(name) or "unknown"
    ev.tool, ev.tool_kind, ev.tool_input = claude_tool(ev.host_tool, args)
    ev.tool_response, ev.failed = response, failed
    if failed:
        ev.error = _text(response)[:2000] or "failed"


# Adapters: (entry, raw payload) -> Event.

def _claude_shaped(host: str, entry: str, raw: dict[str, Any]) -> Event:
    """Codex CLI, Qwen Code and Gemini CLI send Claude Code's field names (snake_case, session_id, cwd)."""
    ev = from_claude(entry, raw)
    ev.host = host
    if ev.prompt is not None:
        # Gemini CLI puts what our SessionStart hook gave before the person's words (<hook_context>): recalled
        # text, never the user's decision. Qwen Code sends an empty prompt after each tool result: no prompt.
        ev.prompt = own_words(ev.prompt) or None
    ev.last_message = ev.last_message or _text(raw.get("prompt_response"))  # Gemini's AfterAgent
    if ev.tool:
        resp, failed = ev.tool_response, ev.failed
        if isinstance(resp, dict) and ("llmContent" in resp or "returnDisplay" in resp):  # Gemini's
            failed = failed or bool(resp.get("error"))
            resp = _text(resp.get("llmContent") or resp.get("returnDisplay") or resp.get("error"))
        set_tool(ev, ev.host_tool, raw.get("tool_input"), resp or ev.error or None, failed)
    return ev


def _cursor(entry: str, raw: dict[str, Any]) -> Event:
    """Cursor's hooks.json events: conversation_id, workspace_roots, its own names for the shell and edits."""
    ev = _claude_shaped("cursor", entry, raw)
    ev.session = _text(raw.get("conversation_id") or raw.get("session_id"))
    roots = raw.get("workspace_roots")
    ev.cwd = ev.cwd or (_text(roots[0]) if isinstance(roots, list) and roots else "")
    name = raw.get("hook_event_name")
    if name == "afterShellExecution":
        set_tool(ev, "Shell", {"command": raw.get("command")}, raw.get("output"))
    elif name == "afterFileEdit":
        edits = raw.get("edits") if isinstance(raw.get("edits"), list) else []
        first = edits[0] if edits and isinstance(edits[0], dict) else {}
        set_tool(ev, "Edit", {"file_path": raw.get("file_path"), **first})
    elif name == "postToolUse" and "tool_output" in raw:
        set_tool(ev, raw.get("tool_name"), raw.get("tool_input"), raw.get("tool_output"))
    elif name == "postToolUseFailure":
        set_tool(ev, raw.get("tool_name"), raw.get("tool_input"), raw.get("error_message") or "failed", True)
    if name == "afterAgentResponse" or "text" in raw and entry == "stop":
        ev.last_message = _text(raw.get("text"))
    if name == "stop":
        ev.reason = _text(raw.get("status"))
    return ev


def _copilot(entry: str, raw: dict[str, Any]) -> Event:
    """GitHub Copilot CLI's camelCase events (sessionId, toolName, toolArgs as JSON text, toolResult)."""
    if "hook_event_name" in raw or "tool_name" in raw:  # a PascalCase event gets the snake_case fields
        return _claude_shaped("copilot", entry, raw)
    ev = Event("copilot", entry)
    ev.session, ev.cwd = _text(raw.get("sessionId")), _text(raw.get("cwd"))
    ev.prompt = _prompt(raw.get("prompt") or (raw.get("initialPrompt") if entry == "user_prompt_submit" else None))
    ev.source, ev.reason = _text(raw.get("source")), _text(raw.get("reason"))
    if raw.get("toolName"):
        result = raw.get("toolResult")
        res = result if isinstance(result, dict) else {}
        text = res.get("textResultForLlm") if res else result
        set_tool(ev, raw.get("toolName"), raw.get("toolArgs"), text,
                 res.get("resultType") in ("failure", "error", "denied"))
    return ev


# The keys Cline puts an event's own data under; the hook file's name says which event it is, and so does
# this key whatever `hookName` says (the CLI 3.0.65 names them agent_start, tool_result, agent_end).
_CLINE_DATA = ("postToolUse", "preToolUse", "userPromptSubmit", "taskStart", "taskResume", "taskComplete",
               "taskCancel", "preCompact")


def _cline(entry: str, raw: dict[str, Any]) -> Event:
    """Cline's hook files: base fields (taskId, workspaceRoots) and the event's data under its own key."""
    ev = Event("cline", entry)
    ev.session = _text(raw.get("taskId"))
    roots = raw.get("workspaceRoots")
    ev.cwd = _text(roots[0]) if isinstance(roots, list) and roots else ""
    key = next((k for k in _CLINE_DATA if isinstance(raw.get(k), dict)), "")
    hook = key[:1].upper() + key[1:]
    data = raw.get(key) if key else {}
    data = data if isinstance(data, dict) else {}
    ev.prompt = _prompt(data.get("prompt"))
    if data.get("toolName"):
        set_tool(ev, data.get("toolName"), data.get("parameters"), data.get("result"),
                 data.get("success") is False)
    turn = raw.get("turn")
    ev.last_message = _text(turn.get("outputText")) if isinstance(turn, dict) else ""
    if hook == "TaskStart":
        ev.source = "startup"
    elif hook == "TaskResume":
        ev.source = "resume"
    elif hook in ("TaskComplete", "TaskCancel"):
        ev.reason = hook[4:].lower()
    elif hook == "PreCompact":
        ev.trigger = "auto"
    return ev


def _opencode(entry: str, raw: dict[str, Any]) -> Event:
    """What the OpenCode plugin (memory/present/hosts.py opencode_plugin) sends: its hooks' input and output."""
    ev = Event("opencode", entry)
    ev.session, ev.cwd = _text(raw.get("sessionID")), _text(raw.get("directory"))
    ev.prompt, ev.last_message = _prompt(raw.get("prompt")), _text(raw.get("text"))
    if raw.get("tool"):
        out = raw.get("output")
        set_tool(ev, raw.get("tool"), raw.get("args"), out, bool(raw.get("error")))
    if raw.get("event") == "session.compacted":
        ev.trigger = "auto"
    return ev


ADAPTERS = {"codex": lambda e, r: _claude_shaped("codex", e, r), "qwen": lambda e, r: _claude_shaped("qwen", e, r),
            "gemini": lambda e, r: _claude_shaped("gemini", e, r),
            "antigravity": lambda e, r: _claude_shaped("antigravity", e, r),
            "cursor": _cursor, "copilot": _copilot, "cline": _cline, "opencode": _opencode}


def detect(raw: dict[str, Any]) -> str:
    """The host of an event no `--host` named: Claude Code's unless the payload says otherwise."""
    if "cursor_version" in raw or "conversation_id" in raw:
        return "cursor"
    if "clineVersion" in raw or "hookName" in raw:
        return "cline"
    if "sessionId" in raw and "session_id" not in raw:
        return "copilot"
    return "claude"


def host_name(argv: list[str]) -> str | None:
    """The host `--host NAME` (or MEMORY_HOOK_HOST) names, None when neither does."""
    name = None
    for i, arg in enumerate(argv):
        if arg == "--host" and i + 1 < len(argv):
            name = argv[i + 1]
        elif arg.startswith("--host="):
            name = arg[7:]
    name = (name or os.environ.get("MEMORY_HOOK_HOST") or "").strip().lower()
    name = ALIASES.get(name, name)
    return name if name in HOSTS else None


def adapt(host: str | None, entry: str, raw: dict[str, Any]) -> Event:
    """The typed event of a payload from `host` (detected when None: Claude Code's unless it says otherwise)."""
    host = host or detect(raw)
    adapter = ADAPTERS.get(host)
    if adapter is None:
        return from_claude(entry, raw)
    ev = adapter(entry, raw)
    ev.session = ev.session or f"{host}-{os.getppid()}"  # one session per host process when it names none
    path = ev.tool_input.get("file_path")
    if isinstance(path, str) and path and ev.cwd and not os.path.isabs(path):  # Codex's apply_patch
        ev.tool_input["file_path"] = os.path.join(ev.cwd, path)
    return ev


# Output writers: a handler's answer (Claude Code's shape) -> what the host reads on stdout.

def _context(out: dict[str, Any]) -> str:
    spec = out.get("hookSpecificOutput")
    return _text(spec.get("additionalContext")) if isinstance(spec, dict) else ""


# Where each host takes context back (docs/hosts.md): the entries whose answer it reads.
CONTEXT_ENTRIES = {
    "claude": ("session_start", "user_prompt_submit", "pre_tool_use", "post_tool_use"),
    "qwen": ("session_start", "user_prompt_submit", "pre_tool_use", "post_tool_use"),
    "codex": ("session_start", "user_prompt_submit", "post_tool_use"),
    "gemini": ("session_start", "user_prompt_submit", "post_tool_use"),
    "antigravity": ("session_start", "user_prompt_submit", "post_tool_use"),
    "cursor": ("session_start",),
    "cline": ("session_start", "user_prompt_submit", "pre_tool_use", "post_tool_use"),
    "copilot": (),
    "opencode": (),
}
GEMINI_EVENTS = {"session_start": "SessionStart", "user_prompt_submit": "BeforeAgent", "post_tool_use": "AfterTool"}


def write(host: str, entry: str, out: dict[str, Any] | None) -> dict[str, Any] | None:
    """The answer as `host` takes it, or None when it takes none for this entry."""
    if not out or host in ("claude", "qwen"):
        return out
    text = _context(out) if entry in CONTEXT_ENTRIES.get(host, ()) else ""
    if host == "codex":
        keep = {k: v for k, v in out.items() if k in ("systemMessage", "hookSpecificOutput") and
                (k != "hookSpecificOutput" or text)}
        return keep or None
    if host in ("gemini", "antigravity"):
        ans: dict[str, Any] = {k: out[k] for k in ("systemMessage",) if k in out}
        if text:
            ans["hookSpecificOutput"] = {"hookEventName": GEMINI_EVENTS[entry], "additionalContext": text}
        return ans or None
    if host == "cursor":
        return {"additional_context": text} if text else None
    if host == "cline":
        return {"cancel": False, "contextModification": text} if text else None
    return None  # Copilot CLI and OpenCode read no context from these hooks: the rules file carries it
