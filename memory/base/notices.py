"""Problems the user should hear about once: a corrupt database moved aside, a data dir that cannot be
written. Hooks record them; SessionStart shows them to the user (systemMessage) and `memory doctor` lists
them; both clear them.

When the data dir itself cannot be written, they go to a per-user fallback folder: the runtime dir's, else the
temp dir's (memory/base/config.py fallback_dirs)."""

from __future__ import annotations

import os
import time

from memory.base.config import data_home, fallback_dirs
from memory.fastpath import jsonlite as json  # not the json package: it imports re (~5-10 ms a hook)

NAME = "notices.jsonl"


def fallback_spool_name() -> str:
    """The folder in the fallback dir that spools this data dir's events (memory/hook/spool.py): one per data dir."""
    from memory.fastpath.sha import sha256

    return "spool-" + sha256(data_home().encode()).hexdigest()[:12]


def private_fallback_dir(path: str) -> str | None:
    """A fallback folder, made if missing, when it is safe to write in: a real folder (not a symlink)
    owned by this user and private to them. In a shared temp dir another user could have made it first."""
    import stat

    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.lstat(path)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
            return None
        if st.st_mode & 0o077:
            os.chmod(path, 0o700)
        return path
    except OSError:
        return None


def _paths() -> list[str]:
    return [os.path.join(data_home(), NAME), *(os.path.join(d, NAME) for d in fallback_dirs())]


def add(kind: str, message: str) -> None:
    from memory.base.privacy import clean  # an error message may quote the event's text

    line = json.dumps({"at": time.time(), "kind": kind, "message": clean(message), "data_dir": data_home()}) + "\n"
    for i, path in enumerate(_paths()):
        try:
            if i == 0:
                os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
            elif private_fallback_dir(os.path.dirname(path)) is None:
                continue
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
            try:
                os.write(fd, line.encode())
            finally:
                os.close(fd)
            return
        except OSError:
            continue  # a read-only or full data dir, or a planted symlink: try the fallback


def pending() -> list[dict[str, object]]:
    """This data dir's notices (a fallback folder is shared by every data dir of the user)."""
    out: list[dict[str, object]] = []
    home = data_home()
    for path in _paths():
        try:
            with open(path, encoding="utf-8") as fh:
                for line in fh:
                    try:
                        item = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(item, dict) and item.get("data_dir", home) == home:
                        out.append(item)
        except OSError:
            continue
    return out


def clear() -> None:
    for path in _paths():
        try:
            os.remove(path)
        except OSError:
            pass


def summary(items: list[dict[str, object]]) -> str:
    """One line per kind of problem, with how often it happened."""
    by_kind: dict[str, list[dict[str, object]]] = {}
    for item in items:
        by_kind.setdefault(str(item.get("kind")), []).append(item)
    lines = []
    for group in by_kind.values():
        last = group[-1]
        times = f" ({len(group)} times)" if len(group) > 1 else ""
        lines.append(f"memory plugin: {last.get('message')}{times}")
    return "\n".join(lines)
