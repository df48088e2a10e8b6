"""An installed plugin builds its own venv in the data dir, once, in a detached process.

`${CLAUDE_PLUGIN_ROOT}` changes with every update while `${CLAUDE_PLUGIN_DATA}` persists, so the venv
lives in the data dir; until it is ready, the hooks run on plain python3 (stdlib only). scripts/setup
builds it aside and swaps it in with one rename, so `<data>/venv/bin/python` exists only once pip has
finished. This runs in the SessionStart hook, so it uses os.path only and imports subprocess just when it
has to start the setup.
"""

from __future__ import annotations

import os
import sys

from memory import ROOT, __version__  # the plugin folder
from memory.base.config import env
from memory.fastpath.sha import sha256  # not hashlib: it loads OpenSSL (~3 ms of every SessionStart)

RUNNING = "venv.setup-running"


def _fingerprint() -> str:
    """What a setup was made for: the dependencies (pyproject.toml) and the release (its version, which
    pyproject.toml reads from memory/__init__.py): an update of either sets the venv up again."""
    try:
        with open(os.path.join(ROOT, "pyproject.toml"), "rb") as fh:
            return sha256(fh.read() + __version__.encode()).hexdigest()[:16]
    except OSError:
        return "unknown"


def setup_running(data: str | None) -> bool:
    """True while scripts/setup builds the venv of this data dir. The file holds the setup's pid: a setup
    that was killed (a reboot) leaves it behind, and must not block the next attempt for ever."""
    if not data:
        return False
    try:
        with open(os.path.join(data, RUNNING), encoding="utf-8") as fh:
            pid = int(fh.read().strip() or 0)
    except (OSError, ValueError):
        return False
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def plugin_python() -> str | None:
    """The plugin's own venv interpreter, in the order of hooks/run: the data dir's (CLAUDE_PLUGIN_DATA, or
    from a terminal where it is unset the data dir the CLI found: memory.base.config.data_home), else a
    checkout's .venv; None until scripts/setup has made one (the MCP setup front waits for it)."""
    from memory.base.config import data_home

    for folder in (os.environ.get("CLAUDE_PLUGIN_DATA"), data_home()):
        if folder and os.path.isabs(folder) and os.access(os.path.join(folder, "venv", "bin", "python"), os.X_OK):
            return os.path.join(folder, "venv", "bin", "python")
    checkout = os.path.join(ROOT, ".venv", "bin", "python")
    return checkout if os.access(checkout, os.X_OK) else None


def venv_python() -> str | None:
    """The venv interpreter the hooks use (plugin_python), else this interpreter when it runs in a venv."""
    return plugin_python() or (sys.executable if sys.prefix != sys.base_prefix else None)


ROOT_FILE = "hooks-root"  # in the data dir: the plugin root the hooks last ran from (memory doctor shows it)


def record_root(home: str) -> None:
    """Note the root this hook runs from, when it changed: a directory marketplace runs the source folder,
    not the copy `memory doctor` may be started from (docs/install.md). One small read per SessionStart."""
    path = os.path.join(home, ROOT_FILE)
    try:
        with open(path, encoding="utf-8") as fh:
            if fh.read() == ROOT:
                return
    except OSError:
        pass
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(ROOT)
    except OSError:  # a read-only data dir: doctor says it does not know
        pass


def recorded_root(home: str) -> str | None:
    try:
        with open(os.path.join(home, ROOT_FILE), encoding="utf-8") as fh:
            return fh.read() or None
    except OSError:
        return None


def marker_name() -> str:
    """The file a complete venv of this plugin version holds (its dependencies' fingerprint)."""
    return f".memory-setup-{_fingerprint()}"


def setup_command(data: str) -> str:
    """The command that builds (or finishes) an installed plugin's venv in its data dir, as SessionStart does."""
    return f"{os.path.join(ROOT, 'scripts', 'setup')} --venv {os.path.join(data, 'venv')} --marker auto"


def ensure_venv() -> bool:
    """Start the setup when the plugin is installed (not a checkout with .venv) and its venv is missing or
    stale. Returns True when a setup was started."""
    data = os.environ.get("CLAUDE_PLUGIN_DATA")
    if not data or env("MEMORY_AUTO_SETUP") == "0" or os.path.exists(os.path.join(ROOT, ".venv")):
        return False
    venv = os.path.join(data, "venv")
    marker = marker_name()
    if os.path.exists(os.path.join(venv, marker)) or setup_running(data):
        return False
    setup = os.path.join(ROOT, "scripts", "setup")
    if not os.path.exists(setup):
        return False
    import subprocess  # only on the rare path that starts the setup

    logs = os.path.join(data, "logs")
    os.makedirs(logs, mode=0o700, exist_ok=True)
    with open(os.path.join(logs, "setup.log"), "ab") as fh:
        proc = subprocess.Popen(
            [setup, "--venv", venv, "--marker", marker],
            stdin=subprocess.DEVNULL, stdout=fh, stderr=fh, start_new_session=True, close_fds=True,
        )
    # Now, not when the setup gets to it: this very hook wakes the worker next, which must wait too.
    # (The setup writes its own pid, the same one: Popen execs the script.)
    with open(os.path.join(data, RUNNING), "w", encoding="utf-8") as fh:
        fh.write(f"{proc.pid}\n")
    return True
