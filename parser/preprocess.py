"""Mask C/C++ macros that derail tree-sitter, keeping every byte offset.

Headers wrap declarations in macros the grammar cannot know about
(`_GLIBCXX_BEGIN_NAMESPACE_VERSION`, `namespace std _GLIBCXX_VISIBILITY(x)`,
`LLVM_NODISCARD bool empty() const`, `__host__ __device__ int f()`), and one
of them can turn a whole file into an ERROR node. The masked copy is what we
parse; signatures are still sliced from the original bytes, and since masks
replace characters by spaces of the same length, lines and offsets agree.
"""

from __future__ import annotations

from memory.fastpath import recode

TYPE_CHECKING = False  # importing typing costs a hook several ms
if TYPE_CHECKING:
    import re
    from collections.abc import Callable

_M = 8  # re.M: `re` itself is not imported on a cold Read hook's path (parser/grammars.py _lend_re_and_enum)

# ALL_CAPS with an underscore (not a type like FILE), or glibc's __THROW.
_MACRO = rb"(?:_+[A-Z][A-Z0-9_]*|[A-Z][A-Z0-9]*_[A-Z0-9_]*)"
_ARGS = rb"(?:[ \t]*\((?:[^()\n]|\([^()\n]*\))*\))?"  # (x) or ((1, 2))
_LOWER = rb"__[a-z][a-z0-9_]*"  # __host__, __wur, __attribute_malloc__
_ATTR = rb"(?:" + _MACRO + rb"|" + _LOWER + rb")" + _ARGS
# Leading a declaration, a lower-case attribute is a dunder (`__host__`, `__attribute__((x))`) or
# `__declspec(x)`: libstdc++ names its own functions `__thread_yield()`, and those must stay.
_LEAD_ATTR = rb"(?:" + _MACRO + rb"|__[a-z][a-z0-9_]*__|__declspec)" + _ARGS

# Compiled on first use (C and C++ only), from memory/fastpath/recode.py's table: `re` took a cold hook ~2 ms for them.
_SOURCES: list[tuple] = [
    # A macro alone on its line: namespace/extern "C" openers and closers.
    # (Not the last member of an enum or a list, `  A,\n  STATE_ERROR\n}`: see _blank_alone.)
    # (`\n`, not `^`: a literal first is searched for, where `^` is tried at every byte, ~10x slower; mask_macros
    # puts a newline before the text for the first line.)
    (rb"\n[ \t]*(?=[A-Z_])(" + _MACRO + _ARGS + rb")[ \t]*$", _M, "alone"),
    # namespace std _GLIBCXX_VISIBILITY(default)
    # (A literal first, the word boundary checked behind it: ~10x faster than a leading \b.)
    (rb"namespace(?<=\bnamespace)[ \t]+\w+[ \t]+(" + _MACRO + _ARGS + rb")", 0),
    # class LLVM_GSL_POINTER StringRef {  /  struct LLVM_NODISCARD Foo
    # (One letter first, checked behind: an alternation first is tried at every byte, ~20% slower.)
    (rb"[csu](?<=\b[csu])(?:lass|truct|nion)[ \t]+(" + _MACRO + _ARGS + rb")[ \t]+(?=[A-Za-z_])", 0),
    # Attribute macros leading a declaration: LLVM_NODISCARD bool f();
    # (The look-ahead rejects most lines before the alternation is tried: ~3x faster.)
    (rb"\n[ \t]*(?=[A-Z_])((?:" + _LEAD_ATTR + rb"[ \t]+)+)(?=[A-Za-z_~])", _M),
    # After a declared name: `std::mutex* mu_ GUARDED_BY(lock_);`, `void F() override LOCKS_EXCLUDED(mu_);`
    # (thread-safety annotations); the parser would take the macro for the declared function. A keyword
    # before it (`return MAX_OF(a, b);`) makes it an expression: see _blank_after_name.
    # (A space first, what precedes it checked behind: a leading look-behind is tried at every byte, ~2x slower.)
    (rb"[ \t](?<=[\w\]][ \t])[ \t]*(?=[A-Z_])(" + _MACRO + rb"[ \t]*\((?:[^()\n]|\([^()\n]*\))*\))"
     rb"[ \t]*(?=[;={,]|$)", _M, "after_name"),
    # Trailing ones: int f() const _GLIBCXX_NOEXCEPT {  /  f (void) __THROW __wur;
    (rb"\)[ \t]*(?:const[ \t]*)?((?:" + _ATTR + rb"[ \t]*)+)(?=[;{]|$)", _M, "trailing"),
]


# Words after which `WORD MACRO_CALL(x);` is an expression, not a declaration with an attribute.
_EXPRESSION_WORDS = frozenset({b"return", b"case", b"else", b"do", b"goto", b"throw", b"co_return", b"co_yield",
                               b"co_await", b"new", b"delete", b"sizeof"})


def _blank_after_name(match: re.Match[bytes]) -> bytes:
    """_blank, unless the words before the macro make it an expression or a #define's value."""
    line_start = match.string.rfind(b"\n", 0, match.start()) + 1
    words = match.string[line_start:match.start()].split()
    last = words[-1] if words else b""
    if last in _EXPRESSION_WORDS or (len(words) < 2 and not last.endswith(b")")) or words[0].startswith(b"#"):
        return match.group(0)
    return _blank(match)


def _blank_trailing(match: re.Match[bytes]) -> bytes:
    """_blank, but not on a `#define` line: `#define BITMAP_GROUPS(nbits) BITMAP_GROUPS_1_LEVEL(nbits)` is a
    macro's value, and blanking it left the #define empty, so tree-sitter took the next line (another #define)
    for its value."""
    line_start = match.string.rfind(b"\n", 0, match.start()) + 1
    if match.string[line_start:match.start()].lstrip().startswith(b"#"):
        return match.group(0)
    return _blank(match)


def _blank_alone(match: re.Match[bytes]) -> bytes:
    """_blank, unless the line before ends with a comma or an operator: then the name is a list's last member
    (`  STATE_CLOSED,\n  STATE_ERROR\n}`) or an operand; or with a backslash: then it is a #define's value
    (blanked, jemalloc's `#define BITMAP_GROUPS_L0(nbits)` it continues ran into the next #define). A name
    without arguments is a list's last member too when the code's line before it ends with a comma: comments
    and directives between are passed over (LLVM's ISDOpcodes.h: `  VECREDUCE_UMIN,` / `#include
    "VPIntrinsics.def"` / `/// BUILTIN_OP_END - ...` / `  BUILTIN_OP_END` / `};`: the enum's last member was
    blanked), and so is a `//` comment after the code (`  A, // first`). A macro call there is still blanked
    (`LLVM_MARK_AS_BITMASK_ENUM(...)` after `  X = 0x20, // ...`): it is no name a reader looks for."""
    text, at = match.string, match.start() - 1
    while at >= 0 and text[at] in _SPACE:
        at -= 1
    if at >= 0 and text[at] in _CONTINUED:
        return match.group(0)
    if match.group(1).find(b"(") < 0 and _code_line_before(text, match.start()).endswith(b","):
        return match.group(0)
    return _blank(match)


def _code_line_before(text: bytes, end: int) -> bytes:
    """The code of the last line before `end` (a line's start) that holds any, comments and preprocessor
    lines passed over; b"" when none is found within _LOOK_BACK lines."""
    for _ in range(_LOOK_BACK):
        if end <= 0:
            break
        start = text.rfind(b"\n", 0, end) + 1
        line = text[start:end].strip()
        end = start - 1
        if line.endswith(b"*/") and line.find(b"/*") >= 0:  # a comment's end: what is before its start
            line = line[:line.rfind(b"/*")].rstrip()
        elif line.startswith((b"*", b"/*", b"#")):  # inside a comment, or a directive
            continue
        cut = line.find(b"//")
        if cut >= 0:
            line = line[:cut].rstrip()
        if line:
            return line
    return b""


_LOOK_BACK = 24  # lines looked at before a macro alone on its line for the code line before it
_SPACE = frozenset(b" \t\r\n")
_CONTINUED = frozenset(b",(=|&+\\")  # and a backslash: the line is part of a #define's value


def _blank(match: re.Match[bytes]) -> bytes:
    whole = match.group(0)
    start, end = match.start(1) - match.start(0), match.end(1) - match.start(0)
    return whole[:start] + b" " * (end - start) + whole[end:]


_PATTERNS: list[tuple[re.Pattern[bytes], Callable[[re.Match[bytes]], bytes]]] = []
# Patterns whose matches are checked before they are blanked (the third item of a _SOURCES entry).
_CHECKS = {"alone": _blank_alone, "after_name": _blank_after_name, "trailing": _blank_trailing}

# What every match of _SOURCES holds: a macro's `_` next to a capital or a digit (`_+[A-Z]`, `[A-Z][A-Z0-9]*_`),
# or a dunder's `__`. Each match lies within one line (and the newline before it): the patterns run only over
# the lines that hold one of these pairs when those are few (LLVM's style: MemorySSA.h masked in 1.3 ->
# 0.4 ms), else over the whole text (libstdc++'s `__x` on every line). Found from each `_` of the text with its
# capitals and digits made `A`: an LLVM header has few, and a line is left at its first pair (a regex for the pairs
# took 0.7 ms on MemorySSA.h; a search of the text for each pair 0.32, this 0.2: in a fresh process each pass over
# the text costs ~0.5-1 us a KB).
_MARKS = bytearray(b" " * 256)  # bytes.translate's table (slices, not a 256-step generator: ~25 us an import)
_MARKS[65:91], _MARKS[48:58], _MARKS[95], _MARKS[10] = b"A" * 26, b"A" * 10, 95, 10  # A-Z, 0-9, `_`, `\n`
_PAIRED = (65, 95)  # what makes a `_` one of a pair (`__`, `_A`, `A_`: `_0` too, a line more to search, never one less)
_PROBED_MAX = 0.125  # lines with a pair per line above which the whole text is searched (a line alone: ~6x)


def mask_macros(source: bytes) -> bytes:
    """``source`` with derailing macros replaced by spaces (same length)."""
    if not _PATTERNS:
        _PATTERNS.extend((recode.compile(entry[0], entry[1]), _CHECKS[entry[2]] if len(entry) > 2 else _blank)
                         for entry in _SOURCES)
    source = b"\n" + source  # the line patterns find a line's start by its newline, the first line's too
    spans = _probed_lines(source)
    for pattern, blank in _PATTERNS:
        source = pattern.sub(blank, source) if spans is None else _sub_within(pattern, blank, source, spans)
    return source[1:]


def _probed_lines(source: bytes) -> list[tuple[int, int]] | None:
    """(newline before, end) of each line holding one of the pairs, or None when they are too many. (Masks only
    turn bytes into spaces: a line without a pair never gains one.) `source` starts with a newline."""
    limit = source.count(b"\n") * _PROBED_MAX
    if source.count(b"__") > limit:  # libstdc++'s: at once
        return None
    marked = source.translate(_MARKS)
    spans: list[tuple[int, int]] = []
    find, last = marked.find, len(marked) - 1
    at = find(b"_")
    while at >= 0:
        if marked[at - 1] in _PAIRED or (at < last and marked[at + 1] in _PAIRED):
            end = find(b"\n", at)
            spans.append((marked.rfind(b"\n", 0, at), len(source) if end < 0 else end))
            if len(spans) > limit:
                return None
            at = find(b"_", end) if end >= 0 else -1
        else:
            at = find(b"_", at + 1)
    return spans


def _sub_within(pattern: re.Pattern[bytes], blank: Callable[[re.Match[bytes]], bytes], source: bytes,
                spans: list[tuple[int, int]]) -> bytes:
    """`pattern.sub(blank, source)` for a pattern whose matches all lie within `spans` (each match still sees
    the whole text around it: its look-behinds and `blank`'s checks look before the line)."""
    finditer = pattern.finditer
    return recode.sub_matches(source, (match for start, end in spans for match in finditer(source, start, end)),
                              blank)


_CONDITIONALS = (b"if", b"ifdef", b"ifndef", b"elif", b"elifdef", b"elifndef", b"else", b"endif")


def directive(line: bytes) -> bytes | None:
    """`ifdef` for `  #  ifdef X`, None for a line that is no conditional directive."""
    text = line.lstrip()
    if not text.startswith(b"#"):
        return None
    word = text[1:].lstrip().split(None, 1)
    word0 = word[0].split(b"(", 1)[0] if word else b""
    return word0 if word0 in _CONDITIONALS else None


def first_branches(source: bytes) -> bytes:
    """``source`` with each `#if`/`#elif`/`#else`/`#endif` line blanked and every branch but the first of a
    conditional blanked too (same length): what is left is one configuration's code. tree-sitter parses a
    conditional inside a declaration or an expression (`: #if X a_(1), #endif b_(2) {`) as an error that can
    swallow the rest of the file; the outliner tries this copy when the plain parse has errors."""
    return branches(source, 1)[0]


def branches(source: bytes, k: int) -> tuple[bytes, int]:
    """``source`` with each conditional directive line blanked and, of each conditional, every branch but its
    `k`-th (its last when it has fewer: an include guard's or an `extern "C"` block's only branch holds the
    rest); and the most branches a conditional has (how many such configurations there are)."""
    lines, marks, counts = _conditionals(source)
    lines = lines[:]
    frames: list[list[int]] = []  # per open conditional: [its current branch, the branch kept]
    for n, (row, word, last) in enumerate(marks):
        if word in (b"if", b"ifdef", b"ifndef"):
            frames.append([1, min(k, counts[row])])
        elif word != b"endif" and frames:
            frames[-1][0] += 1
        elif word == b"endif" and frames:
            frames.pop()
        # the directive's lines, and up to the next directive the code its branches leave out
        end = marks[n + 1][0] if n + 1 < len(marks) else len(lines)
        drop = any(branch != kept for branch, kept in frames)
        for i in range(row, end if drop else last + 1):
            lines[i] = b" " * len(lines[i])
    return b"\n".join(lines), max(counts.values(), default=1)


_ANALYSED: list[tuple[bytes, tuple]] = []  # the last source's _conditionals: a repair asks for 2-5 configurations


def _conditionals(source: bytes) -> tuple[list[bytes], list[tuple[int, bytes, int]], dict[int, int]]:
    """``source``'s lines; its conditional directives in order (row, word, last row: a directive's line may be
    continued with `\\`); and how many branches each `#if` has, by row. Only lines holding a `#` are looked at
    (a loop over every line cost a 2,000-line header ~0.6 ms a configuration)."""
    if _ANALYSED and _ANALYSED[0][0] is source:
        return _ANALYSED[0][1]
    lines = source.split(b"\n")
    marks: list[tuple[int, bytes, int]] = []
    counts: dict[int, int] = {}  # row of an `#if` -> its branches
    opened: list[int] = []
    after = 0  # the first row not continuing the last directive
    for row in [i for i, line in enumerate(lines) if line.find(b"#") >= 0]:
        word = directive(lines[row]) if row >= after else None
        if word is None:
            continue
        last = row
        while last + 1 < len(lines) and lines[last].rstrip(b"\r").endswith(b"\\"):
            last += 1
        after = last + 1
        marks.append((row, word, last))
        if word in (b"if", b"ifdef", b"ifndef"):
            opened.append(row)
            counts[row] = 1
        elif word != b"endif" and opened:
            counts[opened[-1]] += 1
        elif word == b"endif" and opened:
            opened.pop()
    _ANALYSED[:] = [(source, (lines, marks, counts))]
    return lines, marks, counts


def blank_lines(source: bytes, first: int, last: int) -> bytes:
    """``source`` with rows ``first``..``last`` (0-based, inclusive) turned to spaces (same length)."""
    lines = source.split(b"\n")
    for i in range(first, min(last, len(lines) - 1) + 1):
        lines[i] = b" " * len(lines[i])
    return b"\n".join(lines)
