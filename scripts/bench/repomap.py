"""The repository map (`memory map`) on a ~2,000-file repository: cold, warm, one file changed, focused.

Default corpus: the first N source files (sorted paths, languages the outliner knows) of this venv's
site-packages, copied into a scratch folder made a git repository (untracked files, so `git ls-files
--others` lists them): real third-party code nobody tuned on. `--corpus DIR` maps DIR as it is.

Each figure is one call of memory.outline.mapbuild.build in this process (CPU and wall), on a fresh data
dir: cold (every file parsed), warm (nothing changed: the stored map), one file changed (one parse, ranked
again), focused (ranked with a focus, never stored); and the `memory map` command as a process, warm.

    .venv/bin/python -m scripts.bench.repomap [--files 2000] [--corpus DIR] [--tokens 1024]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

from scripts.bench.common import ROOT, print_json, python


def make_corpus(dest: Path, files: int) -> Path:
    """The first `files` source files of site-packages, copied under `dest` (a git repository)."""
    from parser.languages import language_for_path

    site = Path(sysconfig.get_paths()["purelib"])
    taken = 0
    for folder, dirs, names in os.walk(site):
        dirs.sort()
        for name in sorted(names):
            src = Path(folder) / name
            if taken >= files or not language_for_path(str(src)) or src.stat().st_size > 1 << 20:
                continue
            target = dest / src.relative_to(site)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, target)
            taken += 1
        if taken >= files:
            break
    subprocess.run(["git", "init", "-q", str(dest)], check=True)
    return dest


def timed(fn: Any) -> tuple[Any, dict[str, float]]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, {"wall_s": round(time.perf_counter() - wall, 3), "cpu_s": round(time.process_time() - cpu, 3)}


def run(root: Path, tokens: int) -> dict[str, Any]:
    from memory.outline import mapbuild
    from memory.store.db import connect

    home = Path(tempfile.mkdtemp(prefix="bench-repomap-home-"))
    db = connect(str(home / "memory.db"))
    results: dict[str, Any] = {"root": str(root)}
    built, results["cold"] = timed(lambda: mapbuild.build(db, str(root), tokens))
    results["files"], results["parsed_cold"] = built.files, len(built.parsed)
    built, results["warm"] = timed(lambda: mapbuild.build(db, str(root), tokens))
    results["warm_reused"] = built.reused
    first = root / sorted(mapbuild.list_files(str(root)))[0]
    first.write_text(first.read_text(encoding="utf-8", errors="replace") + "\n# changed\n", encoding="utf-8")
    built, results["one_changed"] = timed(lambda: mapbuild.build(db, str(root), tokens))
    results["parsed_one_changed"] = len(built.parsed)
    focus = [sorted(mapbuild.list_files(str(root)))[len(built.parsed) * 7 % max(built.files, 1)]]
    built, results["focused"] = timed(lambda: mapbuild.build(db, str(root), tokens, focus))
    results["map_tokens"] = built.to_json()["tokens"]
    results["cli_warm"] = cli_warm(root, home, tokens)
    shutil.rmtree(home, ignore_errors=True)
    return results


def cli_warm(root: Path, home: Path, tokens: int) -> dict[str, float]:
    """`memory map` as a process (interpreter, click and all) once the map is stored: wall and CPU."""
    env = {**os.environ, "MEMORY_HOME": str(home), "PYTHONPATH": str(ROOT)}
    cmd = [python(), "-m", "memory", "map", str(root), "--tokens", str(tokens)]
    subprocess.run(cmd, env=env, capture_output=True, check=True)  # the project's db, built once
    before = os.times()
    wall = time.perf_counter()
    subprocess.run(cmd, env=env, capture_output=True, check=True)
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return {"wall_s": round(time.perf_counter() - wall, 3), "cpu_s": round(cpu, 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--files", type=int, default=2000, help="files copied from site-packages (default 2000)")
    ap.add_argument("--corpus", type=Path, help="map this folder instead (it is changed: one file gets a line)")
    ap.add_argument("--tokens", type=int, default=1024)
    args = ap.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-repomap-"))
    try:
        root = args.corpus.resolve() if args.corpus else make_corpus(scratch / "repo", args.files)
        print_json(run(root, args.tokens))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
