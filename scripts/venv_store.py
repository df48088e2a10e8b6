"""One venv per dependency spec on a machine, shared by plugin versions and checkouts (scripts/setup's helper).

The store (`~/.local/share/claude-memory/venvs/<spec>/`) holds the dependencies only, never the project:
a plugin version or a checkout gets an overlay of its own (a venv without packages whose .pth files add the
shared site-packages and its own root), so an upgrade or a second checkout with the same spec is set up in
well under a second. A shared venv is complete when `.memory-complete` exists (written last, removed first);
scripts/setup builds it under an exclusive flock on `<spec>.lock`, which the kernel releases if the build
dies, and the next build under the lock starts again from nothing. Users register themselves; a shared venv
nobody uses goes after a day's grace (a worker of the previous version may still run on it).
Standard library only: it runs on the interpreter that builds the venvs.
"""

from __future__ import annotations

import fcntl
import hashlib
import itertools
import json
import os
import re
import shutil
import sys
import time
import tomllib
import venv

COMPLETE = ".memory-complete"
SHARED_FILE = ".memory-shared"  # in an overlay: the shared venv it stands on
USERS = "users"
GRACE_S = 86400.0


def store_dir() -> str:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "claude-memory", "venvs")


def _name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;@]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def requirements(pyproject: str, extras: list[str]) -> list[str]:
    """The project's dependencies and those of `extras`, self-references (`name[local]`) followed, the
    project itself left out: what the shared venv installs."""
    project = tomllib.load(open(pyproject, "rb"))["project"]
    own, optional = _name(project["name"]), project.get("optional-dependencies", {})
    out: list[str] = []
    todo, seen = list(extras), set()
    pending = list(project.get("dependencies", []))
    while pending or todo:
        if todo:
            extra = todo.pop()
            if extra not in seen:
                seen.add(extra)
                pending.extend(optional.get(extra, []))
            continue
        req = pending.pop(0)
        if _name(req) == own:
            todo.extend(e.strip() for e in re.findall(r"\[([^\]]*)\]", req)[0].split(",") if e.strip())
        elif req not in out:
            out.append(req)
    return out


def specs(pyproject: str, pins: str, dev: int, large: int) -> list[str]:
    """This run's spec first, then those of venvs built with more (--dev, --large-model), which serve a run
    that asks for less. Neither the version nor the folder: both change with every plugin update or checkout."""
    project = tomllib.load(open(pyproject, "rb"))["project"]
    keys = ("requires-python", "dependencies", "optional-dependencies")
    deps = {k: project.get(k) for k in keys}
    python = [os.path.realpath(sys.executable), sys.version]

    def spec(d: int, lg: int) -> str:
        text = json.dumps([deps, pins, d, lg, python], sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:20]

    return list(dict.fromkeys([spec(dev, large), spec(1, large), spec(dev, 1), spec(1, 1)]))


def find(store: str, wanted: list[str]) -> str | None:
    """The first complete shared venv among the specs."""
    for spec in wanted:
        path = os.path.join(store, spec)
        if os.path.exists(os.path.join(path, COMPLETE)):
            return path
    return None


def site_packages(venv: str) -> str:
    lib = os.path.join(venv, "lib")
    names = [n for n in os.listdir(lib) if n.startswith("python")] if os.path.isdir(lib) else []
    return os.path.join(lib, names[0] if names else f"python{sys.version_info[0]}.{sys.version_info[1]}",
                        "site-packages")


def overlay(shared: str, root: str, dest: str, scripts: dict[str, str]) -> None:
    """A venv without packages at `dest` on top of `shared`: its site-packages adds the shared one (its .pth
    files processed) and `root` (as an editable install would); bin/ has the shared venv's commands, run by
    this venv's interpreter, and the project's own."""
    venv.EnvBuilder(symlinks=True).create(dest)  # in this process: one interpreter start less
    site = site_packages(dest)
    with open(os.path.join(site, "_memory_shared.pth"), "w", encoding="utf-8") as fh:
        fh.write(f"import site; site.addsitedir({site_packages(shared)!r})\n")
    with open(os.path.join(site, "_memory_root.pth"), "w", encoding="utf-8") as fh:
        fh.write(root + "\n")
    python = os.path.join(dest, "bin", "python")
    shared_bin = os.path.join(shared, "bin")
    for name in sorted(os.listdir(shared_bin)):
        src, out = os.path.join(shared_bin, name), os.path.join(dest, "bin", name)
        if os.path.lexists(out) or not os.path.isfile(src) or os.path.islink(src):
            continue
        with open(src, "rb") as fh:
            data = fh.read(2)
            if data != b"#!":  # a native command (ruff is one): it runs the same from anywhere
                if os.access(src, os.X_OK):
                    os.symlink(src, out)
                continue
            data += fh.read()
        # The interpreter is named in the shebang, or for a long path in the second line of a `#!/bin/sh`
        # trampoline (`exec "/path/bin/python" ...`): either way within the first two lines.
        lines = data.split(b"\n", 2)
        head = b"\n".join(lines[:2])
        if (shared_bin + "/").encode() not in head:
            continue  # not a Python command of the shared venv (a shell script of its own)
        head = head.replace((shared_bin + "/").encode(), (os.path.dirname(python) + "/").encode())
        _write_command(out, head + (b"\n" + lines[2] if len(lines) > 2 else b""))
    for name, target in scripts.items():
        module, _, func = target.partition(":")
        _write_command(os.path.join(dest, "bin", name),
                       f"#!{python}\nimport sys\nfrom {module} import {func}\nsys.exit({func}())\n".encode())
    with open(os.path.join(dest, SHARED_FILE), "w", encoding="utf-8") as fh:
        fh.write(shared + "\n")


def _write_command(path: str, data: bytes) -> None:
    with open(path, "wb") as fh:
        fh.write(data)
    os.chmod(path, 0o755)


def _uses(user: str, shared: str) -> bool:
    """Does the venv at `user` (an overlay, or the symlink to one) still stand on `shared`?"""
    try:
        with open(os.path.join(user, SHARED_FILE), encoding="utf-8") as fh:
            return os.path.realpath(fh.read().strip()) == os.path.realpath(shared)
    except OSError:
        return False


def register(shared: str, user: str) -> None:
    """Record `user` (a path that resolves to an overlay: a data dir's venv, a checkout's .venv)."""
    users = os.path.join(shared, USERS)
    os.makedirs(users, exist_ok=True)
    key = hashlib.sha256(os.path.abspath(user).encode()).hexdigest()[:16]
    with open(os.path.join(users, key), "w", encoding="utf-8") as fh:
        fh.write(os.path.abspath(user))


def live_users(shared: str) -> list[str]:
    """The registered users that still stand on `shared`; the others are forgotten."""
    users = os.path.join(shared, USERS)
    live = []
    for key in os.listdir(users) if os.path.isdir(users) else []:
        try:
            with open(os.path.join(users, key), encoding="utf-8") as fh:
                user = fh.read()
        except OSError:
            continue
        if _uses(user, shared):
            live.append(user)
        else:
            os.unlink(os.path.join(users, key))  # the folder's mtime: when it was last left
    return live


def collect(store: str, keep: str | None = None, grace_s: float = GRACE_S) -> list[str]:
    """Remove the shared venvs nobody stands on any more, once they have been unused for `grace_s`, and
    any half-built ones (no build holds their lock). Returns what was removed."""
    removed = []
    for spec in sorted(os.listdir(store)) if os.path.isdir(store) else []:
        path = os.path.join(store, spec)
        if spec.endswith(".lock") or not os.path.isdir(path) or path == keep:
            continue
        with open(os.path.join(store, spec + ".lock"), "a") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # a setup builds or links it right now
            complete = os.path.exists(os.path.join(path, COMPLETE))
            if complete and live_users(path):
                continue
            users = os.path.join(path, USERS)
            since = os.stat(users if os.path.isdir(users) else os.path.join(path, COMPLETE)).st_mtime \
                if complete else 0.0
            if time.time() - since < grace_s:
                continue
            if complete:
                os.unlink(os.path.join(path, COMPLETE))  # first: nobody picks it up while it goes
            shutil.rmtree(path, ignore_errors=True)  # the lock file stays: a setup may have it open
            removed.append(path)
    return removed


def stages(marks: list[str]) -> str:
    """One line from scripts/setup's marks (`name=<epoch seconds>=<times output, commas for blanks>`): each
    stage's wall and CPU seconds since the mark before, then the whole."""
    def cpu(times: str) -> float:
        out = 0.0
        for word in filter(None, times.split(",")):  # 0m1.234s: this shell's user, system, children's ...
            minutes, _, seconds = word.rstrip("s").partition("m")
            out += float(minutes) * 60 + float(seconds)
        return out

    points = [(name, float(at), cpu(times)) for name, at, times in (m.split("=", 2) for m in marks)]
    parts = [f"{name} {at - prev_at:.1f}/{c - prev_c:.1f}"
             for (_, prev_at, prev_c), (name, at, c) in itertools.pairwise(points)]
    whole = f"{points[-1][1] - points[0][1]:.1f}/{points[-1][2] - points[0][2]:.1f}" if points else "0/0"
    return f"setup: took {whole} s (wall/CPU; {', '.join(parts)})"


def _marker(root: str) -> str:
    """The marker a complete setup of the plugin at `root` leaves in its venv (memory/base/bootstrap.py)."""
    sys.path.insert(0, root)
    from memory.base.bootstrap import marker_name

    return marker_name()


def main(argv: list[str]) -> int:
    cmd, args = argv[0], argv[1:]
    if cmd == "plan":  # PYPROJECT PINS DEV LARGE STORE ROOT: the specs, a complete venv, the marker
        wanted = specs(args[0], args[1], int(args[2]), int(args[3]))
        print(" ".join(wanted))
        print(find(args[4], wanted) or "")
        print(_marker(args[5]) if args[5] else "")
    elif cmd == "requirements":
        print("\n".join(requirements(args[0], [e for e in args[1:] if e])))
    elif cmd == "overlay":
        scripts = tomllib.load(open(args[3], "rb"))["project"].get("scripts", {})
        overlay(args[0], args[1], args[2], scripts)
        register(args[0], args[4])  # before the switch: collect checks what the path stands on
    elif cmd == "stages":
        print(stages(args))
    elif cmd == "register":
        register(args[0], args[1])
    elif cmd == "collect":
        for path in collect(args[0], keep=args[1] if len(args) > 1 else None):
            print(f"setup: removed the shared venv {path} (no plugin version or checkout uses it)")
    else:
        print(f"venv_store: unknown command {cmd}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
