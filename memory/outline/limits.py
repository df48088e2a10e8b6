"""Which Reads the client refuses whole, decided in PreToolUse(Read) with one stat and no database.

Claude Code refuses a whole Read of a file over 256 KB ("exceeds maximum allowed size", checked on the size)
and of one whose content counts over 25,000 tokens (`CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS`; counted by the
API): the result never reaches PostToolUse, and the model gets an error where an outline helps most. Standard
library only and no sqlite3: this runs on every Read, and a small file costs one `os.stat`."""

from __future__ import annotations

import os

from memory.base.config import ENV_VARS, env, env_int

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from typing import Any

# Below this many bytes per token no source file counts: the token limit is looked at only above
# max_tokens * 3 bytes (parser/tokens.py's estimate lands near 4 bytes a token on code).
MIN_BYTES_PER_TOKEN = 3


def is_full_read(tool_input: dict[str, Any]) -> bool:
    """A Read of the whole file: no offset, limit or pages."""
    return all(tool_input.get(k) in (None, "") for k in ("offset", "limit", "pages"))


def client_max_tokens() -> int:
    """The client's token cap on one Read: its own variable when set (hooks inherit its environment)."""
    value = env_int("CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS")
    return value if value > 0 else int(ENV_VARS["CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS"][0])


def may_be_refused(tool_input: object) -> tuple[str, os.stat_result] | None:
    """(path, its stat) when this Read may be one the client refuses whole, else None. One stat for a small
    file; nothing opened."""
    if not isinstance(tool_input, dict) or not is_full_read(tool_input):
        return None
    path = tool_input.get("file_path")
    if not isinstance(path, str) or not path or env("MEMORY_OUTLINE").lower() in ("off", "0", "false", "no"):
        return None
    try:
        st = os.stat(path)
    except (OSError, ValueError):  # ValueError: a NUL in the path
        return None
    limit = min(env_int("MEMORY_OUTLINE_CLIENT_MAX_BYTES"), client_max_tokens() * MIN_BYTES_PER_TOKEN)
    if st.st_size <= limit or st.st_size > env_int("MEMORY_OUTLINE_MAX_BYTES"):
        return None  # the common case; or too big to parse in a hook (the client's error stands)
    return path, st
