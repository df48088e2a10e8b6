"""Heuristics: which type a memory is, and whether it is worth keeping at all.

Keyword sets rather than big regexes: compiling those costs a hook process several ms at every start."""

from __future__ import annotations

from memory.base.config import env

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

TYPES = ("bugfix", "feature", "refactor", "decision", "discovery", "change", "observation", "fact", "handoff",
         "prompt", "learning")

# type -> (single words, phrases); the first type with a hit wins, so the order matters.
_RULES: list[tuple[str, frozenset[str], tuple[str, ...]]] = [
    ("decision", frozenset("decided decision chose agreed convention".split()),
     ("we'll use", "we will use", "going with", "choose to", "instead of", "from now on", "always use",
      "never use", "should always", "should never")),
    ("bugfix", frozenset("fix fixed fixes bug bugs regression crash crashes crashed traceback exception broken "
                         "failing fail fails error errors workaround resolve resolved".split()), ()),
    ("refactor", frozenset("refactor refactored refactoring rename renamed renaming extract extracted simplify "
                           "simplified restructure restructured reorganize reorganized dedup cleanup".split()),
     ("clean up", "cleaned up", "moved to")),
    ("discovery", frozenset("found discover discovered learned noticed realized".split()),
     ("turns out", "it appears", "root cause", "the reason")),
    ("feature", frozenset("add added adds implement implemented implements introduce introduced new support "
                          "supports supported create created creates build enable".split()), ()),
]
_WORD = r"[a-z']+"  # compiled on first use: most hook processes never classify


def classify(text: str, default: str = "observation") -> str:
    import re  # here, not at the top: most hook processes never classify

    lower = text.lower()
    words = set(re.findall(_WORD, lower))
    for kind, keywords, phrases in _RULES:
        if words & keywords or any(p in lower for p in phrases):
            return kind
    return default


# " (ok)": how command titles ended before the plugin stopped claiming an outcome nobody reported (issue 26).
DEFAULT_LOW_VALUE = [
    r"^Ran `(ls|pwd|cd|echo|cat|clear|whoami|date|true|which|env|history|head|tail|wc)\b[^`]*`( \(ok\))?$",
    r"^Ran `git (status|log|diff|show|branch|fetch|remote)\b[^`]*`( \(ok\))?$",
    r"^Asked: (ok|okay|yes|no|y|n|thanks|thank you|continue|go on|go ahead|proceed|sure|hi|hello)[.!?]*$",
    r"^(Searched|Listed) ",
]
_LOW_VALUE: list[re.Pattern[str]] | None = None


def low_value_patterns() -> list[re.Pattern[str]]:
    global _LOW_VALUE
    if _LOW_VALUE is None:
        import re

        extra = [line.strip() for line in env("MEMORY_LOW_VALUE_PATTERNS").splitlines() if line.strip()]
        _LOW_VALUE = []
        for p in DEFAULT_LOW_VALUE + extra:
            try:
                _LOW_VALUE.append(re.compile(p, re.I))
            except re.error:
                continue  # a bad user pattern is skipped, not fatal
    return _LOW_VALUE


# What a title must start with (lower case) for a DEFAULT_LOW_VALUE pattern to match it. Checked first, so
# that a hook compiles the patterns only when one may match (compiling them costs a hook process ~1 ms).
_LOW_VALUE_STARTS = tuple(
    [f"ran `{w}" for w in "ls pwd cd echo cat clear whoami date true which env history head tail wc".split()]
    + ["ran `git ", "searched ", "listed "]
    + [f"asked: {w}" for w in "ok okay yes no y n thanks thank continue go proceed sure hi hello".split()]
)


def is_low_value(title: str, content: str) -> bool:
    if not title.strip() or not content.strip():
        return True
    # An ASCII title cannot match a default pattern without one of these starts (re.I on ASCII text is
    # plain ASCII case folding); other titles, and user patterns, always go through the regexes.
    if title.isascii() and not env("MEMORY_LOW_VALUE_PATTERNS").strip() and \
            not title.lower().startswith(_LOW_VALUE_STARTS):
        return False
    return any(p.search(title) for p in low_value_patterns())
