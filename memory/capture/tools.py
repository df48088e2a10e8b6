"""Tool events (PostToolUse, PostToolUseFailure) turned into observations and session-state changes: one
small function per kind of tool (read, edit, write, shell, search, fetch, todo, task, mcp, other) behind
a table keyed on the kind, which Claude Code's tool name maps to. Pure functions, no I/O.

Hot side, standard library only: may import base, store and memory.capture."""

from __future__ import annotations

import os

from memory.base.classify import classify
from memory.base.event import Event, tool_kind
from memory.base.privacy import clean
from memory.capture import FAILED_TITLE, FIX_ERROR, FIXED_TITLE, Capture, rel
from memory.store import NewMemory
from memory.store.state import State, push_unique

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from collections.abc import Callable
    from typing import Any

MAX_TODO_MEMORIES = 20  # completed todos saved one by one per TodoWrite; the rest share one memory
_ERROR_WORDS = ("error", "exception", "traceback", "failed", "failure", "fatal", "panic", "cannot", "not found",
                "denied")
# How much of an edit's old or new string the privacy filter reads before it is cut: a secret that starts
# within the kept part ends long before this, and the filter's cost stays bounded on a huge edit.
_EDIT_SCAN = 20_000


class ToolCall:
    """One tool event as the handlers read it: the tool, its input and response, whether it failed, and
    the session and subagent it ran in."""

    __slots__ = ("tool", "kind", "tin", "resp", "failed", "error", "session", "agent", "tags", "path", "root")

    def __init__(self, event: Event, root: str) -> None:
        self.tool, self.kind = event.tool, event.tool_kind or tool_kind(event.tool)
        self.tin: dict[str, Any] = event.tool_input
        self.resp, self.error, self.failed = event.tool_response, event.error, event.failed
        self.session = event.session or None
        self.agent = event.agent_type or (event.agent_id and "subagent")
        self.tags = [f"tool:{self.tool.lower()}"] + ([f"agent:{self.agent}"] if self.agent else [])
        self.path = str(self.tin.get("file_path") or self.tin.get("notebook_path") or "")
        self.root = root

    def memory(self, title: str, content: str, type_: str, importance: float, provenance: str,
               files: list[str] | None = None) -> NewMemory:
        """A memory of this call; `provenance` names what the text is the output (or input) of."""
        return NewMemory(title=title, content=content, type=type_, importance=importance, tags=list(self.tags),
                         files=files or [], session_id=self.session, origin="tool", origin_detail=provenance)

    def last_action(self, cap: Capture, text: str) -> None:
        """The session's last action, which a subagent's call never overwrites."""
        if not self.agent:
            cap.change(lambda s: s.__setitem__("last_action", text))


def tool_event(event: Event, root: str) -> Capture:
    cap = Capture()
    cap.change(_count_call)
    call = ToolCall(event, root)
    HANDLERS[call.kind](call, cap)
    return cap


def _count_call(state: State) -> None:
    state["tool_calls"] = int(state.get("tool_calls", 0)) + 1


def _read(call: ToolCall, cap: Capture) -> None:
    if not call.path:
        return
    path, r = call.path, rel(call.path, call.root)
    cap.change(lambda s: push_unique(s, "files_read", path))
    # The session's context, not a memory: "Read app.py" says nothing a person would look up, and came
    # back in searches that named the file (the session state, handoff and summary keep the files read).
    call.last_action(cap, f"Read {r}")


def _edit(call: ToolCall, cap: Capture) -> None:
    """Edit, MultiEdit and NotebookEdit: what changed, as text (the memory's title names the file)."""
    if not call.path:
        return
    r = rel(call.path, call.root)
    if call.tool == "MultiEdit":
        from memory.base.words import count

        edits = call.tin.get("edits") if isinstance(call.tin.get("edits"), list) else []
        n = count(len(edits), "edit")
        summary, text = f"Edited {r} ({n})", "\n".join([f"{n}:", *filter(None, map(summary_of, edits[:3]))])
    else:
        summary = f"Edited {r}"
        new = call.tin.get("new_string") if call.tool == "Edit" else call.tin.get("new_source")
        text = edit_text(call.tin.get("old_string"), new, 300) or "edited"
    _changed(call, cap, summary, text)


def summary_of(edit: object) -> str:
    """One of a MultiEdit's edits as text (150 characters of each string)."""
    return edit_text(edit.get("old_string"), edit.get("new_string"), 150) if isinstance(edit, dict) else ""


def _write(call: ToolCall, cap: Capture) -> None:
    if not call.path:
        return
    from memory.base.words import count

    content = str(call.tin.get("content", ""))
    lines = count(len(content.splitlines()), "line")
    written = _filtered(content, 300)
    _changed(call, cap, f"Wrote {rel(call.path, call.root)} ({lines})",
             f"wrote {lines}:\n{written}" if written else f"wrote {lines}")


def _changed(call: ToolCall, cap: Capture, summary: str, text: str) -> None:
    """A file changed (or a change failed): the session's modified files, its last action, a change memory."""
    path = call.path
    cap.change(lambda s: push_unique(s, "files_modified", path))
    if call.failed:
        text += f"\nThe edit failed: {_text(call.error)[:300]}"
    first = summary[:300]
    cap.change(lambda s: s.__setitem__("last_action", first))
    cap.memories.append(call.memory(f"Modified {rel(path, call.root)}", text, "change", 0.35, call.tool, [path]))


def edit_text(old: object, new: object, limit: int) -> str:
    """An edit's old and new strings as text, with their own newlines (never repr(), whose literal `\\n`
    glued a secret on its own line to the letter n, so that no word-boundary rule matched it); each is
    filtered whole, then cut to `limit` characters (a cut first could split a secret so no rule matched)."""
    o, n = _filtered(old, limit), _filtered(new, limit)
    if o and n:
        return f"replaced:\n{o}\nwith:\n{n}"
    if n:
        return f"added:\n{n}"
    return f"removed:\n{o}" if o else ""


def _filtered(value: object, limit: int) -> str:
    text = clean(str(value or "")[:_EDIT_SCAN]).strip("\r\n")
    if not text.strip():
        return ""
    return text if len(text) <= limit else f"{text[:limit]}..."


def _shell(call: ToolCall, cap: Capture) -> None:
    cmd = str(call.tin.get("command") or "").strip()
    if not cmd or runs_memory_cli(cmd):  # the plugin's own output is never captured again
        return
    key = command_key(cmd)
    out = call.resp if isinstance(call.resp, dict) else {}
    stderr = _text(out.get("stderr"))
    stdout = _text(out.get("stdout")) if out else _text(call.resp)
    err_text = _text(call.error) if call.failed else ""
    short = cmd.splitlines()[0][:120]
    cap.change(lambda s: push_unique(s, "commands", key))
    if call.failed or bool(out.get("interrupted")) or _exit_code_error(err_text):
        _shell_failed(call, cap, cmd, key, short, f"{err_text}\n{stderr}\n{stdout}")
        return
    call.last_action(cap, f"Ran `{short}`")
    body = (stdout + ("\n" + stderr if stderr.strip() else "")).strip()
    # Its outcome is told only where the client tells one (a failure event, `interrupted`, an error's `Exit
    # code N`): Claude Code's Bash response holds no exit code (stdout, stderr, interrupted, isImage), and a
    # command not reported failed may still have failed (`pytest | tail` exits 0), so the title says that it
    # ran, never "ok"; its output, untrusted text, is kept as it was printed.
    ran = call.memory(f"Ran `{short}`", _said_once(cmd, short, "", body), "observation", 0.15, call.tool)
    cap.memories.append(ran)
    cap.change(lambda s: _resolve(s, key, short, cap, call, ran))


def _said_once(cmd: str, short: str, after: str, body: str) -> str:
    """A command's memory text: its output, after the command itself only when the title (which holds
    `short`) does not hold all of it, so that a recalled line spells the command once."""
    head = f"`{cmd[:500]}`{after}" if cmd != short or not body else ""
    return f"{head}\n{body}".strip()


def _shell_failed(call: ToolCall, cap: Capture, cmd: str, key: str, short: str, output: str) -> None:
    """A failed command: the session's open errors (the line that says why), a memory of the failure."""
    error = failure_line(output) or "failed"
    agent = call.agent

    def record_error(s: State) -> None:
        s["errors"] = [e for e in s.get("errors", []) if e.get("command") != key][-9:]
        s["errors"].append({"command": key, "error": error})
        if not agent:
            s["last_action"] = f"`{short}` failed: {error[:200]}"

    cap.change(record_error)
    cap.memories.append(call.memory(FAILED_TITLE.format(short), _said_once(cmd, short, " failed:", output.strip()),
                                    "bugfix" if classify(error) == "bugfix" else "observation", 0.45, call.tool))


def _resolve(state: State, key: str, short: str, cap: Capture, call: ToolCall, ran: NewMemory) -> None:
    """A command that failed earlier in the session now succeeds: an error was fixed. The fix's memory is
    this run's record: a "Ran" observation of the same run beside it would say the command again."""
    errors = state.get("errors", [])
    match = [e for e in errors if e.get("command") == key]
    if not match:
        return
    cap.memories.remove(ran)
    state["errors"] = [e for e in errors if e.get("command") != key]
    fixes = [os.path.basename(p)[:60] for p in state.get("files_modified", [])[-3:]]
    # The title's words first, so that where this text is said (the handoff's "Fixed this session" line,
    # whole) the memory's line would say nothing more; the error cut as the handoff's "Unresolved errors".
    title = FIXED_TITLE.format(short)
    text = title.partition(": ")[2] + (f" after changes to {', '.join(fixes)}" if fixes else "")
    text += f"{FIX_ERROR}{match[-1].get('error', '')[:200]}"
    push_unique(state, "fixed", text)
    cap.memories.append(NewMemory(title=title, content=text, type="bugfix",
                                  importance=0.75, tags=[*call.tags, "fixed"], session_id=call.session,
                                  files=state.get("files_modified", [])[-3:], origin="tool", origin_detail=call.tool))


def _todo(call: ToolCall, cap: Capture) -> None:
    todos = call.tin.get("todos") if isinstance(call.tin.get("todos"), list) else []
    todos = [t for t in todos if isinstance(t, dict)]
    before = {}
    if isinstance(call.resp, dict) and isinstance(call.resp.get("oldTodos"), list):
        before = {str(t.get("content")): t.get("status") for t in call.resp["oldTodos"] if isinstance(t, dict)}

    def set_todos(s: State) -> None:
        s["todos"] = [{"content": str(t.get("content", ""))[:300], "status": str(t.get("status", ""))}
                      for t in todos][:30]

    cap.change(set_todos)
    done = [c for t in todos if t.get("status") == "completed" and (c := str(t.get("content", "")))
            and before.get(c) != "completed"]
    for content in done[:MAX_TODO_MEMORIES]:
        # the text is the todo alone: the title says "Completed" (a line read "Completed: X: Completed todo: X")
        cap.memories.append(call.memory(f"Completed: {content[:150]}", content,
                                        classify(content, "feature"), 0.45, call.tool))
    if len(done) > MAX_TODO_MEMORIES:  # one memory for the rest: a save costs ~0.4 ms, classify more
        from memory.base.words import count

        rest = done[MAX_TODO_MEMORIES:]
        cap.memories.append(call.memory(f"Completed {count(len(rest), 'more todo')}",
                                        "Completed todos: " + "; ".join(c[:100] for c in rest[:50]), "feature",
                                        0.3, call.tool))


def _fetch(call: ToolCall, cap: Capture) -> None:
    """WebFetch and WebSearch: the page or the results, labelled with their address or query."""
    target = str(call.tin.get("url") or call.tin.get("query") or "")
    if target:
        body = _text(call.resp)[:1500]
        cap.memories.append(call.memory(f"Looked up {target[:150]}", f"{call.tool} {target}\n{body}", "discovery",
                                        0.3, f"{call.tool} {target[:120]}"))


def _task(call: ToolCall, cap: Capture) -> None:
    desc = str(call.tin.get("description") or call.tin.get("prompt") or "")[:150]
    if desc:
        result = _text(call.resp)[:1500]
        cap.memories.append(call.memory(f"Delegated: {desc}", f"Subagent task: {desc}\nResult: {result}",
                                        "observation", 0.3, call.tool))


def _search(call: ToolCall, cap: Capture) -> None:
    pattern = str(call.tin.get("pattern") or "")
    call.last_action(cap, f"Searched for {pattern[:100]!r}")


def _mcp(call: ToolCall, cap: Capture) -> None:
    """An MCP tool: counted, nothing recorded; the results of this plugin's own tools (OWN_MCP_PREFIX: a
    search, a recalled memory) are never captured again, whatever is recorded of other servers' tools."""


def _nothing(call: ToolCall, cap: Capture) -> None:
    """Other tools: counted, nothing recorded."""


HANDLERS: dict[str, Callable[[ToolCall, Capture], None]] = {
    "read": _read, "edit": _edit, "write": _write, "shell": _shell, "search": _search, "fetch": _fetch,
    "todo": _todo, "task": _task, "mcp": _mcp, "other": _nothing}

# The plugin's MCP tools as Claude Code names them: mcp__plugin_<plugin>_<server>__<tool> (plugin.json).
OWN_MCP_PREFIX = "mcp__plugin_memory_memory__"
# What may stand before a command's program: wrappers that run the rest of the line.
_WRAPPERS = frozenset("sudo env exec time nohup command nice builtin stdbuf timeout xargs".split())
# Shell operators that start another simple command; each is split on (quoting is not parsed: a quoted
# operator only makes one more segment to look at).
_SEPARATORS = ("&&", "||", "|", ";", "&", "\n", "$(", "`", "(", ")", "{", "}")


def runs_memory_cli(command: str) -> bool:
    """Whether a shell command runs this plugin's CLI (`memory ...`, a path ending in bin/memory such as
    .venv/bin/memory, `python -m memory`) in any of its simple commands: then its output is the
    plugin's own, already recorded or recalled."""
    if "memory" not in command:  # nearly every command: no split
        return False
    for sep in _SEPARATORS:
        command = command.replace(sep, "\0")
    return any(_program_is_memory(part.split()) for part in command.split("\0"))


def _program_is_memory(words: list[str]) -> bool:
    i = 0
    while i < len(words) and ("=" in words[i] and not words[i].startswith("=") or words[i] in _WRAPPERS
                              or words[i].startswith("-") and i > 0):
        i += 1  # VAR=value, sudo, env -i, timeout 10 ...
    if i < len(words) and words[i].isdigit():
        i += 1  # the duration of `timeout 10`
    if i >= len(words):
        return False
    program = words[i].strip("'\"").rsplit("/", 1)[-1]
    if program == "memory":
        return True
    if not program.startswith("python"):
        return False
    rest = words[i + 1:]
    for j, word in enumerate(rest):
        module = (rest[j + 1] if j + 1 < len(rest) else "") if word == "-m" else word[2:] if word.startswith("-m") \
            else None
        if module is not None:
            return module == "memory" or module.startswith("memory.")
        if not word.startswith("-"):
            return False  # python runs a script
    return False


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_text(v) for v in value)
    if isinstance(value, dict):
        if "text" in value and isinstance(value["text"], str):
            return value["text"]
        return "\n".join(f"{k}: {_text(v)}" for k, v in value.items() if isinstance(v, str | int | float))
    return str(value)


def command_key(cmd: str) -> str:
    return " ".join(cmd.split())[:200]


def _exit_code_error(err_text: str) -> bool:
    if not err_text:  # the common case (the command did not fail): no regex to compile
        return False
    import re

    return bool(re.match(r"exit code [1-9]", err_text, re.I))


# Lines a failed command prints that are not its failure: package managers' update and funding banners,
# notices and warnings, and Claude Code's own `Exit code N` header (kept only when nothing else is left).
_NOISE_START = ("npm notice", "npm warn", "npm http", "npm timing", "npm info", "npm verb", "[notice]", "warning",
                "warn ", "(node:", "(use `node --trace", "yarn run v", "done in ", "info visit", "hint:",
                "browserslist:", "debugger attached", "waiting for the debugger", "exit code ")
_NOISE_IN = ("new version of", "new minor version", "new major version", "new patch version", "new release of",
             "update available", "to update, run", "install -g npm", "looking for funding", "npm fund",
             "npm audit", "is outdated. please run")
# What a failure looks like, most telling first: an exception or compiler error line, a test runner's
# failure marker (pytest's `E`, jest's `●`, node's `✖`, TAP's `not ok`). Matched over the whole text at
# once: a Python loop over the lines costs several times more, and a failed command may print megabytes.
_FAILURE_LINE = (r"^[ \t]*(?:E\s+\S.*|[\w.]*(?:Error|Exception|Failure)\b.*|(?:error|fatal|panic)(?:\[\w+\])?:.*|"
                 r"[●✖✗×]\s.*|not ok\b.*|assert(?:ion)?\b.*)$")


def _noise(line: str) -> bool:
    low = line.lower()
    return (low.startswith(_NOISE_START) or any(n in low for n in _NOISE_IN)
            or not any(c.isalnum() for c in line[:200]) or line.startswith(("==", "__")))


def failure_line(text: str) -> str:
    """The line that says why a command failed: the exception a Python traceback ends with, else the first
    exception, compiler error or test-failure line, else the first line with an error word, else the last
    line; banners and notices (npm's "New minor version of npm available!") never count."""
    import re

    if len(text) > 64_000:  # the failure is near the start or the end; each 100 KB scanned costs ~5 ms
        text = f"{text[:32_000]}\n{text[-32_000:]}"
    tb = text.rfind("Traceback (most recent call last)")
    if tb >= 0:
        for ln in text[tb:].splitlines()[1:]:
            if ln.strip() and not ln[0].isspace() and not _noise(ln.strip()):
                return ln.strip()[:300]
    # ASCII-folded, lower-cased: the same positions as `text`; str.find per word is ~30x faster than re.I
    low = text.encode("ascii", "replace").decode("ascii").lower()
    strong = re.compile(_FAILURE_LINE, re.M)
    for find in (lambda pos: (m.start() if (m := strong.search(text, pos)) else -1),
                 lambda pos: min((i for w in _ERROR_WORDS if (i := low.find(w, pos)) >= 0), default=-1)):
        pos = 0
        while (at := find(pos)) >= 0:
            start, end = text.rfind("\n", 0, at) + 1, text.find("\n", at)
            end = len(text) if end < 0 else end
            line, pos = text[start:end].strip(), end + 1
            if not _noise(line):
                return re.sub(r"^E\s+", "", line)[:300]  # pytest's E marker
    lines = [ln.strip() for ln in text.splitlines()[-200:] if ln.strip()]
    kept = [ln for ln in lines if not _noise(ln)]
    exits = [ln for ln in text.splitlines()[:5] if ln.lower().startswith("exit code ")]
    return (kept or exits or [""])[-1][:300]
