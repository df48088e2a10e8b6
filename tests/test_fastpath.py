"""The hooks' fast path (memory/fastpath/): one switch turns every private copy off, and a check per Python
refuses, loudly, a copy that no longer behaves as the standard module it replaces."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import memory.fastpath as fastpath
from memory.fastpath import _regex_table, check, jsonlite, sha

ROOT = Path(__file__).resolve().parents[1]


def _python(code: str, **env: str) -> subprocess.CompletedProcess:
    """`code` in a fresh `python -S` with this repository and the venv's packages on the path, as a hook has."""
    path = [str(ROOT), *sys.path]
    return subprocess.run([sys.executable, "-S", "-c", f"import sys; sys.path[:0] = {path!r}\n{code}"],
                          capture_output=True, text=True, env={**os.environ, **env}, timeout=120)


def _hook_modules(tmp_path: Path, fast: str) -> set[str]:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    event = {"session_id": "s-fast", "transcript_path": "", "cwd": str(project), "hook_event_name": "SessionStart",
             "source": "startup"}
    env = {**os.environ, "MEMORY_HOME": str(tmp_path / "data"), "MEMORY_WORKER": "off", "MEMORY_FASTPATH": fast}
    proc = subprocess.run([sys.executable, "-S", "-X", "importtime", str(ROOT / "hooks" / "session_start.py")],
                          input=json.dumps(event).encode(), capture_output=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    return {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.decode().splitlines()
            if line.startswith("import time:") and "|" in line}


def test_off_runs_the_standard_library_in_a_hook(tmp_path: Path) -> None:
    """MEMORY_FASTPATH=off: a hook installs no finder and imports json, hashlib and the sqlite3 package as any
    program does; on, none of them (the hot-path tests say what else it spares)."""
    off = _hook_modules(tmp_path, "off")
    assert {"json", "hashlib", "sqlite3.dbapi2"} <= off, sorted(off)
    on = _hook_modules(tmp_path, "on")
    assert not on & {"json", "hashlib", "sqlite3.dbapi2"}, sorted(on)


def test_off_gives_every_part_its_standard_counterpart() -> None:
    code = ("import functools, hashlib, json, re\n"
            "from memory.fastpath import grammars, jsonlite, recode, sha\n"
            "assert (jsonlite.loads, jsonlite.dumps) == (json.loads, json.dumps)\n"
            "assert sha.sha256 is hashlib.sha256\n"
            "pattern = recode.compile(r'\\n#\\s*define', 8)\n"
            "assert pattern == re.compile(r'\\n#\\s*define', 8) and not grammars.ON\n"
            "assert type(grammars.ts()).__name__ == 'module' and grammars.ts().__name__ == 'tree_sitter'\n"
            "print('ok')\n")
    out = _python(code, MEMORY_FASTPATH="off")
    assert out.stdout.strip() == "ok", out.stderr


def test_a_part_the_check_refused_runs_the_standard_library() -> None:
    """A refusal on record turns that part off alone: JSON here, while SHA-256 keeps the builtin module."""
    code = ("import memory.fastpath as f\n"
            "f._refused.append({'json': 'differs (simulated)'})\n"
            "from memory.fastpath import jsonlite, sha\n"
            "import json\n"
            "assert jsonlite.loads is json.loads and 'hashlib' not in sys.modules, sorted(sys.modules)\n"
            "print(f.on('json'), f.on('sha'))\n")
    out = _python(code, MEMORY_FASTPATH="on")
    assert out.stdout.split() == ["False", "True"], out.stderr


def test_every_copy_behaves_as_its_standard_module_on_this_python() -> None:
    """The check itself, on the Python the hooks run: every part agrees with the module it replaces."""
    assert {part: fn() for part, fn in check.CHECKS.items()} == dict.fromkeys(fastpath.PARTS)


def test_the_check_refuses_what_a_python_upgrade_would_break(monkeypatch: pytest.MonkeyPatch) -> None:
    """The changes a CPython upgrade brings: no `_sha256` (3.12 renamed it `_sha2`), `_sre` programs of another
    version, and a copy whose output drifts from the standard module's."""

    def no_module() -> None:
        raise ImportError("No module named '_sha256'")

    monkeypatch.setattr(sha, "builtin", no_module)
    monkeypatch.setattr(_regex_table, "VERSION", ((3, 99), 1, 4))
    monkeypatch.setattr(jsonlite, "fast_dumps", lambda value, **kw: json.dumps(value, sort_keys=True, **kw) + " ")
    reasons = {part: fn() for part, fn in check.CHECKS.items()}
    assert "no builtin SHA-256" in reasons["sha"] and "_sha256" in reasons["sha"]
    assert "scripts/gen_regex_table.py" in (reasons["regex"] or "")
    assert "dumps differs" in (reasons["json"] or "")
    assert reasons["imports"] is None and reasons["grammars"] is None


def test_a_refusal_is_kept_per_python_and_told_by_doctor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    verdict = tmp_path / "verdict.txt"
    monkeypatch.setattr(check, "VERDICT_PATH", str(verdict))
    monkeypatch.setattr(fastpath, "VERDICT_PATH", str(verdict))
    monkeypatch.setattr(fastpath, "_refused", [])
    monkeypatch.setitem(check.CHECKS, "sha", lambda: "no builtin SHA-256 module in this Python (simulated)")
    monkeypatch.delenv("MEMORY_FASTPATH", raising=False)
    assert check.run() == {"sha": "no builtin SHA-256 module in this Python (simulated)"}
    assert verdict.read_text().splitlines()[0] == fastpath.verdict_key()
    assert not fastpath.on("sha") and fastpath.on("json")
    line = check.report()["sha"]
    assert line.startswith("REFUSED: no builtin SHA-256") and line.endswith("the standard library runs instead")
    # Another Python's verdict (or one older than the checks) is not this one's: as if never checked.
    verdict.write_text("3.0.0 (another build) 1 2\nsha\tsimulated\n")
    monkeypatch.setattr(fastpath, "_refused", [])
    assert fastpath.refused() == {} and fastpath.on("sha")
    monkeypatch.setenv("MEMORY_FASTPATH", "off")
    assert set(check.report().values()) == {"off (MEMORY_FASTPATH=off): the standard library"}


def test_doctor_shows_each_part(home: Path, project: Path) -> None:
    cli = [str(Path(sys.executable).parent / "memory"), "doctor", "--json"]
    for switch, expected in (("on", "on"), ("off", "off (MEMORY_FASTPATH=off): the standard library")):
        out = subprocess.run(cli, capture_output=True, text=True, cwd=project, timeout=120,
                             env={**os.environ, "MEMORY_FASTPATH": switch})
        assert json.loads(out.stdout)["fast_path"] == dict.fromkeys(fastpath.PARTS, expected), out.stderr
