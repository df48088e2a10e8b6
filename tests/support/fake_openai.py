"""Fake model APIs on 127.0.0.1 for driving real clients without a network: OpenAI's Responses API (Codex
CLI), Chat Completions (OpenCode's OpenAI-compatible provider) and Gemini's generateContent (Gemini CLI).
Each request is answered, streamed, by the next step of a script (a tool call, or a final message), and
every request body is kept for the test to read."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _Fake:
    """The server both fakes share: `steps` each {"call": name, "arguments": ..., "custom": bool} or
    {"text": "..."}; past the last step every request gets "done"."""

    def __init__(self, steps: list[dict[str, Any]]) -> None:
        self.steps = steps
        self.requests: list[dict[str, Any]] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._lock = threading.Lock()
        self._served = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> _Fake:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _next(self) -> dict[str, Any]:
        with self._lock:
            n = self._served
            self._served += 1
        return self.steps[n] if n < len(self.steps) else {"text": "done"}

    def answer(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        raise NotImplementedError

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # model lists and the like
                send_json(self, {"object": "list", "data": [{"id": "fake", "object": "model"}], "models": []})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                fake.requests.append({"path": self.path, **body})
                fake.answer(self, body)

        return Handler


def send_json(handler: BaseHTTPRequestHandler, obj: Any) -> None:
    data = json.dumps(obj).encode()
    handler.send_response(200)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def send_events(handler: BaseHTTPRequestHandler, events: list[str]) -> None:
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.end_headers()
    for ev in events:
        handler.wfile.write(ev.encode())
    handler.wfile.flush()


class FakeResponses(_Fake):
    """The Responses API Codex CLI speaks (POST /v1/responses, server-sent events)."""

    def answer(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        if not handler.path.endswith("/responses"):
            send_json(handler, {})
            return
        step, n = self._next(), len(self.requests)
        if "call" in step:
            args = step["arguments"] if isinstance(step["arguments"], str) else json.dumps(step["arguments"])
            kind, field = ("custom_tool_call", "input") if step.get("custom") else ("function_call", "arguments")
            item = {"type": kind, "id": f"call_item_{n}", "call_id": f"call_{n}", "name": step["call"],
                    field: args, "status": "completed"}
        else:
            item = {"type": "message", "role": "assistant", "id": f"msg_{n}", "status": "completed",
                    "content": [{"type": "output_text", "text": step["text"], "annotations": []}]}
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
        rid = f"resp_{n}"
        events = [{"type": "response.created", "response": {"id": rid}},
                  {"type": "response.output_item.added", "output_index": 0, "item": item},
                  {"type": "response.output_item.done", "output_index": 0, "item": item},
                  {"type": "response.completed", "response": {"id": rid, "usage": usage, "output": [item]}}]
        send_events(handler, [f"event: {ev['type']}\ndata: {json.dumps(ev)}\n\n" for ev in events])


class FakeChat(_Fake):
    """Chat Completions (POST /v1/chat/completions); a request without tools (a title) gets a short text and
    does not take a step."""

    def answer(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        step, n = (self._next() if body.get("tools") else {"text": "Billing rename"}), len(self.requests)
        if "call" in step:
            call = {"index": 0, "id": f"call_{n}", "type": "function",
                    "function": {"name": step["call"], "arguments": json.dumps(step["arguments"])}}
            message, finish = {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
        else:
            message, finish = {"role": "assistant", "content": step["text"]}, "stop"
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        base = {"id": f"chatcmpl-{n}", "model": "fake"}
        if not body.get("stream"):
            send_json(handler, {**base, "object": "chat.completion", "usage": usage,
                                "choices": [{"index": 0, "message": message, "finish_reason": finish}]})
            return
        chunks = [{**base, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": message,
                                                                            "finish_reason": None}]},
                  {**base, "object": "chat.completion.chunk", "usage": usage,
                   "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}]
        send_events(handler, [f"data: {json.dumps(c)}\n\n" for c in chunks] + ["data: [DONE]\n\n"])


class FakeGemini(_Fake):
    """Gemini's API (POST /v1beta/models/M:streamGenerateContent?alt=sse); the CLI's side requests (token
    counts, its model router's classifier) get a short answer and take no step."""

    def answer(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        if ":countTokens" in handler.path:
            send_json(handler, {"totalTokens": 10})
            return
        main = ":streamGenerateContent" in handler.path and body.get("tools")
        step = self._next() if main else {"text": '{"reasoning": "simple", "model_choice": "flash"}'}
        part = ({"functionCall": {"name": step["call"], "args": step["arguments"]}} if "call" in step
                else {"text": step["text"]})
        resp = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}}
        if ":streamGenerateContent" in handler.path:
            send_events(handler, [f"data: {json.dumps(resp)}\r\n\r\n"])
        else:
            send_json(handler, resp)
