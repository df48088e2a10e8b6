"""Real source files on this machine, picked deterministically, for the outline tests and benchmark.

Each language has a list of roots where a Debian/npm machine keeps source (Python's own from the
running interpreter); the first existing root wins. Files of at least ``min_lines`` lines
are sorted by path and sampled evenly, so the same machine always yields the
same files, spread across the whole tree rather than the first folder.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sysconfig

MIN_LINES = 300


def _npm_roots() -> list[str]:
    roots = ["/usr/lib/node_modules/npm/node_modules", "/usr/local/lib/node_modules/npm/node_modules"]
    npm = shutil.which("npm")
    if npm and not any(os.path.isdir(r) for r in roots):
        try:
            out = subprocess.run([npm, "root", "-g"], capture_output=True, text=True, timeout=30)
            roots.append(os.path.join(out.stdout.strip(), "npm", "node_modules"))
        except (OSError, subprocess.SubprocessError):
            pass
    return roots


def _python_roots() -> list[str]:
    root = sysconfig.get_paths()["stdlib"]
    return [root] if root else []


def _existing(*patterns: str) -> list[str]:
    return [p for pat in patterns for p in sorted(glob.glob(os.path.expanduser(pat)))]


# language -> (roots, glob under each root, path fragments to skip). For Go,
# Rust and JavaScript the first existing root is used; for C, C++ and PHP all
# of them (each is small).
_SOURCES: dict[str, tuple[list[str], str, tuple[str, ...]]] = {
    # Top-level stdlib modules only: site-packages and tests are not "the stdlib".
    "python": (_python_roots(), "*.py", ()),
    "javascript": ([], "**/*.js", (".min.js",)),
    # Go ships deliberately broken files under testdata/.
    "go": (_existing("/usr/share/go-*/src", "/usr/lib/go-*/src", "/usr/local/go/src"),
           "**/*.go", ("/testdata/",)),
    "rust": (_existing("/usr/src/rustc-*/library",
                       "~/.rustup/toolchains/*/lib/rustlib/src/rust/library", "~/.cargo/registry/src"),
             "**/*.rs", ()),
    # CPython's C API headers: the running interpreter's own, so every machine with this Python outlines the
    # same files (the C examples under /usr/share/doc varied with the Debian packages a machine had installed).
    "c": (_existing(sysconfig.get_paths()["include"]), "**/*.[ch]", ()),
    # LLVM's headers are C++ despite the .h (outlined with language="cpp").
    "cpp": (_existing("/usr/include/llvm-1*/llvm", "/usr/include/c++/*/bits"), "**/*.h", ()),
    "php": (_existing("/usr/lib/google-cloud-sdk/platform/google_appengine"), "**/*.php", ()),
}
_COMBINE_ROOTS = frozenset({"c", "cpp", "php"})

# What to install when a language has no source here (for skip messages).
HOW_TO_GET = {
    "go": "apt-get install golang-1.19-src (Go's sources under /usr/share/go-1.19/src)",
    "rust": "apt-get install rust-src (Rust's sources under /usr/src/rustc-*/library)",
    "javascript": "install Node.js with npm (npm ships its dependencies' JavaScript)",
}


def source_roots(language: str) -> list[str]:
    roots, _, _ = _SOURCES[language]
    if language == "javascript":
        roots = _npm_roots()
    existing = list(dict.fromkeys(r for r in roots if r and os.path.isdir(r)))
    return existing if language in _COMBINE_ROOTS else existing[:1]


def _line_count(path: str) -> int:
    try:
        with open(path, "rb") as fh:
            return fh.read().count(b"\n")
    except OSError:
        return 0


def find_files(language: str, limit: int, min_lines: int = MIN_LINES) -> list[str]:
    """Up to ``limit`` files of ``language`` with at least ``min_lines`` lines (none for a language this
    machine keeps no source of: the registries' languages are benchmarked with `--corpus`)."""
    if language not in _SOURCES:
        return []
    _, pattern, skip = _SOURCES[language]
    paths = sorted({
        p for root in source_roots(language)
        for p in glob.glob(os.path.join(root, pattern), recursive=True)
        if os.path.isfile(p) and not any(s in p for s in skip)
    })
    big = [p for p in paths if _line_count(p) >= min_lines]
    if len(big) <= limit:
        return big
    step = len(big) / limit
    return [big[int(i * step)] for i in range(limit)]


def languages() -> list[str]:
    return list(_SOURCES)
