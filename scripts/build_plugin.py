"""Write the plugin alone into a folder: what a marketplace install should copy, without the tests.

Claude Code copies a marketplace's plugin folder whole (everything but `.git`: no ignore file is read), and
this repository's root is the plugin, tests/ included. This writes the tracked files a running plugin uses
(the code, its manifests, the setup, the docs) into DEST, a marketplace of its own (`.claude-plugin/
marketplace.json` comes along), for `claude plugin marketplace add DEST`:

    python3 scripts/build_plugin.py ~/memory-plugin      # again after a `git pull`

`scripts/setup --install` runs it into ~/.local/share/claude-memory-plugin and adds that marketplace. A
marketplace on a folder runs the plugin from that folder (docs/install.md): keep DEST; a new build there
takes effect at the next session start.
Standard library only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Of the repository's top level, what a running plugin never reads: the tests and the CI configuration.
DEV_TOP = frozenset({"tests", ".ci", ".gitignore"})
# Of scripts/, what the plugin runs: the setup (started by SessionStart), its venv store, and the
# Claude Code installer `scripts/setup --run` uses. The rest (benchmarks, doc generators, the test runner)
# is for development.
RUNTIME_SCRIPTS = frozenset({"setup", "venv_store.py", "install-claude-code"})
LEFTOVERS = ("__pycache__", ".egg-info", ".pytest_cache", ".ruff_cache", ".mypy_cache", ".import_linter_cache")


def _wanted(name: str) -> bool:
    parts = Path(name).parts
    if parts[0] in DEV_TOP or any(p.endswith(LEFTOVERS) for p in parts):
        return False
    return parts[0] != "scripts" or (len(parts) == 2 and parts[1] in RUNTIME_SCRIPTS)


def plugin_files(root: Path = ROOT) -> list[str]:
    """The plugin's files, relative to `root`: the tracked ones (a folder without git: all but the
    leftovers of builds, tests and tools), less the tests and the development scripts."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True)
    if listed.returncode == 0 and listed.stdout:
        names = [n for n in listed.stdout.decode().split("\0") if n]
    else:
        names = [str(p.relative_to(root)) for p in root.rglob("*")
                 if p.is_file() and not p.is_symlink() and ".git" not in p.relative_to(root).parts]
    return sorted(n for n in names if _wanted(n) and (root / n).is_file() and not (root / n).is_symlink())


def build(dest: Path, root: Path = ROOT) -> int:
    """Replace DEST with the plugin's files from this checkout; returns the bytes written.

    A marketplace on a folder runs the plugin from it, so a session may be running hooks from DEST: the new
    files go into a folder beside it, which replaces DEST in two renames (never a half-written plugin)."""
    if dest.exists() and not (dest / ".claude-plugin" / "plugin.json").exists():
        raise SystemExit(f"build_plugin: {dest} exists and is not a plugin folder this wrote; not touching it")
    files = plugin_files(root)
    fresh = dest.with_name(f".{dest.name}.new-{os.getpid()}")
    shutil.rmtree(fresh, ignore_errors=True)
    total = 0
    for name in files:
        (fresh / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, fresh / name)
        total += os.path.getsize(fresh / name)
    old = dest.with_name(f".{dest.name}.old-{os.getpid()}")
    if dest.exists():  # the data of an installed plugin lives elsewhere: nothing in DEST is kept
        dest.rename(old)
    fresh.rename(dest)
    shutil.rmtree(old, ignore_errors=True)
    return total


def main(argv: list[str]) -> int:
    quiet = "--quiet" in argv  # scripts/setup --install adds the marketplace itself
    args = [a for a in argv if a != "--quiet"]
    if len(args) != 1:
        print(__doc__.split("\n\n")[2].strip(), file=sys.stderr)
        return 2
    dest = Path(args[0]).expanduser().resolve()
    if dest == ROOT or ROOT in dest.parents:
        print("build_plugin: DEST must be outside the checkout", file=sys.stderr)
        return 2
    total = build(dest)
    print(f"build_plugin: {total / 1e6:.1f} MB in {dest}" + ("" if quiet else
          f"; install it with:\n  claude plugin marketplace add {dest}\n  claude plugin install memory@memory-local"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
