"""`scripts/setup` run again with nothing changed installs nothing: the venv records the spec it was built from
(pyproject.toml's dependencies and the script's pins, hashed) and a re-run that finds the same spec runs no pip
and no compileall before it starts Claude Code. And `claude` ends up on PATH, or the last line says how to run
it. The real script, in a fresh HOME and cache, on a small stand-in project so that the first run installs
from this machine's local wheels only (no network); pip's own log (PIP_LOG) shows every pip run. A
`uv` that fails stands on PATH: the setup asks it first, with pip's index settings, and falls back to pip."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.helpers import ROOT
from tests.support.stand_in import PYPROJECT

WHEELS = Path("/opt/pypi/files")  # this machine's local wheels (pip's configured extra index)
SETUPTOOLS = "\n[tool.setuptools]\npackages = []\n"
STUB = "#!/bin/sh\necho \"$0 $*\" >> \"{calls}\"\n"


def _plugin(tmp_path: Path, version: str = "0.1", deps: str = "") -> Path:
    root = tmp_path / "plugin"
    (root / "scripts").mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "scripts" / "setup", root / "scripts" / "setup")
    (root / "pyproject.toml").write_text(PYPROJECT.format(version=version, deps=deps, extra=SETUPTOOLS))
    shutil.copy(ROOT / "scripts" / "venv_store.py", root / "scripts" / "venv_store.py")
    (root / "memory" / "base").mkdir(parents=True, exist_ok=True)
    (root / "memory" / "base" / "mod.py").write_text("X = 1\n")  # hooks import it: setup byte-compiles it
    return root


def _stub(path: Path, calls: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(STUB.format(calls=calls))
    path.chmod(0o755)
    return path


def _env(tmp_path: Path, path_dirs: list[Path]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "VIRTUAL_ENV", "UV_"))}
    python_dir = str(Path(sys.executable).resolve().parent)
    env.update(HOME=str(tmp_path / "home"), XDG_CACHE_HOME=str(tmp_path / "cache"),
               PATH=":".join([*map(str, path_dirs), python_dir, "/usr/bin", "/bin"]),
               PIP_NO_INDEX="1", PIP_FIND_LINKS=str(WHEELS), PIP_LOG=str(tmp_path / "pip.log"),
               PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env


def _setup(root: Path, env: dict[str, str], *args: str) -> list[str]:
    done = subprocess.run([str(root / "scripts" / "setup"), *args], env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.splitlines()


def _pip_runs(tmp_path: Path) -> int:
    log = tmp_path / "pip.log"
    return log.stat().st_size if log.exists() else 0


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], Path, Path]:
    """A stand-in plugin whose venv the setup built once (pip ran), and a `claude` on PATH; built once for
    the module (a build is the slow part), the tests below run in order on it."""
    tmp_path = tmp_path_factory.mktemp("setup")
    if not any(WHEELS.glob("setuptools-*.whl")):
        pytest.skip("no local setuptools wheel to build the stand-in project offline")
    calls = tmp_path / "claude-calls"
    _stub(tmp_path / "bin" / "claude", calls)
    # A `uv` on PATH that records what it was asked and how its indexes were set, then fails: pip takes over.
    uv = tmp_path / "bin" / "uv"
    uv.write_text(f"#!/bin/sh\necho \"$1 $2|$UV_NO_INDEX|$UV_FIND_LINKS|$UV_INDEX_STRATEGY\" >> {tmp_path}/uv-calls\n"
                  "exit 1\n")
    uv.chmod(0o755)
    root = _plugin(tmp_path)
    env = _env(tmp_path, [tmp_path / "bin"])
    first = _setup(root, env)
    assert _pip_runs(tmp_path) > 0 and any(line.startswith("setup: venv ready") for line in first), first
    assert any("installed with pip" in line for line in first), first
    return root, env, calls, tmp_path


def test_uv_is_tried_first_with_pips_index_configuration(built: tuple[Path, dict[str, str], Path, Path]) -> None:
    """The build above had a `uv` that failed: it was asked first, saw pip's index settings (here only the
    local wheels, no index), and pip did the work (the venv is complete)."""
    root, _, _, tmp_path = built
    calls = (tmp_path / "uv-calls").read_text().splitlines()
    assert calls[0] == f"pip install|1|{WHEELS}|unsafe-best-match", calls  # into a venv made without pip
    assert (root / ".venv" / "bin" / "python").exists()


def test_a_rerun_with_nothing_changed_installs_nothing(built: tuple[Path, dict[str, str], Path, Path]) -> None:
    root, env, calls, tmp_path = built
    logged = _pip_runs(tmp_path)
    assert (root / "memory" / "base" / "__pycache__").is_dir()  # the first run byte-compiled the plugin
    shutil.rmtree(root / "memory" / "base" / "__pycache__")
    out = _setup(root, env, "--run", "--resume")
    assert _pip_runs(tmp_path) == logged, "pip ran again with nothing changed"
    assert not (root / "memory" / "base" / "__pycache__").exists(), "compileall ran again with nothing changed"
    assert any("venv up to date" in line for line in out), out
    assert calls.read_text().split() == [str(tmp_path / "bin" / "claude"), "--plugin-dir", str(root), "--resume"]


def test_claude_is_put_on_path_or_the_last_line_says_how_to_run_it(
        built: tuple[Path, dict[str, str], Path, Path]) -> None:
    root, env, _, tmp_path = built
    env = dict(env)
    calls = tmp_path / "tools-calls"
    tools_claude = _stub(root / ".tools" / "claude-code" / "node_modules" / ".bin" / "claude", calls)
    env["PATH"] = env["PATH"].replace(str(tmp_path / "bin") + ":", "")  # no `claude` on PATH
    out = _setup(root, env, "--run")
    assert calls.read_text().split()[1:] == ["--plugin-dir", str(root)]
    assert out[-1] == (f"setup: `claude` is not on PATH; run it with: {tools_claude} --plugin-dir {root} "
                       f"(or: export PATH=\"{tools_claude.parent}:$PATH\")"), out

    local_bin = tmp_path / "home" / ".local" / "bin"
    env["PATH"] = f"{local_bin}:{env['PATH']}"  # a PATH that has ~/.local/bin, as most shells' do
    out = _setup(root, env, "--run")
    assert (local_bin / "claude").resolve() == tools_claude.resolve()
    assert f"setup: linked {local_bin / 'claude'} -> {tools_claude}" in out, out
    assert calls.read_text().splitlines()[-1].split()[0] == str(local_bin / "claude")  # run from PATH


def test_a_changed_dependency_spec_installs_again(built: tuple[Path, dict[str, str], Path, Path]) -> None:
    """A new version alone changes nothing (the venv is shared across versions: tests/test_venv_store.py);
    changed dependencies install again."""
    root, env, _, tmp_path = built
    logged = _pip_runs(tmp_path)
    (root / "pyproject.toml").write_text(PYPROJECT.format(version="0.2", deps="", extra=SETUPTOOLS))
    assert any("venv up to date" in line for line in _setup(root, env)), "a new version alone installed"
    (root / "pyproject.toml").write_text(PYPROJECT.format(version="0.2", deps='"six"', extra=SETUPTOOLS))
    out = _setup(root, env)
    assert _pip_runs(tmp_path) > logged and any(line.startswith("setup: venv ready") for line in out), out
    again = _setup(root, env)
    assert any("venv up to date" in line for line in again), again
