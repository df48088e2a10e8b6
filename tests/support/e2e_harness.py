"""Helpers for the end-to-end tests: the result of one CLI run, transcript readers, a git project."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple, Protocol

import pytest

from tests.support.fake_anthropic import Json, Script, is_main

REPO = Path(__file__).resolve().parents[2]

# The clients the e2e tests can run on: the pinned one, then the older ones scripts/install-claude-code
# --older installs (its OLDER_VERSIONS line is the one list).
_OLDER_LINE = re.search(r'^OLDER_VERSIONS="([^"]*)"', (REPO / "scripts" / "install-claude-code").read_text(), re.M)
CLIENTS: tuple[str, ...] = ("pinned", *(_OLDER_LINE.group(1).split() if _OLDER_LINE else ()))
# A module's mark that runs its tests on the pinned client and on each older one (tests/e2e/conftest.py claude_bin).
EVERY_CLIENT = pytest.mark.parametrize("claude_bin", CLIENTS, indirect=True)


def find_claude(client: str = "pinned") -> Path:
    """The pinned CLI (MEMORY_CLAUDE_BIN overrides it) or an older one by version; skips the test when it is
    missing, or fails it when CI is set."""
    pinned = client == "pinned"
    configured = os.environ.get("MEMORY_CLAUDE_BIN") if pinned else None
    folder = "claude-code" if pinned else f"claude-code-{client}"
    path = Path(configured) if configured else REPO / ".tools" / folder / "node_modules" / ".bin" / "claude"
    if path.is_file() and os.access(path, os.X_OK):
        return path
    how = "scripts/install-claude-code or set MEMORY_CLAUDE_BIN" if pinned else "scripts/install-claude-code --older"
    reason = f"Claude Code CLI ({client}) not found at {path}: run {how}"
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def find_client(name: str, version: str) -> Path:
    """Another coding agent's pinned CLI in .tools/<name> (scripts/install-clients): skips the test when it is
    missing (fails it when CI is set); one of another version fails the test."""
    path = REPO / ".tools" / name / "node_modules" / ".bin" / name
    if not (path.is_file() and os.access(path, os.X_OK)):
        reason = f"{name} CLI not found at {path}: run scripts/install-clients"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    # "0.24.4", "codex-cli 0.169.0", "GitHub Copilot CLI 1.0.102." and a line about updates.
    found = subprocess.run([str(path), "--version"], capture_output=True, timeout=60).stdout.decode().split()
    assert version in [word.rstrip(".") for word in found], f"{path} is {found}, not the pinned {version}"
    return path


BILLING = {"billing.py": "def total(amount):\n    return amount * 1.2\n"}  # the other hosts' e2e project
DECISION = "We decided invoices round to cents with Decimal, never float."


class ClaudeRun(NamedTuple):
    returncode: int
    output: Json | None  # parsed stdout of --output-format json
    stderr: str
    requests: list[Json]  # every POST /v1/messages body received during this run, in order
    transcript: Path | None  # HOME/.claude/projects/<encoded cwd>/<session_id>.jsonl
    stdout: str = ""

    @property
    def session_id(self) -> str | None:
        return (self.output or {}).get("session_id")

    @property
    def main_requests(self) -> list[Json]:
        return [b for b in self.requests if is_main(b)]

    def describe(self) -> str:
        return f"rc={self.returncode}\nstdout={self.stdout[-2000:]}\nstderr={self.stderr[-2000:]}"


class RunClaude(Protocol):
    def __call__(
        self,
        prompt: str,
        *,
        cwd: Path,
        home: Path,
        plugin_dir: Path,
        script: Script,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        resume: str | None = None,
        timeout: float = 120,
    ) -> ClaudeRun: ...


def find_transcript(home: Path, session_id: str | None) -> Path | None:
    if not session_id:
        return None
    hits = sorted((home / ".claude" / "projects").glob(f"*/{session_id}.jsonl"))
    return hits[0] if hits else None


# ---------------------------------------------------------------------------------------------
# Transcript helpers (the format is unofficial: read defensively)


def transcript_entries(path: Path) -> list[Json]:
    entries: list[Json] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            entries.append(entry)
    return entries


def hook_timings(path: Path, command_contains: str = "") -> list[tuple[str, int | None]]:
    """(hook name, durationMs) of every hook run the transcript recorded.

    Sources: ``attachment`` lines of type ``hook_success`` and the ``hookInfos`` of
    ``system``/``stop_hook_summary`` lines (Stop hooks, always recorded). Claude Code 2.1.330 writes
    a ``hook_success`` attachment only for a hook that printed something: silent hooks leave no trace.
    """
    timings: list[tuple[str, int | None]] = []
    for entry in transcript_entries(path):
        att = entry.get("attachment")
        if isinstance(att, dict) and att.get("type") == "hook_success":
            if command_contains in str(att.get("command", "")):
                timings.append((str(att.get("hookName")), att.get("durationMs")))
        if entry.get("type") == "system" and entry.get("subtype") == "stop_hook_summary":
            for info in entry.get("hookInfos") or []:
                if command_contains in str(info.get("command", "")):
                    timings.append(("Stop", info.get("durationMs")))
    return timings


def make_git_repo(path: Path, files: Mapping[str, str]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (path / name).write_text(content)
    git = ["git", "-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid"]
    subprocess.run(["git", "init", "-q"], cwd=path, check=True)
    subprocess.run([*git, "add", "-A"], cwd=path, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "init"], cwd=path, check=True)
    return path


PROBE_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "PreCompact",
    "PostCompact",
    "SessionEnd",
)

_PROBE_HOOK = """\
import json, sys
event = sys.argv[1]
payload = json.load(sys.stdin)
with open(LOG, "a", encoding="utf-8") as f:
    f.write(json.dumps(payload) + "\\n")
if event == "SessionStart":
    context = "PROBE-CONTEXT source=" + str(payload.get("source"))
    out = {"hookEventName": "SessionStart", "additionalContext": context}
    print(json.dumps({"hookSpecificOutput": out}))
"""


def make_probe_plugin(root: Path, log: Path) -> Path:
    """A plugin named `probe` whose hooks append each payload to ``log`` (one JSON a line).

    Its SessionStart hook also answers ``PROBE-CONTEXT source=<source>`` as additionalContext.
    Hooks use exec form with this interpreter's absolute path (a pyenv shim would need HOME).
    """
    (root / ".claude-plugin").mkdir(parents=True, exist_ok=True)
    (root / "hooks").mkdir(exist_ok=True)
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "probe"}))
    script = "${CLAUDE_PLUGIN_ROOT}/hooks/log.py"
    hooks = {
        e: [{"hooks": [{"type": "command", "command": sys.executable, "args": [script, e]}]}] for e in PROBE_EVENTS
    }
    (root / "hooks" / "hooks.json").write_text(json.dumps({"hooks": hooks}, indent=1))
    (root / "hooks" / "log.py").write_text(f"LOG = {str(log)!r}\n" + _PROBE_HOOK)
    return root


def probe_events(log: Path) -> list[Json]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]


def event_label(payload: Json) -> str:
    """E.g. 'SessionStart:startup', 'PreToolUse:Read', 'PreCompact:manual', 'Stop'."""
    detail = payload.get("source") or payload.get("trigger") or payload.get("tool_name")
    name = str(payload.get("hook_event_name"))
    return f"{name}:{detail}" if detail else name


def claude_before_and_after(run_claude: RunClaude, project: Path, tmp_path: Path) -> Callable[[], None]:
    """A Claude Code session (the real CLI) that decides DECISION now, and the check to run after another
    host's session: the next Claude Code session is given that host's rename of `total` in billing.py."""
    from tests.support.fake_anthropic import Turns, all_text, text

    home = tmp_path / "claude-home"
    before = run_claude(DECISION, cwd=project, home=home, plugin_dir=REPO, script=Turns([text("Noted.")]))
    assert before.returncode == 0, before.describe()

    def after() -> None:
        run = run_claude("What did we change in billing.py?", cwd=project, home=home, plugin_dir=REPO,
                         script=Turns([text("You renamed total to total_with_tax.")]))
        assert run.returncode == 0, run.describe()
        first = all_text(run.main_requests[0])
        assert "billing.py" in first and "total_with_tax" in first, first[-3000:]

    return after


# What the other hosts' e2e tests share: the start (client, project, Claude Code before), a client's environment
# on a fake HOME, `memory install`, the run, its end (the rename, the last hook, the database), its log imported.
class HostRun(NamedTuple):
    client: Path  # the pinned CLI
    project: Path  # a git project holding BILLING
    home: Path  # the client's fake HOME (empty)
    claude_after: Callable[[], None]  # the next Claude Code session's check (claude_before_and_after)


def host_session(name: str, version: str, run_claude: RunClaude, tmp_path: Path) -> HostRun:
    """The start of another host's e2e test: its pinned CLI, the billing project, and a Claude Code session
    that decided DECISION in it."""
    client = find_client(name, version)
    project = make_git_repo(tmp_path / "project", BILLING)
    claude_after = claude_before_and_after(run_claude, project, tmp_path)
    return HostRun(client, project, tmp_path / "home", claude_after)



def gemini_settings(home: Path, folder: str, auth: str, **more: Json) -> None:
    """The user's own settings of Gemini CLI or of Qwen Code, its fork (~/<folder>/settings.json): a sign-in of
    the type `auth`, no folder-trust prompt, and `more` top-level keys."""
    (home / folder).mkdir(parents=True)
    (home / folder / "settings.json").write_text(json.dumps(
        {"security": {"auth": {"selectedType": auth}, "folderTrust": {"enabled": False}}, **more}, indent=2))


def renamed(project: Path, requests: Sequence[Json], at_least: int, key: str = "tools") -> list[Json]:
    """The end every host's run shares: billing.py's `total` renamed, in at least `at_least` requests to the
    model (those carrying `key`: the tools offered, or the Responses API's `input`), which are returned."""
    assert "total_with_tax" in (project / "billing.py").read_text()
    asked = [r for r in requests if r.get(key)]
    assert len(asked) >= at_least, len(asked)
    return asked


def last_hook(memory_home: Path, host: str) -> str:
    """The hook entry the host ran last, as the plugin recorded it (<data dir>/hosts/<host>)."""
    return (memory_home / "hosts" / host).read_text().split()[0]


def project_db(memory_home: Path, project: Path) -> sqlite3.Connection:
    """The project's database in the test's data dir."""
    from memory.base.project import identify

    return sqlite3.connect(memory_home / "projects" / identify(str(project)).key / "memory.db")


CLIENT_STRIP = ("ANTHROPIC_", "CLAUDE", "MEMORY_", "OPENAI_", "CODEX_", "OPENCODE_", "GEMINI_", "GOOGLE_", "QWEN_",
                "XDG_")


def client_env(home: Path, memory_home: Path, project: Path, **extra: str) -> dict[str, str]:
    """The environment a client runs in: this machine's, without any client's or model's settings (and no
    XDG folders), on a fake HOME, with the test's data dir; PWD too (OpenCode and Gemini CLI take their folder
    from it, not from the process's cwd)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(CLIENT_STRIP)}
    env.update(HOME=str(home), PWD=str(project), MEMORY_HOME=str(memory_home), MEMORY_EMBEDDER="hashing",
               MEMORY_WORKER_IDLE_SECONDS="15", NO_COLOR="1", **extra)
    return env


def memory_install(host: str, scope: str, project: Path, env: Mapping[str, str]) -> str:
    """`memory install HOST --user|--project` as a user types it, in the project: its output."""
    run = subprocess.run([str(REPO / "bin" / "memory"), "install", host, scope], cwd=project, env=dict(env),
                         capture_output=True, timeout=120)
    assert run.returncode == 0, run.stderr.decode()
    return run.stdout.decode()


def run_client(argv: Sequence[str], project: Path, env: Mapping[str, str]) -> str:
    """One headless run of a client in the project, no stdin: it must exit 0. Its stdout."""
    run = subprocess.run([str(a) for a in argv], cwd=project, env=dict(env), capture_output=True, timeout=300,
                         stdin=subprocess.DEVNULL)
    assert run.returncode == 0, run.stderr.decode()[-3000:]
    return run.stdout.decode()


def imported_as(host: str, logs: Path, project: Path, tmp_path: Path) -> None:
    """The client's own session log of this run, imported by `memory import` into a data dir of its own:
    a session of that host with the rename of `total` in billing.py (so a client whose log format moved on
    fails here, not only with the recorded fixture in tests/fixtures/transcripts/)."""
    env = {**os.environ, "MEMORY_HOME": str(tmp_path / f"import-{host}"), "MEMORY_WORKER": "off"}
    run = subprocess.run([str(REPO / "bin" / "memory"), "import", str(logs), "--no-progress", "--json"],
                         cwd=project, env=env, capture_output=True, timeout=120)
    assert run.returncode == 0, run.stderr.decode()
    assert json.loads(run.stdout)["sessions_imported"] == 1, run.stdout.decode()
    db = project_db(tmp_path / f"import-{host}", project)
    assert [r[0] for r in db.execute("SELECT host FROM sessions")] == [host]
    edits = [r[0] for r in db.execute("SELECT content FROM memories WHERE type = 'change' AND files LIKE ?",
                                      ("%billing.py%",))]
    assert any("total_with_tax" in e for e in edits), edits
