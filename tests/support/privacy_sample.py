"""Ordinary files for the privacy filter's false-positive rate: 200 source files and docs from the repository
histories in shared/data/git (Python, JavaScript, Go, Rust, and their READMEs and docs), picked evenly over
each repository's sorted file list (no file chosen by what the filter does with it), and the lines the filter
changes in them."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support.ordinary_corpus import clones

CODE_EXT = (".py", ".js", ".go", ".rs")
DOC_EXT = (".md", ".rst", ".txt", ".markdown")
PER_REPO = 50  # files: 4 repositories, 200 files
DOCS_PER_REPO = 10


def _spread(items: list[Path], n: int) -> list[Path]:
    """n items evenly spaced over the list (all of them if it is shorter)."""
    if len(items) <= n:
        return items
    return [items[i * len(items) // n] for i in range(n)]


def files() -> list[Path]:
    out: list[Path] = []
    for repo in clones().values():
        listed = subprocess.run(["git", "-C", str(repo), "ls-files"], capture_output=True, text=True, check=True,
                                timeout=120).stdout.splitlines()
        paths = [repo / rel for rel in sorted(listed) if (repo / rel).is_file()]
        docs = _spread([p for p in paths if p.suffix.lower() in DOC_EXT], DOCS_PER_REPO)
        code = _spread([p for p in paths if p.suffix in CODE_EXT], PER_REPO - len(docs))
        out += docs + code
    return out


def changed_lines(clean: object, paths: list[Path]) -> tuple[int, list[tuple[str, str, str]]]:
    """(lines read, [(file, line before, line after)] for each line the filter changed), each file cleaned
    whole, as a hook cleans a file's outline or a tool's output."""
    total = 0
    changed: list[tuple[str, str, str]] = []
    for path in paths:
        text = path.read_text(errors="replace")
        out = clean(text)  # type: ignore[operator]
        before, after = text.split("\n"), out.split("\n")
        total += len(before)
        if out == text:
            continue
        if len(before) != len(after):  # a redaction spanning lines: count every line of the text that differs
            changed += [(path.name, line, "") for line in before if line not in out]
            continue
        changed += [(path.name, a, b) for a, b in zip(before, after, strict=True) if a != b]
    return total, changed
