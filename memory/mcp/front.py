"""A fast front for the MCP server: answers the handshake from a cache, hands everything else to the real
server (memory/mcp/server.py, on the official SDK) that it starts beside itself at once.

Why: importing the `mcp` SDK takes 0.7-1.2 s here, and `claude -p` waits for its MCP servers before the
first request (an interactive session connects them in the background). The MCP protocol of 2026-07-28
is stateless: every request carries its protocol version and client info in `_meta`, and the answers to
`server/discover` and the `*/list` methods depend only on the server's code. So this process (standard
library only, ~30 ms to start) answers those from `<data dir>/cache/mcp-<fingerprint>.json` and forwards
every other message to the real server, whose answers it passes back untouched. The first start (or the
first after an update: the fingerprint covers the server's code and the SDK's version) forwards
everything and records the answers. A client on the older, stateful protocol (`initialize`) is simply
proxied. Messages are newline-delimited JSON-RPC, as on MCP's stdio transport.

Before an installed plugin's venv exists (its first minute: memory/base/bootstrap.py), bin/memory starts this
front on python3 with `--setup`: it answers the protocol itself (one `status` tool that says the plugin is
being set up), because Claude Code remembers a server that failed to start for 15 minutes. When the venv
appears it starts the real server, replays the handshake to it, and tells the client the tools changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time

from memory import ROOT

CACHEABLE = frozenset({"server/discover", "tools/list", "prompts/list", "resources/list",
                       "resources/templates/list"})
_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"


def fingerprint() -> str:
    """Changes whenever the answers could: the server's code, the memory types, the SDK installed."""
    h = hashlib.sha256()
    for name in ("mcp/server.py", "mcp/tools.py", "base/classify.py", "mcp/front.py"):
        try:
            with open(os.path.join(ROOT, "memory", name), "rb") as fh:
                h.update(fh.read())
        except OSError:
            h.update(name.encode())
    for path in sys.path:  # the SDK's version: the size and time of its package file, without importing it
        init = os.path.join(path, "mcp", "__init__.py")
        if os.path.exists(init):
            st = os.stat(init)
            h.update(f"{init}:{st.st_size}:{st.st_mtime_ns}".encode())
            break
    return h.hexdigest()[:16]


def cache_path() -> str:
    from memory.base.config import data_home

    return os.path.join(data_home(), "cache", f"mcp-{fingerprint()}.json")


def _load(path: str) -> dict[str, object]:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _save(path: str, data: dict[str, object]) -> None:
    try:
        from memory.store.workspace import write_private

        write_private(path, json.dumps(data))
    except OSError:
        pass  # a read-only data dir: the next start is just slower


LISTEN = "subscriptions/listen"
ACK = "notifications/subscriptions/acknowledged"
_SUBSCRIPTION_KEY = "io.modelcontextprotocol/subscriptionId"


def _listen_key(message: dict[str, object]) -> str | None:
    """The cache key of a `subscriptions/listen` request (the client waits for its acknowledgement)."""
    params = message.get("params")
    if message.get("method") != LISTEN or "id" not in message or not isinstance(params, dict):
        return None
    meta = params.get("_meta")
    version = meta.get(_VERSION_KEY) if isinstance(meta, dict) else None
    if not isinstance(version, str):
        return None
    asked = {k: v for k, v in params.items() if k != "_meta"}
    return f"{version} {LISTEN} {json.dumps(asked, sort_keys=True)}"


def _parse(line: bytes) -> dict[str, object] | None:
    """One JSON-RPC message, or None for anything else."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def _key(message: dict[str, object]) -> str | None:
    """The cache key of a cacheable request of the stateless protocol, else None."""
    method = message.get("method")
    params = message.get("params")
    if method not in CACHEABLE or "id" not in message or not isinstance(params, dict):
        return None
    meta = params.get("_meta")
    version = meta.get(_VERSION_KEY) if isinstance(meta, dict) else None
    if not isinstance(version, str) or set(params) - {"_meta"}:  # a cursor or other argument: not cached
        return None
    return f"{version} {method}"


class Front:
    def __init__(self, command: list[str] | None, path: str | None) -> None:
        self.path = path
        self.cache = _load(path) if path else {}
        self.recording: dict[object, str] = {}  # request id -> cache key, for answers to record
        self.acks_recording: dict[object, str] = {}  # subscription id -> cache key of its acknowledgement
        self.acks_sent: set[object] = set()  # subscriptions acknowledged from the cache: the server's ack is dropped
        self.lock = threading.Lock()
        self.child: subprocess.Popen[bytes] | None = None
        if command is not None:
            self.child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def write(self, data: bytes) -> None:
        with self.lock:
            sys.stdout.buffer.write(data if data.endswith(b"\n") else data + b"\n")
            sys.stdout.buffer.flush()

    def to_child(self, line: bytes) -> None:
        assert self.child is not None and self.child.stdin is not None
        try:
            self.child.stdin.write(line if line.endswith(b"\n") else line + b"\n")
            self.child.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass

    def from_client(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if isinstance(message, dict) and message.get("method") == LISTEN:
            # The subscription itself is the server's (its notifications pass through later); only its
            # acknowledgement, which the client waits for before it lists the tools, comes from the cache.
            listen = _listen_key(message)
            if listen is not None and isinstance(self.cache.get(listen), dict):
                params = {**self.cache[listen], "_meta": {_SUBSCRIPTION_KEY: message["id"]}}  # type: ignore[dict-item]
                self.write(json.dumps({"jsonrpc": "2.0", "method": ACK, "params": params}).encode())
                self.acks_sent.add(message["id"])
            elif listen is not None:
                self.acks_recording[message["id"]] = listen
            self.to_child(line)
            return
        key = _key(message) if isinstance(message, dict) else None
        if key is not None and key in self.cache:
            self.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": self.cache[key]}).encode())  # type: ignore[index]
            return
        if key is not None:
            self.recording[message["id"]] = key  # type: ignore[index]
        self.to_child(line)

    def from_server(self, line: bytes) -> None:
        if self.acks_sent or self.acks_recording:
            message = _parse(line)
            params = message.get("params") if isinstance(message, dict) and message.get("method") == ACK else None
            meta = params.get("_meta") if isinstance(params, dict) else None
            sid = meta.get(_SUBSCRIPTION_KEY) if isinstance(meta, dict) else None
            if sid is not None and sid in self.acks_sent:
                self.acks_sent.discard(sid)
                return  # already acknowledged from the cache
            if sid is not None and sid in self.acks_recording and isinstance(params, dict):
                self.cache[self.acks_recording.pop(sid)] = {k: v for k, v in params.items() if k != "_meta"}
                self._save()
        if self.recording:
            message = _parse(line)
            if isinstance(message, dict) and message.get("id") in self.recording:
                key = self.recording.pop(message["id"])
                if isinstance(message.get("result"), dict):
                    self.cache[key] = message["result"]
                    self._save()
        self.write(line)

    def _save(self) -> None:
        if self.path:
            _save(self.path, self.cache)

    def pump_server(self) -> None:
        assert self.child is not None and self.child.stdout is not None
        for line in self.child.stdout:
            self.from_server(line)
        # The server is gone (it crashed, or the client left and it stopped): so is this front, or the
        # client would wait on requests nobody answers.
        code = self.child.wait()
        with self.lock:
            os._exit(code if code > 0 else 0)

    def serve(self) -> None:
        """The thread beside the client's: the server's messages."""
        self.pump_server()

    def run(self) -> int:
        reader = threading.Thread(target=self.serve, daemon=True)
        reader.start()
        for line in sys.stdin.buffer:
            if line.strip():
                self.from_client(line)
        with self.lock:
            if self.child is None:
                return 0  # the client left before there was a server (SetupFront)
        assert self.child.stdin is not None
        try:
            self.child.stdin.close()  # the client is gone: the server sees EOF and stops
        except OSError:
            pass
        try:
            return self.child.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.child.kill()
            return 1
        finally:
            reader.join(timeout=1)


# What Claude Code 2.1.330 sends before it uses a tool (tests/e2e/test_interfaces.py watches this).
WARM_META = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                       "io.modelcontextprotocol/clientInfo": {"name": "memory-warm-up", "version": "0"},
                       "io.modelcontextprotocol/clientCapabilities": {}}}
WARM_LISTEN = {"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True}


def warm() -> str:
    """Record the handshake now (after an install or update), so the first session does not wait for the
    SDK's import. Runs a front like Claude Code does and speaks to it; returns the cache file."""
    messages = [{"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": WARM_META},
                {"jsonrpc": "2.0", "id": "listen:0", "method": LISTEN,
                 "params": {**WARM_META, "notifications": WARM_LISTEN}},
                *({"jsonrpc": "2.0", "id": i, "method": m, "params": WARM_META}
                  for i, m in enumerate(("tools/list", "prompts/list", "resources/list"), start=2))]
    proc = subprocess.Popen([sys.executable, "-m", "memory.mcp.front"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for m in messages:
            proc.stdin.write(json.dumps(m).encode() + b"\n")
        proc.stdin.flush()
        for _ in messages:  # four answers and one acknowledgement, recorded by the front as they pass
            if not proc.stdout.readline():
                break
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
    return cache_path()


SETUP_TEXT = ("The memory plugin is being set up: its Python environment is installed in the background on "
              "the first session (about a minute). Its tools appear here when it is ready; try again shortly.")
SETUP_TOOL = {"name": "status", "description": "Whether the memory plugin is ready (it is being set up).",
              "inputSchema": {"type": "object", "properties": {}}, "annotations": {"readOnlyHint": True}}
_SERVER_INFO = {"io.modelcontextprotocol/serverInfo": {"name": "memory", "version": ""}}
_EMPTY_LISTS = {"prompts/list": "prompts", "resources/list": "resources", "resources/templates/list":
                "resourceTemplates"}


class SetupFront(Front):
    """The front while the venv is being built: answers for the server, then hands over to it."""

    def __init__(self, poll_s: float = 1.0) -> None:
        super().__init__(None, None)
        self.poll_s = poll_s
        self.replay: list[bytes] = []  # the handshake the real server must see: initialize, listen
        self.drop: set[object] = set()  # answers of the real server to replayed requests: already answered
        self.listens: dict[object, dict[str, object]] = {}  # subscription id -> the notifications asked for

    def from_client(self, line: bytes) -> None:
        with self.lock:
            waiting = self.child is None
            if waiting:
                self._answer(line)
        if not waiting:
            super().from_client(line)

    def _answer(self, line: bytes) -> None:
        message = _parse(line)
        if message is None:
            return
        method, rid = message.get("method"), message.get("id")
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        if method in ("initialize", "notifications/initialized") or method == LISTEN:
            self.replay.append(line)
        if rid is None or not isinstance(method, str):
            return  # a notification, or an answer to a request we never sent
        if method == LISTEN:
            asked = params.get("notifications") if isinstance(params.get("notifications"), dict) else {}
            self.listens[rid] = asked
            self._send({"jsonrpc": "2.0", "method": ACK,
                        "params": {"notifications": asked, "_meta": {_SUBSCRIPTION_KEY: rid}}})
            return  # the stream stays open: the real server answers it when it ends
        if method == "initialize":
            self.drop.add(rid)
            version = params.get("protocolVersion") or "2025-06-18"
            result: dict[str, object] = {"protocolVersion": version, "serverInfo": {"name": "memory", "version": ""},
                                         "capabilities": {"tools": {"listChanged": True}}, "instructions": SETUP_TEXT}
        elif method == "server/discover":
            result = {"capabilities": {"tools": {"listChanged": True}}, "instructions": SETUP_TEXT,
                      "supportedVersions": ["2026-07-28"]}
        elif method == "tools/list":
            result = {"tools": [SETUP_TOOL]}
        elif method in _EMPTY_LISTS:
            result = {_EMPTY_LISTS[method]: []}
        elif method == "tools/call":  # `status` answers; any other tool (listed before) cannot run yet
            result = {"content": [{"type": "text", "text": SETUP_TEXT}],
                      "isError": params.get("name") != SETUP_TOOL["name"]}
        elif method == "ping":
            result = {}
        else:
            self._send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": SETUP_TEXT}})
            return
        if method != "initialize":  # the stateless protocol's answers: never cached by the client
            result.update(resultType="complete", cacheScope="private", ttlMs=0, _meta=_SERVER_INFO)
        self._send({"jsonrpc": "2.0", "id": rid, "result": result})

    def _send(self, message: dict[str, object]) -> None:
        sys.stdout.buffer.write(json.dumps(message).encode() + b"\n")
        sys.stdout.buffer.flush()  # called with self.lock held

    def from_server(self, line: bytes) -> None:
        if self.drop:
            message = _parse(line)
            if message is not None and "method" not in message and message.get("id") in self.drop:
                self.drop.discard(message["id"])
                return
        super().from_server(line)

    def serve(self) -> None:
        """Poll for the venv (scripts/setup renames it into place when pip has finished), then start the
        real server on it, replay the handshake, and tell every subscriber the tools changed."""
        from memory.base.bootstrap import plugin_python  # standard library only; the setup front alone needs it

        while (python := plugin_python()) is None:
            time.sleep(self.poll_s)
        with self.lock:
            env = dict(os.environ)
            root = ROOT
            env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
            self.child = subprocess.Popen([python, "-m", "memory.mcp.server"], stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, env=env)
            self.acks_sent.update(self.listens)  # their acknowledgements went out already
            for line in self.replay:
                self.to_child(line)
            for sid, asked in self.listens.items():
                if asked.get("toolsListChanged"):
                    self._send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                                "params": {"_meta": {_SUBSCRIPTION_KEY: sid}}})
            if any(b'"initialize"' in line for line in self.replay):  # the older, stateful protocol
                self._send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        self.pump_server()


def main() -> int:
    os.umask(0o077)  # the server it starts writes to the data dir: owner-only folders and files
    if "--setup" in sys.argv[1:]:  # bin/memory found no venv: run as the setup front until there is one
        from memory.base.bootstrap import plugin_python

        python = plugin_python()
        if python is not None:  # it appeared meanwhile
            os.execv(python, [python, "-m", "memory.mcp.front"])
        front: Front = SetupFront()
    else:
        front = Front([sys.executable, "-m", "memory.mcp.server"], cache_path())

    def stop(signum: int, _frame: object) -> None:  # Claude Code stops servers with SIGINT, then SIGTERM
        if front.child is not None:
            front.child.terminate()
        raise SystemExit(0)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    return front.run()


if __name__ == "__main__":
    sys.exit(main())
