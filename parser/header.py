"""The line the Read hook puts above an outline, and when a Read passes through whole: what a cached Read needs
of the renderer, apart from it (parser/render.py is 37 KB of bytecode a cache hit need not load)."""

from __future__ import annotations

# The Read hook passes a file through whole when its outline would be more than this share of it.
MAX_SHOWN_SHARE = 0.5
SHAPE_MARK = "*"  # stands for each name on a same-shape line (`def *(): clear, close, flush`)


def read_header(total_lines: int, original_tokens: int, shown_tokens: int, grouped: bool = False) -> str:
    """What the Read hook puts above the outline: what it is, what was withheld, how to read code. Short:
    it is paid on every outlined Read (~35 tokens). No path: the text is the result of a Read of that path.
    No thousands separator: `2,752` costs a token more than `2752`."""
    star = f" ({SHAPE_MARK}: each name)" if grouped else ""
    return (f"[memory plugin] Outline: {total_lines} lines, ~{max(0, original_tokens - shown_tokens)} tokens "
            f"withheld. Rows: first-last line, signature{star}. Code: Read offset+limit. Whole file: Read again.\n")


def has_groups(text: str) -> bool:
    """Whether rendered text holds a same-shape line (its `*` needs the header's word of explanation): a `*` in
    any of its lines is a `*` in the text (a line-by-line search cost a Read ~25 us on MemorySSA.h's outline)."""
    return ": " in text and SHAPE_MARK in text
