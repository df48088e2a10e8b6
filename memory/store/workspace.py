"""A project's place in the data dir: projects/<key>/memory.db, session-state.json, project.json."""

from __future__ import annotations

import os
import sqlite3

from memory.base.config import data_home
from memory.base.project import Project, identify
from memory.fastpath import jsonlite
from memory.store.db import DatabaseCorrupt, connect


def write_private(path: str, text: str) -> None:
    """Atomic, owner-only write (a reader never sees half a file)."""
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)  # a full disk must not keep half a file taking the space
        except OSError:
            pass
        raise


def secure_data_dir(home: str) -> int:
    """Make the data dir and everything in it owner-only (folders 0700, files without group or other
    bits) when the data dir or its projects/ folder is not: installs made before every entry point set
    umask 077 had 0755 folders, so other local users could list project names. Two stat calls when all
    is well; returns how many modes were changed. Symlinks are skipped, never followed."""
    import stat

    try:
        if all(os.stat(p).st_mode & 0o077 == 0 for p in (home, os.path.join(home, "projects"))
               if os.path.lexists(p)):
            return 0
    except OSError:
        return 0
    changed = 0
    for folder, _dirs, files in os.walk(home):
        for name in [None, *files]:
            path = folder if name is None else os.path.join(folder, name)
            try:
                st = os.lstat(path)
                if stat.S_ISLNK(st.st_mode) or st.st_mode & 0o077 == 0:
                    continue
                os.chmod(path, 0o700 if stat.S_ISDIR(st.st_mode) else stat.S_IMODE(st.st_mode) & 0o700)
                changed += 1
            except OSError:
                continue
    return changed


class Workspace:
    def __init__(self, project: Project, home: str | None = None) -> None:
        self.project = project
        self.home = home or data_home()
        self.dir = os.path.join(self.home, "projects", project.key)
        self.db_path = os.path.join(self.dir, "memory.db")
        self.state_path = os.path.join(self.dir, "session-state.json")
        self._db: sqlite3.Connection | None = None

    @classmethod
    def for_dir(cls, folder: str | None, home: str | None = None) -> Workspace:
        return cls(identify(folder), home)

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            fresh = not os.path.exists(self.db_path)
            try:
                self._db = connect(self.db_path)
            except DatabaseCorrupt as exc:  # moved aside; go on with a fresh one and tell the user once
                from memory.base import notices

                notices.add("corrupt-db", str(exc))
                self._db = connect(self.db_path)
                fresh = True
            if fresh or not os.path.exists(os.path.join(self.dir, "project.json")):
                write_private(os.path.join(self.dir, "project.json"), jsonlite.dumps(
                    {"key": self.project.key, "name": self.project.name, "root": self.project.root,
                     "remote": self.project.remote}, indent=2))
        return self._db

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


def all_projects(home: str | None = None) -> list[dict[str, str]]:
    import json

    base = os.path.join(home or data_home(), "projects")
    out = []
    for key in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        try:
            with open(os.path.join(base, key, "project.json"), encoding="utf-8") as fh:
                out.append(json.load(fh))
        except (OSError, ValueError):
            continue
    return out
