"""Helpers shared by the tests: paths, a git project, real hook processes, the recorded payloads."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("MEMORY_SHARED_DIR", ROOT.parent / "shared"))
PAYLOADS = SHARED / "data" / "claude-code" / "hook-payloads"
PAYLOADS_NEW = SHARED / "data" / "claude-code" / "hook-payloads-2.1.197"
TRANSCRIPTS = SHARED / "data" / "claude-code" / "transcripts"


def scrub_agent_env() -> str:
    """The `env -u ...` prefix a model can put before a command: Claude Code's variables taken out."""
    from memory.base.provenance import AGENT_ENV

    return "env " + " ".join(f"-u {name.decode()}" for name in AGENT_ENV)


def make_git_project(path: Path, remote: str | None = None) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    if remote:
        subprocess.run(["git", "-C", str(path), "remote", "add", "origin", remote], check=True)
    return path


def load_payload(name: str, *, new: bool = True) -> dict[str, Any]:
    folder = PAYLOADS_NEW if new else PAYLOADS
    return json.loads((folder / f"{name}.json").read_text())


class HookRunner:
    """Runs hooks exactly as Claude Code does: the launcher in a new process, the event on stdin."""

    def __init__(self, project: Path, session: str = "sess-1") -> None:
        self.project = project
        self.session = session
        self.results: list[dict[str, Any]] = []

    def event(self, name: str, **fields: Any) -> dict[str, Any]:
        return {"session_id": self.session, "transcript_path": "", "cwd": str(self.project),
                "hook_event_name": name, **fields}

    def run(self, entry: str, event: dict[str, Any] | bytes | str) -> dict[str, Any]:
        data = event if isinstance(event, bytes) else (event.encode() if isinstance(event, str)
                                                        else json.dumps(event).encode())
        proc = subprocess.run([str(ROOT / "hooks" / "run"), entry], input=data, capture_output=True, timeout=60)
        out = proc.stdout.decode()
        parsed = json.loads(out) if out.strip() else None
        result = {"exit_code": proc.returncode, "stdout": out, "json": parsed, "stderr": proc.stderr.decode()}
        self.results.append(result)
        return result

    def context(self, result: dict[str, Any]) -> str:
        if not result["json"]:
            return ""
        return str(result["json"].get("hookSpecificOutput", {}).get("additionalContext", ""))

    # Convenience wrappers for the events of a session.
    def start(self, source: str = "startup") -> str:
        return self.context(self.run("session_start", self.event("SessionStart", source=source)))

    def prompt(self, text: str) -> str:
        return self.context(self.run("user_prompt_submit", self.event("UserPromptSubmit", prompt=text)))

    def tool(self, tool: str, tool_input: dict[str, Any], response: Any = None, *, failed: str | None = None,
             **extra: Any) -> dict[str, Any]:
        if failed is not None:
            ev = self.event("PostToolUseFailure", tool_name=tool, tool_input=tool_input, error=failed, **extra)
        else:
            ev = self.event("PostToolUse", tool_name=tool, tool_input=tool_input, tool_response=response, **extra)
        return self.run("post_tool_use", ev)

    def read_event(self, path: Path) -> dict[str, Any]:
        """The PostToolUse event of a full Read of a file, as Claude Code sends it."""
        text = path.read_text()
        lines = text.count("\n") + 1
        return self.event("PostToolUse", tool_name="Read", tool_input={"file_path": str(path)},
                          tool_response={"type": "text", "file": {"filePath": str(path), "content": text,
                                                                  "numLines": lines, "startLine": 1,
                                                                  "totalLines": lines}})

    def stop(self, message: str = "") -> dict[str, Any]:
        return self.run("stop", self.event("Stop", stop_hook_active=False, last_assistant_message=message))

    def compact(self, trigger: str = "manual") -> dict[str, Any]:
        return self.run("pre_compact", self.event("PreCompact", trigger=trigger, custom_instructions=""))

    def end(self, reason: str = "other") -> dict[str, Any]:
        return self.run("session_end", self.event("SessionEnd", reason=reason))


def all_bytes_under(folder: Path) -> Callable[[bytes], list[str]]:
    def find(needle: bytes) -> list[str]:
        hits = []
        for path in folder.rglob("*"):
            if path.is_file() and needle in path.read_bytes():
                hits.append(str(path))
        return hits

    return find


def on_a_terminal(command: Path, args: list[str], cwd: Path) -> str:
    """What `command ARGS` writes to a pseudo-terminal 120 columns wide (stdout and stderr together): it runs
    as a person's terminal runs it, leading its own session on the terminal."""
    import fcntl
    import pty
    import select
    import struct
    import termios

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    pid, fd = pty.fork()
    if pid == 0:  # the child: the terminal is its stdin, stdout and stderr
        os.chdir(cwd)
        os.execve(str(command), [str(command), *args], env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    out = b""
    while select.select([fd], [], [], 120)[0]:
        try:
            data = os.read(fd, 65536)
        except OSError:  # the child has exited and closed the terminal
            break
        if not data:
            break
        out += data
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, out
    return out.decode(errors="replace")



def stated_plugin_mb() -> float:
    """The plugin's size alone as docs/install.md states it (what `scripts/setup --install` copies)."""
    import re

    text = (ROOT / "docs" / "install.md").read_text()
    stated = re.search(r"`scripts/build_plugin.py` writes: .*?, about ([\d.]+) MB, without tests/", text, flags=re.S)
    assert stated, "docs/install.md no longer states the plugin's size alone"
    return float(stated[1])
