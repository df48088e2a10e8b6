"""A loopback HTTP server that speaks enough of the Anthropic Messages API (POST /v1/messages) and of the
Ollama API (POST /api/chat, GET /api/tags) to drive the real `anthropic` and `ollama` clients.

Each request to a model endpoint takes the next scripted answer: a status, a JSON body, headers, and a
delay before answering (to provoke client timeouts). When the script runs out, the last answer repeats.
Every request is recorded (path, headers, parsed body). The server itself is tests/support/loopback.py.
"""

from __future__ import annotations

import time

from tests.support.loopback import Handler, Json, LoopbackServer, Request

MODEL_ROUTES = ("/v1/messages", "/api/chat")


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


class FakeLLM(LoopbackServer):
    def __init__(self, answers: list[Answer] | None = None, models: list[str] | None = None) -> None:
        super().__init__()
        self.answers: list[Answer] = list(answers or [])
        self.models = models if models is not None else ["nomic-embed-text:latest", "qwen2.5:3b"]

    @property
    def requests(self) -> list[tuple[str, dict[str, str], Json | None]]:
        """(path without the query, headers, body) of every GET and POST, in order."""
        return [(r.route, r.headers, r.body) for r in self.log if r.method in ("GET", "POST")]

    def model_requests(self) -> list[Json]:
        return [b for path, _, b in self.requests if path in MODEL_ROUTES and b is not None]

    def _next(self) -> Answer:
        with self._lock:
            if len(self.answers) > 1:
                return self.answers.pop(0)
            return self.answers[0]

    def answer(self, http: Handler, request: Request) -> None:
        if request.method == "GET" and request.route == "/api/tags":
            http.send_json(200, {"models": [{"name": m, "model": m, "size": 1, "digest": "x"} for m in self.models]})
        elif request.method == "POST" and request.route in MODEL_ROUTES:
            answer = self._next()
            if answer.delay:
                time.sleep(answer.delay)
            http.send_json(answer.status, answer.body, answer.headers)
        else:
            http.send_json(404, {"error": "not found"})
