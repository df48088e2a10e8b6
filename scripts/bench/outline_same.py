"""Whether a change keeps every outline: what the Read hook would show for each code file, compared with a dump.

A speed change to the outliner must not change its output. `dump` records, per code file (100+ lines, under
400 KB) under the given folders: a hash of the privacy-cleaned rendered outline (what a Read gets below the
header), the token estimates of the file and of that text, the broken line ranges and where the parse budget
cut the file. Run it from two checkouts (their own parser on the path: the command below, in each) and `diff`
the two JSON files; a difference is a deliberate fix or a regression.

    .venv/bin/python -m scripts.bench.outline_same dump OUT.json DIR [DIR ...] [--per-dir N]
    .venv/bin/python -m scripts.bench.outline_same diff BEFORE.json AFTER.json

LLVM's and libstdc++'s `.h` headers are outlined as C++ (as tests/support/outline_corpus.py does).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys

from memory.base.privacy import clean
from parser import estimate_tokens, language_for_path, outline_source

MIN_LINES = 100
MAX_BYTES = 400_000


def _language(path: str) -> str | None:
    return "cpp" if path.endswith(".h") and ("/llvm" in path or "/c++/" in path) else None


def shown(path: str, data: bytes) -> list[object]:
    """The file's entry: outline hash, file and outline tokens, broken line ranges, parse cut, why not parsed."""
    outline = outline_source(data, path, _language(path))
    text = clean(outline.render()) if outline.parsed and outline.symbols else ""
    return [hashlib.sha1(text.encode()).hexdigest()[:12], estimate_tokens(data), estimate_tokens(text),
            [list(r) for r in outline.error_lines], outline.parsed_bytes, None if outline.parsed else outline.reason]


def code_files(folder: str, limit: int) -> list[str]:
    """Up to `limit` code files of `folder` (sorted walk) that the outliner knows, of MIN_LINES+ lines."""
    found: list[str] = []
    for base, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(base, name)
            if language_for_path(path) is None or not os.path.isfile(path) or os.path.getsize(path) > MAX_BYTES:
                continue
            with open(path, "rb") as fh:
                if fh.read().count(b"\n") >= MIN_LINES:
                    found.append(path)
            if len(found) >= limit:
                return found
    return found


def dump(out: str, folders: list[str], per_dir: int) -> int:
    entries = {}
    for folder in folders:
        for path in code_files(folder, per_dir):
            with open(path, "rb") as fh:
                entries[path] = shown(path, fh.read())
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(entries, fh)
    print(f"{len(entries)} files -> {out}")
    return 0


def diff(before: str, after: str) -> int:
    with open(before, encoding="utf-8") as fh:
        a = json.load(fh)
    with open(after, encoding="utf-8") as fh:
        b = json.load(fh)
    changed = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    print(f"{len(a)} vs {len(b)} files, {len(changed)} differ")
    for path in changed[:30]:
        print(f"{path}\n  before {a.get(path)}\n  after  {b.get(path)}")
    return 1 if changed else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump", help="record what the hook would show for the folders' code files")
    d.add_argument("out")
    d.add_argument("folders", nargs="+")
    d.add_argument("--per-dir", type=int, default=700, help="files at most per folder (default 700)")
    c = sub.add_parser("diff", help="compare two dumps (exit 1 when they differ)")
    c.add_argument("before")
    c.add_argument("after")
    args = ap.parse_args()
    return dump(args.out, args.folders, args.per_dir) if args.command == "dump" else diff(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
