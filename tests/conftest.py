"""Fixtures: a scratch data dir, a git project, a hook runner that checks the hook contract."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.helpers import HookRunner, make_git_project

# Any hook a test runs may start the background worker: keep it light (no model in memory) and short-lived.
# Tests of the providers and of the worker's lifetime set their own values.
os.environ.setdefault("MEMORY_EMBEDDER", "hashing")
os.environ.setdefault("MEMORY_WORKER_IDLE_SECONDS", "10")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    data = tmp_path / "data"
    monkeypatch.setenv("MEMORY_HOME", str(data))
    # Hooks and the CLI would start a background worker (a model in memory for minutes) in every test's
    # data dir; tests of the worker turn it back on (tests/test_worker.py).
    monkeypatch.setenv("MEMORY_WORKER", "off")
    # XDG_RUNTIME_DIR: a spool outside the data dir (memory/hook/spool.py) goes to the temp dir, not the user's.
    for name in ("CLAUDE_PLUGIN_DATA", "CLAUDE_PROJECT_DIR", "MEMORY_PROJECT_DIR", "XDG_RUNTIME_DIR"):
        monkeypatch.delenv(name, raising=False)
    return data


@pytest.fixture
def project(tmp_path: Path) -> Path:
    proj = make_git_project(tmp_path / "app")
    (proj / "app.py").write_text("def greet(name):\n    return 'hi ' + name\n")
    return proj


@pytest.fixture
def hooks(home: Path, project: Path) -> Iterator[HookRunner]:
    runner = HookRunner(project)
    yield runner
    for r in runner.results:  # the contract, checked after every test that ran hooks
        assert r["exit_code"] == 0, r
        assert not r["stdout"].strip() or isinstance(r["json"], dict), r
