"""`memory ui`: the local web viewer (memory/ui), in the foreground or detached (what /memory:ui runs)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import click

from memory.base.config import data_home, env_int
from memory.cli.common import project_option, workspace

STATE = "ui.json"  # in the data dir, owner-only: the running viewer's pid and URL (token included)
START_WAIT_S = 20.0  # a detached start waits this long for the URL (importing starlette and uvicorn: ~0.3 s)


def _browser_wanted() -> bool:
    """Only where a graphical browser can open: on a bare terminal (ssh) `webbrowser` would run lynx or w3m
    in it, inside the user's session."""
    return sys.platform in ("darwin", "win32") or bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _running(home: str) -> str | None:
    """The URL of a viewer already serving this data dir, if its process is alive and its port answers."""
    import socket

    try:
        with open(os.path.join(home, STATE), encoding="utf-8") as fh:
            state = json.load(fh)
        os.kill(int(state["pid"]), 0)
        socket.create_connection(("127.0.0.1", int(state["port"])), timeout=0.5).close()
        return str(state["url"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


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
@click.option("--port", default=0, type=click.IntRange(0, 65535), help="Port on 127.0.0.1 (default: a free one).")
@click.option("--no-browser", is_flag=True, help="Do not open a browser; only print the URL.")
@click.option("--detach", is_flag=True, help="Start in the background, print the URL and return (/memory:ui).")
@project_option
def ui(port: int, no_browser: bool, detach: bool, project: str | None) -> None:
    """A local web viewer of the memory: search, memories, sessions, stats (127.0.0.1 only)."""
    if detach:
        _detach(port, no_browser, project)
        return
    from memory.store.workspace import write_private
    from memory.ui import app, data
    from memory.ui.guard import Secrets

    home = data_home()
    ws = workspace(project)
    try:
        sock = app.bind("127.0.0.1", port)
    except OSError as exc:
        raise click.ClickException(f"cannot listen on 127.0.0.1:{port}: {exc.strerror}") from None
    keys = Secrets(sock.getsockname()[1])
    url = keys.url()
    click.echo(url)  # the first line on stdout, for scripts and `--detach`
    sys.stdout.flush()
    write_private(os.path.join(home, STATE), json.dumps({"pid": os.getpid(), "port": keys.port, "url": url}))
    idle = env_int("MEMORY_UI_IDLE_MINUTES") * 60
    click.echo(f"memory ui: serving {home} on 127.0.0.1:{keys.port}; Ctrl-C stops it"
               + (f", and so do {idle // 60} idle minutes" if idle else ""), err=True)
    if not no_browser and _browser_wanted():
        import webbrowser

        webbrowser.open(url)
    try:
        app.serve(sock, data.Places(home, ws.project.key), keys, idle)
    except KeyboardInterrupt:  # uvicorn stops gracefully, then raises the Ctrl-C again: a normal end here
        click.echo("memory ui: stopped", err=True)
    finally:
        try:
            os.unlink(os.path.join(home, STATE))
        except OSError:
            pass


COMMANDS = [ui]
