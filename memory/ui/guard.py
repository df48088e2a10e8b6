"""The viewer's access rules, an ASGI middleware: a random token in the URL (then a cookie), the Host header
checked against the loopback names (no DNS rebinding), a CSRF token on every change, loopback binds only.

A page served on 127.0.0.1 is reachable by every local user and by any web page the user opens (a form
posting to it, a script on a rebinding host name). The token stops the first two, the Host check the
third, the CSRF token (a second secret, only in the pages) and SameSite=Strict a cross-site form."""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs, urlencode

from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

SAFE_METHODS = ("GET", "HEAD")
MAX_BODY = 1 << 20  # a memory's edited text is well under this; a larger body is refused unread by the app
SECURITY_HEADERS = {
    # Everything the page needs comes from itself: a script or style from anywhere else is refused.
    "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                               "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    # same-origin, not no-referrer: with no-referrer a browser sends `Origin: null` on the page's own forms
    "referrer-policy": "same-origin",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}
# The stylesheet and the script change only with the plugin: kept an hour, a page paints without asking again.
STATIC_CACHE = {"cache-control": "private, max-age=3600"}


def loopback_only(host: str) -> str:
    """The address to bind, refused unless it is a loopback one: the viewer never listens on a network."""
    try:
        ok = ipaddress.ip_address(host).is_loopback
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"memory ui binds loopback addresses only (127.0.0.1, ::1), not {host!r}")
    return host


class Secrets:
    """The access token (in the printed URL, then a cookie) and the CSRF token (in the pages' forms)."""

    def __init__(self, port: int, token: str | None = None, csrf: str | None = None) -> None:
        self.port = port
        self.token = token or secrets.token_urlsafe(32)
        self.csrf = csrf or secrets.token_urlsafe(32)
        self.cookie = f"memory_ui_{port}"  # per port: two viewers on one browser keep their own cookie
        self.hosts = {f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"}

    def url(self, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}/?token={self.token}"


def _same(a: str | None, b: str) -> bool:
    return a is not None and hmac.compare_digest(a.encode(), b.encode())


def _refuse(status: int, why: str) -> Response:
    return PlainTextResponse(f"memory ui: {why}\n", status_code=status, headers=SECURITY_HEADERS)


class Guard:
    """ASGI middleware: every request passes check() or is refused before the app sees it."""

    def __init__(self, app: Any, keys: Secrets, touched: Callable[[], None] | None = None) -> None:
        self.app, self.keys, self.touched = app, keys, touched

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.touched:
            self.touched()
        request = Request(scope, receive)
        refused = await self.check(request)
        if refused is not None:
            await refused(scope, receive, send)
            return

        static = request.url.path.startswith("/static/")

        async def with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                extra = {**SECURITY_HEADERS, **(STATIC_CACHE if static else {})}
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower().decode() not in extra]
                message["headers"] = headers + [(k.encode(), v.encode()) for k, v in extra.items()]
            await send(message)

        await self.app(scope, _replay(request._body) if hasattr(request, "_body") else receive, with_headers)

    async def check(self, request: Request) -> Response | None:
        if request.headers.get("host", "") not in self.keys.hosts:
            return _refuse(403, "unknown Host header (open the URL `memory ui` printed)")
        given = request.query_params.get("token")
        if given is not None:
            if not _same(given, self.keys.token):
                return _refuse(403, "wrong access token")
            return self._enter(request)
        if not _same(request.cookies.get(self.keys.cookie), self.keys.token):
            return _refuse(403, "no access token: open the URL `memory ui` printed")
        if request.method in SAFE_METHODS:
            return None
        return await self._check_change(request)

    def _enter(self, request: Request) -> Response:
        """The token from the printed URL becomes a cookie, and the URL loses it (history, Referer)."""
        rest = {k: v for k, v in parse_qs(request.url.query).items() if k != "token"}
        target = request.url.path + (f"?{urlencode(rest, doseq=True)}" if rest else "")
        response = RedirectResponse(target, status_code=303)
        response.set_cookie(self.keys.cookie, self.keys.token, httponly=True, samesite="strict", path="/")
        return response

    async def _check_change(self, request: Request) -> Response | None:
        origin = request.headers.get("origin")
        if origin is not None and origin.split("://", 1)[-1] not in self.keys.hosts:
            return _refuse(403, "a change from another site")
        body = await request.body()  # kept on the request: the app is handed it again (_replay)
        if len(body) > MAX_BODY:
            return _refuse(413, "request too large")
        form = parse_qs(body.decode("utf-8", "replace"))
        sent = request.headers.get("x-csrf-token") or (form.get("csrf") or [None])[0]
        if not _same(sent, self.keys.csrf):
            return _refuse(403, "missing or wrong CSRF token")
        return None


def _replay(body: bytes) -> Callable[[], Awaitable[dict[str, Any]]]:
    """A receive() that hands the app the body this middleware already read."""
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive
