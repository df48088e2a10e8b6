"""A Claude Code transcript (JSONL, unofficial format) read into a session digest for extraction; a Codex
CLI or Gemini CLI session log too, read as the Claude Code lines it means (memory/capture/hostlogs.py).

The format changes between versions, so every field is optional here: a line that cannot be read is
skipped, unknown line types are ignored, and content may be a string or a list of blocks. Reading can
start at a byte offset so that a session which goes on (resume, a second compaction) is extracted from
where the last extraction stopped; offsets always fall on line boundaries.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from memory.capture import hostlogs

EDIT_TOOLS = {"Edit", "MultiEdit", "Write", "NotebookEdit"}
# Lines Claude Code writes for its own bookkeeping: not what the user asked.
_NOT_A_PROMPT = ("<local-command", "Caveat:", "[Request interrupted", "<command-message>", "<system-reminder>",
                 "<user-prompt-submit-hook>", "<bash-input>", "<bash-stdout>", "<bash-stderr>")
_COMMAND = re.compile(r"<command-name>\s*(/?[^<\s]+)\s*</command-name>", re.S)
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.S)
_COMPACT_PREFIX = "This session is being continued from a previous conversation"
# Output that reports a failure: read only where the client recorded no exit status for the command (see
# ToolCall.failed), e.g. `pytest | tail -5`, whose status is tail's.
_FAILED_OUTPUT = re.compile(
    r"Traceback \(most recent call last\)|^\s*FAILED\b|\b[1-9]\d* (?:failed|failures?|errors?)\b(?! *=)"
    r"|^npm ERR!|^error(?:\[E\d+\])?:|^\*\* \(\w+Error\)|BUILD FAILED|Compilation failed|^fatal:",
    re.M | re.I,
)
_PASSED_OUTPUT = re.compile(r"\b0 (?:failed|failures)\b|\ball tests passed\b|\bpassed\b", re.I)


def status_is_whole(command: str) -> bool:
    """The command line's exit status is the status of every step it runs: its steps are joined by `&&`
    only. After an unquoted `|`, `;`, `||` or line break the status is a later step's, whatever an earlier
    one did (`pytest | tail -5` exits 0 after "1 failed")."""
    quote = ""
    escaped = False
    for ch in command.strip():
        if escaped:
            escaped = False
        elif ch == "\\" and quote != "'":
            escaped = True  # `\|` in a pattern, a line continuation
        elif quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "|;\n":
            return False
    return True


def compaction_summary(line: dict[str, Any], text: str) -> bool:
    """A user line that is the client's compaction summary (older versions do not flag it): the model's own
    account of the conversation, never a prompt of the user's."""
    return bool(line.get("isCompactSummary")) or text.lstrip().startswith(_COMPACT_PREFIX)


def parse_time(value: Any) -> float | None:
    if isinstance(value, int | float):
        return float(value) / (1000 if value > 1e12 else 1)
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def block_text(content: Any) -> str:
    """The text of a message content or a tool result: a string, or a list of text blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for c in content:
            if isinstance(c, dict):
                if c.get("type") in ("text", None) and isinstance(c.get("text"), str):
                    parts.append(c["text"])
                elif isinstance(c.get("content"), str | list):
                    parts.append(block_text(c["content"]))
            elif isinstance(c, str):
                parts.append(c)
        return "\n".join(p for p in parts if p)
    return ""


class ToolCall:
    __slots__ = ("id", "name", "input", "result", "is_error", "marked", "ts", "sidechain", "seq", "answered")

    def __init__(self, id: str, name: str, input: dict[str, Any], ts: float | None, sidechain: bool,
                 seq: int) -> None:
        self.id = id
        self.name = name
        self.input = input
        self.result = ""
        self.is_error = False
        self.marked = False  # the client recorded the outcome (is_error true or false), not only the output
        self.ts = ts
        self.sidechain = sidechain
        self.seq = seq  # position in the session's event order
        self.answered = False

    @property
    def command(self) -> str:
        return str(self.input.get("command") or "").strip() if self.name == "Bash" else ""

    @property
    def path(self) -> str:
        return str(self.input.get("file_path") or self.input.get("notebook_path") or "")

    @property
    def failed(self) -> bool:
        """The call failed: the client says so (an error result, a non-zero exit). The output's words (untrusted
        text) decide only for a command whose exit status the client did not record: no marker (another
        client's log), or a status that is a later step's (status_is_whole)."""
        if self.is_error:
            return True
        if self.name != "Bash" or not self.result or (self.marked and status_is_whole(self.command)):
            return False
        tail = self.result[-4000:]
        return bool(_FAILED_OUTPUT.search(tail)) and not _PASSED_OUTPUT.search(tail[-300:])

    def __repr__(self) -> str:
        return f"ToolCall({self.name}, {'failed' if self.failed else 'ok'}, {self.command or self.path!r})"


class Text:
    __slots__ = ("role", "text", "ts", "seq", "sidechain")

    def __init__(self, role: str, text: str, ts: float | None, seq: int, sidechain: bool = False) -> None:
        self.role = role  # user, assistant, command, compact-summary, subagent-prompt
        self.text = text
        self.ts = ts
        self.seq = seq
        self.sidechain = sidechain

    def __repr__(self) -> str:
        return f"Text({self.role}: {self.text[:60]!r})"


class Digest:
    """What a session contains, in order: prompts, assistant texts and tool calls with their results."""

    def __init__(self) -> None:
        self.session_id = ""
        self.host = "claude"  # the client that wrote the log (memory/capture/hostlogs.py)
        self.cwd = ""
        self.git_branch = ""
        self.version = ""
        self.started_at: float | None = None
        self.ended_at: float | None = None
        self.texts: list[Text] = []
        self.calls: list[ToolCall] = []
        self.titles: list[str] = []  # "summary" lines Claude Code writes as session titles
        self.model_tokens = 0  # tokens the session itself used (message.usage), for information
        self.start_offset = 0
        self.end_offset = 0  # byte offset after the last complete line read
        self.lines = 0
        self.bad_lines = 0

    # -- views --------------------------------------------------------------------------------

    @property
    def prompts(self) -> list[Text]:
        return [t for t in self.texts if t.role in ("user", "command") and not t.sidechain]

    @property
    def assistant_texts(self) -> list[Text]:
        return [t for t in self.texts if t.role == "assistant" and not t.sidechain]

    @property
    def compact_summaries(self) -> list[str]:
        return [t.text for t in self.texts if t.role == "compact-summary"]

    @property
    def task(self) -> str:
        for t in self.prompts:
            if len(t.text.strip()) > 3:
                return t.text.strip()
        return ""

    def files_changed(self) -> dict[str, int]:
        """Files edited or written successfully, with the number of edits, in first-touched order."""
        out: dict[str, int] = {}
        for c in self.calls:
            if c.name in EDIT_TOOLS and c.path and not c.is_error:
                out[c.path] = out.get(c.path, 0) + 1
        return out

    def files_read(self) -> list[str]:
        return list(dict.fromkeys(c.path for c in self.calls if c.name == "Read" and c.path and not c.is_error))

    def substantial(self) -> bool:
        """Worth extracting from: some work happened, not a greeting or a lone slash command."""
        if any(c.name in EDIT_TOOLS or c.name == "Bash" for c in self.calls):
            return True
        said = sum(len(t.text) for t in self.assistant_texts)
        return len(self.calls) >= 3 or said >= 600 or bool(self.compact_summaries)

    def rel(self, path: str) -> str:
        """A path relative to the session's folder when it lies inside it (shorter, and portable)."""
        if self.cwd and path.startswith(self.cwd.rstrip("/") + "/"):
            return path[len(self.cwd.rstrip("/")) + 1:]
        return path


def iter_lines(path: str, start: int = 0) -> Iterator[tuple[int, dict[str, Any] | None]]:
    """(offset after the line, parsed object or None) for each complete line from byte offset `start`."""
    with open(path, "rb") as fh:
        fh.seek(start)
        offset = start
        for raw in fh:
            if not raw.endswith(b"\n"):
                break  # a line still being written: the next read starts here
            offset += len(raw)
            try:
                value = json.loads(raw)
            except ValueError:
                yield offset, None
                continue
            yield offset, value if isinstance(value, dict) else None


def read(path: str, start: int = 0) -> Digest:
    """Digest of a transcript file from byte offset `start` (0: the whole file)."""
    d = Digest()
    d.start_offset = d.end_offset = start
    try:
        size = os.path.getsize(path)
    except OSError:
        return d
    if start > size:  # the file was replaced by a shorter one: read it whole
        start = d.start_offset = d.end_offset = 0
    builder = _Builder(d, hostlogs.folder_of(path))
    for offset, obj in iter_lines(path, start):
        d.end_offset = offset
        d.lines += 1
        if obj is None:
            d.bad_lines += 1
            continue
        builder.add(obj)
    return d


def from_lines(lines: list[dict[str, Any]], cwd: str = "") -> Digest:
    d = Digest()
    builder = _Builder(d, cwd)
    for obj in lines:
        d.lines += 1
        builder.add(obj)
    return d


class _Builder:
    def __init__(self, d: Digest, cwd: str = "") -> None:
        self.d = d
        self.log = hostlogs.LogState(cwd)  # another client's log: its lines as Claude Code's
        self.seq = 0
        self.open: dict[str, ToolCall] = {}
        self.task_prompts: set[str] = set()  # prompts given to subagents (older versions log them unflagged)
        self.after_command = False

    def _next(self) -> int:
        self.seq += 1
        return self.seq

    def add(self, ln: dict[str, Any]) -> None:
        for line in hostlogs.converted(ln, self.log):
            self._add(line)
        if self.log.host:
            self.d.host = self.log.host

    def _add(self, ln: dict[str, Any]) -> None:
        d = self.d
        kind = ln.get("type")
        ts = parse_time(ln.get("timestamp"))
        if ts is not None:
            d.started_at = ts if d.started_at is None else min(d.started_at, ts)
            d.ended_at = ts if d.ended_at is None else max(d.ended_at, ts)
        for key, attr in (("sessionId", "session_id"), ("cwd", "cwd"), ("gitBranch", "git_branch"),
                          ("version", "version")):
            if not getattr(d, attr) and isinstance(ln.get(key), str):
                setattr(d, attr, ln[key])
        if kind == "summary" and isinstance(ln.get("summary"), str):
            d.titles.append(ln["summary"])
            return
        msg = ln.get("message") if isinstance(ln.get("message"), dict) else None
        if msg is None or kind not in ("user", "assistant"):
            return
        side = bool(ln.get("isSidechain"))
        content = msg.get("content")
        if kind == "assistant":
            usage = msg.get("usage") if isinstance(msg.get("usage"), dict) else {}
            for k in ("input_tokens", "output_tokens"):
                if isinstance(usage.get(k), int):
                    d.model_tokens += usage[k]
            for block in content if isinstance(content, list) else []:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text" and isinstance(block.get("text"), str) and block["text"].strip():
                    d.texts.append(Text("assistant", block["text"].strip(), ts, self._next(), side))
                elif block.get("type") == "tool_use":
                    tin = block.get("input") if isinstance(block.get("input"), dict) else {}
                    call = ToolCall(str(block.get("id") or ""), str(block.get("name") or ""), tin, ts, side,
                                    self._next())
                    d.calls.append(call)
                    self.open[call.id] = call
                    if call.name in ("Task", "Agent") and isinstance(tin.get("prompt"), str):
                        self.task_prompts.add(tin["prompt"].strip())
            if isinstance(content, str) and content.strip():
                d.texts.append(Text("assistant", content.strip(), ts, self._next(), side))
            return
        # user lines: prompts, tool results, command invocations, the compaction summary
        if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result"
                                             for b in content):
            result = ln.get("toolUseResult")
            for block in content:
                if not isinstance(block, dict) or block.get("type") != "tool_result":
                    continue
                call = self.open.pop(str(block.get("tool_use_id")), None)
                if call is None:
                    continue
                call.answered = True
                call.is_error = bool(block.get("is_error"))
                call.marked = isinstance(block.get("is_error"), bool)  # Claude Code writes it on every Bash result
                text = block_text(block.get("content"))
                if isinstance(result, dict) and call.name == "Bash" and not call.is_error:
                    text = "\n".join(str(result.get(k) or "") for k in ("stdout", "stderr")).strip() or text
                call.result = text[-20000:]  # errors are at the end; a huge output is not kept whole
            return
        text = block_text(content).strip()
        if not text:
            return
        if compaction_summary(ln, text):
            d.texts.append(Text("compact-summary", text, ts, self._next()))
            return
        if ln.get("isMeta") or (isinstance(content, list) and self.after_command):
            self.after_command = False  # the expanded body of a slash command or skill, not the user's words
            return
        command = _COMMAND.search(text)
        if command:
            name = command.group(1)
            args = _COMMAND_ARGS.search(text)
            arg_text = args.group(1).strip() if args else ""
            self.after_command = name not in ("/compact", "/clear", "/mcp", "/model", "/cost", "/help")
            if self.after_command or arg_text:
                d.texts.append(Text("command", f"{name} {arg_text}".strip(), ts, self._next(), side))
            return
        self.after_command = False
        if text.startswith(_NOT_A_PROMPT):
            return
        if side or text in self.task_prompts:
            d.texts.append(Text("subagent-prompt", text, ts, self._next(), True))
            return
        d.texts.append(Text("user", text, ts, self._next()))


def claude_projects_dir() -> str:
    """Where Claude Code keeps transcripts: $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects."""
    base = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    return os.path.join(base, "projects")


def project_transcript_dir(cwd: str) -> str:
    """The folder of a project's transcripts: the cwd with every non-alphanumeric character made '-'.

    Claude Code encodes '/' (and, in current versions, '.', '_' and other characters) as '-'. Both
    spellings are tried; the first that exists wins, else the current encoding is returned.
    """
    base = claude_projects_dir()
    cwd = os.path.abspath(cwd)
    candidates = [re.sub(r"[^A-Za-z0-9]", "-", cwd), cwd.replace("/", "-")]
    for name in candidates:
        if os.path.isdir(os.path.join(base, name)):
            return os.path.join(base, name)
    return os.path.join(base, candidates[0])
