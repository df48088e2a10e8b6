"""The secrets corpus (tests/secrets_corpus.py) through the filter and through every real hook process: no
secret reaches the data dir (SQLite and its WAL, LanceDB, logs, spool, daily log, state), byte for byte; the
ordinary-text corpus comes through unchanged (the false-positive rate is printed)."""

from __future__ import annotations

import base64
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from memory.base import privacy
from memory.base.project import identify
from tests.support.helpers import ROOT, HookRunner
from tests.support.secrets_corpus import ORDINARY, SECRETS

BATCH = 20  # corpus entries per event: 17 batches keep the hook count (and the runtime) small


def test_the_corpus_is_large_and_spans_the_families() -> None:
    assert len(SECRETS) >= 500
    families = {f.split("-")[0] for f, _, _ in SECRETS}
    for family in ("env", "dict", "mysql", "psql", "sshpass", "docker", "basic", "redis", "url", "azure", "slack",
                   "password", "github", "base64", "cli", "netrc", "npmrc", "pypirc", "bearer", "aws", "gcp",
                   "gitlab", "stripe", "openai", "anthropic", "npm", "pypi", "twilio", "sendgrid", "jwt", "private",
                   "assigned", "chat", "provider", "const", "multi", "keyfile", "embedded", "escaped", "dsn", "xml",
                   "field"):
        assert family in families, family


@pytest.mark.parametrize(("family", "text", "needles"), SECRETS, ids=[f"{i}-{f}" for i, (f, _, _) in
                                                                       enumerate(SECRETS)])
def test_every_secret_of_the_corpus_is_redacted(family: str, text: str, needles: list[str]) -> None:
    out = privacy.clean(text)
    assert not [n for n in needles if n in out], out
    assert "[REDACTED:" in out
    assert privacy.clean(out) == out  # stable on its own output
    assert privacy.find_secrets(text)


def test_ordinary_text_is_left_alone_and_the_false_positive_rate_is_reported() -> None:
    changed = [(t, privacy.clean(t)) for t in ORDINARY if privacy.clean(t) != t]
    rate = len(changed) / len(ORDINARY)
    print(f"\nfalse positives: {len(changed)} of {len(ORDINARY)} ordinary texts ({rate:.1%})")
    assert not changed, changed


def _fragments(needle: str) -> set[str]:
    """The base64 forms a needle takes at each of the three alignments, as the filter's triggers."""
    out = set()
    w = needle.encode()
    for k in range(3):
        enc = base64.b64encode(b"\0" * k + w + b"\0\0\0").decode()
        frag = enc[-(-8 * k // 6): (8 * (k + len(w))) // 6].lower()
        if len(frag) >= 4:
            out |= {frag, frag.replace("+", "-").replace("/", "_")}
    return out


def test_base64_triggers_cover_the_prefixes_at_every_alignment() -> None:
    triggers = next(t for kind, t, *_ in privacy._SECRETS if kind == "base64")
    for needle in ("ghp_", "gho_", "ghs_", "github_pat_", "glpat-", "sk-ant-", "sk-proj-", "xoxb-", "xoxp-", "AKIA",
                   "ASIA", "AIza", "npm_", "sk_live_", "PRIVATE KEY", "-----BEGIN", "password", "PASSWORD",
                   "Password", "secret", "SECRET", "token", "TOKEN", "pypi-AgE", "hooks.slack.com"):
        missing = _fragments(needle) - set(triggers)
        assert not missing, (needle, missing)


# --- through the real hooks ---------------------------------------------------------------------------

# A body long enough that the outline is worth showing instead of the file.
_BODY = [f"    step_{k} = event.get('step_{k}', {k}) * 2 + len(str(context))" for k in range(14)]
_BODY.append("    return step_0")


def _big_code_file(path: Path) -> list[str]:
    """A Python file long enough for the Read outline, whose module constants hold secrets (one per
    constant, functions in between so that each is shown with its value). Returns the needles."""
    lines = ['"""Service settings."""', "import os", ""]
    needles: list[str] = []
    for i, (_family, text, values) in enumerate(SECRETS):
        if "\n" in text or "\\" in text or '"' in text or len(text) > 80:
            continue
        lines += [f'CONFIG_{i} = "{text}"', "", f"def handler_{i}(event, context=None):", *_BODY, ""]
        needles += values
    for i, (_family, _text, values) in enumerate(SECRETS[:60]):
        value = values[0]
        if '"' in value or "\\" in value or "\n" in value:
            continue
        name = ("DB_PASSWORD", "API_TOKEN", "AWS_SECRET", "CLIENT_SECRET", "PRIVATE_KEY")[i % 5]
        lines += [f'{name}_{i} = "{value}"', "", f"def check_{i}(x):", *_BODY, ""]
        needles.append(value)
    path.write_text("\n".join(lines) + "\n")
    return needles


def _leaks(home: Path, needles: list[str]) -> dict[str, list[str]]:
    """Every needle found in any byte of any file under the data dir."""
    blobs = {str(p): p.read_bytes() for p in home.rglob("*") if p.is_file()}
    found: dict[str, list[str]] = {}
    for needle in needles:
        raw = needle.encode()
        hits = [path for path, data in blobs.items() if raw in data]
        if hits:
            found[needle] = hits
    return found


def test_no_secret_sent_through_any_hook_reaches_the_data_dir(home: Path, project: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    hooks = HookRunner(project, session="sess-secrets")
    needles = sorted({n for _f, _t, values in SECRETS for n in values if len(n) >= 6})
    # A long secret cut where a hook clips a text must not leave its first 16 characters either.
    needles += sorted({n[:16] for n in needles if len(n) >= 24})
    markers = []
    hooks.start()
    for b in range(0, len(SECRETS), BATCH):
        batch = SECRETS[b:b + BATCH]
        text = "\n\n".join(f"step item{b + i:04d}: {t}" for i, (_f, t, _v) in enumerate(batch))
        markers += [f"item{b + i:04d}" for i in range(len(batch))]
        hooks.prompt(f"please fix the deploy, here is what I have:\n{text}")
        hooks.tool("Bash", {"command": text, "description": "deploy"},
                   {"stdout": text, "stderr": text, "interrupted": False})
        hooks.tool("Bash", {"command": f"./deploy.sh {b}"}, failed=f"Exit code 1\n{text}")
        hooks.tool("Edit", {"file_path": str(project / "settings.py"), "old_string": "x = 1", "new_string": text},
                   {"filePath": str(project / "settings.py")})
        hooks.tool("WebFetch", {"url": "https://docs.example.com/setup", "prompt": text}, {"result": text})
        hooks.stop(f"Done. I used these values:\n{text}\nWe decided to keep them in .env.")
    code = project / "settings.py"
    needles += _big_code_file(code)
    read = hooks.run("post_tool_use", hooks.read_event(code))
    assert read["json"] and "updatedToolOutput" in read["json"]["hookSpecificOutput"], read  # the outline path
    outline = read["json"]["hookSpecificOutput"]["updatedToolOutput"]["file"]["content"]
    assert "[REDACTED:" in outline
    hooks.compact()

    # A locked database: the event goes to the spool, then a later hook replays it.
    db_path = home / "projects" / identify(str(project)).key / "memory.db"
    monkeypatch.setenv("MEMORY_BUSY_TIMEOUT_MS", "150")
    holder = sqlite3.connect(db_path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    spooled = "\n".join(t for _f, t, _v in SECRETS[:BATCH])
    hooks.tool("Bash", {"command": spooled}, {"stdout": spooled, "stderr": "", "interrupted": False})
    assert list((home / "spool").glob("*.json")), "the event was spooled"
    leaks = _leaks(home, needles)
    assert not leaks, _debug_leaks(home, leaks)
    holder.rollback()
    holder.close()
    monkeypatch.delenv("MEMORY_BUSY_TIMEOUT_MS")
    hooks.tool("Bash", {"command": "ls"}, {"stdout": "a b", "stderr": ""})
    hooks.end()

    # The worker's side: vectors into LanceDB (a real reindex, hashing embedder: no model download).
    env = {**os.environ, "MEMORY_HOME": str(home), "MEMORY_EMBEDDER": "hashing"}
    done = subprocess.run([sys.executable, "-m", "memory", "reindex", "--all", "--embedder", "hashing", "--json"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    for r in hooks.results:
        assert r["exit_code"] == 0, r
    files = {p.relative_to(home).parts[0] for p in home.rglob("*") if p.is_file()}
    assert {"projects", "logs", "daily"} <= files, files
    assert any(p.suffix == ".lance" or "lance" in str(p) for p in home.rglob("*")), "LanceDB was written"

    # What was recorded is there (so the search below means something), and no secret is.
    blob = b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file())
    recorded = [m for m in markers if m.encode() in blob]
    print(f"\n{len(recorded)} of {len(markers)} corpus items reached the disk (redacted), {len(hooks.results)} hooks")
    assert len(recorded) >= len(markers) * 0.8, f"only {len(recorded)} of {len(markers)} items were recorded"
    assert blob.count(b"[REDACTED:") >= len(SECRETS)
    leaks = _leaks(home, needles)
    assert not leaks, _debug_leaks(home, leaks)


def _debug_leaks(home: Path, leaks: dict[str, list[str]]) -> str:  # pragma: no cover - failure message only
    out = []
    for needle, paths in list(leaks.items())[:12]:
        data = Path(paths[0]).read_bytes()
        at = data.find(needle.encode())
        out.append(f"{needle!r} in {Path(paths[0]).name}: {data[max(0, at - 80):at + len(needle) + 20]!r}")
    return "\n".join(out)
