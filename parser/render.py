"""Render an Outline as the compact text the model reads instead of the file.

No header line (the hook writes its own). One line for imports, then one
line per symbol, indented two spaces per nesting level::

    imports (4): os, re, typing (2), .utils
    L12-40  class Cache(Base)  # LRU cache of outlines
      L15-20  def get(self, key: str) -> bytes | None
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from parser.outline import Outline, Symbol

MAX_IMPORTS_SHOWN = 25
# Docs are shown for symbols of at least this many lines: a short body is
# cheaper to read than to summarise. (to_json keeps every doc.)
DOC_MIN_LINES = 10
DOC_MAX_CHARS = 60
# A run of this many constants/variables in a row (a Go const block, a wall of
# #defines, a table of settings) becomes one line of names: their values are
# what makes such files long, and the model can read the range if it needs them.
GROUP_MIN = 4
MAX_GROUPED_NAMES = 20
GROUP_MAX_GAP = 10  # lines between two constants of one run
_GROUPED_KINDS = frozenset({"constant", "variable"})


def _imports_line(outline: Outline) -> str | None:
    if not outline.imports:
        return None
    shown = outline.imports[:MAX_IMPORTS_SHOWN]
    more = len(outline.imports) - len(shown)
    tail = f", … +{more} more" if more > 0 else ""
    return f"imports ({len(outline.imports)}): {', '.join(shown)}{tail}"


def _compact_signature(signature: str) -> str:
    # A Python method's self/cls is implied by its nesting under the class: ~2 tokens per method.
    for receiver in ("self", "cls"):
        signature = signature.replace(f"({receiver}, ", "(").replace(f"({receiver})", "()")
    return signature


def symbol_line(symbol: Symbol) -> str:
    span = (f"L{symbol.start_line}" if symbol.start_line == symbol.end_line
            else f"L{symbol.start_line}-{symbol.end_line}")
    doc = ""
    if symbol.doc and symbol.end_line - symbol.start_line + 1 >= DOC_MIN_LINES:
        text = symbol.doc if len(symbol.doc) <= DOC_MAX_CHARS else symbol.doc[: DOC_MAX_CHARS - 1] + "…"
        doc = f"  # {text}"
    return f"{'  ' * symbol.depth}{span}  {_compact_signature(symbol.signature)}{doc}"


def _constants_line(run: list[Symbol]) -> str:
    first, last = run[0], run[-1]
    names = [s.name for s in run[:MAX_GROUPED_NAMES]]
    more = len(run) - len(names)
    tail = f", … +{more} more" if more > 0 else ""
    return (f"{'  ' * first.depth}L{first.start_line}-{last.end_line}  "
            f"{len(run)} constants: {', '.join(names)}{tail}")


def symbol_lines(symbols: list[Symbol]) -> list[str]:
    """One line per symbol; runs of constants collapse into one line."""
    lines: list[str] = []
    i = 0
    while i < len(symbols):
        j = i
        while (j < len(symbols) and symbols[j].kind in _GROUPED_KINDS
               and symbols[j].depth == symbols[i].depth and symbols[j].parent == symbols[i].parent
               and (j == i or symbols[j].start_line - symbols[j - 1].end_line <= GROUP_MAX_GAP)):
            j += 1
        if j - i >= GROUP_MIN:
            lines.append(_constants_line(symbols[i:j]))
            i = j
        else:
            lines.append(symbol_line(symbols[i]))
            i += 1
    return lines


def fallback_text(outline: Outline) -> str:
    reason = f" ({outline.reason})" if outline.reason else ""
    return f"{outline.total_lines} lines, {outline.total_bytes} bytes, no outline available{reason}"


def _fit(outline: Outline, head: list[str], max_chars: int) -> list[str]:
    """Drop the deepest symbols first, then the tail, to fit ``max_chars``."""
    symbols = outline.symbols
    max_depth = max((s.depth for s in symbols), default=0)
    while max_depth > 0:
        max_depth -= 1
        kept = [s for s in symbols if s.depth <= max_depth]
        body = symbol_lines(kept)
        note = f"… {len(symbols) - len(kept)} nested symbols omitted"
        if sum(len(x) + 1 for x in head + body) + len(note) <= max_chars:
            return head + body + [note]
    body = symbol_lines([s for s in symbols if s.depth == 0])
    kept_lines: list[str] = []
    used = sum(len(x) + 1 for x in head) + 40  # room for the closing note
    for line in body:
        if used + len(line) + 1 > max_chars:
            break
        kept_lines.append(line)
        used += len(line) + 1
    return head + kept_lines + [f"… {len(body) - len(kept_lines)} more top-level lines omitted"]


def render(outline: Outline, max_chars: int | None = None) -> str:
    """The outline as text; ``max_chars`` trims it to fit a budget."""
    if not outline.parsed:
        return fallback_text(outline)
    lines: list[str] = []
    imports = _imports_line(outline)
    if imports:
        lines.append(imports)
    if outline.error_ratio > 0:
        share = max(outline.error_ratio, 0.01)  # never print "0%" for a broken file
        lines.append(f"syntax errors: {share:.0%} of lines did not parse; outline may be partial")
    if not outline.symbols:
        lines.append(f"no symbols found ({outline.total_lines} lines)")
        return "\n".join(lines)
    head_count = len(lines)
    lines.extend(symbol_lines(outline.symbols))
    text = "\n".join(lines)
    if max_chars is not None and len(text) > max_chars:
        text = "\n".join(_fit(outline, lines[:head_count], max_chars))[:max_chars]
    return text
