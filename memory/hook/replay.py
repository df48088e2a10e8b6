"""Replay recorded hook events (one JSON object per line) or a Claude Code transcript through the real
hook entrypoints, as Claude Code would run them, and report what each returned and how long it took."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from typing import Any

from memory import ROOT  # the plugin folder
from memory.capture.transcript import compaction_summary

LAUNCHER = os.path.join(ROOT, "hooks", "run")

ENTRYPOINTS = {
    "SessionStart": "session_start",
    "UserPromptSubmit": "user_prompt_submit",
    "PreToolUse": "pre_tool_use",
    "PostToolUse": "post_tool_use",
    "PostToolUseFailure": "post_tool_use",
    "PreCompact": "pre_compact",
    "Stop": "stop",
    "SessionEnd": "session_end",
}


def entrypoint(event: dict[str, Any]) -> str | None:
    """The hook Claude Code would run for this event under hooks/hooks.json (PreToolUse only for Read)."""
    name = event.get("hook_event_name")
    if name == "PreToolUse" and event.get("tool_name") != "Read":
        return None
    return ENTRYPOINTS.get(str(name))


def read_lines(path: str) -> list[dict[str, Any]]:
    out = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        text = fh.read()
    stripped = text.strip()
    if stripped.startswith("{") and "\n{" not in stripped:  # one pretty-printed or single-line object
        try:
            value = json.loads(stripped)
            return [value] if isinstance(value, dict) else []
        except ValueError:
            pass
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue  # transcripts are unofficial: skip what cannot be read
        if isinstance(value, dict):
            out.append(value)
    return out


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_content_text(c.get("text") or c.get("content")) if isinstance(c, dict) else str(c)
                         for c in content)
    return ""


def transcript_events(lines: list[dict[str, Any]], *, with_time: bool = False) -> Iterator[dict[str, Any]]:
    """Synthesise the hook events a transcript implies: prompts, tool calls and results, turn ends.

    with_time: each event also carries its line's "timestamp" (`memory import` dates memories by it;
    replayed hooks get exactly the fields Claude Code sends)."""
    session = next((str(ln["sessionId"]) for ln in lines if ln.get("sessionId")), "replayed-session")
    cwd = next((str(ln["cwd"]) for ln in lines if ln.get("cwd")), os.getcwd())
    base = {"session_id": session, "cwd": cwd, "transcript_path": ""}
    yield {**base, "hook_event_name": "SessionStart", "source": "startup"}
    tools: dict[str, dict[str, Any]] = {}
    last_text = ""
    in_turn = False
    for ln in lines:
        here = {**base, "timestamp": ln.get("timestamp")} if with_time else base
        kind = ln.get("type")
        msg = ln.get("message") if isinstance(ln.get("message"), dict) else {}
        content = msg.get("content")
        if kind == "system" and ln.get("subtype") == "compact_boundary":
            yield {**here, "hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": ""}
            yield {**here, "hook_event_name": "SessionStart", "source": "compact"}
        elif kind == "user" and isinstance(content, str) and not ln.get("isMeta"):
            if content.startswith(("<command-", "<local-command", "Caveat:")) or compaction_summary(ln, content):
                continue  # the client's own lines; a compaction summary is the model's words, no prompt
            if in_turn:
                yield {**here, "hook_event_name": "Stop", "stop_hook_active": False,
                       "last_assistant_message": last_text}
            in_turn = True
            yield {**here, "hook_event_name": "UserPromptSubmit", "prompt": content}
        elif kind == "assistant" and isinstance(content, list):
            for block in content:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text" and block.get("text"):
                    last_text = str(block["text"])
                elif block.get("type") == "tool_use":
                    call = {"tool_name": block.get("name"), "tool_input": block.get("input") or {},
                            "tool_use_id": block.get("id")}
                    tools[str(block.get("id"))] = call
                    yield {**here, "hook_event_name": "PreToolUse", **call}
        elif kind == "user" and isinstance(content, list):
            for block in content:
                if not isinstance(block, dict) or block.get("type") != "tool_result":
                    continue
                call = tools.pop(str(block.get("tool_use_id")), None)
                if call is None:
                    continue
                if block.get("is_error"):
                    yield {**here, "hook_event_name": "PostToolUseFailure", **call,
                           "error": _content_text(block.get("content"))}
                else:
                    result = ln.get("toolUseResult", _content_text(block.get("content")))
                    yield {**here, "hook_event_name": "PostToolUse", **call, "tool_response": result}
    if in_turn:
        yield {**base, "hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": last_text}
    yield {**base, "hook_event_name": "SessionEnd", "reason": "other"}


def events_from_file(path: str) -> list[dict[str, Any]]:
    lines = read_lines(path)
    if any("hook_event_name" in ln for ln in lines):
        return [ln for ln in lines if "hook_event_name" in ln]
    return list(transcript_events(lines))


def run_hook(entry: str, event: dict[str, Any], env: dict[str, str] | None = None,
             timeout: float = 30) -> dict[str, Any]:
    """One hook process, exactly as Claude Code spawns it: the launcher, the event on stdin."""
    data = json.dumps(event).encode()
    start = time.perf_counter()
    proc = subprocess.run([LAUNCHER, entry], input=data, capture_output=True, timeout=timeout,
                          env=env or os.environ.copy())
    elapsed = (time.perf_counter() - start) * 1000
    stdout = proc.stdout.decode("utf-8", "replace")
    parsed: Any = None
    if stdout.strip():
        try:
            parsed = json.loads(stdout)
        except ValueError:
            parsed = None
    return {"event": event.get("hook_event_name"), "entry": entry, "exit_code": proc.returncode,
            "ms": round(elapsed, 1), "stdout": stdout, "output": parsed,
            "stderr": proc.stderr.decode("utf-8", "replace")}


def replay(path: str, *, cwd: str | None = None, env: dict[str, str] | None = None) -> Iterator[dict[str, Any]]:
    for event in events_from_file(path):
        if cwd:
            event["cwd"] = cwd
        entry = entrypoint(event)
        if entry is None:
            yield {"event": event.get("hook_event_name"), "entry": None, "skipped": "no hook for this event"}
            continue
        yield run_hook(entry, event, env)
