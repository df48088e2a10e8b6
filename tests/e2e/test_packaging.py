"""Claude Code accepts the plugin: strict validation, and install through the marketplace."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.e2e_harness import REPO
from tests.support.helpers import stated_plugin_mb

pytestmark = pytest.mark.e2e


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "CLAUDE", "MEMORY_"))}
    env.update(HOME=str(home), CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
    return env


def test_claude_plugin_validate_strict_passes(claude_bin: Path, tmp_path: Path) -> None:
    proc = subprocess.run([str(claude_bin), "plugin", "validate", "--strict", str(REPO)], capture_output=True,
                          text=True, env=_env(tmp_path), timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Validation passed" in proc.stdout + proc.stderr


def test_marketplace_add_then_install(claude_bin: Path, tmp_path: Path) -> None:
    # A clean copy of the plugin as a user would have it (no venv, no tools, no git history).
    market = tmp_path / "memory-plugin"
    shutil.copytree(REPO, market, ignore=shutil.ignore_patterns(".venv", ".tools", ".git", "__pycache__",
                                                                 ".pytest_cache", ".ruff_cache", "*.egg-info"))
    env = _env(tmp_path / "home")
    (tmp_path / "home").mkdir()
    add = subprocess.run([str(claude_bin), "plugin", "marketplace", "add", str(market)], capture_output=True,
                         text=True, env=env, timeout=120)
    assert add.returncode == 0, add.stdout + add.stderr
    install = subprocess.run([str(claude_bin), "plugin", "install", "memory@memory-local"], capture_output=True,
                             text=True, env=env, timeout=120)
    assert install.returncode == 0, install.stdout + install.stderr
    listing = subprocess.run([str(claude_bin), "plugin", "list", "--json"], capture_output=True, text=True,
                             env=env, timeout=120)
    assert listing.returncode == 0, listing.stderr
    plugins = json.loads(listing.stdout)
    assert any("memory@memory-local" in json.dumps(p) for p in plugins), listing.stdout


def _tracked_copy(dest: Path) -> Path:
    """The checkout's tracked files, as a clone has them."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        if (REPO / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, dest / name)
    return dest


def _size(path: Path) -> int:
    return sum(p.lstat().st_size for p in path.rglob("*"))


def test_install_from_a_set_up_checkout_copies_no_venv_or_tools(claude_bin: Path, tmp_path: Path) -> None:
    """scripts/setup leaves .venv and .tools as symlinks to folders outside the checkout (`--where`), and
    the client does not copy symlinks: the plugin cache gets the code only (it got 1.5 GB before)."""
    checkout = _tracked_copy(tmp_path / "checkout")
    env = _env(tmp_path / "home")
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    where = subprocess.run([str(checkout / "scripts" / "setup"), "--where"], capture_output=True, text=True,
                           env=env, check=True).stdout
    targets = dict(line.split(": ", 1) for line in where.splitlines())
    for name, link in ((".venv", targets["venv"]), (".tools", targets["tools"])):
        outside = Path(link.split(" -> ")[1].replace("venv-*", "venv-1"))
        assert not outside.is_relative_to(checkout)
        (outside / "lib").mkdir(parents=True)
        (outside / "lib" / "big").write_bytes(b"\0" * 20_000_000)  # stands for 700 MB of packages
        (checkout / name).symlink_to(outside)
    (tmp_path / "home").mkdir()
    for args in (["plugin", "marketplace", "add", str(checkout)], ["plugin", "install", "memory@memory-local"]):
        proc = subprocess.run([str(claude_bin), *args], capture_output=True, text=True, env=env, timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    cache = tmp_path / "home" / ".claude" / "plugins"
    installed = next(cache.glob("cache/memory-local/memory/*"))
    assert (installed / "bin" / "memory").is_file() and (installed / ".claude-plugin" / "plugin.json").is_file()
    assert not (installed / ".venv").exists() and not (installed / ".tools").exists()
    # the checkout's own files (~5 MB with the parser fixtures, 2026-12-07), far from one linked folder's 20 MB
    assert _size(cache) < 10_000_000, _size(cache)


def test_the_built_plugin_installs_without_tests_or_leftovers(claude_bin: Path, tmp_path: Path) -> None:
    """scripts/build_plugin.py writes the plugin alone into a folder of its own; the real client installs it
    from there and its copy holds exactly those files: no tests/, no caches, no egg-info."""
    from scripts.build_plugin import build, plugin_files

    checkout = tmp_path / "checkout"  # a used checkout: caches and build leftovers beside the tracked files
    for name in plugin_files(REPO) + ["tests/test_x.py", "scripts/bench/x.py"]:
        (checkout / name).parent.mkdir(parents=True, exist_ok=True)
        if (REPO / name).is_file():
            shutil.copy2(REPO / name, checkout / name)
        else:
            (checkout / name).write_text("x = 1\n")
    for leftover in ("memory/__pycache__/x.pyc", "claude_memory_plugin.egg-info/PKG-INFO", ".pytest_cache/x"):
        (checkout / leftover).parent.mkdir(parents=True, exist_ok=True)
        (checkout / leftover).write_text("x")
    market = tmp_path / "memory-plugin"
    written = build(market, checkout)
    env = _env(tmp_path / "home")
    (tmp_path / "home").mkdir()
    validate = subprocess.run([str(claude_bin), "plugin", "validate", "--strict", str(market)], capture_output=True,
                              text=True, env=env, timeout=120)
    assert validate.returncode == 0, validate.stdout + validate.stderr
    for args in (["plugin", "marketplace", "add", str(market)], ["plugin", "install", "memory@memory-local"]):
        proc = subprocess.run([str(claude_bin), *args], capture_output=True, text=True, env=env, timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    installed = next((tmp_path / "home" / ".claude" / "plugins").glob("cache/memory-local/memory/*"))
    copied = sorted(str(p.relative_to(installed)) for p in installed.rglob("*") if p.is_file())
    assert copied == sorted(str(p.relative_to(market)) for p in market.rglob("*") if p.is_file())
    assert not any(name.startswith(("tests/", "scripts/bench/")) or "__pycache__" in name or "egg-info" in name
                   or name.startswith(".pytest_cache") for name in copied), copied
    assert {"scripts/setup", "scripts/venv_store.py", "bin/memory", "hooks/run", "pyproject.toml"} <= set(copied)
    assert sum((installed / name).stat().st_size for name in copied) == written


def test_setup_install_puts_the_plugin_alone_in_the_cache(claude_bin: Path, tmp_path: Path) -> None:
    """The documented install, `scripts/setup --install`, from a used clone (caches, build leftovers and
    tests/ beside the code): the real client's copy is the plugin alone, of the size docs/install.md states,
    run from the folder the setup wrote; a second run changes nothing and its last line says how to start."""
    from scripts.build_plugin import plugin_files

    clone = _tracked_copy(tmp_path / "clone")
    git = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "clone"]):
        subprocess.run(["git", *args], cwd=clone, check=True, env={**os.environ, **git})
    for leftover in ("memory/__pycache__/x.pyc", ".mypy_cache/3.11/big.json", "x.egg-info/PKG-INFO"):
        (clone / leftover).parent.mkdir(parents=True, exist_ok=True)
        (clone / leftover).write_bytes(b"\0" * 1_000_000)
    env = _env(tmp_path / "home")
    env.update(XDG_DATA_HOME=str(tmp_path / "data"), PATH=f"{claude_bin.parent}:{env['PATH']}")
    (tmp_path / "home").mkdir()
    runs = [subprocess.run([str(clone / "scripts" / "setup"), "--install"], capture_output=True, text=True,
                           env=env, timeout=300) for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stdout + run.stderr
    folder = tmp_path / "data" / "claude-memory-plugin"
    assert runs[1].stdout.splitlines()[-1] == f"setup: installed memory@memory-local from {folder}; start Claude " \
                                              "Code with: claude", runs[1].stdout
    installed = next((tmp_path / "home" / ".claude" / "plugins").glob("cache/memory-local/memory/*"))
    copied = sorted(str(p.relative_to(installed)) for p in installed.rglob("*") if p.is_file())
    assert copied == plugin_files(clone) == sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    assert not any(name.startswith(("tests/", ".mypy_cache")) or "__pycache__" in name or "egg-info" in name
                   for name in copied), copied
    mb = sum((installed / name).stat().st_size for name in copied) / 1e6
    assert abs(mb - stated_plugin_mb()) <= 0.15 * stated_plugin_mb(), f"copied {mb:.2f} MB"
    listing = subprocess.run([str(claude_bin), "plugin", "list", "--json"], capture_output=True, text=True, env=env,
                             timeout=120)
    plugin = next(p for p in json.loads(listing.stdout) if p["id"] == "memory@memory-local")
    assert plugin["readFromFolder"] == str(folder), plugin  # a marketplace on a folder runs it in place
