"""One venv per dependency spec, shared by plugin versions and checkouts (scripts/venv_store.py): the real
scripts/setup in a fresh HOME on stand-in plugins whose one dependency (six) comes from this machine's local
wheels, installed by the real uv when this machine has the setup's bootstrap copy of it (else by pip); no
network. An upgrade with the same dependencies installs nothing and runs its own code; two setups at once
build once; a build that died is redone; a venv nobody uses is collected after its grace."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scripts import venv_store
from tests.support.helpers import ROOT
from tests.support.stand_in import PYPROJECT

WHEELS = Path("/opt/pypi/files")
UV_BOOT = Path.home() / ".cache" / "claude-memory" / "uv-0.13.9"  # what scripts/setup installed here
MARKER = ".memory-setup-test"
SCRIPTS = '\n[project.scripts]\nstand-in = "plugin_mod:main"\n'

pytestmark = pytest.mark.skipif(not any(WHEELS.glob("six-*.whl")), reason="no local six wheel to install offline")


def _plugin(where: Path, version: str, deps: str = '"six"') -> Path:
    root = where / f"plugin-{version}"
    (root / "scripts").mkdir(parents=True)
    for name in ("setup", "venv_store.py"):
        shutil.copy(ROOT / "scripts" / name, root / "scripts" / name)
    (root / "pyproject.toml").write_text(PYPROJECT.format(version=version, deps=deps, extra=SCRIPTS))
    (root / "plugin_mod.py").write_text(f"VERSION = {version!r}\ndef main():\n    print(VERSION)\n")
    return root


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "VIRTUAL_ENV", "UV_", "XDG_"))}
    cache = tmp_path / "cache"
    if (UV_BOOT / "bin" / "uv").exists():  # the real uv, without a download
        (cache / "claude-memory").mkdir(parents=True, exist_ok=True)
        os.symlink(UV_BOOT, cache / "claude-memory" / UV_BOOT.name)
    python_dir = str(Path(sys.executable).resolve().parent)
    env.update(HOME=str(tmp_path / "home"), XDG_CACHE_HOME=str(cache), PATH=f"{python_dir}:/usr/bin:/bin",
               PIP_NO_INDEX="1", PIP_FIND_LINKS=str(WHEELS), PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env


def _setup(root: Path, env: dict[str, str], venv: Path) -> list[str]:
    done = subprocess.run([str(root / "scripts" / "setup"), "--venv", str(venv), "--marker", MARKER], env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.splitlines()


def _ready(out: list[str]) -> str:
    return next(line for line in out if line.startswith("setup: venv ready"))


def _store(env: dict[str, str]) -> Path:
    return Path(env["HOME"]) / ".local" / "share" / "claude-memory" / "venvs"


def _run(venv: Path, code: str) -> str:
    return subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True,
                          check=True, cwd="/").stdout.strip()


def test_an_upgrade_with_the_same_dependencies_reuses_the_venv_and_runs_its_own_code(tmp_path: Path) -> None:
    env = _env(tmp_path)
    data = tmp_path / "data"
    first = _setup(_plugin(tmp_path, "1.0"), env, data / "venv")
    assert "installed with none" not in _ready(first), first
    shared = [p for p in _store(env).iterdir() if p.is_dir()]
    assert len(shared) == 1 and (shared[0] / venv_store.COMPLETE).exists()
    assert _run(data / "venv", "import plugin_mod, six; print(plugin_mod.VERSION, six.__file__)") \
        == f"1.0 {venv_store.site_packages(str(shared[0]))}/six.py"

    second = _setup(_plugin(tmp_path, "2.0"), env, data / "venv")  # a new version: a new plugin folder
    assert "installed with none: the shared venv was there" in _ready(second), second
    assert [p for p in _store(env).iterdir() if p.is_dir()] == shared
    assert _run(data / "venv", "import plugin_mod; print(plugin_mod.VERSION)") == "2.0"
    assert subprocess.run([str(data / "venv" / "bin" / "stand-in")], capture_output=True, text=True,
                          cwd="/").stdout.strip() == "2.0"
    assert (data / "venv" / MARKER).exists()
    assert len(list(data.glob("venv-*"))) == 1, "the first version's overlay is removed after the switch"


def test_a_reuse_costs_the_setup_well_under_a_second_of_cpu(tmp_path: Path) -> None:
    env = _env(tmp_path)
    _setup(_plugin(tmp_path, "1.0"), env, tmp_path / "a" / "venv")
    before = os.times()
    _setup(_plugin(tmp_path, "1.1"), env, tmp_path / "b" / "venv")
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    assert cpu < 1.0, cpu


def test_two_setups_at_once_build_one_venv(tmp_path: Path) -> None:
    env = _env(tmp_path)
    roots = [_plugin(tmp_path, "1.0"), _plugin(tmp_path, "1.1")]
    procs = [subprocess.Popen([str(root / "scripts" / "setup"), "--venv", str(tmp_path / f"d{i}" / "venv"),
                               "--marker", MARKER], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for i, root in enumerate(roots)]
    outs = [p.communicate(timeout=900) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    ready = [_ready(out.splitlines()) for out, _ in outs]
    assert sum("installed with none" in line for line in ready) == 1, ready  # the other waited on the lock
    assert len([p for p in _store(env).iterdir() if p.is_dir()]) == 1
    for i, root in enumerate(roots):
        assert _run(tmp_path / f"d{i}" / "venv", "import plugin_mod, six; print(plugin_mod.__file__)") \
            == str(root / "plugin_mod.py")


def test_a_build_that_died_half_way_is_built_again(tmp_path: Path) -> None:
    env = _env(tmp_path)
    root = _plugin(tmp_path, "1.0")
    setup = subprocess.Popen([str(root / "scripts" / "setup"), "--venv", str(tmp_path / "d" / "venv"),
                              "--marker", MARKER], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    store = _store(env)
    while setup.poll() is None and not any(p.is_dir() for p in store.glob("*")):
        time.sleep(0.01)  # until the shared venv's folder exists: then kill the build
    os.killpg(setup.pid, 9)
    setup.wait()
    half = [p for p in store.iterdir() if p.is_dir()]
    if half and (half[0] / venv_store.COMPLETE).exists():
        (half[0] / venv_store.COMPLETE).unlink()  # it finished before the kill: stand for a half-built one
    out = _setup(root, env, tmp_path / "d" / "venv")
    assert "installed with none" not in _ready(out), out
    assert _run(tmp_path / "d" / "venv", "import six; print('ok')") == "ok"


def test_a_venv_nobody_uses_is_collected_after_its_grace(tmp_path: Path) -> None:
    env = _env(tmp_path)
    data = tmp_path / "data"
    _setup(_plugin(tmp_path, "1.0"), env, data / "venv")
    old = next(p for p in _store(env).iterdir() if p.is_dir())
    _setup(_plugin(tmp_path, "2.0", deps=""), env, data / "venv")  # dependencies changed: a second venv
    shared = sorted(p for p in _store(env).iterdir() if p.is_dir())
    assert old in shared and len(shared) == 2, "within its grace the old venv stays (a worker may run on it)"
    assert venv_store.live_users(str(old)) == []
    assert venv_store.collect(str(_store(env)), grace_s=3600) == []
    past = time.time() - 2 * 3600
    os.utime(old / venv_store.USERS, (past, past))
    new = next(p for p in shared if p != old)
    assert venv_store.collect(str(_store(env)), grace_s=3600) == [str(old)]
    assert not old.exists() and (new / venv_store.COMPLETE).exists()  # in use: kept, however old
    os.utime(new / venv_store.USERS, (past, past))
    assert venv_store.collect(str(_store(env)), grace_s=3600) == []


def test_requirements_follow_the_projects_own_extras() -> None:
    reqs = venv_store.requirements(str(ROOT / "pyproject.toml"), ["dev"])
    assert "pytest>=8" in reqs and "torch==2.13.0" in reqs and "lancedb==0.40.0" in reqs
    assert not any(r.startswith("claude-memory-plugin") for r in reqs)


def test_a_hook_on_an_overlay_finds_tree_sitter_in_the_shared_venv(tmp_path: Path) -> None:
    """Hooks run with `python -S` and add the venv's site-packages themselves for the Read outline
    (memory/outline/cache.py): on an overlay that is the shared venv's, which `.memory-shared` names."""
    shared = Path(sys.prefix)  # this test run's venv, complete, stands for a shared one
    if (shared / venv_store.SHARED_FILE).exists():  # itself an overlay (a fresh clone's): the one it stands on
        shared = Path((shared / venv_store.SHARED_FILE).read_text().strip())
    overlay = tmp_path / "venv"
    venv_store.overlay(str(shared), str(ROOT), str(overlay), {})
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from memory.outline.cache import _ensure_site_packages;"
            "_ensure_site_packages(); import tree_sitter, tree_sitter_python; print(tree_sitter.__file__)")
    done = subprocess.run([str(overlay / "bin" / "python"), "-S", "-c", code, str(ROOT)], capture_output=True,
                          text=True, cwd="/")
    assert done.returncode == 0 and done.stdout.startswith(venv_store.site_packages(str(shared))), done.stderr
    plain = subprocess.run([str(overlay / "bin" / "python"), "-c", "import memory, lancedb; print(memory.__file__)"],
                           capture_output=True, text=True, cwd="/")
    assert plain.stdout.strip() == str(ROOT / "memory" / "__init__.py"), plain.stderr
    data = tmp_path / "data"  # an installed plugin's data dir, its venv the overlay: doctor names the shared one
    data.mkdir()
    (data / "venv").symlink_to(overlay)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "CLAUDE"))}
    doctor = subprocess.run([str(ROOT / "bin" / "memory"), "doctor", "--json"], capture_output=True, text=True,
                            cwd=tmp_path, env={**env, "CLAUDE_PLUGIN_DATA": str(data), "MEMORY_HOME": str(data)})
    report = json.loads(doctor.stdout)
    assert report["hook_interpreter"] == str(data / "venv" / "bin" / "python"), report
    assert report["venv_shared"] == str(shared), report


def test_the_overlays_commands_run_on_its_interpreter_whatever_form_their_shebang_has(tmp_path: Path) -> None:
    """A command of the shared venv names its interpreter in the shebang, or (a long path) in the second line
    of a `#!/bin/sh` trampoline, as pip and uv write them: the overlay's copy runs on the overlay's."""
    import venv

    shared = tmp_path / "shared"
    venv.EnvBuilder(symlinks=True).create(shared)
    code = "import sys; print(sys.executable)\n"
    (shared / "bin" / "plain").write_text(f"#!{shared}/bin/python\n{code}")
    (shared / "bin" / "long").write_text(f"#!/bin/sh\n'''exec' \"{shared}/bin/python\" \"$0\" \"$@\"\n' '''\n{code}")
    for name in ("plain", "long"):
        (shared / "bin" / name).chmod(0o755)
    overlay = tmp_path / "overlay"
    venv_store.overlay(str(shared), str(ROOT), str(overlay), {})
    for name in ("plain", "long"):
        done = subprocess.run([str(overlay / "bin" / name)], capture_output=True, text=True, check=True)
        assert done.stdout.strip() == str(overlay / "bin" / "python"), (name, done.stdout)


def test_the_overlay_has_the_shared_venv_s_native_commands(tmp_path: Path) -> None:
    """A command that is a program, not a script (ruff is one), is there too: scripts/test runs .venv/bin/ruff."""
    import shutil
    import venv

    shared = tmp_path / "shared"
    venv.EnvBuilder(symlinks=True).create(shared)
    native = shared / "bin" / "native"
    shutil.copy(shutil.which("echo") or "/bin/echo", native)
    native.chmod(0o755)
    overlay = tmp_path / "overlay"
    venv_store.overlay(str(shared), str(ROOT), str(overlay), {})
    done = subprocess.run([str(overlay / "bin" / "native"), "ran"], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "ran"
    assert not (overlay / "bin" / "activate").is_symlink()  # the overlay's own, not the shared venv's
