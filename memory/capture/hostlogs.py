"""Other coding agents' session logs as Claude Code transcript lines, so `memory import` and the learning
extraction read them with the same code as Claude Code's (memory/capture/transcript.py, memory/hook/replay.py).

Codex CLI: the rollout file (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`, the hooks' transcript_path),
one `{timestamp, type, payload}` object a line. Gemini CLI: the chat file (`~/.gemini/tmp/<project>/chats/
session-*.jsonl`), a `{sessionId, ...}` header line, then one message a line (`type` user or gemini, its
`toolCalls` with their results), and `$set` lines updating the header. The formats are the clients' own
and undocumented: tests/fixtures/transcripts/ holds a real log of each, recorded from the pinned version
the e2e tests run. A line neither client writes is passed on unchanged (Claude Code's own transcript)."""

from __future__ import annotations

import json
import os
from typing import Any

from memory.base.hosttools import claude_tool, own_words

# What Codex adds as a user message of its own: the AGENTS.md text (its tagged blocks: own_words).
_CODEX_OWN = ("# AGENTS.md instructions",)


class LogState:
    """What a log's earlier lines told that later ones need: the host, the session, its folder, and what of
    a Gemini message (rewritten whole as it grows) was already given."""

    __slots__ = ("host", "session", "cwd", "given")

    def __init__(self, cwd: str = "") -> None:
        self.host = self.session = ""
        self.cwd = cwd
        self.given: set[str] = set()


def host_of(line: dict[str, Any]) -> str:
    """The client that wrote this log line: "codex", "gemini", or "" (Claude Code's, or unknown)."""
    if isinstance(line.get("payload"), dict) and line.get("type") in (
            "session_meta", "response_item", "event_msg", "turn_context", "compacted", "world_state"):
        return "codex"
    if "projectHash" in line or "$set" in line or (line.get("type") in ("user", "gemini", "info", "error")
                                                   and "message" not in line and "content" in line):
        return "gemini"
    return ""


def converted(line: dict[str, Any], state: LogState) -> list[dict[str, Any]]:
    """One log line as the Claude Code transcript lines it means (none, one, or several)."""
    host = state.host or host_of(line)
    if host == "codex":
        state.host = host
        return _codex(line, state)
    if host == "gemini":
        state.host = host
        return _gemini(line, state)
    return [line]


def claude_lines(lines: list[dict[str, Any]], cwd: str = "") -> tuple[str, list[dict[str, Any]]]:
    """A whole log as (its host, "claude" for Claude Code's, and its Claude Code transcript lines); `cwd`:
    the session's folder where the log names none (Gemini's, see folder_of)."""
    state, out = LogState(cwd), []
    for line in lines:
        out.extend(converted(line, state))
    return state.host or "claude", out


def _line(state: LogState, ts: Any, kind: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {"type": kind, "sessionId": state.session, "cwd": state.cwd, "timestamp": ts,
            "message": {"role": kind, "content": content}, **extra}


def _tool_use(state: LogState, ts: Any, call_id: str, name: str, args: Any) -> dict[str, Any]:
    tool, _, tin = claude_tool(name, args)
    path = tin.get("file_path")
    if isinstance(path, str) and path and state.cwd and not path.startswith("/"):  # Codex's apply_patch
        tin["file_path"] = state.cwd.rstrip("/") + "/" + path
    return _line(state, ts, "assistant", [{"type": "tool_use", "id": call_id, "name": tool, "input": tin}])


def _tool_result(state: LogState, ts: Any, call_id: str, text: str, failed: bool | None,
                 result: Any = None) -> dict[str, Any]:
    """A tool's answer; `failed` None when the client recorded no outcome (no `is_error`: the reader then
    goes by the output's words, memory/capture/transcript.py ToolCall.failed)."""
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id, "content": text}
    if failed is not None:
        block["is_error"] = failed
    extra = {"toolUseResult": result} if result is not None else {}
    return _line(state, ts, "user", [block], **extra)


def folder_of(path: str) -> str:
    """The project folder of a Gemini chat file (`<project dir>/chats/session-*.jsonl`): the `.project_root`
    file Gemini CLI writes beside its chats folder; "" for any other file."""
    try:
        with open(os.path.join(os.path.dirname(os.path.dirname(path)), ".project_root"), encoding="utf-8") as fh:
            return fh.read().strip()
    except OSError:
        return ""


def _prompt(text: str) -> str:
    """A user message's text without what the client put before the person's words."""
    text = own_words(text)
    return "" if text.startswith(_CODEX_OWN) else text


def _texts(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_texts(c.get("text") if isinstance(c, dict) else c) for c in content)
    return ""


def _codex(line: dict[str, Any], state: LogState) -> list[dict[str, Any]]:
    kind, p, ts = line.get("type"), line.get("payload"), line.get("timestamp")
    if not isinstance(p, dict):
        return []
    if kind == "session_meta":
        state.session = str(p.get("id") or p.get("session_id") or "")
        state.cwd = str(p.get("cwd") or "")
        return [{"type": "system", "sessionId": state.session, "cwd": state.cwd, "timestamp": ts,
                 "version": str(p.get("cli_version") or "")}]
    if kind != "response_item":
        return []
    item = p.get("type")
    if item == "message":
        text = _texts(p.get("content")).strip()
        if not text or p.get("role") not in ("user", "assistant"):
            return []  # "developer": the client's and the hooks' context, not the conversation
        if p.get("role") == "user":
            text = _prompt(text)
            return [_line(state, ts, "user", text)] if text else []
        return [_line(state, ts, "assistant", [{"type": "text", "text": text}])]
    call_id = str(p.get("call_id") or p.get("id") or "")
    if item in ("function_call", "local_shell_call"):
        args = p.get("arguments") if item == "function_call" else p.get("action")
        return [_tool_use(state, ts, call_id, str(p.get("name") or "shell"), args)]
    if item == "custom_tool_call":  # apply_patch: its input is the patch text
        return [_tool_use(state, ts, call_id, str(p.get("name") or ""), {"input": p.get("input")})]
    if item in ("function_call_output", "custom_tool_call_output"):
        out = p.get("output")
        text = _texts(out.get("content") if isinstance(out, dict) else out)
        code = _exit_code(text)
        return [_tool_result(state, ts, call_id, text, None if code is None else code != 0,
                             {"stdout": _output(text), "stderr": ""} if code is not None else None)]
    return []


def _exit_code(text: str) -> int | None:
    """The exit code Codex writes at the head of a command's output ("Process exited with code N", "Exit
    code: N"), None when it wrote none."""
    for head in ("Process exited with code ", "Exit code: "):
        at = text.find(head)
        if at >= 0:
            digits = text[at + len(head):].split("\n", 1)[0].strip()
            if digits.lstrip("-").isdigit():
                return int(digits)
    return None


def _output(text: str) -> str:
    """The command's own output, after Codex's header lines (chunk id, wall time, exit code)."""
    at = text.find("Output:\n")
    return text[at + len("Output:\n"):] if at >= 0 else text


def _gemini(line: dict[str, Any], state: LogState) -> list[dict[str, Any]]:
    if "sessionId" in line and "type" not in line:  # the header
        state.session = str(line.get("sessionId") or "")
        return [{"type": "system", "sessionId": state.session, "cwd": state.cwd,
                 "timestamp": line.get("startTime")}]
    update = line.get("$set")
    if isinstance(update, dict):  # the header's fields rewritten; its messages list when it sets one
        messages = update.get("messages")
        return [out for m in messages if isinstance(m, dict) for out in _gemini(m, state)] \
            if isinstance(messages, list) else []
    kind, ts, mid = line.get("type"), line.get("timestamp"), str(line.get("id") or "")
    if kind == "user":
        text = _prompt(_texts(line.get("content")))  # a tool's answer echoed back has no text
        if not text or f"{mid}:user" in state.given:
            return []
        state.given.add(f"{mid}:user")
        return [_line(state, ts, "user", text)]
    if kind != "gemini":
        return []
    out = []
    text = _texts(line.get("content")).strip()
    if text and f"{mid}:text" not in state.given:  # a message is written again as its tool calls finish
        state.given.add(f"{mid}:text")
        out.append(_line(state, ts, "assistant", [{"type": "text", "text": text}]))
    for call in line.get("toolCalls") or []:
        if not isinstance(call, dict) or str(call.get("id") or "") in state.given or call.get("status") not in (
                "success", "error", "cancelled"):
            continue  # given already, or still running: its final line comes later
        call_id = str(call.get("id") or "")
        state.given.add(call_id)
        out.append(_tool_use(state, call.get("timestamp") or ts, call_id, str(call.get("name") or ""),
                             call.get("args")))
        # A shell command that exits non-zero still ends "success": only an error is an outcome recorded.
        failed = call.get("status") in ("error", "cancelled") or None
        out.append(_tool_result(state, call.get("timestamp") or ts, call_id, _gemini_result(call), failed))
    return out


def _gemini_result(call: dict[str, Any]) -> str:
    """A Gemini tool call's result as text: its functionResponse output, else what it displayed."""
    parts = []
    for item in call.get("result") or []:
        resp = item.get("functionResponse", {}).get("response") if isinstance(item, dict) else None
        if isinstance(resp, dict):
            parts.append(_texts(resp.get("output") or resp.get("error") or json.dumps(resp)))
    return "\n".join(parts) or _texts(call.get("resultDisplay"))
