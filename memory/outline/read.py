"""A full Read of a large code file: the model gets the file's outline instead of its body.

Mechanism (chosen by testing the real client, see docs/outlines.md): PostToolUse `updatedToolOutput`. The Read
really runs, so Claude Code's read-state holds the whole file and a following Edit works; only the text the
model sees is replaced. Reads with offset/limit pass through, and so does a second full Read of a file
already outlined in this session (or subagent): the agent insisted."""

from __future__ import annotations

import os

from memory.base.config import env, env_int
from memory.outline import cache as outline_cache
from memory.store import state as session_state
from memory.store.workspace import Workspace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memory.capture import Capture


def maybe_outline(ws: Workspace, event: dict[str, Any], sid: str, cap: Capture) -> dict[str, Any] | None:
    """The PostToolUse output that replaces a Read's result with an outline, or None to pass through.
    Its bookkeeping (the saving, the file marked as outlined) joins the capture's transaction."""
    if env("MEMORY_OUTLINE").lower() in ("off", "0", "false", "no"):
        return None
    tin = event.get("tool_input")
    resp = event.get("tool_response")
    if not isinstance(tin, dict) or not isinstance(resp, dict) or resp.get("type") != "text":
        return None
    if any(tin.get(k) not in (None, "") for k in ("offset", "limit", "pages")):
        return None  # a targeted read: the agent knows what it wants
    file = resp.get("file")
    path = tin.get("file_path")
    if not isinstance(file, dict) or not isinstance(path, str) or file.get("startLine", 1) != 1:
        return None
    total = file.get("totalLines") or file.get("numLines") or 0
    if not isinstance(total, int) or total < env_int("MEMORY_OUTLINE_MIN_LINES"):
        return None  # checked first: small files never pay for importing the parser package
    from parser.languages import language_for_path

    if language_for_path(path) is None:
        return None
    key = f"{event.get('agent_id') or 'main'}:{path}"
    if key in session_state.load(ws, sid).get("outlined", []):
        return None  # asked for the whole file again
    try:
        st = os.stat(path)
        if st.st_size > env_int("MEMORY_OUTLINE_MAX_BYTES"):
            return None
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None  # binary
    # The cache's own writes join the capture's transaction: one commit for the whole hook.
    cached = outline_cache.get_outline(ws.db, path, data, st, cap.writes)
    from parser.render import MAX_SHOWN_SHARE, has_groups, read_header

    if cached is None or cached.outline_tokens > cached.original_tokens * MAX_SHOWN_SHARE:
        return None  # no outline, or not worth withholding the body for
    from parser.tokens import estimate_tokens

    grouped = has_groups(cached.outline)
    header = read_header(cached.total_lines, cached.original_tokens, cached.outline_tokens, grouped)
    # What the model gets, header included, is what the saving is counted against.
    shown = cached.outline_tokens + estimate_tokens(header)
    header = read_header(cached.total_lines, cached.original_tokens, shown, grouped)
    content = header + cached.outline
    cap.writes.append(lambda db: outline_cache.record_saving(db, sid, path, cached.original_tokens, shown))
    cap.change(lambda s: session_state.push_unique(s, "outlined", key))
    replaced = dict(file)
    replaced.update(content=content, numLines=content.count("\n") + 1, startLine=1)
    return {"hookSpecificOutput": {"hookEventName": "PostToolUse",
                                   "updatedToolOutput": {**resp, "file": replaced}}}
