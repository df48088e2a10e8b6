"""Paths given by a model or a user (MCP arguments) confined to the project.

Rejected: `..` anywhere, `~`, NUL bytes, absolute paths outside the project, and anything whose real path
(symlinks resolved) leaves it. The caller gets the resolved path, so it never opens the unresolved one.
"""

from __future__ import annotations

import os
import re


class PathRejected(ValueError):
    """A path that would reach outside the folders a tool may use."""


def inside(path: str, folder: str) -> bool:
    folder = folder.rstrip(os.sep) or os.sep
    return path == folder or path.startswith(folder + os.sep) or folder == os.sep


def confine(path: str, root: str) -> str:
    """The real path of `path` (relative to `root`, or absolute) if it stays inside `root`."""
    if not isinstance(path, str) or not path.strip():
        raise PathRejected("a path must be a non-empty string")
    if "\x00" in path:
        raise PathRejected("a path must not contain NUL bytes")
    if path.startswith("~"):
        raise PathRejected(f"{path!r}: home-relative paths are not accepted; give a path inside the project")
    if ".." in re.split(r"[\\/]+", path):
        raise PathRejected(f"{path!r}: '..' is not allowed in paths")
    if not root:
        raise PathRejected("there is no project folder to resolve paths against")
    real_root = os.path.realpath(root)
    real = os.path.realpath(path if os.path.isabs(path) else os.path.join(real_root, path))
    if not inside(real, real_root):
        raise PathRejected(f"{path!r} is outside the project ({real_root})")
    return real
