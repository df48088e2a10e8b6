"""Whose process this is: a person's own terminal, or something the coding agent started.

The agent runs commands through its Bash tool: Claude Code starts a shell in a new session (setsid) with
CLAUDECODE=1 and its other variables in the environment, and whatever that shell runs is the model's, at any
depth, after any delay, through any wrapper. A command line cannot tell (the model writes the command), so
this reads the process tree in /proc instead. A process is the agent's when

1. its own environment carries a variable Claude Code sets for the commands it runs (AGENT_ENV);
2. an ancestor is Claude Code itself, or carries one of those variables in the environment it started with
   (/proc/<pid>/environ: `unset` or `env -i` in a child does not change the parent's);
3. its session leader is not among its ancestors: it outlived the shell that started it, reparented to init
   (`(sleep 2; memory save ...) &`, `nohup`): a person's terminal command runs under the terminal's shell;
4. its session has no terminal and was started by init (`setsid -f`, a double fork): a daemon, not a person.

What this cannot see (docs/security.md): a process of the same user that rebuilds all of it (a new
session with a new pseudo-terminal, under a subreaper other than init, with a clean environment), and
writes to the database file itself. The check closes the `memory` command's door, not the file's.
Linux /proc only: elsewhere only rule 1 applies.
"""

from __future__ import annotations

import os

# Variables Claude Code sets in the environment of the commands it runs (Bash tool, `!` blocks, hooks, MCP
# servers; seen in 2.1.197 and 2.1.330, docs/claude-code-hooks.md 2.6).
AGENT_ENV = (b"CLAUDECODE", b"CLAUDE_CODE_ENTRYPOINT", b"CLAUDE_CODE_SESSION_ID", b"CLAUDE_CODE_CHILD_SESSION",
             b"CLAUDE_PID")
# Claude Code's own process: the native binary (`claude`, `claude.exe`) or the npm package run by node.
_CLAUDE_NAMES = frozenset({"claude", "claude.exe"})
_CLAUDE_PACKAGE = "@anthropic-ai/claude-code"
MAX_DEPTH = 128  # a chain longer than this is a loop or a fork bomb: the agent's, to be safe


class Proc:
    """One process's /proc/<pid>/stat fields that matter here."""

    __slots__ = ("pid", "comm", "state", "ppid", "sid", "tty")

    def __init__(self, pid: int, comm: str, state: str, ppid: int, sid: int, tty: int) -> None:
        self.pid, self.comm, self.state, self.ppid, self.sid, self.tty = pid, comm, state, ppid, sid, tty


def read_stat(pid: int) -> Proc | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read().decode("utf-8", "replace")
    except OSError:
        return None
    # comm is in parentheses and may itself hold spaces and parentheses: split after the last ')'
    right = raw.rfind(")")
    fields = raw[right + 2:].split()
    if right < 0 or len(fields) < 5:
        return None
    return Proc(pid, raw[raw.find("(") + 1:right], fields[0], int(fields[1]), int(fields[3]), int(fields[4]))


def _environ_keys(pid: int) -> set[bytes]:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            data = fh.read()
    except OSError:
        return set()  # another user's process, or gone
    return {item.split(b"=", 1)[0] for item in data.split(b"\0") if item}


def _cmdline(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().decode("utf-8", "replace").split("\0")[:4]
    except OSError:
        return []


def is_claude(proc: Proc) -> bool:
    """Claude Code itself: by its name, or its npm package in the first words of its command line."""
    if proc.comm in _CLAUDE_NAMES:
        return True
    args = _cmdline(proc.pid)
    return any(os.path.basename(a) in _CLAUDE_NAMES or _CLAUDE_PACKAGE in a for a in args[:3])


def agent_env(keys: set[bytes] | set[str]) -> str:
    """The first agent variable among `keys`, or ''."""
    for name in AGENT_ENV:
        if name in keys or name.decode() in keys:
            return name.decode()
    return ""


def agent_reason(pid: int | None = None, environ: dict[str, str] | None = None) -> str:
    """Why the process `pid` (default: this one) is the agent's, in a few words; '' for a person's own."""
    pid = pid or os.getpid()
    keys = set(environ if environ is not None else os.environ) if pid == os.getpid() else _environ_keys(pid)
    name = agent_env(keys)
    if name:
        return f"runs with {name} set by Claude Code"
    me = read_stat(pid)
    if me is None:
        return ""  # no /proc (not Linux): the environment is all there is to read
    chain = [me]
    while chain[-1].ppid > 1 and len(chain) < MAX_DEPTH:
        parent = read_stat(chain[-1].ppid)
        if parent is None:
            break
        chain.append(parent)
    if len(chain) >= MAX_DEPTH:
        return "runs under a process chain too deep to read"
    for proc in chain[1:]:
        if is_claude(proc):
            return f"runs under Claude Code (pid {proc.pid})"
        name = agent_env(_environ_keys(proc.pid))
        if name:
            return f"runs under a process Claude Code started (pid {proc.pid}, {name})"
    return _detached(me, chain)


def _detached(me: Proc, chain: list[Proc]) -> str:
    """Rules 3 and 4: a process cut off from the terminal session that started it."""
    if me.sid <= 0:
        return ""  # a session outside this pid namespace (entered with nsenter or `docker exec`): unknown
    leader = next((p for p in chain if p.pid == me.sid), None)
    if leader is None:
        return "outlived the shell that started it (its session leader is gone or not its ancestor)"
    if leader.ppid == 1 and me.tty == 0:
        return "runs detached from any terminal (a session started by init)"
    return ""
