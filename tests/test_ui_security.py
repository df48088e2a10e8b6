"""The viewer's access rules against a real `memory ui` process: token then cookie, Host header, CSRF token,
loopback only; and the detached start that /memory:ui runs."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

import pytest

from memory.ui.app import bind
from memory.ui.guard import loopback_only
from tests.support.ui import ROOT, Server, running_ui


def _memory(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memory", *args], input=stdin, capture_output=True, text=True,
                          cwd=ROOT, timeout=60)


def _request(s: Server, path: str, *, method: str = "GET", host: str | None = None, cookie: str | None = None,
             body: dict[str, str] | None = None, origin: str | None = None) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=10)
    headers = {"Host": host or f"127.0.0.1:{s.port}"}
    if cookie is not None:
        headers["Cookie"] = f"memory_ui_{s.port}={cookie}"
    if origin is not None:
        headers["Origin"] = origin
    data = urlencode(body).encode() if body is not None else None
    if data is not None:
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    conn.request(method, path, body=data, headers=headers)
    response = conn.getresponse()
    response.read()
    return response


@pytest.fixture
def server(home: Path, project: Path) -> Server:
    out = _memory("save", "-p", str(project), "--type", "decision", "Keep the viewer on loopback only")
    assert out.returncode == 0, out.stderr
    with running_ui(project) as s:
        yield s


def _csrf(s: Server) -> str:
    conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=10)
    conn.request("GET", "/m/1", headers={"Host": f"127.0.0.1:{s.port}", "Cookie": f"memory_ui_{s.port}={s.token}"})
    page = conn.getresponse().read().decode()
    return page.split('name="csrf" value="')[1].split('"')[0]


def test_token_then_cookie(server: Server) -> None:
    s = server
    assert _request(s, "/").status == 403  # no token
    assert _request(s, "/static/ui.css").status == 403  # the static files too
    assert _request(s, "/?token=wrong").status == 403
    assert _request(s, "/", cookie="wrong").status == 403
    entered = _request(s, f"/?token={s.token}")
    assert entered.status == 303 and entered.getheader("location") == "/"  # the token leaves the URL
    cookie = entered.getheader("set-cookie") or ""
    assert f"memory_ui_{s.port}={s.token}" in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie
    page = _request(s, "/", cookie=s.token)
    assert page.status == 200
    assert "script-src 'self'" in (page.getheader("content-security-policy") or "")


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1.nip.io:{port}", "127.0.0.1:1",
                                  "localhost.evil:{port}"])
def test_foreign_host_refused(server: Server, host: str) -> None:
    """A DNS-rebinding page reaches 127.0.0.1 under its own name: refused even with the right cookie."""
    s = server
    assert _request(s, "/", host=host.format(port=s.port), cookie=s.token).status == 403
    assert _request(s, f"/?token={s.token}", host=host.format(port=s.port)).status == 403
    assert _request(s, "/", host=f"localhost:{s.port}", cookie=s.token).status == 200


def test_changes_need_the_csrf_token(server: Server, project: Path) -> None:
    s = server
    p = {"p": ""}
    assert _request(s, "/m/1/delete", method="POST", cookie=s.token, body=p).status == 403
    assert _request(s, "/m/1/delete", method="POST", cookie=s.token, body={**p, "csrf": "wrong"}).status == 403
    assert _request(s, "/m/1/delete", method="POST", body={**p, "csrf": _csrf(s)}).status == 403  # no cookie
    csrf = _csrf(s)
    assert _request(s, "/m/1/delete", method="POST", cookie=s.token, body={**p, "csrf": csrf},
                    origin="http://evil.example").status == 403
    assert _memory("get", "1", "-p", str(project)).returncode == 0  # all refused: still there
    done = _request(s, "/m/1/pin", method="POST", cookie=s.token, body={**p, "csrf": csrf},
                    origin=f"http://127.0.0.1:{s.port}")
    assert done.status == 303
    got = json.loads(_memory("get", "1", "-p", str(project), "--json").stdout)
    assert got[0]["tags"] == "pinned"


def test_binds_loopback_only(server: Server) -> None:
    listening = Path("/proc/net/tcp").read_text().splitlines()[1:]
    mine = [ln.split()[1] for ln in listening
            if ln.split()[1].endswith(f":{server.port:04X}") and ln.split()[3] == "0A"]  # 0A: LISTEN
    assert mine == [f"0100007F:{server.port:04X}"]  # 127.0.0.1, in the kernel's byte order
    for address in ("0.0.0.0", "::", "192.168.1.10", "10.0.0.1", "example.com", ""):
        with pytest.raises(ValueError, match="loopback"):
            loopback_only(address)
        with pytest.raises(ValueError, match="loopback"):
            bind(address, 0)
    sock = bind("127.0.0.1", 0)
    assert sock.getsockname()[0] == "127.0.0.1"
    sock.close()


def test_detached_start_prints_the_url_and_reuses_it(home: Path, project: Path) -> None:
    """What /memory:ui runs: `memory slash ui` starts the viewer in the background and prints its URL."""
    first = _memory("slash", "ui", stdin="--no-browser")
    url = first.stdout.strip().splitlines()[0]
    assert url.startswith("http://127.0.0.1:") and "token=" in url, first
    state = json.loads((home / "ui.json").read_text())
    try:
        assert state["url"] == url and os.stat(home / "ui.json").st_mode & 0o077 == 0
        again = _memory("ui", "--detach", "--no-browser")
        assert again.stdout.strip() == url  # the running one, not a second server
    finally:
        os.kill(state["pid"], signal.SIGINT)
    deadline = time.monotonic() + 15
    while (home / "ui.json").exists() and time.monotonic() < deadline:  # removed as the server stops
        time.sleep(0.1)
    assert not (home / "ui.json").exists()


def test_stops_on_ctrl_c(home: Path, project: Path) -> None:
    with running_ui(project) as s:
        assert _request(s, "/", cookie=s.token).status == 200
        s.proc.send_signal(signal.SIGINT)
        assert s.proc.wait(timeout=10) == 0
    assert not (home / "ui.json").exists()


def test_stops_when_idle(home: Path) -> None:
    """MEMORY_UI_IDLE_MINUTES, in seconds here: serve() returns once no request came for that long."""
    from memory.ui import app, data
    from memory.ui.guard import Secrets

    sock = app.bind()
    started = time.monotonic()
    app.serve(sock, data.Places(str(home)), Secrets(sock.getsockname()[1]), 1.5)
    assert time.monotonic() - started >= 1.5  # it returned (the call ends), and not before its idle time
