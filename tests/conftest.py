"""Fixtures: a scratch data dir, a git project, a hook runner that checks the hook contract."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.helpers import HookRunner, make_git_project

# Any hook a test runs may start the background worker: keep it light (no model in memory) and short-lived.
# Tests of the providers and of the worker's lifetime set their own values.
os.environ.setdefault("MEMORY_EMBEDDER", "hashing")
os.environ.setdefault("MEMORY_WORKER_IDLE_SECONDS", "10")


@pytest.fixture(scope="session", autouse=True)
def _fast_path_checked() -> None:
    """The fast path's verdict for this Python kept before any hook runs, as the worker keeps it at its start
    (memory/fastpath/check.py): the hooks then run what an installed plugin runs."""
    from memory.fastpath import check

    check.ensure()


@pytest.fixture(autouse=True)
def _fast_path_on_for_its_own_tests(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests marked `fastpath` check what the fast path spares a hook (modules it never loads): their hooks run
    with it on, also when the suite runs with MEMORY_FASTPATH=off (scripts/test's second pass)."""
    if request.node.get_closest_marker("fastpath"):
        monkeypatch.setenv("MEMORY_FASTPATH", "on")


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
def offline(home: Path, monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """Heuristic extraction only (no key, no Ollama), hashed embeddings: nothing to download or call."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "CLAUDE_CONFIG_DIR",
                 "OLLAMA_HOST"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MEMORY_EXTRACTOR", "heuristic")
    monkeypatch.setenv("MEMORY_EMBEDDER", "hashing")
    monkeypatch.setenv("MEMORY_WORKER_IDLE_SECONDS", "3")
    return monkeypatch


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


@pytest.fixture(autouse=True)
def _no_shm_spool_left_behind() -> Iterator[None]:
    """A test that fills the data dir and the temp dir spools into /dev/shm (memory/base/config.py fallback_dirs),
    which every test shares: what it leaves there would change what the next tests' hooks load and report."""
    shm = Path("/dev/shm") / f"claude-memory-{os.getuid()}"
    before = set(os.listdir(shm)) if shm.is_dir() else set()
    yield
    if shm.is_dir():
        for name in set(os.listdir(shm)) - before:
            shutil.rmtree(shm / name, ignore_errors=True)

