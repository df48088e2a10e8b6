"""`memory import` of other clients' session logs: the real Codex CLI 0.169.0 rollout and Gemini CLI 0.61.0
chat file recorded by the e2e tests (tests/fixtures/transcripts/README.md), imported through the real CLI
where each client keeps them, become a session of that host with its command and its edit, which the next
Claude Code session start brings back; the learning extraction's reader digests the same files."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from memory.base.project import identify
from memory.capture import transcript
from tests.support.helpers import HookRunner, make_git_project
from tests.test_cli import Cli

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
# Per client: its recorded log, where the client keeps it under HOME, the folder given to `memory import`,
# and what the session ran.
LOGS = {
    "codex": ("codex-0.169.0-rollout.jsonl", ".codex/sessions/2026/12/07/rollout-2026-12-07T11-20-51-01a2503c.jsonl",
              ".codex/sessions", "grep -q 'def total_with_tax' billing.py"),
    "gemini": ("gemini-cli-0.61.0-session.jsonl", ".gemini/tmp/project/chats/session-2026-12-07T11-21-fb55874f.jsonl",
               ".gemini/tmp/project/chats", "grep -c total billing.py"),
}


def _lay_out(host: str, tmp_path: Path) -> tuple[Path, Path, Path]:
    """The project the log's session ran in and the log where its client keeps it: (project, log, folder)."""
    project = tmp_path / "project"
    if not project.exists():
        make_git_project(project)
        (project / "billing.py").write_text("def total_with_tax(amount):\n    return amount * 1.2\n")
    name, where, folder, _ = LOGS[host]
    log = tmp_path / "home" / where
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text((FIXTURES / name).read_text().replace("{tmp}", str(tmp_path)))
    if host == "gemini":  # Gemini CLI names the project's folder beside its chats, not in the log
        (log.parent.parent / ".project_root").write_text(str(project))
    return project, log, tmp_path / "home" / folder


@pytest.mark.parametrize("host", sorted(LOGS))
def test_a_client_log_imports_as_a_session_of_its_host_and_claude_recalls_it(
        host: str, tmp_path: Path, home: Path) -> None:
    project, log, folder = _lay_out(host, tmp_path)
    cli = Cli(home, project)
    out = cli.json("import", str(folder), "--extract", "--no-progress")
    # Gemini's log has one thing to learn, the user's decision, which the import's hooks stored already: the
    # extraction does not store it again in its words (issue 26)
    assert out["sessions_imported"] == 1 and out["files"] == 1, out
    assert out["learnings"] >= (0 if host == "gemini" else 1), out
    db = sqlite3.connect(home / "projects" / identify(str(project)).key / "memory.db")
    db.row_factory = sqlite3.Row
    session = db.execute("SELECT * FROM sessions").fetchone()
    assert session["host"] == host and session["source"] == "import"
    assert session["prompt_count"] == 1 and session["tool_call_count"] == (3 if host == "codex" else 2)
    assert session["cwd"] == str(project)
    texts = " ".join(f"{r['title']} {r['content']} {r['files']}" for r in
                     db.execute("SELECT title, content, files FROM memories WHERE session_id = ?", (session["id"],)))
    assert LOGS[host][3] in texts, texts  # the shell command
    assert "billing.py" in texts and "total_with_tax" in texts, texts  # the edit
    learned = [r[0] for r in db.execute(
        "SELECT title FROM memories WHERE source LIKE 'extract:%' OR origin = 'extractor'")]
    # the extraction read the client's log: its summary of the session, and its learnings but the one said
    assert "total_with_tax" in (session["summary"] or ""), session["summary"]
    assert host == "gemini" or any("total_with_tax" in t for t in learned), learned
    assert "<environment_context>" not in texts and "<hook_context>" not in texts and "recalled-data" not in texts
    state = json.loads(db.execute("SELECT state FROM session_state WHERE session_id = ?",
                                  (session["id"],)).fetchone()[0])
    assert state["task"].startswith("We decided to rename total to total_with_tax")
    assert state["files_modified"] == [str(project / "billing.py")]
    assert cli.json("import", str(folder), "--no-progress")["sessions_imported"] == 0  # idempotent
    context = HookRunner(project, session="claude-after").start()
    assert "billing.py" in context and "total_with_tax" in context, context


@pytest.mark.parametrize("host", sorted(LOGS))
def test_the_extraction_reader_digests_a_client_log(host: str, tmp_path: Path) -> None:
    project, log, _ = _lay_out(host, tmp_path)
    d = transcript.read(str(log))
    assert d.host == host and d.cwd == str(project) and d.session_id and d.bad_lines == 0
    assert [t.text for t in d.prompts][0].startswith("We decided to rename total to total_with_tax")
    assert all(not t.text.startswith("<") for t in d.prompts)
    edits = [c for c in d.calls if c.name == "Edit"]
    assert [c.input["file_path"] for c in edits] == [str(project / "billing.py")]
    assert edits[0].input["new_string"] == "def total_with_tax(amount):"
    shells = [c for c in d.calls if c.name == "Bash"]
    assert shells and shells[0].command.startswith(LOGS[host][3]) and not any(c.failed for c in d.calls)
    assert any("total_with_tax" in t.text for t in d.assistant_texts)
    assert d.files_changed() == {str(project / "billing.py"): 1}


def test_a_prompt_keeps_the_persons_words_and_loses_the_clients_blocks() -> None:
    """The blocks a client puts before the person's words go (snake_case tags); a tag the person pasted stays."""
    from memory.capture import hostlogs

    def prompt(text: str) -> list[str]:
        line = {"timestamp": "2026-12-07T11:20:53Z", "type": "response_item",
                "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}}
        return [ln["message"]["content"] for ln in hostlogs.claude_lines([line])[1]]

    assert prompt("<environment_context>\n  <cwd>/x</cwd>\n</environment_context>") == []
    assert prompt("<hook_context>recalled</hook_context>\n\nWe decided to use Decimal") == ["We decided to use Decimal"]
    assert prompt("<div class='a'>hi</div> fix the css") == ["<div class='a'>hi</div> fix the css"]
    assert prompt("# AGENTS.md instructions for /x\n\nbe brief") == []
