"""A scripted fake Anthropic Messages API for driving the real Claude Code CLI offline.

The server (tests/support/loopback.py) listens on 127.0.0.1 (ephemeral port), records every request
in order, and answers ``POST /v1/messages`` with whatever the test's *script* returns for that request, as
Anthropic SSE when ``stream`` is true and as one JSON message otherwise. Any other path is logged
and answered with a small 404 JSON error, which the CLI tolerates.

A script is a callable ``(request_body) -> Reply``. ``Turns`` builds one from a list of replies for
the main agent loop and answers the CLI's side requests (title generation, compaction summary,
small-model calls) with plain text, so tests only describe what "the model" does.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from tests.support.loopback import Handler, Json, LoopbackServer, Request

COMPACT_MARKER = "summary of the conversation"
"""Phrase the CLI puts in the last user message of its compaction request (lower-cased match)."""


@dataclass
class Reply:
    """One assistant message: a list of content blocks (text and/or tool_use)."""

    blocks: list[Json] = field(default_factory=list)
    stop_reason: str | None = None

    @property
    def effective_stop_reason(self) -> str:
        if self.stop_reason:
            return self.stop_reason
        return "tool_use" if any(b["type"] == "tool_use" for b in self.blocks) else "end_turn"


def text(s: str) -> Reply:
    return Reply([{"type": "text", "text": s}])


_ids = itertools.count(1)


def tool_use(name: str, tool_input: Json, *, preface: str = "") -> Reply:
    blocks: list[Json] = [{"type": "text", "text": preface}] if preface else []
    blocks.append({"type": "tool_use", "id": f"toolu_fake{next(_ids):06d}", "name": name, "input": tool_input})
    return Reply(blocks)


Script = Callable[[Json], Reply]


# ---------------------------------------------------------------------------------------------
# Request inspection helpers


def _strings(node: Any) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for item in node:
            yield from _strings(item)


def all_text(body: Json) -> str:
    """Every string the model would see: system prompt and all messages (tool results included)."""
    return "\n".join(_strings([body.get("system", []), body.get("messages", [])]))


def system_text(body: Json) -> str:
    return "\n".join(_strings(body.get("system", [])))


def _blocks(message: Json) -> list[Json]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def tool_results(body: Json) -> list[Json]:
    """All tool_result blocks in the request, in order."""
    return [
        b
        for m in body.get("messages", [])
        if m.get("role") == "user"
        for b in _blocks(m)
        if b.get("type") == "tool_result"
    ]


def tool_result_text(block: Json) -> str:
    return "\n".join(_strings(block.get("content", "")))


def last_user_text(body: Json) -> str:
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    return "\n".join(_strings(users[-1].get("content", ""))) if users else ""


def tool_names(body: Json) -> set[str]:
    return {t.get("name", "") for t in body.get("tools") or [] if isinstance(t, dict)}


def is_compaction(body: Json) -> bool:
    return COMPACT_MARKER in last_user_text(body).lower()


def is_main(body: Json) -> bool:
    """A request from the main agent loop: it offers the Read tool and is not a compaction."""
    return "Read" in tool_names(body) and not is_compaction(body)


def turn_step(body: Json) -> int:
    """How many assistant messages the current turn already has.

    The turn starts at the last user message holding no tool_result (the prompt); every assistant
    message after it is one step the model already took.
    """
    messages = body.get("messages", [])
    start = 0
    for i, m in enumerate(messages):
        if m.get("role") == "user" and not any(b.get("type") == "tool_result" for b in _blocks(m)):
            start = i
    return sum(1 for m in messages[start:] if m.get("role") == "assistant")


class Turns:
    """Script: the i-th step of each main-loop turn gets ``replies[i]`` (the last one repeats).

    ``replies`` items are either a Reply or a callable ``(body) -> Reply``. Side requests get
    ``side(body)``; the default answers compaction with ``summary`` and anything else with "ok".
    """

    def __init__(
        self,
        replies: list[Reply | Script],
        *,
        summary: str = "The user asked for a small change; it was made.",
        side: Script | None = None,
    ) -> None:
        self.replies = replies
        self.summary = summary
        self.side = side

    def __call__(self, body: Json) -> Reply:
        if not is_main(body):
            if self.side is not None:
                return self.side(body)
            if is_compaction(body):
                return text(f"<analysis>fake</analysis>\n<summary>\n{self.summary}\n</summary>")
            return text("ok")
        reply = self.replies[min(turn_step(body), len(self.replies) - 1)]
        return reply(body) if callable(reply) else reply


# ---------------------------------------------------------------------------------------------
# Server


class FakeAnthropic(LoopbackServer):
    """Threaded fake Messages API. Use as a context manager or call start()/stop()."""

    def __init__(self, script: Script | None = None) -> None:
        super().__init__()
        self.script: Script = script or Turns([text("ok")])
        self.errors: list[str] = []  # exceptions raised by the script

    @property
    def requests(self) -> list[Json]:
        """Bodies of POST /v1/messages, in order."""
        return [r.body for r in self.log if r.method == "POST" and r.route == "/v1/messages" and r.body is not None]

    def main_requests(self, start: int = 0) -> list[Json]:
        return [b for b in self.requests[start:] if is_main(b)]

    def _reply_for(self, body: Json) -> Reply:
        try:
            return self.script(body)
        except Exception as exc:  # a broken script must not hang the CLI: say so and end the turn
            with self._lock:
                self.errors.append(repr(exc))
            return text(f"fake-api script error: {exc!r}")

    def answer(self, http: Handler, request: Request) -> None:
        body = request.body
        if request.method == "POST" and request.route == "/v1/messages/count_tokens":
            http.send_json(200, {"input_tokens": len(json.dumps(body)) // 4})
        elif request.method == "POST" and request.route == "/v1/messages" and body is not None:
            message = _message(body, self._reply_for(body))
            if body.get("stream"):
                _stream(http, message)
            else:
                http.send_json(200, message)
        else:  # the CLI tolerates a 404 on the paths it probes
            http.send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": "fake"}})


def _stream(http: Handler, message: Json) -> None:
    http.send_response(200)
    http.send_header("content-type", "text/event-stream")
    http.send_header("cache-control", "no-cache")
    http.send_header("connection", "close")
    http.end_headers()
    for event, data in _sse_events(message):
        http.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
    http.wfile.flush()
    http.close_connection = True


_msg_ids = itertools.count(1)


def _message(body: Json, reply: Reply) -> Json:
    return {
        "id": f"msg_fake{next(_msg_ids):06d}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "claude-fake"),
        "content": reply.blocks,
        "stop_reason": reply.effective_stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 10},
    }


def _sse_events(message: Json) -> Iterator[tuple[str, Json]]:
    start = dict(message, content=[], stop_reason=None)
    start["usage"] = {"input_tokens": 10, "output_tokens": 1}
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(message["content"]):
        if block["type"] == "tool_use":
            head = dict(block, input={})
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            head = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": head}
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": 10},
        },
    )
    yield "message_stop", {"type": "message_stop"}
