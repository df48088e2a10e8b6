"""Pause and exclude: whether a hook records and injects nothing.

A paused session (`/memory:pause`, `memory pause`) is an empty file `<data dir>/paused/<session id>`;
an excluded folder (`memory exclude PATH`) is a line of `<data dir>/excluded` (its real path), and
MEMORY_EXCLUDE adds globs. Every hook asks `reason` before its handler runs (memory/hook/run.py). The
common case, nothing paused or excluded, costs two failed stat/open calls (~3 us each); an exclusion list
adds one realpath of the event's folder. Globs are matched here, not with fnmatch: it imports re (~5 ms
of a hook).
"""

from __future__ import annotations

import os

from memory.base.config import data_home, env

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from memory.base.event import Event

PAUSED_DIR = "paused"
EXCLUDED_FILE = "excluded"
TOLD_FILE = "excluded.told"  # the excluded folders SessionStart told about today (tell)


def session_file(home: str, session_id: str) -> str:
    """The pause marker of a session: its id with anything but letters, digits, `-`, `_` and `.` replaced."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id)[:128].lstrip(".") or "_"
    return os.path.join(home, PAUSED_DIR, safe)


def is_paused(home: str, session_id: str) -> bool:
    return os.path.exists(session_file(home, session_id))


def excluded_paths(home: str) -> list[str]:
    """The folders `memory exclude` recorded (real paths), in order."""
    try:
        with open(os.path.join(home, EXCLUDED_FILE), encoding="utf-8", errors="replace") as fh:
            return [line.rstrip("\n") for line in fh if line.strip()]
    except OSError:
        return []


def globs() -> list[str]:
    """MEMORY_EXCLUDE: globs separated by os.pathsep (`:`), `~` expanded."""
    return [os.path.expanduser(g.strip()) for g in env("MEMORY_EXCLUDE").split(os.pathsep) if g.strip()]


def glob_match(pattern: str, path: str) -> bool:
    """Whether `path` matches `pattern`: `*` any characters but `/`, `**` any characters, `?` one but `/`,
    every other character itself (no `[...]` classes)."""
    if not pattern:
        return not path
    head = pattern[0]
    if pattern.startswith("**"):
        rest = pattern[2:]
        return any(glob_match(rest, path[i:]) for i in range(len(path) + 1))
    if head == "*":
        rest = pattern[1:]
        for i in range(len(path) + 1):
            if glob_match(rest, path[i:]):
                return True
            if i < len(path) and path[i] == "/":
                return False
        return False
    if not path or (head == "?" and path[0] == "/") or (head != "?" and head != path[0]):
        return False
    return glob_match(pattern[1:], path[1:])


def excluded_by(folder: str, home: str) -> str | None:
    """The exclusion that covers `folder` (a real path): a recorded folder it is in, or a MEMORY_EXCLUDE
    glob it or one of its parents matches; None when it is not excluded."""
    for path in excluded_paths(home):
        if folder == path or folder.startswith(path.rstrip("/") + "/"):
            return path
    patterns = globs()
    if patterns:
        place = folder
        while True:
            for g in patterns:
                if glob_match(g.rstrip("/") or "/", place):
                    return f"MEMORY_EXCLUDE {g}"
            parent = os.path.dirname(place)
            if parent == place:
                break
            place = parent
    return None


def reason(event: Event, project_dir: str | None = None) -> tuple[str, str] | None:
    """Why a hook should record and inject nothing for this event: ("paused", session id) or ("excluded",
    the exclusion), or None."""
    home = data_home()
    sid = event.session or os.environ.get("CLAUDE_CODE_SESSION_ID")
    if sid and is_paused(home, sid[:128]):
        return "paused", sid[:128]
    if not env("MEMORY_EXCLUDE").strip() and not os.path.exists(os.path.join(home, EXCLUDED_FILE)):
        return None
    real = _real_folder(event, project_dir)
    found = excluded_by(real, home) if real is not None else None
    return ("excluded", found) if found else None


def _real_folder(event: Event, project_dir: str | None) -> str | None:
    """The real path of the hook's project folder (CLAUDE_PROJECT_DIR, else the event's cwd)."""
    from memory.base.project import event_folder  # only with an exclusion: PreToolUse imports it for nothing else

    try:
        return os.path.realpath(project_dir or event_folder(event.cwd) or os.getcwd())
    except OSError:
        return None


def tell(why: tuple[str, str], event: Event, project_dir: str | None = None) -> bool:
    """Whether this SessionStart tells the user about a quiet session: a paused one at each start or resume,
    an excluded folder once a local day (else every startup, resume and /clear repeats it). What was told is
    `<data dir>/excluded.told`, one `day<TAB>folder` line each, today's only: nothing goes in the excluded
    project's own data dir. Costs a realpath and a one-line read (~20 us of CPU), once a day a write (~80 us)."""
    if why[0] != "excluded":
        return True
    import time  # a builtin module, already loaded: no cost

    home, folder = data_home(), _real_folder(event, project_dir) or why[1]
    line = f"{time.strftime('%Y-%m-%d')}\t{folder}"
    path = os.path.join(home, TOLD_FILE)
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            told = fh.read().splitlines()
    except OSError:
        told = []
    if line in told:
        return False
    keep = [t for t in told if t.split("\t", 1)[0] == line.split("\t", 1)[0]] + [line]
    try:
        os.makedirs(home, mode=0o700, exist_ok=True)
        with open(path + ".tmp", "w", encoding="utf-8") as fh:  # the hook's umask makes it owner-only
            fh.write("\n".join(keep) + "\n")
        os.replace(path + ".tmp", path)
    except OSError:
        pass  # told again next time: better than never
    return True


def message(why: tuple[str, str]) -> str:
    """What SessionStart tells the user about a quiet session (when `tell` says to)."""
    if why[0] == "paused":
        return "memory plugin: paused for this session: nothing is recorded or recalled (/memory:resume)"
    return (f"memory plugin: this project is excluded ({why[1]}): nothing is recorded or recalled here "
            "(`memory include PATH` undoes `memory exclude`)")
