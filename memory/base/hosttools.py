"""Each coding agent's tool names and input keys, as the host-neutral kind and the Claude Code tool and keys
the capture code reads (memory/capture/tools.py): for the hook adapters (memory/hook/hosts.py) and for the
session logs `memory import` reads (memory/capture/hostlogs.py). Standard library only: hooks import it."""

from __future__ import annotations

from memory.base.event import TOOL_KINDS

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from typing import Any

# A host-neutral tool kind and the Claude Code tool the capture code knows it by (TOOL_KINDS inverted).
CLAUDE_TOOL = {"read": "Read", "edit": "Edit", "write": "Write", "shell": "Bash", "search": "Grep",
               "fetch": "WebFetch", "todo": "TodoWrite", "task": "Task"}

# Each host's tool names and their kinds (lower-cased names; Claude Code's own come from TOOL_KINDS).
HOST_TOOLS = {
    # Gemini CLI / Antigravity: docs/tools of geminicli.com.
    "run_shell_command": "shell", "read_file": "read", "read_many_files": "read", "replace": "edit",
    "write_file": "write", "glob": "search", "search_file_content": "search", "grep_search": "search",
    "list_directory": "search", "web_fetch": "fetch", "google_web_search": "fetch", "write_todos": "todo",
    # Codex CLI: shell calls are reported as Bash, edits as apply_patch.
    "shell": "shell", "exec_command": "shell", "apply_patch": "edit",
    # GitHub Copilot CLI.
    "bash": "shell", "view": "read", "edit": "edit", "str_replace": "edit", "create": "write", "grep": "search",
    # Cline (the VS Code extension's tools, then the CLI 3.x's).
    "execute_command": "shell", "write_to_file": "write", "replace_in_file": "edit", "search_files": "search",
    "list_files": "search", "run_commands": "shell", "editor": "edit", "read_files": "read",
    "search_codebase": "search", "fetch_web_content": "fetch",
    # OpenCode.
    "read": "read", "write": "write", "webfetch": "fetch", "todowrite": "todo", "task": "task",
    # Cursor.
    "strreplace": "edit", "multiedit": "edit",
}
# Input keys the hosts spell otherwise, as Claude Code spells them (what memory/capture/tools.py reads).
INPUT_KEYS = {"path": "file_path", "filePath": "file_path", "absolute_path": "file_path", "file": "file_path",
              "oldString": "old_string", "old_str": "old_string", "old_text": "old_string",
              "newString": "new_string", "new_str": "new_string", "new_text": "new_string", "file_text": "content",
              "cmd": "command", "regex": "pattern", "query": "pattern", "dir_path": "path"}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


def _dict(value: Any) -> dict[str, Any]:
    """A tool's arguments: an object, or an object given as JSON text (Copilot CLI's toolArgs)."""
    if isinstance(value, str) and value.startswith("{"):
        from memory.fastpath import jsonlite

        try:
            value = jsonlite.loads(value)
        except ValueError:
            return {"command": value}
    return value if isinstance(value, dict) else {}


def own_words(text: str) -> str:
    """A prompt without the tagged blocks a client put before the person's words: a block whose tag is a
    snake_case name (Gemini CLI's <hook_context> holding what a SessionStart hook gave, <session_context>,
    Codex's <environment_context>), which an HTML or XML tag a person pastes is not."""
    text = text.strip()
    while text.startswith("<"):
        tag = text[1:text.find(">")] if ">" in text else ""
        end = text.find(f"</{tag}>") if "_" in tag and tag.replace("_", "").isalnum() else -1
        if end < 0:
            break
        text = text[end + len(tag) + 3:].strip()
    return text


def _list(value: Any) -> list[Any]:
    """A list, or a list given as JSON text (Cline's parameters are strings)."""
    if isinstance(value, str) and value.startswith("["):
        from memory.fastpath import jsonlite

        try:
            value = jsonlite.loads(value)
        except ValueError:
            return [value]
    return value if isinstance(value, list) else [value] if value else []


def _patch_input(tin: dict[str, Any]) -> dict[str, Any]:
    """Codex's apply_patch as an edit of its first file: the removed lines and the added ones."""
    patch = _text(tin.get("command") or tin.get("input") or tin.get("patch"))
    if isinstance(tin.get("command"), list):
        patch = "\n".join(_text(p) for p in tin["command"])
    path, old, new = "", list[str](), list[str]()
    for line in patch.splitlines():
        for head in ("*** Update File: ", "*** Add File: ", "*** Delete File: "):
            if line.startswith(head):
                if path:
                    return {"file_path": path, "old_string": "\n".join(old), "new_string": "\n".join(new)}
                path = line[len(head):].strip()
        if path and line[:1] == "-" and not line.startswith("---"):
            old.append(line[1:])
        elif path and line[:1] == "+" and not line.startswith("+++"):
            new.append(line[1:])
    return {"file_path": path, "old_string": "\n".join(old), "new_string": "\n".join(new)}


def _diff_sides(diff: str) -> tuple[str, str]:
    """Cline's SEARCH/REPLACE blocks as the text before and after."""
    old, new = list[str](), list[str]()
    side: list[str] | None = None
    for line in diff.splitlines():
        if line.startswith("------- SEARCH") or line.startswith("<<<<<<< SEARCH"):
            side = old
        elif line.startswith("======="):
            side = new
        elif line.startswith("+++++++ REPLACE") or line.startswith(">>>>>>> REPLACE"):
            side = None
        elif side is not None:
            side.append(line)
    return "\n".join(old), "\n".join(new)


def claude_tool(name: str, args: Any) -> tuple[str, str, dict[str, Any]]:
    """A host's tool call as (Claude Code's tool name, its host-neutral kind, its input under Claude Code's
    keys); a tool no host table knows keeps its own name, of kind "other"."""
    low = name.lower()
    kind = ("mcp" if low.startswith("mcp") else TOOL_KINDS.get(name) or HOST_TOOLS.get(low)
            or HOST_TOOLS.get(low.replace("_", "")) or "other")
    tin = {INPUT_KEYS.get(k, k): v for k, v in _dict(args).items()}
    if kind == "shell" and "command" not in tin and "commands" in tin:  # Cline's run_commands: a list
        tin["command"] = "; ".join(_text(c) for c in _list(tin.pop("commands")))
    elif kind == "read" and "file_path" not in tin and "files" in tin:  # Cline's read_files: the first
        first = next(iter(_list(tin.get("files"))), None)
        tin["file_path"] = _text(first.get("path")) if isinstance(first, dict) else _text(first)
    if kind == "edit" and low == "apply_patch":
        tin = _patch_input(tin)
    elif kind == "edit" and "diff" in tin and "new_string" not in tin:  # Cline's replace_in_file
        tin["old_string"], tin["new_string"] = _diff_sides(_text(tin.get("diff")))
    return CLAUDE_TOOL.get(kind) or name, kind, tin
