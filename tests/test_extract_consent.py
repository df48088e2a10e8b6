"""Spend by consent, visible (memory/store/consent.py): no paid call before the user chose, one paid call per
session after, none again for an off-format answer, the one-line notice and receipt at SessionStart, the spend
per day in `memory stats`, `memory doctor` and the viewer. Real processes: the `memory` command and the hooks,
against a loopback server speaking the Anthropic Messages API (tests/support/fake_llm.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from memory.store import budget, consent
from tests.support.fake_llm import FakeLLM, anthropic_text_answer, anthropic_tool_answer, ollama_answer
from tests.support.helpers import ROOT, HookRunner, on_a_terminal
from tests.test_extract_providers import KEY, PAYLOAD, _closed_port, _session

MEMORY = ROOT / "bin" / "memory"


@pytest.fixture
def keyed(home: Path, monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """An environment with an Anthropic key and no choice made: what a new user with a key has."""
    for name in ("ANTHROPIC_AUTH_TOKEN", "MEMORY_DAILY_TOKEN_BUDGET", "MEMORY_EXTRACTOR", "MEMORY_OLLAMA_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("OLLAMA_HOST", _closed_port())
    monkeypatch.setenv("MEMORY_EXTRACT_RETRIES", "2")
    return monkeypatch


def _memory(project: Path, *args: str) -> Any:
    done = subprocess.run([str(MEMORY), *args], cwd=project, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if "--json" in args else done.stdout


def _extract(project: Path, sid: str) -> dict[str, Any]:
    (out,) = _memory(project, "extract", sid, "--force", "--json")
    return dict(out)


def test_no_paid_call_before_consent_and_one_per_session_after(keyed: pytest.MonkeyPatch, home: Path,
                                                               project: Path, tmp_path: Path) -> None:
    ws, sid, _ = _session(project, tmp_path)
    with FakeLLM([anthropic_tool_answer(PAYLOAD), anthropic_tool_answer(PAYLOAD)]) as fake:
        keyed.setenv("ANTHROPIC_BASE_URL", fake.url)
        before = _extract(project, sid)
        assert fake.model_requests() == [], "a paid call before the user chose"
        assert before["provider"] == "heuristic" and before["learnings"] >= 1

        said = on_a_terminal(MEMORY, ["config", "extraction", "anthropic"], project)
        assert "extraction: anthropic (memory config extraction)" in said, said
        assert "200,000 tokens a day" in said
        assert consent.load(str(home))["chosen_by"] == "cli"

        after = _extract(project, sid)
        assert after["provider"] == "anthropic" and after["learnings"] == 2, after
        assert len(fake.model_requests()) == 1

        again = _extract(project, sid)  # the same session once more: its one paid call was made
        assert len(fake.model_requests()) == 1 and again["provider"] == "heuristic"
    refused = ws.db.execute("SELECT error FROM extractions WHERE session_id = ? AND status = 'budget'",
                            (sid,)).fetchall()
    assert [r[0] for r in refused] == ["one paid call per session: this session had its answer"]


def test_an_off_format_answer_is_not_asked_again_nor_sent_to_another_model(
        keyed: pytest.MonkeyPatch, home: Path, project: Path, tmp_path: Path) -> None:
    ws, sid, _ = _session(project, tmp_path)
    consent.choose("anthropic", str(home))
    with FakeLLM([anthropic_text_answer("I cannot do that.")] * 3) as claude, \
            FakeLLM([ollama_answer(json.dumps(PAYLOAD))]) as local:
        keyed.setenv("ANTHROPIC_BASE_URL", claude.url)
        keyed.setenv("OLLAMA_HOST", local.url)
        out = _extract(project, sid)
    assert len(claude.model_requests()) == 1, "an off-format answer was asked for again"
    assert local.model_requests() == [] and out["provider"] == "heuristic"
    (row,) = ws.db.execute("SELECT status, paid, input_tokens + output_tokens FROM extractions "
                           "WHERE session_id = ? AND provider = 'anthropic'", (sid,)).fetchall()
    assert tuple(row) == ("failed", 1, 1050)  # what the bad answer cost is still counted


def test_the_agent_cannot_consent_for_the_user(keyed: pytest.MonkeyPatch, home: Path, project: Path,
                                               tmp_path: Path) -> None:
    fake_claude = tmp_path / "claude"  # stands in for Claude Code: runs the command as its Bash tool does
    fake_claude.write_text("#!/bin/sh\nexec env CLAUDECODE=1 CLAUDE_CODE_ENTRYPOINT=cli setsid \"$@\"\n")
    fake_claude.chmod(0o755)
    done = subprocess.run([str(fake_claude), str(MEMORY), "config", "extraction", "anthropic"], cwd=project,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "started by the agent" in done.stderr
    assert consent.choice(str(home)) == ("heuristic", "default")


def _yesterdays_spend(home: Path, project: Path, tokens: int) -> None:
    from memory.store.workspace import Workspace

    ws = Workspace.for_dir(str(project))
    budget.record(ws.db, session_id="old", trigger="end", provider="anthropic", model="m", status="ok", paid=True,
                  input_tokens=tokens - 400, output_tokens=400)
    yesterday = time.strftime("%Y-%m-%d", time.localtime(time.time() - 86400))
    ws.db.execute("UPDATE extractions SET day = ?, at = at - 86400", (yesterday,))
    ws.db.commit()
    ws.close()


def test_session_start_says_once_how_to_choose_and_gives_a_receipt(keyed: pytest.MonkeyPatch, home: Path,
                                                                   project: Path) -> None:
    _yesterdays_spend(home, project, 12_400)
    hooks = HookRunner(project)
    first = hooks.run("session_start", hooks.event("SessionStart", source="startup"))
    lines = first["json"]["systemMessage"].splitlines()
    assert len(lines) == 2, lines
    assert "claude-haiku-4-5" in lines[0] and "200,000 tokens a day" in lines[0]
    assert "memory config extraction anthropic|ollama|heuristic|off" in lines[0]
    assert lines[1].startswith("memory: 12,400 paid extraction tokens yesterday, 6% of the daily budget")
    assert "12,400" not in hooks.context(first)  # the user's line, not the model's context
    second = hooks.run("session_start", hooks.event("SessionStart", source="startup"))
    assert "systemMessage" not in (second["json"] or {}), second["json"]


def test_no_notice_without_a_key_or_after_a_choice(keyed: pytest.MonkeyPatch, home: Path, project: Path) -> None:
    keyed.delenv("ANTHROPIC_API_KEY")
    hooks = HookRunner(project)
    assert "systemMessage" not in (hooks.run("session_start", hooks.event("SessionStart"))["json"] or {})
    keyed.setenv("ANTHROPIC_API_KEY", KEY)
    consent.choose("heuristic", str(home))
    assert "systemMessage" not in (hooks.run("session_start", hooks.event("SessionStart"))["json"] or {})


def test_stats_and_doctor_show_spend_per_day_and_provider(keyed: pytest.MonkeyPatch, home: Path,
                                                          project: Path) -> None:
    _yesterdays_spend(home, project, 12_400)
    yesterday = time.strftime("%Y-%m-%d", time.localtime(time.time() - 86400))
    stats = _memory(project, "stats")
    assert f"spent     {yesterday}  anthropic 1 runs, 12,400 paid tokens (6% of the budget)" in stats, stats
    assert "extractor heuristic (default" in stats
    doctor = _memory(project, "doctor", "--json")
    spend = doctor["extraction"]["spend by day and provider (all projects, last 7 days)"]
    assert spend == [f"{yesterday}  anthropic 1 runs, 12,400 paid tokens (6% of the budget)"]
    assert doctor["extraction"]["choice"].startswith("heuristic (default")


def test_an_explicit_environment_choice_counts_and_wins(keyed: pytest.MonkeyPatch, home: Path) -> None:
    consent.choose("off", str(home))
    assert consent.choice(str(home)) == ("off", "memory config extraction")
    keyed.setenv("MEMORY_EXTRACTOR", "ollama")
    assert consent.choice(str(home)) == ("ollama", "MEMORY_EXTRACTOR")
    keyed.setenv("MEMORY_EXTRACTOR", "auto")  # the default spelled out is no choice
    assert consent.choice(str(home)) == ("off", "memory config extraction")
    os.remove(home / consent.FILE)
    assert consent.choice(str(home)) == ("heuristic", "default")
    with pytest.raises(ValueError):
        consent.choose("everything", str(home))
    assert not (home / consent.FILE).exists()


def test_the_viewer_shows_spend_and_records_the_persons_choice(keyed: pytest.MonkeyPatch, home: Path,
                                                              project: Path) -> None:
    from tests.test_ui_pages import client

    _yesterdays_spend(home, project, 12_400)
    c = client(home)
    page = c.get("/stats").text
    assert "In force: <b>heuristic</b> (default)" in page
    assert "anthropic 1 runs, 12,400 paid tokens (6% of the budget)" in page
    key = re.search(r'name="p" value="([^"]+)"', page)[1]  # type: ignore[index]
    refused = c.post("/settings/extraction", data={"p": key, "extraction": "anthropic"}, follow_redirects=False)
    assert refused.status_code == 403 and consent.choice(str(home))[1] == "default"  # no CSRF token: no change
    done = c.post("/settings/extraction", data={"csrf": c.csrf, "p": key, "extraction": "anthropic"},  # type: ignore[attr-defined]
                  follow_redirects=False)
    assert done.status_code == 303 and "extraction%3A%20anthropic" in done.headers["location"]
    assert consent.choice(str(home)) == ("anthropic", "memory config extraction")
    assert consent.load(str(home))["chosen_by"] == "viewer"
    assert "In force: <b>anthropic</b>" in c.get("/stats").text
    bad = c.post("/settings/extraction", data={"csrf": c.csrf, "p": key, "extraction": "all"},  # type: ignore[attr-defined]
                 follow_redirects=False)
    assert "not%20changed" in bad.headers["location"] and consent.choice(str(home))[0] == "anthropic"

