"""Ordinary recorded text, for the false-flag rate of the instruction flag (memory/base/fence.py): what the
plugin records in real work, taken from real sources, never written for the test. From the repository
histories in shared/data/git (commit messages, diffs as `git show` prints them, docs and source files in
memory-sized pieces), real tool output made here from them (a pytest run of click's own suite, cargo and
npm run offline, git status and log), and the real Claude Code transcripts and hook payloads in
shared/data/claude-code (every prompt, message, tool input and tool result).

`items()` clones the bundles once into the temp dir (nothing is downloaded) and returns {source: texts}.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.support.helpers import SHARED

PIECE_LINES = 40  # a file or a long output is recorded in pieces about this long (a memory, not a file)
PIECE_CHARS = 3000
_DOC_EXT = (".md", ".rst", ".txt", ".markdown")
_CODE_EXT = (".py", ".go", ".js", ".rs", ".ts", ".toml", ".yml", ".yaml", ".json", ".sh", ".cfg")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, errors="replace",
                          check=True, timeout=300).stdout


def clones() -> dict[str, Path]:
    """Each bundle in shared/data/git cloned once (a detached checkout in the temp dir)."""
    root = Path(tempfile.gettempdir()) / f"memory-ordinary-corpus-{os.getuid()}"
    out = {}
    for bundle in sorted((SHARED / "data" / "git").glob("*.bundle")):
        dest = root / bundle.stem
        if not (dest / ".git").is_dir():
            root.mkdir(parents=True, exist_ok=True)
            tmp = root / f".{bundle.stem}-{os.getpid()}"
            subprocess.run(["git", "clone", "-q", str(bundle), str(tmp)], check=True, capture_output=True,
                           timeout=600)
            tmp.rename(dest)
        out[bundle.stem] = dest
    return out


def pieces(text: str, lines: int = PIECE_LINES, chars: int = PIECE_CHARS) -> list[str]:
    """A long text in pieces of at most `lines` lines and `chars` characters."""
    rows = text.splitlines()
    out = []
    for i in range(0, len(rows), lines):
        chunk = "\n".join(rows[i:i + lines])
        out += [chunk[j:j + chars] for j in range(0, len(chunk), chars)]
    return [p for p in out if p.strip()]


def _commits(repo: Path) -> list[str]:
    return [m.strip() for m in _git(repo, "log", "--format=%B%x00").split("\x00") if m.strip()]


def _diffs(repo: Path, n: int = 150) -> list[str]:
    out = []
    for sha in _git(repo, "log", f"-n{n}", "--format=%H").split():
        out.append(_git(repo, "show", "--stat", "-p", sha)[:PIECE_CHARS])
    return out


def _files(repo: Path, exts: tuple[str, ...]) -> list[str]:
    out = []
    for rel in _git(repo, "ls-files").splitlines():
        if rel.lower().endswith(exts):
            try:
                out += pieces((repo / rel).read_text(errors="replace"))
            except OSError:
                continue
    return out


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, errors="replace", timeout=300,
                              env={**os.environ, **(env or {})})
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return proc.stdout + proc.stderr


def _tool_output(repos: dict[str, Path]) -> list[str]:
    """Real output of the tools an agent runs, made here from the clones, offline."""
    out: list[str] = []
    click = repos.get("click")
    if click is not None:
        cache = click.parent / "click-pytest.txt"
        if not cache.exists():
            env = {"PYTHONPATH": str(click / "src"), "PYTHONDONTWRITEBYTECODE": "1"}
            text = _run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", "-v", "tests/test_basic.py",
                         "tests/test_options.py", "tests/test_termui.py"], click, env)
            text += _run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q"], click, env)
            cache.write_text(text)
        out += pieces(cache.read_text())
    for name, cmd in (("ripgrep", ["cargo", "build", "--offline", "--locked"]), ("express", ["npm", "ls", "--all"])):
        if name in repos:
            out += pieces(_run(cmd, repos[name], {"CARGO_TARGET_DIR": str(repos[name].parent / "cargo-target")}))
    for repo in repos.values():
        out += pieces(_git(repo, "log", "--stat", "-n", "60"))
        out += pieces(_git(repo, "status"))
    return out


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _claude_code() -> list[str]:
    """Every string of the real transcripts and hook payloads, in pieces: prompts, assistant text, tool
    inputs and tool results."""
    base = SHARED / "data" / "claude-code"
    out: list[str] = []
    for path in sorted(base.rglob("*.json*")):
        rows = path.read_text(errors="replace").splitlines() if path.suffix == ".jsonl" else [path.read_text()]
        for row in rows:
            try:
                value = json.loads(row)
            except ValueError:
                continue
            for s in _strings(value):
                if len(s) >= 20 and not s.startswith(("/", "toolu_", "msg_")):
                    out += pieces(s)
    return list(dict.fromkeys(out))


def items() -> dict[str, list[str]]:
    """{source: ordinary texts} from every source above."""
    repos = clones()
    out: dict[str, list[str]] = {"commit messages": [], "diffs": [], "docs": [], "code": []}
    for repo in repos.values():
        out["commit messages"] += _commits(repo)
        out["diffs"] += _diffs(repo)
        out["docs"] += _files(repo, _DOC_EXT)
        out["code"] += _files(repo, _CODE_EXT)
    out["tool output"] = _tool_output(repos)
    out["claude code"] = _claude_code()
    return out
