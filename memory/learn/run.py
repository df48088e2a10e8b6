"""One session's extraction, end to end: which part of the session is new, which providers to try and in
what order, retries with backoff, the token budget, saving the learnings and the summary, recording spend.

Providers degrade in order: Claude (anthropic), then a local Ollama model, then the heuristic, which
needs nothing and cannot fail on a provider's account, so a job always ends with whatever the best
available extractor produced. Where the chain starts is the user's choice (memory/store/consent.py:
`memory config extraction`, or an explicit MEMORY_EXTRACTOR); until they choose, the heuristic alone runs.
A paid provider answers at most once per session, and is retried only when the answer did not arrive
(timeout, connection, 429, 5xx): an answer that is off-format goes straight to the heuristic.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memory import store
from memory.base.config import env_int
from memory.base.log import log
from memory.base.words import wording
from memory.capture import deciders
from memory.capture.transcript import Digest, read
from memory.learn import Extraction, ProviderError, Unavailable, heuristic
from memory.learn.prompt import SYSTEM, build_input, estimate_tokens, parse_answer
from memory.learn.signals import analyse
from memory.store import budget, consent
from memory.store import state as session_state
from memory.store.db import Tx
from memory.store.workspace import Workspace

ORDER = ("anthropic", "ollama", "heuristic")
BACKOFF_BASE = 1.0  # seconds; doubled per retry, with jitter (tests set it near 0)
BACKOFF_MAX = 30.0
DEADLINE_S = 240.0  # model providers are not started after this long: the heuristic finishes the job
SETTLE_S = 2.0  # a transcript written less than this ago may still be growing (it is written async)
sleep: Callable[[float], None] = time.sleep  # replaced by tests


def chain(choice: str | None = None, home: str | None = None) -> list[str]:
    """The providers to try, in order: from the user's choice (consent.choice), or `choice` when given."""
    choice = (choice or consent.choice(home)[0]).strip().lower()
    if choice in ("off", "none", "0", "false"):
        return []
    if choice in ORDER:
        return list(ORDER[ORDER.index(choice):])
    return list(ORDER)


def make_provider(name: str) -> Any:
    """A model provider ready to call, or Unavailable (no key, no server, no model)."""
    if name == "anthropic":
        from memory.learn.anthropic_provider import AnthropicProvider

        return AnthropicProvider()
    if name == "ollama":
        from memory.learn.ollama_provider import OllamaProvider

        return OllamaProvider()
    raise Unavailable(f"unknown provider {name!r}")


def backoff(attempt: int, retry_after: float | None) -> float:
    if retry_after is not None and retry_after >= 0:
        return min(retry_after, 60.0)
    return min(BACKOFF_MAX, BACKOFF_BASE * (2 ** attempt)) * (0.75 + random.random() * 0.5)


@dataclass
class Outcome:
    status: str  # ok, empty, skipped, off
    provider: str = ""
    learnings: int = 0
    saved: list[int] = field(default_factory=list)
    summary: str = ""
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "provider": self.provider, "learnings": self.learnings,
                "saved": self.saved, "reason": self.reason}

    def __repr__(self) -> str:
        return f"Outcome({self.status}, {self.provider}, {self.learnings} learnings, {self.reason!r})"


def _wait_settled(path: str) -> None:
    """SessionEnd may fire before Claude Code has flushed the transcript: wait (bounded) until it stops growing."""
    deadline = time.monotonic() + SETTLE_S * 2
    try:
        last = os.path.getsize(path)
        while time.time() - os.path.getmtime(path) < SETTLE_S and time.monotonic() < deadline:
            time.sleep(0.25)
            size = os.path.getsize(path)
            if size == last and time.time() - os.path.getmtime(path) >= 0.5:
                break
            last = size
    except OSError:
        return


def _covered(ws: Workspace, sid: str) -> tuple[int, int, bool]:
    """(transcript bytes already extracted, session progress then, whether any extraction happened)."""
    row = ws.db.execute("""SELECT max(offset_to) AS o, max(progress) AS p, count(*) AS n FROM extractions
                           WHERE session_id = ? AND status IN ('ok', 'empty')""", (sid,)).fetchone()
    return int(row["o"] or 0), int(row["p"] or 0), bool(row["n"])


def _restore_summary(ws: Workspace, sid: str) -> None:
    """SessionEnd rewrites the summary from the hooks' state; when the session was extracted earlier (at
    a compaction) and nothing followed, the extractor's summary is the better one: put it back."""
    row = ws.db.execute("""SELECT summary FROM extractions WHERE session_id = ? AND coalesce(summary, '') != ''
                           ORDER BY id DESC LIMIT 1""", (sid,)).fetchone()
    if row is not None:
        with Tx(ws.db):
            ws.db.execute("UPDATE sessions SET summary = ? WHERE id = ?", (row["summary"], sid))


def extract_session(ws: Workspace, sid: str, *, trigger: str = "end", transcript_path: str | None = None,
                    force: bool = False, settle: bool = True, created_at: float | None = None,
                    by_agent: str = "") -> Outcome:
    """Extract the learnings of one session (the part not extracted yet) and store them with its summary.
    `by_agent`: why the process asking is the agent's (memory/base/provenance.py): then no quote in the
    transcript counts as the user's (the agent may have written it), and no decision is kept.

    Once per session unless it went on: a session extracted at a compaction is extracted again at its
    end only from where the first extraction stopped, and not at all when nothing substantial followed.
    """
    providers = chain(home=ws.home)
    if not providers:
        return Outcome("off", reason="extraction is off (memory config extraction, MEMORY_EXTRACTOR)")
    row = ws.db.execute("SELECT * FROM sessions WHERE id = ?", (sid,)).fetchone()
    path = transcript_path or (row["transcript_path"] if row is not None else "") or ""
    progress = int(row["prompt_count"] + row["tool_call_count"]) if row is not None else 0
    start, done_progress, extracted = _covered(ws, sid)
    if force:
        start, extracted = 0, False
    has_transcript = bool(path) and os.path.isfile(path)
    if has_transcript:
        if settle:
            _wait_settled(path)
        digest = read(path, start)
    else:
        digest = Digest()
        digest.session_id = sid
        digest.start_offset = digest.end_offset = start
    has_state = ws.db.execute("SELECT 1 FROM session_state WHERE session_id = ?", (sid,)).fetchone() is not None
    state = session_state.load(ws, sid) if has_state else None
    if extracted and not digest.substantial() and (has_transcript or progress <= done_progress):
        _restore_summary(ws, sid)
        return Outcome("skipped", reason="already extracted; nothing substantial since")
    if not digest.substantial() and not (state and (state.get("fixed") or state.get("decisions"))):
        return Outcome("skipped", reason="nothing to learn from (too short)")

    sig = analyse(digest)
    known = [r["title"] for r in ws.db.execute(
        "SELECT title FROM memories WHERE session_id = ? AND source LIKE 'extract:%' ORDER BY id", (sid,))]
    limit = max(1, env_int("MEMORY_EXTRACT_MAX_LEARNINGS"))
    result: Extraction | None = None
    user_text: str | None = None
    began = time.monotonic()
    common = {"session_id": sid, "trigger": trigger, "offset_from": digest.start_offset,
              "offset_to": digest.end_offset, "progress": progress}
    for name in providers:
        if name == "heuristic":
            result = heuristic.extract(digest, state, limit)
            break
        if time.monotonic() - began > DEADLINE_S:
            log("warning", f"extraction of {sid}: deadline passed, skipping {name}", event="extract")
            continue
        try:
            provider = make_provider(name)
        except Unavailable as exc:
            log("info", f"extraction of {sid}: {name} unavailable: {exc}", event="extract")
            continue
        except Exception as exc:  # a broken client install must not lose the job: next provider
            log("warning", f"extraction of {sid}: {name} could not start: {exc!r}", event="extract")
            continue
        if user_text is None:
            max_chars = int(env_int("MEMORY_EXTRACT_MAX_INPUT_TOKENS") * 3.5) - len(SYSTEM)
            user_text = build_input(digest, sig, state, ws.project.name, max(2000, max_chars), known)
        result, off_format = _call_with_retries(ws, provider, user_text, common)
        if result is not None or off_format:
            break
    if result is None:  # every provider failed or was skipped; the heuristic was not in the chain
        result = heuristic.extract(digest, state, limit)
    return _store(ws, sid, digest, state, result, common, created_at, by_agent)


def paid_answered(ws: Workspace, sid: str) -> bool:
    """Whether a paid provider already answered for this session (tokens were billed): at most once each."""
    return ws.db.execute("""SELECT 1 FROM extractions WHERE session_id = ? AND paid = 1
                            AND input_tokens + output_tokens > 0 LIMIT 1""", (sid,)).fetchone() is not None


def _paid_refusal(ws: Workspace, provider: Any, user_text: str, common: dict[str, Any]) -> str:
    """Why a paid provider may not be called now ('' when it may): its one call of the session was made,
    or the daily budget would be passed."""
    if paid_answered(ws, common["session_id"]):
        return "one paid call per session: this session had its answer"
    need = estimate_tokens(SYSTEM + user_text) + env_int("MEMORY_EXTRACT_MAX_OUTPUT_TOKENS")
    left = budget.remaining(ws.home)
    if need > left:
        return f"needs ~{need} tokens, {left} left of MEMORY_DAILY_TOKEN_BUDGET today"
    return ""


def _call_with_retries(ws: Workspace, provider: Any, user_text: str,
                       common: dict[str, Any]) -> tuple[Extraction | None, bool]:
    """(the extraction or None, whether the answer was off-format: then the heuristic, no other model).
    Retried only when no answer arrived: an answer, however bad, is not asked for again."""
    paid = bool(getattr(provider, "paid", False))
    if paid and (why := _paid_refusal(ws, provider, user_text, common)):
        budget.record(ws.db, provider=provider.name, model=provider.model, status="budget", paid=paid,
                      error=why, **common)
        log("info", f"extraction: {provider.name} skipped: {why}", event="extract")
        return None, False
    retries = max(0, env_int("MEMORY_EXTRACT_RETRIES"))
    for attempt in range(retries + 1):
        off_format = False
        try:
            answer, tin, tout = provider.call(user_text)
            try:
                learnings, summary = parse_answer(answer)
            except ValueError as exc:
                raise ProviderError(f"malformed answer: {exc}", retryable=False, off_format=True,
                                    input_tokens=tin, output_tokens=tout) from exc
        except Exception as exc:  # noqa: BLE001 - a client bug or API change: next provider, job kept
            if not isinstance(exc, ProviderError):
                exc = ProviderError(f"{type(exc).__name__}: {exc}", retryable=False)
            off_format = exc.off_format
            budget.record(ws.db, provider=provider.name, model=provider.model, status="failed", paid=paid,
                          input_tokens=exc.input_tokens, output_tokens=exc.output_tokens, error=str(exc), **common)
            log("warning", f"extraction: {provider.name} attempt {attempt + 1} failed: {exc}", event="extract")
            if not exc.retryable or attempt == retries:
                return None, off_format
            sleep(backoff(attempt, exc.retry_after))
            continue
        limit = max(1, env_int("MEMORY_EXTRACT_MAX_LEARNINGS"))
        return Extraction(learnings[:limit], summary, provider.name, provider.model, tin, tout), False
    return None, False


def user_texts(digest: Digest, state: dict[str, Any] | None) -> list[str]:
    """What the user wrote in the session, their own words only (capture.own_words: no pasted text): the
    transcript's prompts, and the prompts the hooks kept."""
    from memory.capture import own_words

    texts = [p.text for p in digest.prompts]
    texts += [str(p) for p in (state or {}).get("prompts", []) if isinstance(p, str)]
    return [own for t in texts if (own := own_words(t)).strip()]


# A learning this share of whose words one memory of its type (a fix, a decision) that the hooks stored for its
# session already has adds nothing to it: the same fact told again in other words (issue 26 "nothing said
# twice"). On the shared transcripts (2026-12-07) the extractor's "`npx tsc` failed with ... - fixed" has 87% of
# its words in the hooks' "Fixed: `npx tsc ...` passes again", a "`git commit` failed ... - fixed" 86%; a fix
# that adds the assistant's explanation (why it failed) has 57% (tests/e2e/test_learning.py) and stays. Of
# its type only: a short discovery's words are all in a long document the session wrote (a plan), which does
# not say it.
ADDS_NOTHING = 0.8


def _words(text: str) -> set[str]:
    """The words of a text that say something (3 characters or more), lower case."""
    return {w for w in wording(text).split() if len(w) > 2}


def _said_before(ws: Workspace, sid: str) -> dict[str, list[set[str]]]:
    """The words of each memory the hooks stored for the session, by type (an earlier extraction's learnings
    may be bettered: a model's after the heuristic's, `memory extract --force`)."""
    said: dict[str, list[set[str]]] = {}
    for kind, title, content in ws.db.execute(
            "SELECT type, title, content FROM memories WHERE session_id = ? AND source NOT LIKE 'extract:%'", (sid,)):
        said.setdefault(kind, []).append(_words(f"{title} {content}"))
    return said


def _same_fact(words: set[str], said: list[set[str]]) -> bool:
    """Whether a memory of the session already tells what `words` tell (ADDS_NOTHING of them)."""
    return bool(words) and any(len(words & old) >= ADDS_NOTHING * len(words) for old in said)


def _store(ws: Workspace, sid: str, digest: Digest, state: dict[str, Any] | None, result: Extraction,
           common: dict[str, Any], created_at: float | None, by_agent: str = "") -> Outcome:
    saved: list[int] = []
    confidence = 0.6 if result.provider == "heuristic" else 0.8
    users = [] if by_agent else user_texts(digest, state)
    said = _said_before(ws, sid)
    for lr in result.learnings:
        if _same_fact(_words(f"{lr.title} {lr.content}"), said.get(lr.type, [])):
            continue  # the hooks' record tells it already
        kind, importance = lr.type, lr.importance
        if kind in deciders.STANDING_TYPES and not deciders.user_evidence(f"{lr.title} {lr.content}", lr.evidence,
                                                                          users):
            # Not the user's words: the assistant's, a tool's or a file's (memory/capture/deciders.py).
            kind, importance = deciders.DEMOTED_TYPE, min(importance, deciders.DEMOTED_MAX_IMPORTANCE)
        s = store.save(ws.db, ws.project.key, store.NewMemory(
            title=lr.title, content=lr.content, type=kind, importance=importance, confidence=confidence,
            tags=["learning", f"extractor:{result.provider}"], files=lr.files, source=f"extract:{result.provider}",
            session_id=sid, created_at=created_at))
        if s.id is not None and s.action != "dropped":
            saved.append(s.id)
    summary = result.summary
    if not summary:  # a model that gave learnings but no summary: the heuristic one is better than none
        summary = heuristic.summarise(digest, analyse(digest), result.learnings, state)
    from memory.base.privacy import clean

    text = clean(summary.text())
    if text:
        with Tx(ws.db):
            ws.db.execute("UPDATE sessions SET summary = ? WHERE id = ?", (text, sid))
    status = "ok" if saved else "empty"
    budget.record(ws.db, provider=result.provider, model=result.model, status=status,
                  paid=result.provider == "anthropic", input_tokens=result.input_tokens,
                  output_tokens=result.output_tokens, learnings=len(saved), summary=text, **common)
    log("info", f"extraction of {sid} by {result.provider}: {len(saved)} learnings", event="extract")
    return Outcome(status, result.provider, len(saved), saved, text)
