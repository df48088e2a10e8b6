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

_PATTERNS = [
    # A macro alone on its line: namespace/extern "C" openers and closers.
    re.compile(rb"^[ \t]*(" + _MACRO + _ARGS + rb")[ \t]*$", re.M),
    # namespace std _GLIBCXX_VISIBILITY(default)
    re.compile(rb"\bnamespace[ \t]+\w+[ \t]+(" + _MACRO + _ARGS + rb")"),
    # class LLVM_GSL_POINTER StringRef {  /  struct LLVM_NODISCARD Foo
    re.compile(rb"\b(?:class|struct|union)[ \t]+(" + _MACRO + _ARGS + rb")[ \t]+(?=[A-Za-z_])"),
    # Attribute macros leading a declaration: LLVM_NODISCARD bool f();
    re.compile(rb"^[ \t]*((?:" + _ATTR + rb"[ \t]+)+)(?=[A-Za-z_~])", re.M),
    # Trailing ones: int f() const _GLIBCXX_NOEXCEPT {  /  f (void) __THROW __wur;
    re.compile(rb"\)[ \t]*(?:const[ \t]*)?((?:" + _ATTR + rb"[ \t]*)+)(?=[;{]|$)", re.M),
]


def _blank(match: re.Match[bytes]) -> bytes:
    whole = match.group(0)
    start, end = match.start(1) - match.start(0), match.end(1) - match.start(0)
    return whole[:start] + b" " * (end - start) + whole[end:]


def mask_macros(source: bytes) -> bytes:
    """``source`` with derailing macros replaced by spaces (same length)."""
    for pattern in _PATTERNS:
        source = pattern.sub(_blank, source)
    return source
