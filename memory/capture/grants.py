"""The person's own `/memory:save` typed as a prompt: a grant the prompt hook records and the slash command
that runs under the agent consumes (memory/capture/deciders.py says who may make a decision). Imports
nothing of capture, so capture's prompt handling can use it without an import cycle."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from typing import Any

# The person's own `/memory:save`: Claude Code runs its `!` block through the same shell as the model's Bash
# tool (memory/base/provenance.py cannot tell them apart), but only a prompt the person typed fires
# UserPromptSubmit: before the block runs (2.1.330) or after it (2.1.197). The hook keeps a grant for the
# arguments typed (their digest, in the session's state), which a later `slash save` consumes to save as the
# user; and a `slash save` that came first, saved as the agent's, leaves a pending entry that the hook
# promotes. The model cannot type a prompt, and commands/save.md disables model invocation.
SLASH_SAVE = ("/memory:save", "/save")
GRANTS = "slash_saves"  # session state key: [[digest, time], ...]
PENDING = "slash_pending"  # [[digest, time, memory id, type, importance, confidence], ...]
BY_AGENT = ("assistant", "model")  # source and origin of what a process of the agent's saves
GRANT_SECONDS = 120.0  # a `!` block runs within 2 minutes of its prompt or not at all


def slash_arguments(prompt: str) -> str | None:
    """The arguments of a typed `/memory:save ARGS` prompt, or None for any other prompt."""
    parts = prompt.strip().split(None, 1)
    if not parts or parts[0] not in SLASH_SAVE:
        return None
    return parts[1] if len(parts) > 1 else ""


def grant_digest(arguments: str) -> str:
    import hashlib

    return hashlib.sha256(" ".join(arguments.split()).encode()).hexdigest()[:32]


# Each entry of a state list: [digest, time, ...]; a grant has nothing more, a pending save 4 more fields.
_SIZES = {GRANTS: 2, PENDING: 6}


def _entries(state: dict[str, Any], key: str) -> list[list[Any]]:
    return [e for e in state.get(key, []) if isinstance(e, list) and len(e) == _SIZES[key]]


def _add(state: dict[str, Any], key: str, arguments: str, now: float, *more: Any) -> None:
    """Append an entry for these arguments (expired ones dropped, at most 10 kept)."""
    kept = [e for e in _entries(state, key) if now - e[1] < GRANT_SECONDS]
    state[key] = [*kept, [grant_digest(arguments), now, *more]][-10:]


def _take(state: dict[str, Any], key: str, arguments: str, now: float) -> list[Any] | None:
    """Remove and return the entry for these arguments, if it was made just now."""
    digest = grant_digest(arguments)
    entries = _entries(state, key)
    for e in entries:
        if e[0] == digest and 0 <= now - e[1] < GRANT_SECONDS:
            entries.remove(e)
            state[key] = entries
            return e
    return None


def add_grant(state: dict[str, Any], arguments: str, now: float) -> None:
    """Record the person's typed `/memory:save` in the session state."""
    _add(state, GRANTS, arguments, now)


def take_grant(state: dict[str, Any], arguments: str, now: float) -> bool:
    """Consume the grant for these arguments, if the person typed them in this session just now."""
    return _take(state, GRANTS, arguments, now) is not None


def add_pending(state: dict[str, Any], arguments: str, now: float, memory_id: int, requested: tuple[str, float, float]
                ) -> None:
    """A `slash save` with no grant yet: what it asked for, for the typed prompt's hook to give back."""
    _add(state, PENDING, arguments, now, memory_id, *requested)


def take_pending(state: dict[str, Any], arguments: str, now: float) -> list[Any] | None:
    """The pending `slash save` of these arguments, removed from the state, if it came just now."""
    return _take(state, PENDING, arguments, now)


def promote(db: Any, entries: list[list[Any]]) -> None:
    """Give the person's typed `/memory:save` back what it asked for: the user's, as a terminal save is."""
    if not entries:
        return
    from memory.store import queue_vector_jobs

    db.executemany("UPDATE memories SET type = ?, importance = ?, confidence = ?, source = 'cli', origin = 'user', "
                   "origin_detail = 'memory save' WHERE id = ? AND origin = ?",
                   [(t, i, c, mid, BY_AGENT[1]) for _, _, mid, t, i, c in entries])
    queue_vector_jobs(db, [e[2] for e in entries])  # the vector store filters on type
