"""The outline of a file too large to parse within a hook's budget: its first part parsed, the rest scanned.

PreToolUse denies a whole Read of a file the client refuses (over 256 KB) with its outline. Parsing and
extracting cost ~0.4 ms CPU per KB of ordinary code and up to ~1.3 on macro-heavy C (a 315 KB Python file:
107 ms, over the 100 ms budget by itself), so only the file's first part is parsed, as much as PARTIAL_UNITS
of parse work holds (at most PARSE_MAX_BYTES), cut where a top-level line starts; the rest gets one row per
line that opens a definition with a keyword (`def`, `class`, `fn`, `func`, `function`, `struct`...), found by a
scan of the lines (~1.5 ms per 100 KB), and a note saying which lines were scanned rather than parsed and that
definitions without a keyword (C functions, Java methods) are not listed there: names past the cut are never
hidden without saying so. The budget is counted in tree-sitter's work units, not CPU time, so the same file
gives the same outline however loaded the machine."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from parser.outline import Outline

# Parse work the hook spends on the parsed part, in ParseBudget units (one per 100 tree-sitter parse operations,
# the same count on every run). The first PROBE_BYTES are outlined to learn this file's units per KB (4-9 for
# Python, 16-25 for macro-heavy C and C++), then as much as PARTIAL_UNITS holds is outlined again from the
# start, up to PARSE_MAX_BYTES; that parse ends where its units do if the rest costs more than the probe did.
# Parsing and extracting cost 15-100 us of CPU a unit (Python's cheapest, C++ headers' costliest: 2026-12-07),
# so 500 units are 6-50 ms: mypy's 447 KB checker.py's first 151 KB, GL/glext.h's first 15 KB.
PARTIAL_UNITS = 500
PROBE_BYTES = 16 * 1024
PARSE_MAX_BYTES = 256 * 1024
# The scanned rows stop here (the deny reason shows ~50,000 characters in all, parsed rows first; the privacy
# filter on the rows costs ~0.5 ms per KB).
MAX_TAIL_CHARS = 32_000
# How far back from PARSE_MAX_BYTES a top-level line is looked for before cutting at any line.
_CUT_WINDOW = 16 * 1024
# A definition's line: modifiers, then a callable's keyword, a name and its parameters (Go's `func (r *T)
# Name(`), or a type's keyword, a name and the end of the line or what opens or extends it. Prose in a
# docstring ("type checking is done") has a word after the name, so it is not a row. Plain bytes methods,
# not a regex: compiling one with these alternatives cost ~5 ms of the hook, scanning with it ~6 ms.
_MODIFIERS = frozenset(b"public private protected internal static async export pub override open final abstract "
                       b"inline suspend sealed data partial unsafe extern virtual default".split())
_CALLABLES = frozenset(b"def fun func fn function".split())
_TYPES = frozenset(b"class struct enum union interface trait object module protocol namespace record type".split())
_ALWAYS = (b"typedef", b"impl", b"macro_rules!")
_OPENERS = tuple(_MODIFIERS | _CALLABLES | _TYPES) + _ALWAYS
_AFTER_TYPE = frozenset(b"extends implements where struct interface enum".split())
_NAME_CHARS = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$.:")
MAX_ROW_CHARS = 100


def outline_within(data: bytes, path: str, budget_units: int = PARTIAL_UNITS) -> tuple[Outline, int]:
    """The outline of `data`'s first part that fits in `budget_units` of parse work, and where that part ends."""
    from parser import outline_source

    cut = parse_cut(data, PROBE_BYTES)
    units: list[int] = []
    outline = outline_source(data[:cut], path, units=units)
    if cut == len(data):
        return outline, cut
    spent = units[0] if units else budget_units  # no parse (no grammar): no more to learn
    fits = int(cut * (budget_units - spent) / max(spent, 1))  # outlined again from the start, at the probe's rate
    if fits >= 2 * cut:  # a part that costs more than the probe's rate ends where the units do (parsed_bytes)
        cut = parse_cut(data, min(fits, PARSE_MAX_BYTES))
        outline = outline_source(data[:cut], path, max_units=budget_units - spent)
    if outline.parsed_bytes is not None:
        cut = min(cut, outline.parsed_bytes)
    return outline, cut


def parse_cut(data: bytes, limit: int) -> int:
    """Where to stop parsing `data`: len(data) when it fits in `limit`, else the start of a line near `limit`,
    preferably a top-level one (not indented, after a blank line) so that the parsed part ends whole."""
    if len(data) <= limit:
        return len(data)
    # Not before half the limit: a probe cut at GL/glext.h's licence (every later line a `#define`) learnt
    # its rate from 820 bytes of comment.
    floor = max(limit // 2, limit - _CUT_WINDOW)
    blank = data.rfind(b"\n\n", floor, limit)
    while blank >= 0:
        start = blank + 2
        if start < limit and data[start:start + 1] not in b" \t\n}])#" and data[start:start + 1] != b"":
            return start
        blank = data.rfind(b"\n\n", floor, blank)
    line = data.rfind(b"\n", 0, limit)
    return line + 1 if line >= 0 else limit


def _split_name(text: bytes) -> tuple[bytes, bytes]:
    """The identifier `text` starts with, and what follows it (left-stripped)."""
    end = 0
    while end < len(text) and text[end] in _NAME_CHARS:
        end += 1
    return text[:end], text[end:].lstrip()


def is_definition(stripped: bytes) -> bool:
    """Whether a line (without its indentation) opens a definition with a keyword."""
    word, _, rest = stripped.partition(b" ")
    while word in _MODIFIERS or word.startswith(b"pub("):
        stripped = rest.lstrip()
        word, _, rest = stripped.partition(b" ")
    if stripped.startswith(_ALWAYS):
        keyword = next(k for k in _ALWAYS if stripped.startswith(k))
        return stripped[len(keyword):len(keyword) + 1] in (b"", b" ", b"<", b"\t")
    word, rest = _split_name(stripped)
    if word in _CALLABLES:
        if rest.startswith(b"("):  # Go's receiver
            rest = rest[rest.find(b")") + 1:].lstrip()
        name, rest = _split_name(rest)
        return bool(name) and rest[:1] in (b"(", b"<")
    if word in _TYPES:
        name, rest = _split_name(rest)
        return bool(name) and (not rest or rest[:1] in b":{(<[=;," or rest.split(None, 1)[0] in _AFTER_TYPE)
    return False


def keyword_rows(data: bytes, cut: int, max_chars: int = MAX_TAIL_CHARS) -> tuple[list[str], int | None]:
    """One row per line past `cut` that opens a definition with a keyword: `LINE signature` (1-based); and the
    line where the scan stopped when the rows reached `max_chars` (None: scanned to the end)."""
    rows: list[str] = []
    used = 0
    first = data.count(b"\n", 0, cut) + 1
    for offset, line in enumerate(data[cut:].split(b"\n")):
        stripped = line.lstrip()
        if not stripped.startswith(_OPENERS) or not is_definition(stripped.rstrip()):
            continue
        indent = min(len(line[:len(line) - len(stripped)].expandtabs(4)) // 4, 4)
        body = " ".join(stripped.decode("utf-8", "replace").split())
        if len(body) > MAX_ROW_CHARS:
            body = body[:MAX_ROW_CHARS - 1] + "…"
        rows.append(f"{'  ' * indent}{first + offset} {body}")
        used += len(rows[-1]) + 1
        if used > max_chars:
            return rows, first + offset
    return rows, None


def scanned_tail(data: bytes, cut: int, total_lines: int) -> str:
    """What follows the parsed part's outline: the note and the keyword rows of lines past `cut`."""
    first = data.count(b"\n", 0, cut) + 1
    rows, stopped = keyword_rows(data, cut)
    scanned = f"{first}-{stopped}" if stopped else f"{first}-{total_lines}"
    note = (f"[lines {first}-{total_lines} not parsed (over the hook's parse budget); lines {scanned}: {len(rows)} "
            f"definitions found by keyword below, start line only; definitions without a keyword (C functions, "
            f"methods of Java, C#, C++) are not listed"
            + (f"; lines {stopped + 1}-{total_lines} not scanned" if stopped else "") + ": Read offset+limit]")
    return "\n".join([note, *rows])
