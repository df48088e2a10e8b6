"""The person's own `/memory:save` typed as a prompt: a grant the prompt hook records and the slash command
that runs under the agent consumes (memory/capture/deciders.py says who may make a decision). Imports
nothing of capture, so capture's prompt handling can use it without an import cycle."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from typing import Any

# The person's own `/memory:save`: Claude Code runs its `!` block through the same shell as the model's Bash
# tool (memory/base/provenance.py cannot tell them apart), but only a prompt the person typed fires
# UserPromptSubmit, and it fires before the block runs. The hook keeps a grant for the arguments typed
# (their digest, in the session's state); the `slash save` under the agent that finds its grant consumes it
# and saves as the user. The model cannot type a prompt, and commands/save.md disables model invocation.
SLASH_SAVE = ("/memory:save", "/save")
GRANTS = "slash_saves"  # session state key: [[digest, time], ...]
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


def add_grant(state: dict[str, Any], arguments: str, now: float) -> None:
    """Record the person's typed `/memory:save` in the session state (expired grants dropped)."""
    kept = [g for g in state.get(GRANTS, []) if isinstance(g, list) and len(g) == 2 and now - g[1] < GRANT_SECONDS]
    state[GRANTS] = [*kept, [grant_digest(arguments), now]][-10:]


def take_grant(state: dict[str, Any], arguments: str, now: float) -> bool:
    """Consume the grant for these arguments, if the person typed them in this session just now."""
    digest = grant_digest(arguments)
    grants = [g for g in state.get(GRANTS, []) if isinstance(g, list) and len(g) == 2]
    for g in grants:
        if g[0] == digest and 0 <= now - g[1] < GRANT_SECONDS:
            grants.remove(g)
            state[GRANTS] = grants
            return True
    return False
