"""What the model is told: handoffs and memories at session start, relevant memories per prompt.

Phrased as facts (Claude Code advises against text framed as commands) and kept under the injection cap.
"""

from __future__ import annotations

import sqlite3
import time

from memory import handoff, store
from memory import state as session_state
from memory.config import env, env_int
from memory.search import Filters, Hit, _shared_terms, keyword_search, terms, useful_memories
from memory.workspace import Workspace


def _date(ts: float) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(ts))


def _authors(ws: Workspace, hits: list[Hit]) -> dict[int, str]:
    """Who wrote the memories pulled from the team server (the local ones have no author): the model is
    told a teammate's decision is a teammate's."""
    if not hits:
        return {}
    marks = ",".join("?" * len(hits))
    try:
        rows = ws.db.execute(f"SELECT id, author, machine FROM memories WHERE id IN ({marks}) "
                             "AND (author IS NOT NULL OR machine IS NOT NULL)", [h.id for h in hits]).fetchall()
    except Exception:  # a label is not worth failing a hook
        return {}
    return {r[0]: (r[1] or "a teammate") + (f" on {r[2]}" if r[2] else "") for r in rows}


def _hit_line(h: Hit, width: int = 240, author: str | None = None) -> str:
    body = " ".join(h.content.split())
    if body.lower().startswith(h.title.lower()):
        body = body[len(h.title):].lstrip(" :-")
    elif body.lower() in h.title.lower():  # e.g. "Asked: <prompt>" whose content is the prompt itself
        body = ""
    text = f"- [{h.type}] {h.title}"
    if body:
        text += f": {body[:width]}{'...' if len(body) > width else ''}"
    by = f"from {author}, " if author else ""
    return f"{text} ({by}{_date(h.created_at)}, #{h.id})"


def _fit(parts: list[str], limit: int) -> str:
    out: list[str] = []
    used = 0
    for p in parts:
        if used + len(p) + 1 > limit:
            break
        out.append(p)
        used += len(p) + 1
    return "\n".join(out)


def _hybrid(ws: Workspace, query: str, limit: int, filters: Filters, *, relevant_only: bool = False
            ) -> list[Hit] | None:
    """Hybrid hits from the warm worker within MEMORY_WORKER_TIMEOUT_MS, or None (keyword recall then).
    With `relevant_only`, a hit must share two content words with the query or be close in meaning
    (vector similarity at least MEMORY_RECALL_MIN_SIMILARITY): a prompt about nothing stored gets nothing."""
    if env("MEMORY_SEARCH_MODE").lower() != "hybrid":
        return None
    from memory.layers import hybrid_via_worker

    got = hybrid_via_worker(ws, query, limit, filters)
    if got is None:
        return None
    from memory.log import log

    log("debug", f"recall: hybrid, {len(got)} hits from the worker", event="recall")
    if not relevant_only:
        return [hit for hit, _ in got]
    qterms = terms(query)
    try:
        min_sim = float(env("MEMORY_RECALL_MIN_SIMILARITY"))
    except ValueError:
        min_sim = 0.45
    return [hit for hit, parts in got
            if _shared_terms(qterms, f"{hit.title} {hit.content}") >= 2 or (parts.get("vector") or 0.0) >= min_sim]


def session_start(ws: Workspace, session_id: str, source: str) -> tuple[str, list[int]]:
    """Returns the text to inject and the ids of memories it names."""
    limit = env_int("MEMORY_INJECT_MAX_CHARS")
    parts: list[str] = []
    if source in ("compact", "resume", "clear", "fork"):
        h = handoff.latest(ws, session_id)
        # A resumed conversation still holds what was injected into it: the same handoff is not repeated.
        # After compact or clear the context is gone, so the handoff always comes back.
        seen = session_state.load(ws, session_id).get("injected_handoffs", []) if source in ("resume", "fork") else []
        if h and h["content"].strip() and h["id"] not in seen:
            parts.append(_own_handoff(ws, session_id, h, source))
        elif source == "compact":
            handoff.compact_delivered(ws, session_id)
    else:
        max_age = env_int("MEMORY_HANDOFF_MAX_AGE_HOURS") * 3600
        h, later = handoff.for_startup(ws, session_id, max_age_s=max_age)
        if h and h["content"].strip():
            which = "the last session that did work in this project" if later else \
                "the previous session in this project"
            after = f"; {later} later session{'s' if later > 1 else ''} did none" if later else ""
            parts.append(f"Handoff from the memory plugin (where {which} stopped, "
                         f"{_date(h['created_at'])}{after}):\n{h['content']}")
    hits = [x for x in useful_memories(ws.db, ws.project.key, env_int("MEMORY_STARTUP_MEMORIES") * 2)
            if x.session_id != session_id and x.importance >= 0.4][: env_int("MEMORY_STARTUP_MEMORIES")]
    if h and h["content"].strip():
        # What the handoff is about, found by hybrid search when the worker answers in time: the most
        # related memories take up to half the places.
        related = _hybrid(ws, h["content"][:600], env_int("MEMORY_STARTUP_MEMORIES") // 2,
                          Filters(exclude_session=session_id))
        if related:
            seen_ids = {x.id for x in related}
            hits = (related + [x for x in hits if x.id not in seen_ids])[: env_int("MEMORY_STARTUP_MEMORIES")]
    if hits:
        parts.append(f"Memories of project {ws.project.name} from earlier sessions:")
        authors = _authors(ws, hits)
        parts += [_hit_line(x, author=authors.get(x.id)) for x in hits]
    if source in ("startup", "clear"):  # last: the first part dropped when the cap is reached
        from memory.summary import recent

        # The session whose handoff is injected above is already described by it.
        lines = recent(ws.db, ws.project.key, (session_id, h["session_id"] if h else ""),
                       env_int("MEMORY_SESSION_SUMMARIES"))
        if lines:
            parts += ["Recent sessions in this project (what was asked, done, learned, left):\n" + lines[0],
                      *lines[1:]]
    if not parts:
        return "", []
    text = _fit(parts, limit)
    used = [x.id for x in hits if f"#{x.id})" in text]
    store.log_access(ws.db, used, "inject-start", session_id)
    return text, used


def _own_handoff(ws: Workspace, session_id: str, h: sqlite3.Row, source: str) -> str:
    """This session's handoff, recorded as injected. It is the session's latest, so whatever a compaction
    left pending is delivered with it (by SessionStart compact, resume or fork, or the next prompt)."""
    def mark(s: session_state.State) -> None:
        session_state.push_unique(s, "injected_handoffs", h["id"])
        s.pop(handoff.COMPACT_PENDING, None)

    session_state.update(ws, session_id, mark)
    return (f"Handoff from the memory plugin (state of the work before the {source}, "
            f"{_date(h['created_at'])}):\n{h['content']}")


def lost_compact_handoff(ws: Workspace, session_id: str) -> str:
    """The handoff of a compaction whose SessionStart(compact) context never ran or came back empty
    (Claude Code drops it at times; the first-prompt fallback does not fire, as a compaction keeps the
    session id): the next prompt carries it, once."""
    if not handoff.compact_pending(ws, session_id):
        return ""
    h = handoff.latest(ws, session_id)
    if h is None or h["session_id"] != session_id or not h["content"].strip():
        handoff.compact_delivered(ws, session_id)
        return ""
    return _own_handoff(ws, session_id, h, "compact")


# Hybrid hits asked for beyond the recall limit, to replace those this session was already shown. A fixed
# number: asking for one more per memory shown made a session's 80th prompt cost 1.49x its first.
OVERFETCH = 10


def _already_shown(ws: Workspace, session_id: str, ids: list[int]) -> set[int]:
    """Which of these memories were injected in this session (an index range on access_log_session)."""
    if not ids:
        return set()
    return {r[0] for r in ws.db.execute(
        f"SELECT memory_id FROM access_log WHERE session_id = ? AND memory_id IN ({','.join('?' * len(ids))}) "
        "AND kind LIKE 'inject%'", [session_id, *ids])}


def prompt_recall(ws: Workspace, session_id: str, prompt: str) -> tuple[str, list[int]]:
    """Memories relevant to a prompt, from other sessions, not already injected in this one. The work is
    bounded whatever the session's length: keyword recall leaves the memories shown out in SQL, hybrid
    recall asks for a fixed OVERFETCH more."""
    if len(prompt.strip()) < 8 or prompt.lstrip().startswith("/"):
        return "", []
    want = env_int("MEMORY_PROMPT_RECALL_LIMIT")
    hits = _hybrid(ws, prompt, want + OVERFETCH, Filters(exclude_session=session_id), relevant_only=True)
    if hits is None:  # one more: the same prompt asked in another session is dropped below
        # The exclusion costs ~1 ms on 10,000 memories: only for a session that has been shown some.
        shown_some = ws.db.execute("SELECT 1 FROM access_log WHERE session_id = ? AND kind LIKE 'inject%' LIMIT 1",
                                   (session_id,)).fetchone() is not None
        filters = Filters(exclude_session=session_id, not_shown_in=session_id if shown_some else None)
        hits = keyword_search(ws.db, prompt, limit=want + 1, filters=filters, min_terms=2,
                              max_candidates=env_int("MEMORY_RECALL_CANDIDATES"))
    shown = _already_shown(ws, session_id, [h.id for h in hits])
    prompt_hash = store.content_hash(prompt)
    hits = [h for h in hits if h.id not in shown and store.content_hash(h.content) != prompt_hash]
    hits = hits[:want]
    if not hits:
        return "", []
    authors = _authors(ws, hits)
    text = _fit(["Memories from earlier sessions that relate to this request:",
                 *(_hit_line(h, author=authors.get(h.id)) for h in hits)],
                min(4000, env_int("MEMORY_INJECT_MAX_CHARS")))
    ids = [h.id for h in hits if f"#{h.id})" in text]
    store.log_access(ws.db, ids, "inject-prompt", session_id, prompt)
    return text, ids
