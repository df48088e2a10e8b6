"""A loopback HTTP server for the fake APIs: 127.0.0.1 on an ephemeral port, served by a daemon thread.

Every request is logged (method, path, headers, parsed JSON body); a subclass answers it in `answer()`
through the handler's `send_json`. The fake Messages/Ollama API of the provider tests (fake_llm.py) and
the scripted Messages API that drives the real Claude Code CLI (fake_anthropic.py) are both one of these.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

Json = dict[str, Any]


@dataclass
class Request:
    method: str
    path: str  # as sent, query string included
    headers: dict[str, str]
    body: Json | None  # parsed JSON; {"_raw": text} when not JSON, {"_json": value} when not an object

    @property
    def route(self) -> str:
        return self.path.split("?")[0]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: LoopbackServer  # set on the subclass each server makes

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def read_body(self) -> Json | None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            return {"_raw": raw.decode("utf-8", "replace")}
        return parsed if isinstance(parsed, dict) or parsed is None else {"_json": parsed}

    def send_json(self, status: int, body: Json | str, headers: dict[str, str] | None = None) -> None:
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
        self._serve("GET", None)

    def do_POST(self) -> None:
        self._serve("POST", self.read_body())

    def do_HEAD(self) -> None:
        self.fake.record(Request("HEAD", self.path, dict(self.headers), None))
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def _serve(self, method: str, body: Json | None) -> None:
        request = Request(method, self.path, dict(self.headers), body)
        self.fake.record(request)
        self.fake.answer(self, request)


class LoopbackServer:
    """Use as a context manager, or call start() and stop()."""

    def __init__(self) -> None:
        self.log: list[Request] = []  # every request, any method and path, in order
        self._lock = threading.Lock()
        handler = type("BoundHandler", (Handler,), {"fake": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def record(self, request: Request) -> None:
        with self._lock:
            self.log.append(request)

    def answer(self, http: Handler, request: Request) -> None:
        http.send_json(404, {"error": "not found"})
