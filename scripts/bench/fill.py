"""Fill a project database with memories for the benchmarks that need a full store (hooks, profile, search).

Rows go straight into SQLite in one transaction (no hook, no worker): 50,000 take seconds, not minutes.
"""

from __future__ import annotations

import random
import re
import sysconfig
import time
from collections.abc import Callable
from pathlib import Path

from memory.store import content_hash, normalise
from memory.store.workspace import Workspace

TYPES = ["observation"] * 5 + ["change"] * 3 + ["bugfix", "decision", "discovery", "feature", "refactor", "prompt"]
VERBS = ["Fixed", "Changed", "Found", "Decided", "Ran", "Modified"]
SESSIONS = 400


def corpus_words(limit_files: int = 80) -> list[str]:
    """Real developer prose with its natural (Zipf) word frequencies: the words of the Python standard
    library's own source. A tiny synthetic vocabulary would make every prompt word match a quarter of all
    memories, which no real store looks like."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    words: list[str] = []
    for path in sorted(stdlib.glob("*.py"))[:limit_files]:
        words += re.findall(r"[a-z]{3,}", path.read_text(errors="replace").lower())
    return words


def prose(pool: list[str]) -> Callable[[random.Random], list[str]]:
    """A run of real text, as a memory would be."""
    def pick(rng: random.Random) -> list[str]:
        start = rng.randrange(0, len(pool) - 80)
        return pool[start:start + rng.randint(12, 60)]

    return pick


def populate(ws: Workspace, n: int, seed: int = 7, *, words: Callable[[random.Random], list[str]] | None = None,
             sessions: bool = True) -> None:
    """`n` memories over 400 sessions, their words from `words` (default: runs of corpus_words()); with
    `sessions`, the sessions' rows and an end-of-session handoff each."""
    rng = random.Random(seed)
    pick = words or prose(corpus_words())
    now = time.time()
    rows = []
    for i in range(n):
        text = pick(rng)
        title = f"{rng.choice(VERBS)} {' '.join(text[:6])} {i}"
        content = " ".join(text) + f" (file src/module_{i % 500}.py)"
        created = now - rng.uniform(0, 180 * 86400)
        rows.append((ws.project.key, f"bench-session-{i % SESSIONS}", rng.choice(TYPES), title, normalise(title),
                     content, content_hash(f"{title}\n{content}"), round(rng.random(), 2), 0.5, "", "", "bench",
                     created, created, None, 0, None))
    db = ws.db
    db.execute("BEGIN IMMEDIATE")
    db.executemany(
        """INSERT INTO memories (project, session_id, type, title, title_key, content, content_hash, importance,
           confidence, tags, files, source, created_at, updated_at, accessed_at, access_count, expires_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""", rows)
    for s in range(SESSIONS if sessions else 0):
        db.execute("INSERT INTO sessions (id, project, status, started_at, ended_at, summary) VALUES "
                   "(?, ?, 'completed', ?, ?, ?)", (f"bench-session-{s}", ws.project.key, now - s * 3600,
                                                     now - s * 3600 + 1800, "benchmark session"))
        db.execute("INSERT INTO handoffs (project, session_id, trigger, content, created_at) VALUES (?, ?, ?, ?, ?)",
                   (ws.project.key, f"bench-session-{s}", "end", "Task: benchmark\nFiles modified: a.py",
                    now - s * 3600))
    db.execute("COMMIT")
