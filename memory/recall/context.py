"""A memory's neighbours: the memories of the same session recorded just before and after it.

Short memories rarely say everything about themselves ("it passes now"), and what they are about is often
in the memory before or after. So each memory is indexed with its neighbours as context: an extra FTS
column (memories_ctx.ctx, weighted 0.1 in BM25: memory/recall/hybrid.py) and a window vector (the mean of
the window's own vectors: WINDOW_RULE). With two neighbours on each side, keyword recall@10 goes from 0.61
(the memory alone) to 0.70 on LoCoMo and from 0.84 to 0.86 on the LongMemEval split
(scripts/bench/recall.py, 2026-11-24).
"""

from __future__ import annotations

import hashlib
import sqlite3

from memory.base.config import env_int

# A window of five memories must fit the embedding models' input (all-MiniLM-L6-v2 reads 256 word
# pieces): each member's text is cut to this many characters in the window.
WINDOW_MEMBER_CHARS = 400
# How a memory's window vector is made (memory/worker/index.py ProjectIndex._embed): "text" embeds the window's
# text (its own text and its neighbours', three times the tokens of the memory alone), "mean" averages
# the members' own vectors (no second forward pass), "none" stores the memory's own vector alone.
WINDOW_RULES = ("text", "mean", "none")
# "mean", measured against "text" on both datasets (docs/benchmarks.md, "Embedding throughput"): recall the
# same within the intervals, 5 times the memories per CPU-second with all-MiniLM-L6-v2.
WINDOW_RULE = "mean"


def index_key(provider_key: str, rule: str = WINDOW_RULE) -> str:
    """What the vector index records as its provider: the embedder's key (name:model:dim), with the window
    rule beside the model unless it is "text" (the rule before there were others), so an index built under
    another rule is noticed and re-embedded. The dimension stays last."""
    if rule == "text":
        return provider_key
    head, _, dim = provider_key.rpartition(":")
    return f"{head}+window-{rule}:{dim}"


def radius() -> int:
    return max(0, min(5, env_int("MEMORY_CONTEXT_NEIGHBOURS")))


def own_text(row: sqlite3.Row) -> str:
    """What a memory says: its title, then its content unless the content merely repeats the title."""
    title, content = (row["title"] or "").strip(), (row["content"] or "").strip()
    if content.lower().startswith(title.lower()):
        return content
    return f"{title}\n{content}" if content else title


def neighbours(db: sqlite3.Connection, session_id: str | None, created_at: float, memory_id: int,
               n: int) -> tuple[list[sqlite3.Row], list[sqlite3.Row]]:
    """Up to n memories of the session before (nearest last) and after (nearest first) a position."""
    if not session_id or n <= 0:
        return [], []
    before = db.execute(
        """SELECT id, title, content, tags, session_id, created_at FROM memories
           WHERE session_id = ? AND (created_at < ? OR (created_at = ? AND id < ?))
           ORDER BY created_at DESC, id DESC LIMIT ?""",
        (session_id, created_at, created_at, memory_id, n),
    ).fetchall()
    after = db.execute(
        """SELECT id, title, content, tags, session_id, created_at FROM memories
           WHERE session_id = ? AND (created_at > ? OR (created_at = ? AND id > ?))
           ORDER BY created_at, id LIMIT ?""",
        (session_id, created_at, created_at, memory_id, n),
    ).fetchall()
    return list(reversed(before)), list(after)


class Document:
    """Everything the worker indexes for one memory."""

    __slots__ = ("row", "own", "ctx", "window", "members", "hash")

    def __init__(self, row: sqlite3.Row, before: list[sqlite3.Row], after: list[sqlite3.Row], provider: str) -> None:
        self.row = row
        self.own = own_text(row)
        self.ctx = "\n".join(own_text(r) for r in [*before, *after])
        members = [own_text(r)[:WINDOW_MEMBER_CHARS] for r in before]
        members += [self.own[:WINDOW_MEMBER_CHARS * 2]]
        members += [own_text(r)[:WINDOW_MEMBER_CHARS] for r in after]
        self.window = "\n".join(members)
        # The window's members whole, in order (before, the memory, after): their own vectors make "mean".
        self.members = [*(own_text(r) for r in before), self.own, *(own_text(r) for r in after)]
        # What was indexed, and by which provider: the same hash means nothing to redo.
        self.hash = hashlib.sha1("\x00".join((provider, self.own, self.ctx, row["tags"] or "",
                                              row["type"] or "", str(row["expires_at"]))).encode()).hexdigest()


def document(db: sqlite3.Connection, row: sqlite3.Row, provider: str, n: int | None = None) -> Document:
    before, after = neighbours(db, row["session_id"], row["created_at"], row["id"], radius() if n is None else n)
    return Document(row, before, after, provider)
