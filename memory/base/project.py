"""Which project an event belongs to: the git root (or its remote), not the folder name.

Read straight from the filesystem (no `git` subprocess, no pathlib): a hook cannot afford either.
"""

from __future__ import annotations

import os

from memory.fastpath.sha import sha256


class Project:
    __slots__ = ("key", "name", "root", "remote")

    def __init__(self, key: str, name: str, root: str, remote: str | None) -> None:
        self.key = key  # stable id, the folder name of the project's database
        self.name = name  # human name (the root folder's or the remote's)
        self.root = root  # git root, or the folder itself outside git
        self.remote = remote

    def __repr__(self) -> str:
        return f"Project({self.key!r}, root={self.root!r})"


def project_folder(fallback: str | None = None) -> str | None:
    """The folder whose project is meant: MEMORY_PROJECT_DIR, else CLAUDE_PROJECT_DIR (as Claude Code sets
    it for hooks, the MCP server and the Bash tool; it stays put when the agent cds), else `fallback` (an
    event's cwd, the current directory)."""
    return os.environ.get("MEMORY_PROJECT_DIR") or os.environ.get("CLAUDE_PROJECT_DIR") or fallback


def event_folder(cwd: str) -> str | None:
    """The folder whose project a hook event belongs to: project_folder, with the event's cwd last."""
    return project_folder(cwd or None)


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return None


def _git_dir(root: str) -> str | None:
    dot = os.path.join(root, ".git")
    if os.path.isdir(dot):
        return dot
    text = _read(dot)  # worktree or submodule: "gitdir: <path>"
    if text is None or not text.startswith("gitdir:"):
        return None
    gd = os.path.join(root, text[7:].strip())
    common = _read(os.path.join(gd, "commondir"))
    if common:
        return os.path.normpath(os.path.join(gd, common.strip()))
    return gd


def find_git_root(start: str) -> str | None:
    folder = start
    while True:
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


_ORIGIN = '[remote "origin"]'


def _origin_url(git_dir: str) -> str | None:
    text = _read(os.path.join(git_dir, "config"))
    return origin_url(text) if text else None


def origin_url(text: str) -> str | None:
    """The url of [remote "origin"] in a git config: the first `url` after the header, before the next
    section (string methods, not a regex: re costs a hook process a few ms to import and compile)."""
    start = text.find(_ORIGIN)
    while start >= 0:
        body = start + len(_ORIGIN)
        end = text.find("[", body)
        section = text[body:] if end < 0 else text[body:end]
        at = section.find("url")
        while at >= 0:
            rest = text[body + at + 3:].lstrip()
            if rest.startswith("="):
                value = rest[1:].lstrip()
                if value:
                    return value.split(None, 1)[0]
            at = section.find("url", at + 1)
        start = text.find(_ORIGIN, start + 1)
    return None


_URL_SCHEME = frozenset("abcdefghijklmnopqrstuvwxyz+")


def normalise_remote(url: str) -> str:
    """git@host:o/r.git, https://user:pw@host/o/r and ssh://host/o/r all name the same repository."""
    u = url.strip()
    scheme = u.find("://")
    if scheme > 0 and set(u[:scheme]) <= _URL_SCHEME:
        u = u[scheme + 3:]
    at = next((i for i, c in enumerate(u) if c in "@/"), -1)
    if at > 0 and u[at] == "@":
        u = u[at + 1:]
    slash = u.find("/")
    head = u if slash < 0 else u[:slash]
    # host:path (scp syntax): a colon after at least one character, before the first slash, and not
    # followed by a slash
    if any(c == ":" and i > 0 and i + 1 < len(u) and u[i + 1] != "/" for i, c in enumerate(head)):
        u = u.replace(":", "/", 1)
    if u.endswith(".git/"):
        u = u[:-5]
    elif u.endswith(".git"):
        u = u[:-4]
    return u.rstrip("/").lower()


_SLUG_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")


def _slug(name: str) -> str:
    out: list[str] = []
    for c in name:
        if c in _SLUG_CHARS:
            out.append(c)
        elif not out or out[-1] != "\0":
            out.append("\0")  # a run of other characters becomes one "-"
    s = "".join(out).replace("\0", "-").strip("-.")
    return (s or "project")[:40]


def identify(path: str | None) -> Project:
    start = os.path.realpath(os.path.expanduser(path or os.getcwd()))
    root = find_git_root(start)
    remote = None
    if root is not None:
        git_dir = _git_dir(root)
        url = _origin_url(git_dir) if git_dir else None
        remote = normalise_remote(url) if url else None
    base = root or start
    identity = f"remote:{remote}" if remote else f"path:{base}"
    digest = sha256(identity.encode()).hexdigest()[:10]
    name = remote.rsplit("/", 1)[-1] if remote else (os.path.basename(base) or "root")
    return Project(key=f"{_slug(name)}-{digest}", name=name, root=base, remote=remote)
