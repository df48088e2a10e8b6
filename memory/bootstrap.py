"""An installed plugin builds its own venv in the data dir, once, in a detached process.

`${CLAUDE_PLUGIN_ROOT}` changes with every update while `${CLAUDE_PLUGIN_DATA}` persists, so the venv
lives in the data dir; until it is ready, the hooks run on plain python3 (stdlib only). This runs in the
SessionStart hook, so it uses os.path only and imports subprocess just when it has to start the setup.
"""

from __future__ import annotations

import os

from memory.config import env
from memory.sha import sha256  # not hashlib: it loads OpenSSL (~3 ms of every SessionStart)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _fingerprint() -> str:
    try:
        with open(os.path.join(ROOT, "pyproject.toml"), "rb") as fh:
            return sha256(fh.read()).hexdigest()[:16]
    except OSError:
        return "unknown"


def ensure_venv() -> bool:
    """Start the setup when the plugin is installed (not a checkout with .venv) and its venv is missing or
    stale. Returns True when a setup was started."""
    data = os.environ.get("CLAUDE_PLUGIN_DATA")
    if not data or env("MEMORY_AUTO_SETUP") == "0" or os.path.exists(os.path.join(ROOT, ".venv")):
        return False
    venv = os.path.join(data, "venv")
    marker = f".memory-setup-{_fingerprint()}"
    if os.path.exists(os.path.join(venv, marker)) or os.path.exists(os.path.join(data, "venv.setup-running")):
        return False
    setup = os.path.join(ROOT, "scripts", "setup")
    if not os.path.exists(setup):
        return False
    import subprocess  # only on the rare path that starts the setup

    logs = os.path.join(data, "logs")
    os.makedirs(logs, mode=0o700, exist_ok=True)
    with open(os.path.join(logs, "setup.log"), "ab") as fh:
        subprocess.Popen(
            [setup, "--venv", venv, "--marker", marker],
            stdin=subprocess.DEVNULL, stdout=fh, stderr=fh, start_new_session=True, close_fds=True,
        )
    return True
