"""A fake OpenAI Responses API on 127.0.0.1 for driving the real Codex CLI without a network: each request
is answered, as a server-sent event stream, by the next step of a script (a tool call, or a final message),
and every request body is kept for the test to read."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeResponses:
    """`steps`: each either {"call": name, "arguments": dict|str, "custom": bool} or {"text": "..."}; past the
    last step every request gets the last one's text (or "done")."""

    def __init__(self, steps: list[dict[str, Any]]) -> None:
        self.steps = steps
        self.requests: list[dict[str, Any]] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> FakeResponses:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _next(self) -> dict[str, Any]:
        n = sum(1 for r in self.requests if r.get("input") is not None) - 1
        return self.steps[n] if 0 <= n < len(self.steps) else {"text": "done"}

    def _events(self, step: dict[str, Any], n: int) -> list[dict[str, Any]]:
        rid = f"resp_{n}"
        if "call" in step:
            args = step["arguments"]
            if step.get("custom"):
                item = {"type": "custom_tool_call", "id": f"ctc_{n}", "call_id": f"call_{n}", "name": step["call"],
                        "input": args if isinstance(args, str) else json.dumps(args), "status": "completed"}
            else:
                item = {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": step["call"],
                        "arguments": args if isinstance(args, str) else json.dumps(args), "status": "completed"}
        else:
            item = {"type": "message", "role": "assistant", "id": f"msg_{n}", "status": "completed",
                    "content": [{"type": "output_text", "text": step["text"], "annotations": []}]}
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
        return [{"type": "response.created", "response": {"id": rid}},
                {"type": "response.output_item.added", "output_index": 0, "item": item},
                {"type": "response.output_item.done", "output_index": 0, "item": item},
                {"type": "response.completed", "response": {"id": rid, "usage": usage, "output": [item]}}]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # model lists and the like: an empty answer
                body = json.dumps({"object": "list", "data": [], "models": []}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"raw": raw.decode(errors="replace")}
                fake.requests.append({"path": self.path, **body})
                if not self.path.endswith("/responses"):
                    self.do_GET()
                    return
                n = len(fake.requests)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for ev in fake._events(fake._next(), n):
                    self.wfile.write(f"event: {ev['type']}\ndata: {json.dumps(ev)}\n\n".encode())
                self.wfile.flush()

        return Handler
