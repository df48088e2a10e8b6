"""PreToolUse (Read): pass-through for now; the outline of large code files plugs in here."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from typing import Any



def handle(event: dict[str, Any]) -> dict[str, Any] | None:
    return None
