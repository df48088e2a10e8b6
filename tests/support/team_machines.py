"""Simulated machines for the team tests: each its own data dir, its own clone of the project (same git
remote, so the same project on the team server), its own PostgreSQL role. Commands and hooks run as real
processes."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.helpers import ROOT, HookRunner, make_git_project

REMOTE = "git@github.com:acme/app.git"
PROJECT_ID = "github.com/acme/app"


class Machine:
    def __init__(self, base: Path, name: str, url: str, remote: str = REMOTE) -> None:
        self.name = name
        self.home = base / f"home-{name}"
        self.project = make_git_project(base / f"clone-{name}" / "app", remote=remote)
        self.url = url
        self.hooks = MachineHooks(self)

    def env(self, **extra: str) -> dict[str, str]:
        # PYTHONPATH: `python -m memory` in the clone would otherwise import the editable install's checkout
        # (the shared venv points at /work/main), not the code under test.
        path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
        env = {**os.environ, "MEMORY_HOME": str(self.home), "MEMORY_WORKER": "off", "PYTHONPATH": path, **extra}
        for name in ("CLAUDE_PLUGIN_DATA", "CLAUDE_PROJECT_DIR", "MEMORY_PROJECT_DIR", "MEMORY_TEAM_URL"):
            if name not in extra:
                env.pop(name, None)
        return env

    def cli(self, *args: str, check: bool = True, stdin: str | None = None, **env: str
            ) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([sys.executable, "-m", "memory", *args], cwd=self.project, env=self.env(**env),
                              capture_output=True, text=True, input=stdin, timeout=300)
        if check:
            assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
        return proc

    def popen(self, *args: str, **env: str) -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, "-m", "memory", *args], cwd=self.project, env=self.env(**env),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def init(self, url: str | None = None) -> dict[str, Any]:
        return json.loads(self.cli("team", "init", url or self.url, "--json").stdout)

    def save(self, text: str, type_: str = "decision", *extra: str) -> int:
        out = json.loads(self.cli("save", text, "--type", type_, "--json", *extra).stdout)
        return int(out["id"])

    def db(self) -> sqlite3.Connection:
        (folder,) = (self.home / "projects").iterdir()
        db = sqlite3.connect(folder / "memory.db")
        db.row_factory = sqlite3.Row
        return db

    def rows(self, sql: str, *args: Any) -> list[sqlite3.Row]:
        db = self.db()
        try:
            return db.execute(sql, args).fetchall()
        finally:
            db.close()


class MachineHooks(HookRunner):
    """The real hook processes, with this machine's data dir."""

    def __init__(self, machine: Machine) -> None:
        super().__init__(machine.project, session=f"sess-{machine.name}")
        self.machine = machine

    def run(self, entry: str, event: dict[str, Any] | bytes | str, **env: str) -> dict[str, Any]:
        data = json.dumps(event).encode() if isinstance(event, dict) else (
            event if isinstance(event, bytes) else event.encode())
        proc = subprocess.run([str(ROOT / "hooks" / "run"), entry], input=data, capture_output=True, timeout=60,
                              env=self.machine.env(**env))
        out = proc.stdout.decode()
        result = {"exit_code": proc.returncode, "stdout": out, "json": json.loads(out) if out.strip() else None,
                  "stderr": proc.stderr.decode()}
        self.results.append(result)
        return result
