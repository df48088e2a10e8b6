"""An installed plugin builds its own venv in the data dir, once, in a detached process.

`${CLAUDE_PLUGIN_ROOT}` changes with every update while `${CLAUDE_PLUGIN_DATA}` persists, so the venv
lives in the data dir; until it is ready, the hooks run on plain python3 (stdlib only)."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

from memory.config import env

ROOT = Path(__file__).resolve().parent.parent


def _fingerprint() -> str:
    try:
        return hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()[:16]
    except OSError:
        return "unknown"


def ensure_venv() -> bool:
    """Start the setup when the plugin is installed (not a checkout with .venv) and its venv is missing or
    stale. Returns True when a setup was started."""
    data = os.environ.get("CLAUDE_PLUGIN_DATA")
    if not data or env("MEMORY_AUTO_SETUP") == "0" or (ROOT / ".venv").exists():
        return False
    venv = Path(data) / "venv"
    marker = venv / f".memory-setup-{_fingerprint()}"
    if marker.exists() or (Path(data) / "venv.setup-running").exists():
        return False
    setup = ROOT / "scripts" / "setup"
    if not setup.exists():
        return False
    log = Path(data) / "logs" / "setup.log"
    log.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with open(log, "ab") as fh:
        subprocess.Popen(
            [str(setup), "--venv", str(venv), "--marker", marker.name],
            stdin=subprocess.DEVNULL, stdout=fh, stderr=fh, start_new_session=True, close_fds=True,
        )
    return True
