"""`memory ui`: the local web viewer (memory/ui), in the foreground or detached (what /memory:ui runs)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from typing import Any

import click

from memory.base.config import data_home, env_int
from memory.cli import processes
from memory.cli.common import project_option, workspace

STATE = "ui.json"  # in the data dir, owner-only: the running viewer's pid and URL (token included)
STOP_WAIT_S = 10.0  # uvicorn's graceful shutdown: open connections are closed first
START_WAIT_S = 20.0  # a detached start waits this long for the URL (importing starlette and uvicorn: ~0.3 s)


def _browser_wanted() -> bool:
    """Only where a graphical browser can open: on a bare terminal (ssh) `webbrowser` would run lynx or w3m
    in it, inside the user's session."""
    return sys.platform in ("darwin", "win32") or bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _state(home: str) -> dict[str, Any] | None:
    """ui.json as the running viewer wrote it; one whose process is gone (killed hard, or a reboot) is
    removed: it held a dead viewer's token."""
    path = os.path.join(home, STATE)
    try:
        with open(path, encoding="utf-8") as fh:
            state = json.load(fh)
        pid = int(state["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if processes.alive(pid) and processes.ours(pid):
        return dict(state)
    _forget(home)
    return None


def _forget(home: str) -> None:
    try:
        os.unlink(os.path.join(home, STATE))
    except OSError:
        pass


def _running(home: str) -> str | None:
    """The URL of a viewer already serving this data dir, if its process is alive and its port answers."""
    import socket

    state = _state(home)
    if state is None:
        return None
    try:
        socket.create_connection(("127.0.0.1", int(state["port"])), timeout=0.5).close()
        return str(state["url"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _stop(home: str) -> str:
    """`memory ui stop`: SIGTERM to the viewer ui.json names, and wait until it has exited (it removes
    ui.json itself); killed when it has not within STOP_WAIT_S."""
    state = _state(home)
    if state is None:
        return "not running"
    pid = int(state["pid"])
    processes.signal_pid(pid, signal.SIGTERM)
    gone = lambda: not processes.alive(pid)  # noqa: E731
    said = f"stopped (pid {pid})"
    if not processes.wait_until(gone, STOP_WAIT_S):
        if not processes.kill_hard(pid, gone, STOP_WAIT_S):
            raise click.ClickException(f"the viewer (pid {pid}) did not exit, not even killed")
        said = f"killed pid {pid}: it had not exited {STOP_WAIT_S:.0f} s after SIGTERM"
    _forget(home)  # a viewer killed hard could not remove it
    return said


def _detach(port: int, no_browser: bool, project: str | None) -> None:
    home = data_home()
    url = _running(home)
    if url:
        click.echo(url)
        click.echo("memory: the viewer was already running", err=True)
        return
    os.makedirs(home, mode=0o700, exist_ok=True)
    log = os.path.join(home, "ui.log")
    argv = [sys.executable, "-m", "memory", "ui", "--port", str(port)]
    argv += ["--no-browser"] if no_browser else []
    argv += ["--project", project] if project else []
    with open(log, "w", encoding="utf-8") as out:
        os.chmod(log, 0o600)
        subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                         start_new_session=True, close_fds=True)
    deadline = time.monotonic() + START_WAIT_S
    while time.monotonic() < deadline:
        with open(log, encoding="utf-8", errors="replace") as fh:
            first = fh.readline()
        if first.endswith("\n"):
            if first.startswith("http://"):
                click.echo(first.strip())
                return
            raise click.ClickException(f"the viewer did not start: {first.strip()} (see {log})")
        time.sleep(0.05)
    raise click.ClickException(f"the viewer did not print its URL within {START_WAIT_S:.0f} s (see {log})")


@click.command(name="ui")
@click.argument("action", type=click.Choice(["stop"]), required=False)
@click.option("--port", default=0, type=click.IntRange(0, 65535), help="Port on 127.0.0.1 (default: a free one).")
@click.option("--no-browser", is_flag=True, help="Do not open a browser; only print the URL.")
@click.option("--detach", is_flag=True, help="Start in the background, print the URL and return (/memory:ui).")
@project_option
def ui(action: str | None, port: int, no_browser: bool, detach: bool, project: str | None) -> None:
    """A local web viewer of the memory: search, memories, sessions, stats (127.0.0.1 only); `stop` stops
    the one serving this data dir (a detached one included) and waits until it has exited."""
    if action == "stop":
        click.echo(_stop(data_home()))
        return
    if detach:
        _detach(port, no_browser, project)
        return
    from memory.ui import app
    from memory.ui.guard import Secrets

    home = data_home()
    ws = workspace(project)
    try:
        sock = app.bind("127.0.0.1", port)
    except OSError as exc:
        raise click.ClickException(f"cannot listen on 127.0.0.1:{port}: {exc.strerror}") from None
    keys = Secrets(sock.getsockname()[1])
    # SIGTERM (`memory ui stop`, kill) and SIGHUP end it as Ctrl-C does, through the finally below that removes
    # ui.json: uvicorn re-raises a signal it caught once it has stopped, which by default ended the process there.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.default_int_handler)
    try:
        _serve(home, ws.project.key, sock, keys, no_browser)
    except KeyboardInterrupt:  # uvicorn stops gracefully, then raises the Ctrl-C again: a normal end here
        click.echo("memory ui: stopped", err=True)
    finally:
        _forget(home)


def _serve(home: str, key: str, sock: Any, keys: Any, no_browser: bool) -> None:
    from memory.store.workspace import write_private
    from memory.ui import app, data

    url = keys.url()
    write_private(os.path.join(home, STATE), json.dumps({"pid": os.getpid(), "port": keys.port, "url": url}))
    click.echo(url)  # the first line on stdout, for scripts and `--detach`: ui.json is there by then
    sys.stdout.flush()
    idle = env_int("MEMORY_UI_IDLE_MINUTES") * 60
    click.echo(f"memory ui: serving {home} on 127.0.0.1:{keys.port}; Ctrl-C stops it"
               + (f", and so do {idle // 60} idle minutes" if idle else ""), err=True)
    if not no_browser and _browser_wanted():
        import webbrowser

        webbrowser.open(url)
    app.serve(sock, data.Places(home, key), keys, idle)


COMMANDS = [ui]
