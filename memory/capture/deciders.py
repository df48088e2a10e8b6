"""Only people make decisions: which recorded words may become a standing rule, in one place.

A `decision` is kept, ranked high and never evicted, so it reads to later sessions as a rule. It may come
only from the user: their prompts, their own `memory save` / `/memory:save`, an import of their prompts,
or an extraction whose evidence quotes their prompts (memory/learn/run.py checks the quote before
saving). Assistant messages, tool output, file content, repository docs and the model's MCP `save` become
observations at most, whatever words they use; what the model saves is recorded as the model's (source
'mcp'), with a lower importance and confidence. `settle` applies this to every memory store.save writes.
A `memory` command run by a process of the agent's (memory/base/provenance.py: its Bash tool, a script or a
background job it started) saves the model's words too (`as_agent`), unless it is the person's own typed
`/memory:save` (the grant below).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:

    from memory.store import NewMemory

# Types a later session reads as a standing rule.
STANDING_TYPES = frozenset({"decision"})
# memories.source values whose words are a person's. 'prompt': a user prompt seen by the hook;
# 'import:prompt': the same, from an imported transcript; 'cli': `memory save` and `/memory:save`.
PERSON_SOURCES = frozenset({"prompt", "import:prompt", "cli"})
# Extractions are checked against the user's words before they are saved (quotes_user).
EXTRACT_PREFIX = "extract:"
# Sources that are the model's own words: kept, but below what a person said.
MODEL_SOURCES = frozenset({"mcp", "assistant", "import:assistant"})
MODEL_MAX_IMPORTANCE = 0.5
MODEL_MAX_CONFIDENCE = 0.3
# What a standing rule from elsewhere becomes.
DEMOTED_TYPE = "observation"
DEMOTED_MAX_IMPORTANCE = 0.5


def by_person(source: str) -> bool:
    return source in PERSON_SOURCES or source.startswith(EXTRACT_PREFIX)


def settle(m: NewMemory) -> NewMemory:
    """Apply the rule to a memory about to be stored (in place; returned for chaining)."""
    if m.source in MODEL_SOURCES:
        m.importance = min(m.importance, MODEL_MAX_IMPORTANCE)
        m.confidence = min(m.confidence, MODEL_MAX_CONFIDENCE)
    if m.type in STANDING_TYPES and not by_person(m.source):
        m.type = DEMOTED_TYPE
        m.importance = min(m.importance, DEMOTED_MAX_IMPORTANCE)
    return m


def _words(text: str) -> list[str]:
    import re

    return re.findall(r"[a-z0-9_]+", text.lower().replace("\u2019", "'"))


QUOTE_MIN_WORDS = 4
_SMALL = frozenset("that this with from have will they them then than when what into only also were been "
                   "there their here just some more most very should would could about over user decided "
                   "decision always never".split())


def quotes_user(evidence: str, user_texts: list[str]) -> bool:
    """Whether `evidence` is the user's own words: all of it (at least QUOTE_MIN_WORDS words; case,
    punctuation and spacing aside) found as one run in one of the user's prompts."""
    ev = _words(evidence)
    if len(ev) < QUOTE_MIN_WORDS:
        return False
    needle = f" {' '.join(ev)} "
    return any(needle in f" {' '.join(_words(text))} " for text in user_texts)


def supports(evidence: str, claim: str) -> bool:
    """Whether a quote is about the claim: two words of four letters or more (not filler) in common."""
    def key(text: str) -> set[str]:
        return {w for w in _words(text) if len(w) >= 4 and w not in _SMALL}

    return len(key(evidence) & key(claim)) >= 2


def user_evidence(claim: str, evidence: str, user_texts: list[str]) -> str:
    """The user's words a decision stands on: the given evidence when it quotes the user and is about the
    claim, else a decision sentence of the user's about it (memory/capture/__init__.py decisions_in), else ''."""
    if evidence and quotes_user(evidence, user_texts) and supports(evidence, claim):
        return evidence
    from memory.capture import decisions_in

    for text in user_texts:
        for sentence in decisions_in(text):
            if supports(sentence, claim):
                return sentence
    return ""




def as_agent(m: NewMemory, reason: str) -> NewMemory:
    """A memory a process of the agent's saved: the model's words, under the rule (settle)."""
    from memory.capture.grants import BY_AGENT

    m.source, m.origin = BY_AGENT
    m.origin_detail = f"saved by a process of the agent's: {reason}"[:200]
    return settle(m)
