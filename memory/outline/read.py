"""A full Read of a large code file: the model gets the file's outline instead of its body.

Mechanism (chosen by testing the real client, see docs/outlines.md): PostToolUse `updatedToolOutput`. The Read
really runs, so Claude Code's read-state holds the whole file and a following Edit works; only the text the
model sees is replaced. Reads with offset/limit pass through, and so does a second full Read of a file
already outlined in this session (or subagent): the agent insisted. Where the client answers that second Read
with `file_unchanged` ("refer to the earlier result", which was the outline: Claude Code 2.1.197), the hook
answers with the file's text instead (`whole_again`)."""

from __future__ import annotations

import os

from memory.base.config import env, env_int
from memory.outline import cache as outline_cache
from memory.outline.limits import client_max_tokens, is_full_read
from memory.store import state as session_state
from memory.store.workspace import Workspace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memory.base.event import Event
    from memory.capture import Capture


def maybe_outline(ws: Workspace, event: Event, sid: str, cap: Capture) -> dict[str, Any] | None:
    """The PostToolUse output that replaces a Read's result with an outline, or None to pass through.
    Its bookkeeping (the saving, the file marked as outlined) joins the capture's transaction."""
    if env("MEMORY_OUTLINE").lower() in ("off", "0", "false", "no"):
        return None
    tin, resp = event.tool_input, event.tool_response
    if not isinstance(resp, dict) or not is_full_read(tin):
        return None  # not a Read's result, or a targeted read: the agent knows what it wants
    if resp.get("type") == "file_unchanged":
        return whole_again(ws, event, sid, tin.get("file_path"))
    if resp.get("type") != "text":
        return None
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
    key = _outlined_key(event, path)
    if key in session_state.load(ws, sid).get("outlined", []):
        return None  # asked for the whole file again
    try:
        st = os.stat(path)
    except OSError:
        return None
    data = _code_bytes(path) if st.st_size <= env_int("MEMORY_OUTLINE_MAX_BYTES") else None
    if data is None:
        return None
    # The cache's own writes join the capture's transaction: one commit for the whole hook.
    cached = outline_cache.get_outline(ws.db, path, data, st, cap.writes)
    from parser.header import MAX_SHOWN_SHARE, has_groups, read_header

    if cached is None:
        return _outlines_later(ws, sid, cap)
    if cached.outline_tokens > cached.original_tokens * MAX_SHOWN_SHARE:
        return None  # not worth withholding the body for
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


OUTLINES_LATER = ("[memory plugin] File outlines start when the plugin's setup has finished, in about a minute; "
                  "until then a Read returns the whole file.")


def _outlines_later(ws: Workspace, sid: str, cap: Capture) -> dict[str, Any] | None:
    """Once a session, while an installed plugin's venv is still being built (the hook runs on python3, no
    tree-sitter): one line with the Read's whole file, saying when outlines start."""
    import importlib.util

    from memory.base.bootstrap import setup_running

    if not setup_running(os.environ.get("CLAUDE_PLUGIN_DATA")) or importlib.util.find_spec("tree_sitter"):
        return None  # an outline the parser declined, or no setup to wait for
    if session_state.load(ws, sid).get("outlines_later"):
        return None
    cap.change(lambda s: s.update(outlines_later=True))
    return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": OUTLINES_LATER}}


def _code_bytes(path: str, max_bytes: int | None = None) -> bytes | None:
    """The file's bytes; None when it cannot be read, is binary (a NUL in its first 8 KB) or is over max_bytes."""
    try:
        with open(path, "rb") as fh:
            data = fh.read() if max_bytes is None else fh.read(max_bytes + 1)
    except OSError:
        return None
    if (max_bytes is not None and len(data) > max_bytes) or b"\0" in data[:8192]:
        return None
    return data


def _outlined_key(event: Event, path: str) -> str:
    """The session state's mark of a file outlined for this agent (the main one, or a subagent), as the state
    stores it: privacy-filtered (memory/store/state.py), so that a path holding a token-like name matches."""
    from memory.base.privacy import clean

    return clean(f"{event.agent_id or 'main'}:{path}")


# A whole file the hook hands back as text: the client's own cap on a whole Read (Claude Code 2.1.x: 256 KB);
# a file above it never had a Read result to outline.
WHOLE_MAX_BYTES = 262_144


def whole_again(ws: Workspace, event: Event, sid: str, path: object) -> dict[str, Any] | None:
    """The answer to a `file_unchanged` Read result of a file this agent was given the outline of: the file's
    text, as the Read would have returned it. The client (2.1.197) tells the model to refer to the earlier
    result, which was the outline, so without this "Whole file: Read again." would be false there.

    Bounded (WHOLE_MAX_BYTES) and never a channel for what the privacy filter would remove: a file holding
    a secret or a <private> block gets a note to read it by range (the client then reads it itself) instead of
    a text the plugin would have to redact, shifting its lines."""
    if not isinstance(path, str) or _outlined_key(event, path) not in session_state.load(ws, sid).get("outlined", []):
        return None  # the model saw this file's body: the client's answer is true
    data = _code_bytes(path, WHOLE_MAX_BYTES)
    if data is None:
        return None
    text = data.decode("utf-8", "replace")
    lines = text.count("\n") + 1  # as the client counts (a final newline ends an empty last line)
    from memory.base.privacy import clean

    if clean(text) != text:
        text = (f"[memory plugin] The whole file ({lines} lines) is unchanged since its outline. Read it with "
                f"offset=1 limit={lines}.")
        lines = 1
    file = {"filePath": path, "content": text, "numLines": lines, "startLine": 1,
            "totalLines": lines}
    return {"hookSpecificOutput": {"hookEventName": "PostToolUse",
                                   "updatedToolOutput": {"type": "text", "file": file}}}


def refused_read(ws: Workspace, path: str, st: os.stat_result) -> dict[str, Any] | None:
    """PreToolUse's answer to a whole Read of a code file the client would refuse (memory/outline/limits.py):
    deny it, with the outline and how to read ranges as the reason, which reaches the model as the Read's
    result. None (the client decides) when the file has no outline or the client would take it whole (decided
    before any parse: PostToolUse outlines it then). A large file is parsed as far as a CPU budget goes and
    the rest scanned for definitions by keyword (memory/outline/partial.py), with a note saying so."""
    from parser.languages import language_for_path

    if language_for_path(path) is None:
        return None
    data = _code_bytes(path)
    if data is None:
        return None
    from parser.tokens import estimate_tokens

    max_bytes, max_tokens = env_int("MEMORY_OUTLINE_CLIENT_MAX_BYTES"), client_max_tokens()
    if st.st_size <= max_bytes and estimate_tokens(data) <= max_tokens:
        return None  # the client reads it whole: PostToolUse outlines it (nothing parsed here)
    # Parsed within a budget of work units, the rest scanned: a file of any size fits the hook's budget.
    cached = outline_cache.get_outline(ws.db, path, data, st, partial=True)
    if cached is None:
        return None
    from parser.render import has_groups

    over = f"{max_bytes // 1024} KB" if st.st_size > max_bytes else f"{max_tokens} tokens"
    star = " (*: each name)" if has_groups(cached.outline) else ""
    header = (f"[memory plugin] Too large for a whole Read ({st.st_size // 1024} KB, ~{cached.original_tokens} "
              f"tokens; over {over}). Its outline: {cached.total_lines} lines. Rows: first-last line, "
              f"signature{star}. Code: Read offset+limit.\n")
    reason = header + _bounded_rows(cached.outline, max_tokens * 2)
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                   "permissionDecisionReason": reason}}


def _bounded_rows(outline: str, max_chars: int) -> str:
    """The outline's first rows within max_chars (about half the client's token cap), and a line saying how many
    rows were left out and the file line where they start."""
    if len(outline) <= max_chars:
        return outline
    rows = outline.splitlines()
    kept, used = [], 0
    for row in rows:
        if used + len(row) + 1 > max_chars:
            break
        kept.append(row)
        used += len(row) + 1
    rest = rows[len(kept):]
    first = rest[0].strip().split("-", 1)[0].split(" ", 1)[0]
    where = f" from line {first}" if first.isdigit() else ""
    return "\n".join(kept) + f"\n[... {len(rest)} more rows{where}: Read offset+limit]"
