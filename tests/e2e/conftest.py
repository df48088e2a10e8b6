"""Fixtures that run the real Claude Code CLI offline against the fake Messages API.

``claude_bin`` finds the CLI (``scripts/install-claude-code`` puts it in ``.tools/``, or set
``MEMORY_CLAUDE_BIN``); it skips when missing, and fails instead when ``CI`` is set. A test module runs on
the older clients too (``CLIENTS``, installed by ``scripts/install-claude-code --older`` into
``.tools/claude-code-<version>``) by overriding ``claude_bin`` with a fixture parametrized over ``CLIENTS``.
``run_claude`` runs one ``claude -p`` invocation and returns a ``ClaudeRun``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.support.e2e_harness import ClaudeRun, RunClaude, find_claude, find_transcript
from tests.support.fake_anthropic import FakeAnthropic, Json, Script

# Variables of an enclosing Claude Code session or a real account must not leak into the runs.
_STRIPPED_PREFIXES = ("ANTHROPIC_", "CLAUDE", "OTEL_", "MEMORY_", "AWS_", "GOOGLE_", "VERTEX_")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "e2e: runs the real Claude Code CLI against a fake Messages API")


@pytest.fixture(scope="session")
def claude_bin(request: pytest.FixtureRequest) -> Path:
    """The pinned Claude Code CLI, or each client of a module marked EVERY_CLIENT (e2e_harness)."""
    return find_claude(getattr(request, "param", "pinned"))


@pytest.fixture
def fake_api() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as fake:
        yield fake


@pytest.fixture
def memory_home(tmp_path: Path) -> Path:
    """The plugin's data dir for this test (exported as MEMORY_HOME to every run)."""
    path = tmp_path / "memory-home"
    path.mkdir()
    return path


def _base_env(home: Path, fake: FakeAnthropic, memory_home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_STRIPPED_PREFIXES)}
    env.update(
        HOME=str(home),
        ANTHROPIC_BASE_URL=fake.url,
        ANTHROPIC_API_KEY="sk-ant-e2e-dummy-key",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        MEMORY_HOME=str(memory_home),
        # Hooks start the background worker: the light embedder, and gone soon after the test.
        MEMORY_EMBEDDER="hashing",
        MEMORY_WORKER_IDLE_SECONDS="15",
        NO_COLOR="1",
    )
    return env


@pytest.fixture
def run_claude(claude_bin: Path, fake_api: FakeAnthropic, memory_home: Path) -> RunClaude:
    def run(
        prompt: str,
        *,
        cwd: Path,
        home: Path,
        plugin_dir: Path,
        script: Script,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        resume: str | None = None,
        timeout: float = 120,
    ) -> ClaudeRun:
        home.mkdir(parents=True, exist_ok=True)
        args = [str(claude_bin), "-p", prompt, "--plugin-dir", str(plugin_dir)]
        args += ["--allowedTools", "Read", "Edit", "Write", "Bash", "--output-format", "json"]
        if resume:
            args += ["--resume", resume]
        args += list(extra_args)
        full_env = _base_env(home, fake_api, memory_home)
        full_env.update(env or {})

        fake_api.script = script
        first = len(fake_api.requests)
        proc = subprocess.Popen(
            args,
            cwd=cwd,
            env=full_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # so a timeout can kill the CLI together with its hooks
        )
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate()
            pytest.fail(f"claude timed out after {timeout}s\nstdout={stdout[-2000:]}\nstderr={stderr[-2000:]}")
        assert not fake_api.errors, f"fake API script raised: {fake_api.errors}"
        output: Json | None
        try:
            parsed: Any = json.loads(stdout)
            output = parsed if isinstance(parsed, dict) else None
        except ValueError:
            output = None
        transcript = find_transcript(home, (output or {}).get("session_id"))
        return ClaudeRun(proc.returncode, output, stderr, fake_api.requests[first:], transcript, stdout)

    return run
