"""A fast front for the MCP server: answers the handshake from a cache, hands everything else to the real
server (memory/mcp_server.py, on the official SDK) that it starts beside itself at once.

Why: importing the `mcp` SDK takes 0.7-1.2 s here, and `claude -p` waits for its MCP servers before the
first request (an interactive session connects them in the background). The MCP protocol of 2026-07-28
is stateless: every request carries its protocol version and client info in `_meta`, and the answers to
`server/discover` and the `*/list` methods depend only on the server's code. So this process (standard
library only, ~30 ms to start) answers those from `<data dir>/cache/mcp-<fingerprint>.json` and forwards
every other message to the real server, whose answers it passes back untouched. The first start (or the
first after an update: the fingerprint covers the server's code and the SDK's version) forwards
everything and records the answers. A client on the older, stateful protocol (`initialize`) is simply
proxied. Messages are newline-delimited JSON-RPC, as on MCP's stdio transport.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading

CACHEABLE = frozenset({"server/discover", "tools/list", "prompts/list", "resources/list",
                       "resources/templates/list"})
_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
HERE = os.path.dirname(os.path.abspath(__file__))


def fingerprint() -> str:
    """Changes whenever the answers could: the server's code, the memory types, the SDK installed."""
    h = hashlib.sha256()
    for name in ("mcp_server.py", "classify.py", "mcp_front.py"):
        try:
            with open(os.path.join(HERE, name), "rb") as fh:
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
    from memory.config import data_home

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
        from memory.workspace import write_private

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
    def __init__(self, command: list[str], path: str) -> None:
        self.path = path
        self.cache = _load(path)
        self.recording: dict[object, str] = {}  # request id -> cache key, for answers to record
        self.acks_recording: dict[object, str] = {}  # subscription id -> cache key of its acknowledgement
        self.acks_sent: set[object] = set()  # subscriptions acknowledged from the cache: the server's ack is dropped
        self.lock = threading.Lock()
        self.child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def write(self, data: bytes) -> None:
        with self.lock:
            sys.stdout.buffer.write(data if data.endswith(b"\n") else data + b"\n")
            sys.stdout.buffer.flush()

    def to_child(self, line: bytes) -> None:
        assert self.child.stdin is not None
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
            try:
                message = json.loads(line)
            except ValueError:
                message = None
            params = message.get("params") if isinstance(message, dict) and message.get("method") == ACK else None
            meta = params.get("_meta") if isinstance(params, dict) else None
            sid = meta.get(_SUBSCRIPTION_KEY) if isinstance(meta, dict) else None
            if sid is not None and sid in self.acks_sent:
                self.acks_sent.discard(sid)
                return  # already acknowledged from the cache
            if sid is not None and sid in self.acks_recording and isinstance(params, dict):
                self.cache[self.acks_recording.pop(sid)] = {k: v for k, v in params.items() if k != "_meta"}
                _save(self.path, self.cache)
        if self.recording:
            try:
                message = json.loads(line)
            except ValueError:
                message = None
            if isinstance(message, dict) and message.get("id") in self.recording:
                key = self.recording.pop(message["id"])
                if isinstance(message.get("result"), dict):
                    self.cache[key] = message["result"]
                    _save(self.path, self.cache)
        self.write(line)

    def pump_server(self) -> None:
        assert self.child.stdout is not None
        for line in self.child.stdout:
            self.from_server(line)
        # The server is gone (it crashed, or the client left and it stopped): so is this front, or the
        # client would wait on requests nobody answers.
        code = self.child.wait()
        with self.lock:
            os._exit(code if code > 0 else 0)

    def run(self) -> int:
        reader = threading.Thread(target=self.pump_server, daemon=True)
        reader.start()
        for line in sys.stdin.buffer:
            if line.strip():
                self.from_client(line)
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
    proc = subprocess.Popen([sys.executable, "-m", "memory.mcp_front"], stdin=subprocess.PIPE,
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


def main() -> int:
    os.umask(0o077)  # the server it starts writes to the data dir: owner-only folders and files
    command = [sys.executable, "-m", "memory.mcp_server"]
    front = Front(command, cache_path())

    def stop(signum: int, _frame: object) -> None:  # Claude Code stops servers with SIGINT, then SIGTERM
        front.child.terminate()
        raise SystemExit(0)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    return front.run()


if __name__ == "__main__":
    sys.exit(main())
