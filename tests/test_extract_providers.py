"""The model providers against a loopback server that speaks the real HTTP APIs (Anthropic Messages POST
/v1/messages, Ollama POST /api/chat), driven through the real `anthropic` and `ollama` clients: request
shape, parsing, malformed answers, timeouts, 429 and 5xx with backoff then fallback, the token budget."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path
from typing import Any

import pytest

from memory.learn import importer, run
from memory.store import budget, consent
from memory.store.workspace import Workspace
from tests.support.fake_llm import (
    Answer,
    FakeLLM,
    anthropic_error,
    anthropic_text_answer,
    anthropic_tool_answer,
    ollama_answer,
)
from tests.support.helpers import TRANSCRIPTS, make_git_project

SMALL = TRANSCRIPTS / "spotter__subagent.jsonl"  # a session that ran commands and wrote a plan
BIG = TRANSCRIPTS / "spotter__ae4a77f8-aedd-4bc1-888f-c94edc91af04.prefix.jsonl"
KEY = "sk-ant-test-0000000000000000"
PAYLOAD = {
    "learnings": [
        {"type": "fact", "title": "No Igniter installers exist for credo, dialyxir or mix_audit",
         "content": "Add credo, dialyxir and mix_audit as plain deps in mix.exs; `mix igniter.install` only adds "
                    "the dependency.", "importance": 0.8, "files": ["mix.exs"]},
        {"type": "decision", "title": "Code quality beads live under epic spotter-0p7",
         "content": "spotter-0p7.1 installs the tools, spotter-0p7.2 adds the `mix quality` alias.",
         "importance": 0.6, "files": []},
    ],
    "summary": {"asked": "Plan credo, dialyzer and mix_audit setup as beads", "done": "Created epic spotter-0p7 "
                "with two tasks", "learned": "No Igniter installers for these tools", "next": "Run bd ready"},
}


def _closed_port() -> str:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Backoff sleeps are recorded, not slept."""
    slept: list[float] = []
    monkeypatch.setattr(run, "sleep", slept.append)
    return slept


@pytest.fixture
def env(home: Path, monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "OLLAMA_HOST",
                 "MEMORY_OLLAMA_MODEL", "MEMORY_DAILY_TOKEN_BUDGET", "MEMORY_EXTRACTOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OLLAMA_HOST", _closed_port())  # no Ollama unless a test starts one
    monkeypatch.setenv("MEMORY_EXTRACT_RETRIES", "2")
    consent.choose("anthropic", str(home))  # the user agreed to paid calls (tests/test_extract_consent.py: before)
    return monkeypatch


def _session(project: Path, tmp_path: Path, source: Path = SMALL) -> tuple[Workspace, str, Path]:
    """A workspace holding one imported (not yet extracted) session and its transcript."""
    copy = tmp_path / source.name
    shutil.copy(source, copy)
    ws = Workspace.for_dir(str(project))
    res = importer.import_file(ws, str(copy))
    assert res.status == "imported", res.to_json()
    return ws, res.session_id, copy


def _anthropic(env: pytest.MonkeyPatch, fake: FakeLLM) -> None:
    env.setenv("ANTHROPIC_API_KEY", KEY)
    env.setenv("ANTHROPIC_BASE_URL", fake.url)


def _rows(ws: Workspace, sid: str) -> list[dict[str, Any]]:
    return [dict(r) for r in ws.db.execute("SELECT * FROM extractions WHERE session_id = ? ORDER BY id", (sid,))]


def _learnings(ws: Workspace, sid: str) -> list[dict[str, Any]]:
    return [dict(r) for r in ws.db.execute(
        "SELECT * FROM memories WHERE session_id = ? AND source LIKE 'extract:%' ORDER BY id", (sid,))]


# -- Anthropic ------------------------------------------------------------------------------------


def test_anthropic_request_shape_and_answer(env: pytest.MonkeyPatch, project: Path, tmp_path: Path,
                                            sleeps: list[float]) -> None:
    ws, sid, _ = _session(project, tmp_path)
    with FakeLLM([anthropic_tool_answer(PAYLOAD)]) as fake:
        _anthropic(env, fake)
        out = run.extract_session(ws, sid, trigger="end", settle=False)
    assert out.status == "ok" and out.provider == "anthropic" and out.learnings == 2, out
    ((path, headers, body),) = [r for r in fake.requests if r[0] == "/v1/messages"]
    lower = {k.lower(): v for k, v in headers.items()}
    # The key goes as x-api-key or (anthropic 2.x) as a bearer token; the API version header is sent.
    assert KEY in (lower.get("x-api-key"), lower.get("authorization", "").removeprefix("Bearer "))
    assert lower.get("anthropic-version")
    assert body is not None
    assert body["model"] == "claude-haiku-4-5" and body["max_tokens"] == 1500
    assert body["tools"][0]["name"] == "record_learnings"
    assert body["tools"][0]["input_schema"]["properties"]["learnings"]["items"]["required"] == [
        "type", "title", "content", "importance", "files"]
    assert body["tool_choice"] == {"type": "tool", "name": "record_learnings"}
    assert "durable learnings" in json.dumps(body["system"])
    user = body["messages"][0]["content"]
    assert "create-beads" in user and "## Task" in user  # the session, reduced, not a raw dump
    saved = _learnings(ws, sid)
    assert [m["title"] for m in saved] == [x["title"] for x in PAYLOAD["learnings"]]
    assert saved[0]["type"] == "fact" and saved[0]["files"] == "mix.exs" and saved[0]["importance"] == 0.8
    assert "extractor:anthropic" in saved[0]["tags"] and saved[0]["source"] == "extract:anthropic"
    summary = ws.db.execute("SELECT summary FROM sessions WHERE id = ?", (sid,)).fetchone()[0]
    assert summary.startswith("Asked: Plan credo") and "Next: Run bd ready" in summary
    (row,) = _rows(ws, sid)
    assert (row["status"], row["paid"], row["input_tokens"], row["output_tokens"]) == ("ok", 1, 1200, 300)
    assert budget.spent_today() == 1500
    assert sleeps == []


def test_anthropic_json_in_text_is_accepted(env: pytest.MonkeyPatch, project: Path, tmp_path: Path,
                                            sleeps: list[float]) -> None:
    ws, sid, _ = _session(project, tmp_path)
    text = "Here you go:\n```json\n" + json.dumps(PAYLOAD) + "\n```"
    with FakeLLM([anthropic_text_answer(text)]) as fake:
        _anthropic(env, fake)
        out = run.extract_session(ws, sid, settle=False)
    assert (out.provider, out.learnings) == ("anthropic", 2)


def test_malformed_answers_are_not_asked_again_and_fall_back_to_the_heuristic(
        env: pytest.MonkeyPatch, project: Path, tmp_path: Path, sleeps: list[float]) -> None:
    """An answer, however bad, was paid for: it is not asked for again (only a missing answer is retried)."""
    bad = [anthropic_text_answer("I cannot do that."),
           anthropic_tool_answer({"learnings": "none"}),
           anthropic_tool_answer({"learnings": [{"title": "", "content": ""}], "summary": {}})]
    for i, answer in enumerate(bad):
        (tmp_path / f"t{i}").mkdir()
        ws, sid, _ = _session(make_git_project(tmp_path / f"p{i}"), tmp_path / f"t{i}")
        with FakeLLM([answer] * 3) as fake:
            _anthropic(env, fake)
            out = run.extract_session(ws, sid, settle=False)
        assert len(fake.model_requests()) == 1 and sleeps == []
        assert out.provider == "heuristic" and out.learnings >= 1
        rows = _rows(ws, sid)
        assert [r["status"] for r in rows] == ["failed", "ok"]
        assert "malformed" in rows[0]["error"] or "without the structured" in rows[0]["error"]
        # Tokens the malformed answer cost were still counted against the budget.
        assert rows[0]["paid"] and rows[0]["input_tokens"] + rows[0]["output_tokens"] == (1050, 1500, 1500)[i]


def test_rate_limit_is_retried_after_the_servers_delay(env: pytest.MonkeyPatch, project: Path, tmp_path: Path,
                                                      sleeps: list[float]) -> None:
    ws, sid, _ = _session(project, tmp_path)
    answers = [anthropic_error(429, "rate_limit_error", {"retry-after": "7"}), anthropic_tool_answer(PAYLOAD)]
    with FakeLLM(answers) as fake:
        _anthropic(env, fake)
        out = run.extract_session(ws, sid, settle=False)
    assert (out.provider, out.learnings) == ("anthropic", 2)
    assert sleeps == [7.0]
    assert [r["status"] for r in _rows(ws, sid)] == ["failed", "ok"]
    assert "429" in _rows(ws, sid)[0]["error"]


def test_server_errors_fall_back_to_ollama(env: pytest.MonkeyPatch, project: Path, tmp_path: Path,
                                          sleeps: list[float]) -> None:
    ws, sid, _ = _session(project, tmp_path)
    with FakeLLM([anthropic_error(529, "overloaded_error")]) as claude, \
            FakeLLM([ollama_answer(json.dumps(PAYLOAD))]) as local:
        _anthropic(env, claude)
        env.setenv("OLLAMA_HOST", local.url)
        out = run.extract_session(ws, sid, settle=False)
    assert len(claude.model_requests()) == 3 and len(sleeps) == 2
    assert (out.provider, out.learnings) == ("ollama", 2)
    assert [(r["provider"], r["status"]) for r in _rows(ws, sid)] == [
        ("anthropic", "failed")] * 3 + [("ollama", "ok")]


def test_a_refused_request_is_not_retried(env: pytest.MonkeyPatch, project: Path, tmp_path: Path,
                                         sleeps: list[float]) -> None:
    ws, sid, _ = _session(project, tmp_path)
    with FakeLLM([anthropic_error(400, "invalid_request_error")]) as fake:
        _anthropic(env, fake)
        out = run.extract_session(ws, sid, settle=False)
    assert len(fake.model_requests()) == 1 and sleeps == []
    assert out.provider == "heuristic"


def test_timeouts_are_retried_then_fall_back(env: pytest.MonkeyPatch, project: Path, tmp_path: Path,
                                            sleeps: list[float]) -> None:
    ws, sid, _ = _session(project, tmp_path)
    env.setenv("MEMORY_EXTRACT_TIMEOUT", "1")
    env.setenv("MEMORY_EXTRACT_RETRIES", "1")
    with FakeLLM([Answer(anthropic_tool_answer(PAYLOAD).body, delay=2.5)]) as fake:
        _anthropic(env, fake)
        out = run.extract_session(ws, sid, settle=False)
    assert len(fake.model_requests()) == 2 and len(sleeps) == 1
    assert out.provider == "heuristic"
    assert all("timed out" in r["error"] for r in _rows(ws, sid)[:2])


def test_budget_exhaustion_skips_the_paid_model(env: pytest.MonkeyPatch, project: Path, tmp_path: Path,
                                               sleeps: list[float]) -> None:
    ws, sid, _ = _session(project, tmp_path)
    # Another project already spent most of today's budget: the budget is for all projects together.
    other = Workspace.for_dir(str(tmp_path / "other"))
    budget.record(other.db, session_id="x", trigger="end", provider="anthropic", model="m", status="ok",
                  paid=True, input_tokens=9000, output_tokens=500)
    env.setenv("MEMORY_DAILY_TOKEN_BUDGET", "10000")
    with FakeLLM([anthropic_tool_answer(PAYLOAD)]) as fake:
        _anthropic(env, fake)
        out = run.extract_session(ws, sid, settle=False)
    assert fake.model_requests() == [], "a request was sent past the budget"
    assert out.provider == "heuristic"
    rows = _rows(ws, sid)
    assert rows[0]["status"] == "budget" and "MEMORY_DAILY_TOKEN_BUDGET" in rows[0]["error"]
    assert budget.spent_today() == 9500


def test_zero_budget_means_no_paid_calls_but_local_models_still_run(
        env: pytest.MonkeyPatch, project: Path, tmp_path: Path, sleeps: list[float]) -> None:
    ws, sid, _ = _session(project, tmp_path)
    env.setenv("MEMORY_DAILY_TOKEN_BUDGET", "0")
    with FakeLLM([anthropic_tool_answer(PAYLOAD)]) as claude, FakeLLM([ollama_answer(json.dumps(PAYLOAD))]) as local:
        _anthropic(env, claude)
        env.setenv("OLLAMA_HOST", local.url)
        out = run.extract_session(ws, sid, settle=False)
    assert claude.model_requests() == [] and out.provider == "ollama"
    assert budget.spent_today() == 0  # local tokens are recorded, not counted


def test_long_session_is_reduced_to_the_input_cap(env: pytest.MonkeyPatch, project: Path, tmp_path: Path,
                                                 sleeps: list[float]) -> None:
    ws, sid, _ = _session(project, tmp_path, BIG)
    env.setenv("MEMORY_EXTRACT_MAX_INPUT_TOKENS", "3000")
    with FakeLLM([anthropic_tool_answer(PAYLOAD)]) as fake:
        _anthropic(env, fake)
        run.extract_session(ws, sid, settle=False)
    (body,) = fake.model_requests()
    user = body["messages"][0]["content"]
    assert len(user) + len(body["system"]) <= 3000 * 3.5
    # What matters survived the cut: the task, the errors and their fixes, the files changed.
    assert "Work on bead spotter-4te" in user
    assert "## Errors and how they were resolved" in user and "[FORMAT] Code is not formatted" in user
    assert "## Files changed" in user and "lib/spotter/telemetry/otel.ex" in user


def test_private_text_and_secrets_never_reach_the_model(env: pytest.MonkeyPatch, project: Path, tmp_path: Path,
                                                       sleeps: list[float]) -> None:
    lines = [json.loads(x) for x in SMALL.read_text().splitlines() if x.strip()]
    for ln in lines:
        msg = ln.get("message") or {}
        if ln.get("type") == "user" and isinstance(msg.get("content"), str) and "create the beads" in msg["content"]:
            msg["content"] = "create the beads <private>hunter2-PRIVATE</private> key AKIAIOSFODNN7EXAMPLE"
    source = tmp_path / "src" / "secret.jsonl"
    source.parent.mkdir()
    source.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    ws, sid, _ = _session(project, tmp_path, source)
    with FakeLLM([anthropic_tool_answer(PAYLOAD)]) as fake:
        _anthropic(env, fake)
        run.extract_session(ws, sid, settle=False)
    sent = json.dumps(fake.model_requests())
    assert "create the beads" in sent
    assert "hunter2" not in sent and "AKIAIOSFODNN7EXAMPLE" not in sent


# -- Ollama ---------------------------------------------------------------------------------------


def test_ollama_request_shape_model_choice_and_answer(env: pytest.MonkeyPatch, project: Path, tmp_path: Path,
                                                      sleeps: list[float]) -> None:
    ws, sid, _ = _session(project, tmp_path)
    with FakeLLM([ollama_answer(json.dumps(PAYLOAD))], models=["nomic-embed-text:latest", "llama3.2:3b",
                                                               "qwen2.5:3b"]) as fake:
        env.setenv("OLLAMA_HOST", fake.url)
        out = run.extract_session(ws, sid, settle=False)
    assert (out.provider, out.learnings) == ("ollama", 2)
    assert [p for p, _, _ in fake.requests] == ["/api/tags", "/api/chat"]
    (body,) = fake.model_requests()
    assert body["model"] == "qwen2.5:3b"  # preferred over llama3.2; the embedding model never
    assert body["stream"] is False
    assert body["format"]["required"] == ["learnings", "summary"]
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "create-beads" in body["messages"][1]["content"]
    (row,) = _rows(ws, sid)
    assert (row["provider"], row["paid"], row["input_tokens"], row["output_tokens"]) == ("ollama", 0, 900, 200)
    assert _learnings(ws, sid)[0]["source"] == "extract:ollama"


def test_ollama_configured_model_and_malformed_json(env: pytest.MonkeyPatch, project: Path, tmp_path: Path,
                                                   sleeps: list[float]) -> None:
    ws, sid, _ = _session(project, tmp_path)
    env.setenv("MEMORY_EXTRACTOR", "ollama")
    env.setenv("MEMORY_OLLAMA_MODEL", "mistral:7b")
    with FakeLLM([ollama_answer("{not json"), ollama_answer('{"learnings": 3}'),
                  ollama_answer("still not json")]) as fake:
        env.setenv("OLLAMA_HOST", fake.url)
        out = run.extract_session(ws, sid, settle=False)
    assert "/api/tags" not in [p for p, _, _ in fake.requests]  # a configured model needs no probe
    assert {b["model"] for b in fake.model_requests()} == {"mistral:7b"}
    assert len(fake.model_requests()) == 1 and out.provider == "heuristic"  # an answer is not asked again


@pytest.mark.parametrize(("status", "requests"), [(500, 3), (404, 1)])
def test_ollama_http_errors(env: pytest.MonkeyPatch, project: Path, tmp_path: Path, sleeps: list[float],
                            status: int, requests: int) -> None:
    ws, sid, _ = _session(project, tmp_path)
    with FakeLLM([Answer({"error": "model 'qwen2.5:3b' not found" if status == 404 else "boom"}, status)]) as fake:
        env.setenv("OLLAMA_HOST", fake.url)
        out = run.extract_session(ws, sid, settle=False)
    assert len(fake.model_requests()) == requests  # 5xx retried, 404 (model not pulled) not
    assert out.provider == "heuristic"
    assert all(str(status) in r["error"] for r in _rows(ws, sid) if r["status"] == "failed")


def test_ollama_timeout(env: pytest.MonkeyPatch, project: Path, tmp_path: Path, sleeps: list[float]) -> None:
    ws, sid, _ = _session(project, tmp_path)
    env.setenv("MEMORY_EXTRACT_TIMEOUT", "1")
    env.setenv("MEMORY_EXTRACT_RETRIES", "0")
    with FakeLLM([Answer(ollama_answer(json.dumps(PAYLOAD)).body, delay=2.5)]) as fake:
        env.setenv("OLLAMA_HOST", fake.url)
        out = run.extract_session(ws, sid, settle=False)
    assert out.provider == "heuristic"
    assert "timed out" in _rows(ws, sid)[0]["error"]


def test_no_provider_reachable_still_extracts(env: pytest.MonkeyPatch, project: Path, tmp_path: Path,
                                             sleeps: list[float]) -> None:
    ws, sid, _ = _session(project, tmp_path)
    out = run.extract_session(ws, sid, settle=False)  # no key, Ollama port closed
    assert out.provider == "heuristic" and out.learnings >= 1
    assert [r["status"] for r in _rows(ws, sid)] == ["ok"]  # unavailable providers are not failures
