"""Heuristics: which type a memory is, and whether it is worth keeping at all."""

from __future__ import annotations

import re

from memory.config import env

TYPES = ("bugfix", "feature", "refactor", "decision", "discovery", "change", "observation", "fact", "handoff",
         "prompt", "learning")

_RULES: list[tuple[str, re.Pattern[str]]] = [
    ("decision", re.compile(
        r"\b(decided|decision|we('ll| will) use|going with|chose|choose to|prefer(red)? .* over|instead of|"
        r"from now on|always use|never use|should always|should never|convention|agreed)\b", re.I)),
    ("bugfix", re.compile(
        r"\b(fix(e[ds])?|bug|regression|crash(es|ed)?|traceback|exception|broken|failing|fails?|error|"
        r"workaround|resolved?)\b", re.I)),
    ("refactor", re.compile(
        r"\b(refactor(ed|ing)?|renam(e|ed|ing)|extract(ed)?|clean(ed)? ?up|simplif(y|ied)|restructur|"
        r"reorganiz|dedup|move[ds]? .* to)\b", re.I)),
    ("discovery", re.compile(
        r"\b(found|discover(ed)?|turns out|learned|noticed|realized|it appears|root cause|the reason)\b", re.I)),
    ("feature", re.compile(
        r"\b(add(ed|s)?|implement(ed|s)?|introduc(e|ed)|new|support(s|ed)?|create[ds]?|build|enable)\b", re.I)),
]


def classify(text: str, default: str = "observation") -> str:
    for kind, pattern in _RULES:
        if pattern.search(text):
            return kind
    return default


DEFAULT_LOW_VALUE = [
    r"^Ran `(ls|pwd|cd|echo|cat|clear|whoami|date|true|which|env|history|head|tail|wc)\b[^`]*` \(ok\)$",
    r"^Ran `git (status|log|diff|show|branch|fetch|remote)\b[^`]*` \(ok\)$",
    r"^Asked: (ok|okay|yes|no|y|n|thanks|thank you|continue|go on|go ahead|proceed|sure|hi|hello)[.!?]*$",
    r"^(Searched|Listed) ",
]


def low_value_patterns() -> list[re.Pattern[str]]:
    extra = [line.strip() for line in env("MEMORY_LOW_VALUE_PATTERNS").splitlines() if line.strip()]
    out = []
    for p in DEFAULT_LOW_VALUE + extra:
        try:
            out.append(re.compile(p, re.I))
        except re.error:
            continue  # a bad user pattern is skipped, not fatal
    return out


def is_low_value(title: str, content: str) -> bool:
    if not title.strip() or not content.strip():
        return True
    return any(p.search(title) for p in low_value_patterns())
