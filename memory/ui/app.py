"""The viewer's routes (Starlette) and its server (uvicorn on a loopback socket, stopped by Ctrl-C or after
MEMORY_UI_IDLE_MINUTES without a request)."""

from __future__ import annotations

import os
import socket
import threading
import time
from typing import Any
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from memory.base.timeparse import parse_when
from memory.recall.search import Filters
from memory.store import edit
from memory.ui import data, pages
from memory.ui.guard import Guard, Secrets, loopback_only

STATIC = os.path.join(os.path.dirname(__file__), "static")
LIMIT = 50  # hits a search page lists


class Viewer:
    """The app's state: the data dir's projects and the secrets."""

    def __init__(self, places: data.Places, keys: Secrets) -> None:
        self.places, self.keys = places, keys
        self.last_request = time.monotonic()

    def touched(self) -> None:
        self.last_request = time.monotonic()

    def ctx(self, request: Request) -> tuple[pages.Ctx, Any]:
        ws = self.places.get(request.query_params.get("p"))
        projects = self.places.projects()
        if ws is None:
            return pages.Ctx("", "", projects, self.keys.csrf), None
        return pages.Ctx(ws.project.key, ws.project.name, projects, self.keys.csrf), ws


def _args(request: Request) -> dict[str, Any]:
    q = request.query_params
    mode = q.get("mode") if q.get("mode") in ("hybrid", "keyword") else "hybrid"
    flag = q.get("flag") if q.get("flag") in ("flagged", "clean") else "any"
    return {"q": q.get("q", ""), "mode": mode, "type": q.get("type", ""), "since": q.get("since", ""),
            "until": q.get("until", ""), "session": q.get("session", ""), "flag": flag}


def _filters(a: dict[str, Any]) -> Filters:
    def day(value: str) -> float | None:
        try:
            return parse_when(value) if value else None
        except ValueError:
            return None

    until = day(a["until"])
    return Filters(types=[a["type"]] if a["type"] else None, since=day(a["since"]),
                   until=until + 86400 if until is not None and len(a["until"]) == 10 else until,  # the whole day
                   session_id=a["session"] or None)


def routes(v: Viewer) -> list[Any]:
    """The pages are plain functions: Starlette runs them in its threadpool, off the one event loop, so a
    search that waits up to 2 s for a starting or busy worker, or a slow read, holds up no other request
    (each thread has its own SQLite connections: data.Places)."""

    def search(request: Request) -> Response:
        ctx, ws = v.ctx(request)
        if ws is None:
            return HTMLResponse(pages.empty_page(ctx))
        a = _args(request)
        rows, answered = data.search(ws, a["q"], a["mode"], _filters(a), a["flag"], LIMIT)
        return HTMLResponse(pages.search_page(ctx, a, rows, answered, request.query_params.get("done", "")))

    def memory(request: Request) -> Response:
        ctx, ws = v.ctx(request)
        m = data.memory(ws, request.path_params["id"]) if ws is not None else None
        if m is None:
            return HTMLResponse(pages.layout(ctx, "not found", "<h1>No such memory</h1>"), status_code=404)
        return HTMLResponse(pages.memory_page(ctx, m, request.query_params.get("done", "")))

    async def change(request: Request) -> Response:
        form = await request.form()  # read on the loop; the change itself runs in the threadpool
        mid, verb = request.path_params["id"], request.path_params["verb"]
        got = await run_in_threadpool(_change, v.places, str(form.get("p") or request.query_params.get("p") or ""),
                                      mid, verb, form)
        if got is None:
            return HTMLResponse("no project", status_code=404)
        key, done = quote(got[0]), got[1]
        if verb == "delete" and done.startswith("deleted"):
            return RedirectResponse(f"/?p={key}&done={quote(done)}", status_code=303)
        return RedirectResponse(f"/m/{mid}?p={key}&done={quote(done)}", status_code=303)

    def sessions(request: Request) -> Response:
        ctx, ws = v.ctx(request)
        return HTMLResponse(pages.sessions_page(ctx, data.sessions(ws) if ws is not None else []))

    def session(request: Request) -> Response:
        ctx, ws = v.ctx(request)
        sid = request.path_params["sid"]
        head, events = data.timeline(ws, sid) if ws is not None else (None, [])
        return HTMLResponse(pages.session_page(ctx, sid, head, events))

    def stats(request: Request) -> Response:
        ctx, ws = v.ctx(request)
        if ws is None:
            return HTMLResponse(pages.empty_page(ctx))
        return HTMLResponse(pages.stats_page(ctx, data.stats(ws), request.query_params.get("done", "")))

    async def extraction(request: Request) -> Response:
        """The person's choice of extractor (the guard checked the token, the origin and the CSRF token)."""
        form = await request.form()
        done = await run_in_threadpool(data.choose_extraction, v.places.home, str(form.get("extraction") or ""))
        key = quote(str(form.get("p") or ""))
        return RedirectResponse(f"/stats?p={key}&done={quote(done)}", status_code=303)

    def redactions(request: Request) -> Response:
        ctx, ws = v.ctx(request)
        if ws is None:
            return HTMLResponse(pages.empty_page(ctx))
        days = data.stats_days(30)
        return HTMLResponse(pages.redactions_page(ctx, data.redactions(ws), days))

    return [Route("/", search), Route("/m/{id:int}", memory), Route("/m/{id:int}/{verb}", change, methods=["POST"]),
            Route("/sessions", sessions), Route("/s/{sid}", session), Route("/stats", stats),
            Route("/settings/extraction", extraction, methods=["POST"]),
            Route("/redactions", redactions),
            Mount("/static", StaticFiles(directory=STATIC), name="static")]


def _change(places: data.Places, key: str, mid: int, verb: str, form: Any) -> tuple[str, str] | None:
    """One action on a memory of the project `key`: the project's key and what was done, in words."""
    ws = places.get(key)
    if ws is None:
        return None
    try:
        return ws.project.key, _apply(ws, mid, verb, form)
    except edit.EditError as exc:
        return ws.project.key, f"not changed: {exc}"


def _apply(ws: Any, mid: int, verb: str, form: Any) -> str:
    """One action on a memory; returns what was done, in words."""
    if verb == "delete":
        from memory.recall import vectors
        from memory.store.evict import remove

        removed, _ = remove(ws, [mid], vectors.delete)
        return f"deleted #{mid}" if removed else f"no memory #{mid}"
    if verb in ("pin", "unpin"):
        edit.set_pinned(ws.db, mid, verb == "pin")
    elif verb in ("share", "unshare"):
        from memory.team import outbox

        if not outbox.share(ws.db, [mid], "team" if verb == "share" else "personal"):
            return f"no memory #{mid}"
        if outbox.link_row(ws.db) is None:  # only the scope changed: say so, and how to link
            return f"scope set to {'team' if verb == 'share' else 'personal'}; {outbox.UNLINKED}"
    elif verb == "type":
        edit.set_type(ws.db, mid, str(form.get("type", "")))
    elif verb == "edit":
        edit.edit(ws.db, mid, str(form.get("title", "")), str(form.get("content", "")))
    else:
        return f"unknown action {verb}"
    return {"pin": "pinned", "unpin": "unpinned", "share": "shared with the team", "unshare": "kept personal",
            "type": "type changed", "edit": "saved"}[verb]


def build(places: data.Places, keys: Secrets) -> tuple[Any, Viewer]:
    v = Viewer(places, keys)
    return Guard(Starlette(routes=routes(v)), keys, v.touched), v


def bind(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """A listening socket on a loopback address (port 0: a free one)."""
    host = loopback_only(host)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(64)
    sock.set_inheritable(True)
    return sock


def serve(sock: socket.socket, places: data.Places, keys: Secrets, idle_s: float) -> None:
    """Run until Ctrl-C (uvicorn's handler) or until idle_s pass without a request."""
    import uvicorn

    app, v = build(places, keys)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off"))

    def watch() -> None:
        while not server.should_exit:
            time.sleep(min(5.0, idle_s / 4))
            if time.monotonic() - v.last_request > idle_s:
                server.should_exit = True

    if idle_s > 0:
        threading.Thread(target=watch, daemon=True, name="ui-idle").start()
    try:
        server.run(sockets=[sock])
    finally:
        places.close()
