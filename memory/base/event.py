"""The one event shape every hook handler and the capture code read, whatever the host sent it
(memory/hook/hosts.py makes one from each host's payload; Claude Code's own is read here, the spool's too).

A plain class with __slots__, not a dataclass: importing dataclasses costs a hook ~3 ms (it imports re and
inspect). Every field has its type once made: the type checks live here, not in the handlers."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from typing import Any

# Claude Code's name of each hook entrypoint's event (memory/hook/run.py HANDLERS).
EVENT_NAMES = {"session_start": "SessionStart", "user_prompt_submit": "UserPromptSubmit",
               "pre_tool_use": "PreToolUse", "post_tool_use": "PostToolUse", "pre_compact": "PreCompact",
               "stop": "Stop", "session_end": "SessionEnd"}
# Claude Code's tool names by the kind of thing they do (the host-neutral kind every host's tool maps to).
TOOL_KINDS = {"Read": "read", "Edit": "edit", "MultiEdit": "edit", "NotebookEdit": "edit", "Write": "write",
              "Bash": "shell", "Grep": "search", "Glob": "search", "WebFetch": "fetch", "WebSearch": "fetch",
              "TodoWrite": "todo", "Task": "task", "Agent": "task"}


def tool_kind(tool: str) -> str:
    """The kind of a Claude Code tool: read, edit, write, shell, search, fetch, todo, task, mcp or other."""
    return "mcp" if tool.startswith("mcp__") else TOOL_KINDS.get(tool, "other")


class Event:
    """One hook event: the host and entry it came by, its session and folder, and what the entry carries.
    `tool_kind` is the tool's host-neutral kind (read, edit, write, shell, search, fetch, todo, task, mcp,
    other), `tool` the tool as the capture code knows it (Claude Code's name, TOOL_KINDS), `host_tool` the
    host's own name; `prompt` is None when the event carries none."""

    __slots__ = ("host", "kind", "session", "cwd", "prompt", "tool", "tool_kind", "host_tool", "tool_input",
                 "tool_response", "error", "failed", "transcript", "last_message", "trigger", "source", "reason",
                 "agent_id", "agent_type", "instructions")

    def __init__(self, host: str, kind: str) -> None:
        self.host, self.kind = host, kind
        self.session = self.cwd = self.tool = self.tool_kind = self.host_tool = self.error = self.transcript = ""
        self.last_message = self.trigger = self.source = self.reason = self.agent_id = self.agent_type = ""
        self.instructions = ""
        self.prompt: str | None = None
        self.tool_input: dict[str, Any] = {}
        self.tool_response: Any = None
        self.failed = False

    def __repr__(self) -> str:
        return f"Event({self.host}, {self.kind}, {self.tool or self.session!r})"

    def claude(self) -> dict[str, Any]:
        """The event in Claude Code's shape: what the spool keeps (read back by from_claude)."""
        name = EVENT_NAMES.get(self.kind, self.kind)
        out: dict[str, Any] = {"session_id": self.session, "cwd": self.cwd, "transcript_path": self.transcript,
                               "hook_event_name": "PostToolUseFailure" if self.failed else name,
                               "memory_host": self.host}
        for key, value in (("prompt", self.prompt), ("tool_name", self.tool), ("error", self.error),
                           ("last_assistant_message", self.last_message), ("trigger", self.trigger),
                           ("source", self.source), ("reason", self.reason), ("agent_id", self.agent_id),
                           ("agent_type", self.agent_type), ("custom_instructions", self.instructions)):
            if value or (key == "prompt" and value is not None):
                out[key] = value
        if self.tool:
            out["tool_input"], out["tool_response"] = self.tool_input, self.tool_response
        return out


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def from_claude(kind: str, raw: dict[str, Any]) -> Event:
    """Claude Code's own event (docs/claude-code-hooks.md), or one the spool kept in that shape."""
    ev = Event(_text(raw.get("memory_host")) or "claude", kind)
    ev.session, ev.cwd, ev.transcript = _text(raw.get("session_id")), _text(raw.get("cwd")), \
        _text(raw.get("transcript_path"))
    prompt = raw.get("prompt")
    ev.prompt = prompt if isinstance(prompt, str) else None
    ev.last_message, ev.source = _text(raw.get("last_assistant_message")), _text(raw.get("source"))
    ev.reason, ev.trigger = _text(raw.get("reason")), _text(raw.get("trigger"))
    ev.instructions = _text(raw.get("custom_instructions"))
    ev.agent_id, ev.agent_type = _text(raw.get("agent_id")), _text(raw.get("agent_type"))
    tool = raw.get("tool_name")
    if tool:
        ev.tool = ev.host_tool = str(tool)
        ev.tool_kind = tool_kind(ev.tool)
        tin = raw.get("tool_input")
        ev.tool_input = tin if isinstance(tin, dict) else {}
        ev.tool_response = raw.get("tool_response")
        err = raw.get("error")
        ev.error = err if isinstance(err, str) else ("" if err is None else str(err))
        ev.failed = raw.get("hook_event_name") == "PostToolUseFailure" or bool(ev.error)
    return ev
