"""Bounds on one hook event, applied as soon as it is parsed, before any handler, regex or privacy filter
reads it: every hook's work stays bounded whatever Claude Code sends (a 20 MB prompt, a tool output of
hundreds of MB, a TodoWrite of 20,000 items).

What is kept is far more than anything stores: a capture keeps 2,000 characters of a tool output
(MEMORY_MAX_CAPTURE_CHARS), the state 500 of a prompt. A long string keeps its head and its tail (errors
are usually at the end) around a marker saying how much was cut; each cut edge drops the partial word it
split, so a secret cut in two never leaves a fragment too short for the privacy filter to recognise.
Standard library only: this runs in every hook.

Measured (scripts/bench/huge.py): before, a 20 MB prompt took 6.7 s in the prompt hook and a
TodoWrite of 20,000 todos 9.8 s; the JSON parse of 20 MB alone is ~45 ms.
"""

from __future__ import annotations

MAX_STRING = 32_768  # characters kept of one string (head and tail)
MAX_ITEMS = 200  # items kept of one list, keys of one dict
MAX_TOTAL = 262_144  # characters kept over the whole event
MAX_NODES = 20_000  # values visited over the whole event: nested lists cannot multiply the walk
MIN_STRING = 256  # what a string keeps once the event's total is spent
WORD_SLACK = 256  # a cut edge backs off to a space at most this far; past it the whole slack goes
MARKER = "[... {cut:,} characters cut by memory: input too large ...]"

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from typing import Any


def _head(text: str) -> str:
    """text without the partial word at its end."""
    at = max(text.rfind(" ", len(text) - WORD_SLACK), text.rfind("\n", len(text) - WORD_SLACK))
    return text[:at] if at >= 0 else text[: max(0, len(text) - WORD_SLACK)]


def _tail(text: str) -> str:
    """text without the partial word at its start."""
    cands = [i for i in (text.find(" ", 0, WORD_SLACK), text.find("\n", 0, WORD_SLACK)) if i >= 0]
    return text[min(cands) + 1:] if cands else text[WORD_SLACK:]


def cut(text: str, limit: int = MAX_STRING) -> str:
    """The head and the tail of a text longer than `limit`, around a marker; a shorter text unchanged."""
    if len(text) <= limit:
        return text
    half = max(limit // 2, WORD_SLACK + 1)
    head, tail = _head(text[:half]), _tail(text[-half:])
    return f"{head}\n{MARKER.format(cut=len(text) - len(head) - len(tail))}\n{tail}"


class _Walk:
    __slots__ = ("chars", "nodes", "cut")

    def __init__(self) -> None:
        self.chars = MAX_TOTAL
        self.nodes = MAX_NODES
        self.cut = 0  # strings cut and items dropped, for the log

    def value(self, v: object) -> object:
        self.nodes -= 1
        if isinstance(v, str):
            limit = max(MIN_STRING, min(MAX_STRING, self.chars))
            if len(v) > limit:
                v = cut(v, limit)
                self.cut += 1
            self.chars -= len(v)
            return v
        if isinstance(v, list):
            if len(v) > MAX_ITEMS:
                self.cut += len(v) - MAX_ITEMS
            return [self.value(x) for x in v[:MAX_ITEMS] if self.nodes > 0]
        if isinstance(v, dict):
            if len(v) > MAX_ITEMS:
                self.cut += len(v) - MAX_ITEMS
            out = {}
            for i, (k, x) in enumerate(v.items()):
                if i >= MAX_ITEMS or self.nodes <= 0:
                    break
                out[k if len(k) <= MIN_STRING else cut(k, MIN_STRING)] = self.value(x)
            return out
        return v


def bound(event: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """The event within the bounds above, and how many strings were cut or items dropped (0: unchanged)."""
    walk = _Walk()
    out = walk.value(event)
    return out, walk.cut  # type: ignore[return-value]
