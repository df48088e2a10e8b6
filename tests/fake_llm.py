"""A loopback HTTP server that speaks enough of the Anthropic Messages API (POST /v1/messages) and of the
Ollama API (POST /api/chat, GET /api/tags) to drive the real `anthropic` and `ollama` clients.

Each request to a model endpoint takes the next scripted answer: a status, a JSON body, headers, and a
delay before answering (to provoke client timeouts). When the script runs out, the last answer repeats.
Every request is recorded (path, headers, parsed body). Bound to 127.0.0.1 on an ephemeral port, served
by a daemon thread, stopped by the test.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Json = dict[str, Any]


class Answer:
    def __init__(self, body: Json | str, status: int = 200, headers: dict[str, str] | None = None,
                 delay: float = 0.0) -> None:
        self.body = body
        self.status = status
        self.headers = headers or {}
        self.delay = delay


def anthropic_tool_answer(payload: Json, *, input_tokens: int = 1200, output_tokens: int = 300,
                          model: str = "claude-haiku-4-5") -> Answer:
    """A Messages API answer whose content is the forced record_learnings tool call."""
    return Answer({
        "id": "msg_test", "type": "message", "role": "assistant", "model": model,
        "content": [{"type": "tool_use", "id": "toolu_test", "name": "record_learnings", "input": payload}],
        "stop_reason": "tool_use", "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    })


def anthropic_text_answer(text: str, *, input_tokens: int = 1000, output_tokens: int = 50) -> Answer:
    return Answer({
        "id": "msg_test", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    })


def anthropic_error(status: int, kind: str, headers: dict[str, str] | None = None) -> Answer:
    return Answer({"type": "error", "error": {"type": kind, "message": f"fake {kind}"}}, status, headers)


def ollama_answer(content: str, *, prompt_tokens: int = 900, output_tokens: int = 200,
                  model: str = "qwen2.5:3b") -> Answer:
    return Answer({
        "model": model, "created_at": "2026-11-21T00:00:00Z",
        "message": {"role": "assistant", "content": content}, "done": True, "done_reason": "stop",
        "total_duration": 1, "prompt_eval_count": prompt_tokens, "eval_count": output_tokens,
    })


class FakeLLM:
    def __init__(self, answers: list[Answer] | None = None, models: list[str] | None = None) -> None:
        self.answers: list[Answer] = list(answers or [])
        self.models = models if models is not None else ["nomic-embed-text:latest", "qwen2.5:3b"]
        self.requests: list[tuple[str, dict[str, str], Json | None]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def model_requests(self) -> list[Json]:
        return [b for path, _, b in self.requests if path in ("/v1/messages", "/api/chat") and b is not None]

    def __enter__(self) -> FakeLLM:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next(self) -> Answer:
        with self._lock:
            if len(self.answers) > 1:
                return self.answers.pop(0)
            return self.answers[0]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, status: int, body: Json | str, headers: dict[str, str] | None = None) -> None:
                data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                with fake._lock:
                    fake.requests.append((path, dict(self.headers), None))
                if path == "/api/tags":
                    self._send(200, {"models": [{"name": m, "model": m, "size": 1, "digest": "x"}
                                                for m in fake.models]})
                else:
                    self._send(404, {"error": "not found"})

            def do_POST(self) -> None:
                path = self.path.split("?")[0]
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                with fake._lock:
                    fake.requests.append((path, dict(self.headers), body))
                if path not in ("/v1/messages", "/api/chat"):
                    self._send(404, {"error": "not found"})
                    return
                answer = fake._next()
                if answer.delay:
                    time.sleep(answer.delay)
                self._send(answer.status, answer.body, answer.headers)

        return Handler
