"""Mask C/C++ macros that derail tree-sitter, keeping every byte offset.

Headers wrap declarations in macros the grammar cannot know about
(`_GLIBCXX_BEGIN_NAMESPACE_VERSION`, `namespace std _GLIBCXX_VISIBILITY(x)`,
`LLVM_NODISCARD bool empty() const`, `__host__ __device__ int f()`), and one
of them can turn a whole file into an ERROR node. The masked copy is what we
parse; signatures are still sliced from the original bytes, and since masks
replace characters by spaces of the same length, lines and offsets agree.
"""

from __future__ import annotations

import re

# ALL_CAPS with an underscore (not a type like FILE), or glibc's __THROW.
_MACRO = rb"(?:_+[A-Z][A-Z0-9_]*|[A-Z][A-Z0-9]*_[A-Z0-9_]*)"
_ARGS = rb"(?:[ \t]*\((?:[^()\n]|\([^()\n]*\))*\))?"  # (x) or ((1, 2))
_LOWER = rb"__[a-z][a-z0-9_]*"  # __host__, __wur, __attribute_malloc__
_ATTR = rb"(?:" + _MACRO + rb"|" + _LOWER + rb")" + _ARGS
# Leading a declaration, a lower-case attribute is a dunder (`__host__`, `__attribute__((x))`) or
# `__declspec(x)`: libstdc++ names its own functions `__thread_yield()`, and those must stay.
_LEAD_ATTR = rb"(?:" + _MACRO + rb"|__[a-z][a-z0-9_]*__|__declspec)" + _ARGS

# Compiled on first use (C and C++ only): compiling them costs a hook ~1 ms.
_SOURCES = [
    # A macro alone on its line: namespace/extern "C" openers and closers.
    (rb"^[ \t]*(?=[A-Z_])(" + _MACRO + _ARGS + rb")[ \t]*$", re.M),
    # namespace std _GLIBCXX_VISIBILITY(default)
    # (A literal first, the word boundary checked behind it: ~10x faster than a leading \b.)
    (rb"namespace(?<=\bnamespace)[ \t]+\w+[ \t]+(" + _MACRO + _ARGS + rb")", 0),
    # class LLVM_GSL_POINTER StringRef {  /  struct LLVM_NODISCARD Foo
    # (One letter first, checked behind: an alternation first is tried at every byte, ~20% slower.)
    (rb"[csu](?<=\b[csu])(?:lass|truct|nion)[ \t]+(" + _MACRO + _ARGS + rb")[ \t]+(?=[A-Za-z_])", 0),
    # Attribute macros leading a declaration: LLVM_NODISCARD bool f();
    # (The look-ahead rejects most lines before the alternation is tried: ~3x faster.)
    (rb"^[ \t]*(?=[A-Z_])((?:" + _LEAD_ATTR + rb"[ \t]+)+)(?=[A-Za-z_~])", re.M),
    # Trailing ones: int f() const _GLIBCXX_NOEXCEPT {  /  f (void) __THROW __wur;
    (rb"\)[ \t]*(?:const[ \t]*)?((?:" + _ATTR + rb"[ \t]*)+)(?=[;{]|$)", re.M),
]


def _blank(match: re.Match[bytes]) -> bytes:
    whole = match.group(0)
    start, end = match.start(1) - match.start(0), match.end(1) - match.start(0)
    return whole[:start] + b" " * (end - start) + whole[end:]


_PATTERNS: list[re.Pattern[bytes]] = []


def mask_macros(source: bytes) -> bytes:
    """``source`` with derailing macros replaced by spaces (same length)."""
    if not _PATTERNS:
        _PATTERNS.extend(re.compile(pattern, flags) for pattern, flags in _SOURCES)
    for pattern in _PATTERNS:
        source = pattern.sub(_blank, source)
    return source
