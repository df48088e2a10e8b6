"""What the model is told: handoffs and memories at session start, relevant memories per prompt.

Phrased as facts (Claude Code advises against text framed as commands), kept under the injection cap, and
always inside the one untrusted block (memory/base/fence.py): each memory line names where it came from and
when; memories flagged as instruction-shaped, and such lines of handoffs and summaries, are withheld.
"""

from __future__ import annotations

import os
import sqlite3
import time

from memory import store
from memory.base import fence
from memory.base.config import env, env_int
from memory.base.words import title_and_text, told, wording
from memory.capture import handoff
from memory.recall.search import Filters, Hit, _shared_terms, keyword_search, terms, useful_memories
from memory.store import state as session_state
from memory.store import symbols
from memory.store.workspace import Workspace


def _date(ts: float) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(ts))


def provenance(ws: Workspace, ids: list[int]) -> dict[int, sqlite3.Row]:
    return store.provenance(ws.db, ids)


def label(row: sqlite3.Row | None) -> str:
    return fence.row_label(row)


def flagged(h: Hit, row: sqlite3.Row | None) -> bool:
    return fence.is_flagged(row, h.title, h.content)


def _unflagged(hits: list[Hit], prov: dict[int, sqlite3.Row], want: int, db: sqlite3.Connection | None = None
               ) -> tuple[int, list[Hit]]:
    """(how many of the first `want` hits are flagged, the first `want` hits that are not). Each hit is
    checked once and only until `want` pass: at startup, checking all 2 x want candidates (the first
    `want` twice) was over half of the hook's work past its imports. With `db`, the rows decided now are
    marked checked under the rules in force (store.mark_checked), so the next injection reads no text."""
    verdicts: dict[int, bool] = {}

    def is_flagged(h: Hit) -> bool:
        if h.id not in verdicts:
            verdicts[h.id] = flagged(h, prov.get(h.id))
        return verdicts[h.id]

    withheld = sum(1 for h in hits[:want] if is_flagged(h))
    kept: list[Hit] = []
    for h in hits:
        if len(kept) == want:
            break
        if not is_flagged(h):
            kept.append(h)
    if db is not None:
        store.mark_checked(db, (prov.get(i) for i in verdicts), verdicts)
    return withheld, kept


def is_repo_doc(row: sqlite3.Row | None) -> bool:
    return row is not None and (row["origin"] == "repo-doc" or (not row["origin"] and row["source"] == "markdown"))


def _few_from_teammates(hits: list[Hit], prov: dict[int, sqlite3.Row], most: int) -> list[Hit]:
    """The hits with no more than `most` rows pulled from the team server (they carry a machine): however
    many a member pushes, teammates' rows take at most half the startup places and cost the hook no more."""
    out: list[Hit] = []
    for h in hits:
        row = prov.get(h.id)
        if row is not None and row["machine"]:
            if most <= 0:
                continue
            most -= 1
        out.append(h)
    return out


def _stale_last(ws: Workspace, hits: list[Hit]) -> tuple[list[Hit], dict[int, str]]:
    """The hits with those whose code has changed since they were made moved last (memory/store/symbols.py),
    and what changed for each of them."""
    old = symbols.stale(ws.db, [h.id for h in hits])
    return ([h for h in hits if h.id not in old] + [h for h in hits if h.id in old]) if old else hits, old


def _hit_line(h: Hit, width: int = 240, row: sqlite3.Row | None = None, stale: str | None = None) -> str:
    title, body = title_and_text(h.title, h.content)
    text = f"- [{h.type}] {title}"
    if body:
        text += f": {body[:width]}{'...' if len(body) > width else ''}"
    changed = "; code changed since" if stale else ""
    return f"{text} ({label(row)}, {_date(h.created_at)}{changed}, #{h.id})"


# A handoff's lines that quote the user's prompts (memory/capture/handoff.py render, HANDOFF_SOURCES): their
# standing orders are the user's (fence.USER_MAY). The items under "Decisions:" too.
_USER_LINES = ("Task: ", "Later requests: ", "Compaction focus asked by the user: ")


def screen(text: str) -> tuple[str, int]:
    """A handoff or summary without its instruction-shaped lines, and how many were withheld."""
    kept: list[str] = []
    dropped = 0
    decisions = False
    for line in text.splitlines():
        if not line.startswith("- "):
            decisions = line == "Decisions:"
        own = line.startswith(_USER_LINES) or (decisions and line.startswith("- "))
        if fence.instruction_shaped(line, own=own):
            dropped += 1
        else:
            kept.append(line)
    return "\n".join(kept), dropped


def _withheld(n: int) -> str:
    return (f"({n} recorded line{'s' if n > 1 else ''} withheld here: {'they read' if n > 1 else 'it reads'} "
            "as instructions to the agent; `memory doctor` lists flagged memories for review)")


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
    from memory.base import worker_client

    if not os.path.exists(worker_client.socket_path(ws.home)):
        return None  # no worker running (off, not started yet, gone idle): importing the layers cost ~0.3 ms
    from memory.recall.layers import hybrid_via_worker

    got = hybrid_via_worker(ws, query, limit, filters)
    if got is None:
        return None
    from memory.base.log import log

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
    """The text to inject (one untrusted block) and the ids of memories it names."""
    limit = env_int("MEMORY_INJECT_MAX_CHARS")
    body, used = session_start_body(ws, session_id, source, limit - fence.OVERHEAD)
    return fence.wrap(body, limit), used


def session_start_body(ws: Workspace, session_id: str, source: str, limit: int) -> tuple[str, list[int]]:
    """What the startup block holds, unfenced (the prompt hook joins it with its recall in one block): the
    handoff, memories of earlier sessions, then (new sessions only) the recent sessions' summaries."""
    h, head = _startup_handoff(ws, session_id, source)
    hits, related, withheld = _startup_memories(ws, session_id, h, wording(head))
    recent: list[str] = []
    if source in ("startup", "clear"):
        recent, dropped = _recent_sessions(ws, session_id, h)
        withheld += dropped
    heading = f"Memories of project {ws.project.name} from earlier sessions:"
    text, hits = _said_once(head, heading, hits, recent, withheld, limit)
    if not text:
        return "", []
    used = [x.id for x, _ in hits if f"#{x.id})" in text]
    # The text is recorded: a prompt's recall of this session leaves out what it already says (_said_at_start).
    _record(ws, [x for x, _ in hits], used, "inject-start", session_id, None, text,
            "startup+hybrid" if related else "startup")
    return text, used


def _said_once(head: str, heading: str, hits: list[tuple[Hit, str]], recent: list[str], withheld: int,
               limit: int) -> tuple[str, list[tuple[Hit, str]]]:
    """The startup text within `limit` and the memory lines it keeps, each fact in one place: a memory
    listed in full is not also a note of the handoff (handoff.NOTES), and one a recent session's line shown
    below already says is not listed."""
    room = env_int("MEMORY_STARTUP_MEMORY_CHARS")

    def text_of(head: str, hits: list[tuple[Hit, str]]) -> str:
        parts = [head] if head else []
        if hits:
            parts += [heading, *_within([line for _, line in hits], room)]
        parts += recent  # last: the first part dropped when the cap is reached
        if withheld and parts:
            parts.append(_withheld(withheld))
        return _fit(parts, limit)

    text = text_of(head, hits)
    sessions = wording("\n".join(ln for ln in recent if ln in text))
    by_sessions = [x for x, _ in hits if sessions and said_by(x, sessions)]
    hits = [(x, line) for x, line in hits if x not in by_sessions]
    listed = {x.id for x, _ in hits if f"#{x.id})" in text}
    if by_sessions or (head and listed):  # shorter than the first: every line that fitted still fits
        text = text_of(_without_notes(head, listed) if head else head, hits)
    return text, hits


def _within(lines: list[str], room: int) -> list[str]:
    """The first lines while they fit in `room` characters, each whole, the first always. The startup list
    is ranked with no query (importance, recency, use): its size is bounded in characters, not items, so
    that twelve full lines (~4,000 characters) never outweigh the handoff and the recent sessions."""
    out: list[str] = []
    used = 0
    for line in lines:
        used += len(line) + 1
        if out and used > room:
            break
        out.append(line)
    return out


def _startup_handoff(ws: Workspace, session_id: str, source: str) -> tuple[sqlite3.Row | None, str]:
    """The handoff to show at this start and its text ("" when none is due)."""
    if source in ("compact", "resume", "clear", "fork"):
        h = handoff.latest(ws, session_id)
        # A resumed conversation still holds what was injected into it, and what happened after it: once a
        # handoff of this session is in the conversation, a newer one would say it twice (after a compaction,
        # the compact handoff and the next turn's: 2.7 K near-identical characters). After compact or clear
        # the context is gone, so the handoff always comes back.
        seen = session_state.load(ws, session_id).get("injected_handoffs", []) if source in ("resume", "fork") else []
        if h and h["content"].strip() and not seen:
            return h, _own_handoff(ws, session_id, h, source)
        if source == "compact":
            handoff.compact_delivered(ws, session_id)
        return h, ""
    h, later = handoff.for_startup(ws, session_id, max_age_s=env_int("MEMORY_HANDOFF_MAX_AGE_HOURS") * 3600)
    if not (h and h["content"].strip()):
        return h, ""
    which = "the last session that did work in this project" if later else "the previous session in this project"
    after = f"; {later} later session{'s' if later > 1 else ''} did none" if later else ""
    return h, _handoff_text(f"Handoff from the memory plugin (where {which} stopped, "
                            f"{_date(h['created_at'])}{after}){HANDOFF_SOURCES}", h["content"])


def said_by(h: Hit, said: str) -> bool:
    """Whether a text (its wording(), memory/base/words.py) already says all a memory's line would."""
    return told(h.title, h.content, said)


def _without_notes(handoff_text: str, ids: set[int]) -> str:
    """A handoff without its notes (handoff.NOTES, `- [type #id] title`) of these memories, and without the
    notes' heading when none is left."""
    lines = handoff_text.split("\n")
    if handoff.NOTES not in lines:
        return handoff_text
    at = lines.index(handoff.NOTES)
    end = next((i for i in range(at + 1, len(lines)) if not lines[i].startswith("- [")), len(lines))

    def noted(line: str) -> int | None:
        inside = line[3:line.find("]")] if "]" in line else ""
        number = inside.rpartition(" #")[2]
        return int(number) if " #" in inside and number.isdigit() else None

    kept = [ln for ln in lines[at + 1:end] if noted(ln) not in ids]
    return "\n".join(lines[:at] + ([handoff.NOTES, *kept] if kept else []) + lines[end:])


def _startup_memories(ws: Workspace, session_id: str, h: sqlite3.Row | None, said: str = ""
                      ) -> tuple[list[tuple[Hit, str]], list[Hit] | None, int]:
    """The memories worth showing at a start with their lines, the hybrid hits that ranked them (or None),
    and how many were withheld as instruction-shaped. Those whose every word the handoff shown above
    already says (`said`, its wording) are left out: the handoff, the train of thought, says them once."""
    want = env_int("MEMORY_STARTUP_MEMORIES")
    related: list[Hit] | None = None
    hits = [x for x in useful_memories(ws.db, ws.project.key, want * 3)
            if x.session_id != session_id and x.importance >= 0.4]
    if h and h["content"].strip():
        # What the handoff is about, found by hybrid search when the worker answers in time: the most
        # related memories take up to half the places.
        related = _hybrid(ws, h["content"][:600], want // 2, Filters(exclude_session=session_id))
        if related:
            seen_ids = {x.id for x in related}
            hits = related + [x for x in hits if x.id not in seen_ids]
    # Repository docs nobody read are not memories of earlier sessions (prompt recall shows them, labelled),
    # and instruction-shaped memories are never injected on their own.
    if said:
        hits = [x for x in hits if not said_by(x, said)]
    fixed = handoff.fixed_later(ws.db, [(x.id, x.title, x.session_id) for x in hits])
    hits = [x for x in hits if x.id not in fixed]
    prov = provenance(ws, [x.id for x in hits])
    shown, old = _stale_last(ws, _few_from_teammates([x for x in hits if not is_repo_doc(prov.get(x.id))], prov,
                                                       want // 2))
    withheld, hits = _unflagged(shown, prov, want, ws.db)
    return [(x, _hit_line(x, row=prov.get(x.id), stale=old.get(x.id))) for x in hits], related, withheld


def _recent_sessions(ws: Workspace, session_id: str, h: sqlite3.Row | None) -> tuple[list[str], int]:
    """The recent sessions' summary lines under their heading, and how many were withheld."""
    from memory.capture.summary import recent

    # The session whose handoff is injected above is already described by it.
    lines = recent(ws.db, ws.project.key, (session_id, h["session_id"] if h else ""),
                   env_int("MEMORY_SESSION_SUMMARIES"))
    kept = [ln for ln in lines if not fence.instruction_shaped(ln)]
    if not kept:
        return [], len(lines)
    # Bounded in characters as the memories list is: summaries of real sessions reach their 400-character
    # cap (the shared transcripts' two: 417 each), three made ~1,250 characters of a start; two fit.
    shown = _within(kept, env_int("MEMORY_STARTUP_SESSION_CHARS"))
    return ["Recent sessions in this project (what was asked, done, learned, left):\n" + shown[0], *shown[1:]], \
        len(lines) - len(kept)


def _record(ws: Workspace, hits: list[Hit], ids: list[int], kind: str, session_id: str, query: str | None,
            text: str, mode: str) -> None:
    """The injection and each memory it names with its rank and score parts (`memory why`): one
    injections row and an access_log row a memory, in one transaction (memory/store log_access)."""
    parts = {h.id: h.parts or {"score": h.score} for h in hits}
    store.log_access(ws.db, ids, kind, session_id, query, parts=parts, text=text, mode=mode)


# Where each line of a handoff (memory/capture/handoff.py render) comes from, by its key: the handoff is one text,
# so its provenance is told once, in its heading.
HANDOFF_SOURCES = "; Task, requests and decisions quote the user, the rest is tool output and the assistant's"


def _handoff_text(head: str, content: str) -> str:
    body, dropped = screen(content)
    return f"{head}:\n{body}" + (f"\n{_withheld(dropped)}" if dropped else "")


def _own_handoff(ws: Workspace, session_id: str, h: sqlite3.Row, source: str) -> str:
    """This session's handoff, recorded as injected. It is the session's latest, so whatever a compaction
    left pending is delivered with it (by SessionStart compact, resume or fork, or the next prompt)."""
    def mark(s: session_state.State) -> None:
        session_state.push_unique(s, "injected_handoffs", h["id"])
        s.pop(handoff.COMPACT_PENDING, None)

    session_state.update(ws, session_id, mark)
    return _handoff_text(f"Handoff from the memory plugin (state of the work before the {source}, "
                         f"{_date(h['created_at'])}){HANDOFF_SOURCES}", h["content"])


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


def _said_at_start(ws: Workspace, session_id: str) -> str:
    """The wording of this session's latest startup block (its handoff, memories and sessions' lines, as
    recorded by session_start_body): a memory it says in full is in the context already. One indexed read."""
    row = ws.db.execute("SELECT text FROM injections WHERE session_id = ? AND kind = 'inject-start' "
                        "ORDER BY at DESC LIMIT 1", (session_id,)).fetchone()
    return wording(row[0]) if row and row[0] else ""


def prompt_recall(ws: Workspace, session_id: str, prompt: str) -> tuple[str, list[int]]:
    """Memories relevant to a prompt, from other sessions, not already injected in this one: one untrusted
    block."""
    limit = min(4000, env_int("MEMORY_INJECT_MAX_CHARS"))
    body, ids = prompt_recall_body(ws, session_id, prompt, limit - fence.OVERHEAD)
    return fence.wrap(body, limit), ids


# Keyword hits asked for beyond the recall limit: flagged (instruction-shaped) hits are left out below.
FLAGGED_ROOM = 3


def prompt_search(ws: Workspace, session_id: str, prompt: str, want: int) -> tuple[list[Hit], str]:
    """The prompt hook's search, before what this session was shown and flagged hits are left out: hybrid
    from the warm worker, or keyword mode bounded for a hook; its hits and "hybrid" or "keyword"."""
    hits = _hybrid(ws, prompt, want + OVERFETCH, Filters(exclude_session=session_id), relevant_only=True)
    if hits is not None:
        return hits, "hybrid"
    # One more: the same prompt asked in another session is dropped by the caller.
    # The exclusion costs ~1 ms on 10,000 memories: only for a session that has been shown some.
    shown_some = ws.db.execute("SELECT 1 FROM access_log WHERE session_id = ? AND kind LIKE 'inject%' LIMIT 1",
                               (session_id,)).fetchone() is not None
    filters = Filters(exclude_session=session_id, not_shown_in=session_id if shown_some else None)
    return keyword_search(ws.db, prompt, limit=want + 1 + FLAGGED_ROOM, filters=filters, min_terms=2,
                          max_candidates=env_int("MEMORY_RECALL_CANDIDATES")), "keyword"


def prompt_recall_body(ws: Workspace, session_id: str, prompt: str, width: int) -> tuple[str, list[int]]:
    """The recall block's body, unfenced. The work is bounded whatever the session's length: keyword recall
    leaves the memories shown out in SQL, hybrid recall asks for a fixed OVERFETCH more."""
    if len(prompt.strip()) < 8 or prompt.lstrip().startswith("/"):
        return "", []
    want = env_int("MEMORY_PROMPT_RECALL_LIMIT")
    hits, mode = prompt_search(ws, session_id, prompt, want)
    shown = _already_shown(ws, session_id, [h.id for h in hits])
    prompt_hash = store.content_hash(prompt)
    hits = [h for h in hits if h.id not in shown and store.content_hash(h.content) != prompt_hash]
    said = _said_at_start(ws, session_id) if hits else ""
    if said:
        hits = [h for h in hits if not said_by(h, said)]
    prov = provenance(ws, [h.id for h in hits])
    hits, old = _stale_last(ws, hits)
    withheld, hits = _unflagged(hits, prov, want, ws.db)
    if not hits and not withheld:
        return "", []
    memories = [h for h in hits if not is_repo_doc(prov.get(h.id))]
    docs = [h for h in hits if is_repo_doc(prov.get(h.id))]
    parts: list[str] = []
    if memories:
        parts += ["Memories from earlier sessions that relate to this request:",
                  *(_hit_line(h, row=prov.get(h.id), stale=old.get(h.id)) for h in memories)]
    if docs:
        parts += ["Repository docs that relate to this request (sections of files in this repository, indexed "
                  "by the plugin; not memories of earlier sessions, and not necessarily read by anyone):",
                  *(_hit_line(h, row=prov.get(h.id)) for h in docs)]
    if withheld:
        parts.append(_withheld(withheld))
    text = _fit(parts, width)
    ids = [h.id for h in hits if f"#{h.id})" in text]
    _record(ws, hits, ids, "inject-prompt", session_id, prompt, text, mode)
    return text, ids
