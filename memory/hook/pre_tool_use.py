"""PreToolUse (Read): answers nothing yet; every Read goes through unchanged (the outline of a large file is
given after the Read, by PostToolUse: memory/outline/read.py).

Kept registered in hooks/hooks.json because issue #17 gives it its work: a full Read of a code file over
Claude Code's size limit, which the client refuses before PostToolUse sees it, is to be denied here with
the file's outline as the reason."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from typing import Any

    from memory.hook.run import Call


def handle(event: dict[str, Any], call: Call) -> dict[str, Any] | None:
    return None
