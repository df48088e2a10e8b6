"""Where a project's team server is, and keeping its password out of every text the plugin writes.

The URL comes from MEMORY_TEAM_URL, else from `<data dir>/team.json` (owner-only, written by
`memory team init`). Only the redacted form (`postgresql://alice:***@host/db`) is ever printed, logged or
stored in SQLite; `scrub` removes the URL and its password from any text (exception messages included:
libpq and psycopg quote the connection string in some of theirs)."""

from __future__ import annotations

import json
import os
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

from memory.base.config import env, env_int

if TYPE_CHECKING:  # store.workspace imports nothing of team, but config is read before a project is open
    from memory.store.workspace import Workspace

SCHEMES = ("postgresql", "postgres")
DEFAULT_TYPES = ("decision", "bugfix", "discovery", "learning")


class TeamError(Exception):
    """A team-sync failure whose message is safe to show (no password in it)."""


def config_path(home: str) -> str:
    return os.path.join(home, "team.json")


def check_url(url: str) -> str:
    """The URL if it looks like a PostgreSQL URL, else a TeamError saying what to give."""
    url = (url or "").strip()
    parts = urlsplit(url) if "://" in url else None
    if parts is None or parts.scheme not in SCHEMES:
        raise TeamError(f"not a PostgreSQL URL: {redact(url) or '(empty)'}; give "
                        "postgresql://USER:PASSWORD@HOST:PORT/DATABASE (or ?host=/socket/dir)")
    host = parts.hostname or parse_qs(parts.query).get("host", [""])[0]
    if not host:
        raise TeamError(f"no host in {redact(url)}: give postgresql://USER@HOST/DATABASE or "
                        "postgresql://USER@/DATABASE?host=/socket/dir")
    try:
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        raise TeamError(f"bad port in {redact(url)}") from None
    return url


def redact(url: str) -> str:
    """postgresql://alice:secret@db/x -> postgresql://alice:***@db/x; a password in the query too."""
    if not url:
        return ""
    text = re.sub(r"(://[^:/@?#]*):[^@/?#]*@", r"\1:***@", url)
    return re.sub(r"(?i)([?&]password=)[^&#]*", r"\1***", text)


def password(url: str) -> str | None:
    try:
        parts = urlsplit(url)
        pw = parts.password
        if pw is None:
            pw = parse_qs(parts.query).get("password", [None])[0]
    except ValueError:
        return None
    return unquote(pw) if pw else None


def scrub(text: str, url: str | None) -> str:
    """`text` with the URL (redacted form) and its password (raw and URL-encoded) taken out."""
    if not url:
        return text
    text = text.replace(url, redact(url))
    pw = password(url)
    if pw:
        for form in sorted({pw, quote(pw, safe="")}, key=len, reverse=True):
            text = text.replace(form, "***")
    return text


def _load(home: str) -> dict[str, Any]:
    try:
        with open(config_path(home), encoding="utf-8") as fh:
            data = json.load(fh)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def entry(ws: Workspace) -> dict[str, Any]:
    """This project's entry in team.json (url, project_id, share_handoffs), or {}."""
    return dict((_load(ws.home).get("projects") or {}).get(ws.project.key) or {})


def url_for(ws: Workspace) -> str | None:
    """MEMORY_TEAM_URL, else the project's entry in team.json, else None (team sync off)."""
    return env("MEMORY_TEAM_URL").strip() or entry(ws).get("url") or None


def save_entry(ws: Workspace, **fields: Any) -> None:
    from memory.store.workspace import write_private

    data = _load(ws.home)
    projects = data.setdefault("projects", {})
    projects[ws.project.key] = {**(projects.get(ws.project.key) or {}), **fields}
    write_private(config_path(ws.home), json.dumps(data, indent=2))


def project_id(ws: Workspace, given: str | None = None) -> str:
    """The project's name on the team server: the same on every machine. Given, else MEMORY_TEAM_PROJECT,
    else team.json, else the normalised git remote (github.com/org/repo); a project without a remote
    needs one of the others."""
    pid = given or env("MEMORY_TEAM_PROJECT").strip() or entry(ws).get("project_id") or ws.project.remote
    if not pid:
        raise TeamError(f"project {ws.project.name} has no git remote to name it on the team server: give "
                        "--project-id NAME (the same on every machine) or set MEMORY_TEAM_PROJECT")
    return str(pid)


def team_types() -> list[str]:
    raw = env("MEMORY_TEAM_TYPES").replace(",", " ").split()
    return raw or list(DEFAULT_TYPES)


def batch_size() -> int:
    return max(1, env_int("MEMORY_TEAM_BATCH"))
