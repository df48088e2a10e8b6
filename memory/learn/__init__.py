"""Learning extraction: the few durable learnings of a session, by Claude Haiku, a local Ollama model or
an offline heuristic, plus a short session summary.

Only the worker and the CLI import this package's providers: `anthropic` alone costs ~1.5 s to import,
which no hook can afford. This module itself is cheap (no third-party imports). Also the transcript
importer, which replays transcripts through the hooks. Cold side: may import base, store, capture, recall,
outline and hook; never worker, team, present, cli or mcp.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Types a learning may have: a subset of memory.base.classify.TYPES that describes knowledge, not activity.
LEARNING_TYPES = ("learning", "decision", "bugfix", "discovery", "fact")
MAX_TITLE = 160
MAX_CONTENT = 1200


class Learning:
    def __init__(self, type: str, title: str, content: str, importance: float = 0.7,
                 files: list[str] | None = None, evidence: str = "") -> None:
        self.type = type if type in LEARNING_TYPES else "learning"
        # For a decision: the user's words it stands on (memory/capture/deciders.py checks they are the user's).
        self.evidence = " ".join(evidence.split())[:400]
        self.title = " ".join(title.split())[:MAX_TITLE]
        self.content = content.strip()[:MAX_CONTENT]
        self.importance = min(1.0, max(0.0, float(importance)))
        self.files = [f for f in dict.fromkeys(files or []) if f][:12]

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "title": self.title, "content": self.content, "importance": self.importance,
                "files": self.files, "evidence": self.evidence}

    def __repr__(self) -> str:
        return f"Learning({self.type}: {self.title!r})"


class Summary:
    """What was asked, done, learned, and what is next: a session in four short fields."""

    FIELDS = ("asked", "done", "learned", "next")

    def __init__(self, asked: str = "", done: str = "", learned: str = "", next: str = "") -> None:
        self.asked = " ".join(asked.split())[:300]
        self.done = " ".join(done.split())[:400]
        self.learned = " ".join(learned.split())[:300]
        self.next = " ".join(next.split())[:300]

    def text(self) -> str:
        labels = {"asked": "Asked", "done": "Done", "learned": "Learned", "next": "Next"}
        return " | ".join(f"{labels[f]}: {getattr(self, f)}" for f in self.FIELDS if getattr(self, f))[:1000]

    def __bool__(self) -> bool:
        return any(getattr(self, f) for f in self.FIELDS)


@dataclass
class Extraction:
    """What one provider produced for one session."""

    learnings: list[Learning]
    summary: Summary
    provider: str
    model: str = ""
    input_tokens: int = 0
    output_tokens: int = 0


class ProviderError(Exception):
    """A provider call failed. `retryable`: no answer arrived (a timeout, a connection error, a rate limit,
    a 5xx); otherwise (bad key, unknown model, refused request) retrying cannot help. `off_format`: an
    answer came but not in the asked form: never asked again, the heuristic takes over. Tokens already
    spent on such an answer are carried so that they are still counted."""

    def __init__(self, message: str, *, retryable: bool, retry_after: float | None = None,
                 input_tokens: int = 0, output_tokens: int = 0, off_format: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.off_format = off_format
        self.retry_after = retry_after
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens


class Unavailable(Exception):
    """The provider cannot run here (no key, no server, no model): skip to the next one."""
