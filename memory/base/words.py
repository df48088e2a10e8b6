"""Counted nouns in what the plugin prints ("1 memory", "2 memories"): one rule, used everywhere.

Standard library only and no imports: hooks use it too."""

from __future__ import annotations

_IRREGULAR = {"person": "people", "child": "children", "index": "indexes", "was": "were", "is": "are"}


def plural(noun: str) -> str:
    """The plural of a noun, or of a phrase's last word ("stale section" -> "stale sections")."""
    head, _, last = noun.rpartition(" ")
    if last in _IRREGULAR:
        word = _IRREGULAR[last]
    elif last.endswith("y") and last[-2:-1] not in ("a", "e", "i", "o", "u", ""):
        word = last[:-1] + "ies"
    elif last.endswith(("s", "x", "z", "ch", "sh")):
        word = last + "es"
    else:
        word = last + "s"
    return f"{head} {word}" if head else word


def count(n: int, noun: str, many: str | None = None) -> str:
    """`n` and the noun, plural unless n is 1 (`many` for a plural the rule gets wrong); thousands
    separated: count(1, "memory") == "1 memory", count(1200, "memory") == "1,200 memories"."""
    return f"{n:,} {noun if n == 1 else many or plural(noun)}"
