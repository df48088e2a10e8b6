"""Which project an event belongs to: the git root (or its remote), not the folder name.

Read straight from the filesystem (no `git` subprocess, no pathlib): a hook cannot afford either.
"""

from __future__ import annotations

import os
import re

from memory.sha import sha256


class Project:
    __slots__ = ("key", "name", "root", "remote")

    def __init__(self, key: str, name: str, root: str, remote: str | None) -> None:
        self.key = key  # stable id, the folder name of the project's database
        self.name = name  # human name (the root folder's or the remote's)
        self.root = root  # git root, or the folder itself outside git
        self.remote = remote

    def __repr__(self) -> str:
        return f"Project({self.key!r}, root={self.root!r})"


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


_REMOTE = re.compile(r'\[remote "origin"\][^\[]*?url\s*=\s*(\S+)', re.S)


def _origin_url(git_dir: str) -> str | None:
    text = _read(os.path.join(git_dir, "config"))
    m = _REMOTE.search(text) if text else None
    return m.group(1) if m else None


def normalise_remote(url: str) -> str:
    """git@host:o/r.git, https://user:pw@host/o/r and ssh://host/o/r all name the same repository."""
    u = url.strip()
    u = re.sub(r"^[a-z+]+://", "", u)
    u = re.sub(r"^[^@/]+@", "", u)
    u = u.replace(":", "/", 1) if re.match(r"^[^/]+:[^/]", u) else u
    u = re.sub(r"\.git/?$", "", u).rstrip("/")
    return u.lower()


def _slug(name: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")
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
