"""The Read outline as the real PostToolUse hook process produces it, with its SQLite cache."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from memory.base.project import identify
from memory.outline import read
from tests.support.helpers import HookRunner

PY_SOURCE = (Path(__file__).parent / "fixtures" / "outline_sample_py.txt").read_text()  # a real module, frozen


def read_event(hooks: HookRunner, path: Path, **tool_input: object) -> dict:
    text = path.read_text(errors="replace")
    lines = text.count("\n") + 1
    return hooks.event("PostToolUse", tool_name="Read", tool_input={"file_path": str(path), **tool_input},
                       tool_response={"type": "text", "file": {"filePath": str(path), "content": text,
                                                               "numLines": lines, "startLine": 1,
                                                               "totalLines": lines}})


def outlined(result: dict) -> str | None:
    out = result["json"]
    if not out:
        return None
    return out["hookSpecificOutput"]["updatedToolOutput"]["file"]["content"]


def db(home: Path, project: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(home / "projects" / identify(str(project)).key / "memory.db")
    conn.row_factory = sqlite3.Row
    return conn


@pytest.fixture
def big(project: Path) -> Path:
    path = project / "service.py"
    path.write_text(PY_SOURCE)
    return path


def test_full_read_of_a_large_file_returns_its_outline(hooks: HookRunner, home: Path, big: Path) -> None:
    result = hooks.run("post_tool_use", read_event(hooks, big))
    text = outlined(result)
    assert text is not None
    assert text.startswith("[memory plugin] Outline: ")
    assert "Read offset+limit" in text and "tokens withheld" in text and "Read again" in text
    assert " search(" in text and re.search(r"\n\d+-\d+ main\(\) -> None", text)  # rows: lines, signature
    assert "click.echo(" not in text  # bodies withheld
    shape = result["json"]["hookSpecificOutput"]["updatedToolOutput"]
    assert shape["type"] == "text" and shape["file"]["filePath"] == str(big)
    assert shape["file"]["numLines"] == text.count("\n") + 1 and shape["file"]["startLine"] == 1
    conn = db(home, hooks.project)
    row = conn.execute("SELECT * FROM file_signatures").fetchone()
    assert row["path"] == str(big) and row["language"] == "python" and row["symbols"] > 10
    assert row["outline_tokens"] < row["original_tokens"] * 0.3
    saving = conn.execute("SELECT * FROM token_savings").fetchone()
    assert saving["session_id"] == hooks.session and saving["original_tokens"] == row["original_tokens"]


def test_second_full_read_in_a_session_passes_through(hooks: HookRunner, big: Path) -> None:
    assert outlined(hooks.run("post_tool_use", read_event(hooks, big)))
    assert hooks.run("post_tool_use", read_event(hooks, big))["json"] is None


def test_a_file_under_a_token_named_directory_is_read_whole_when_asked_again(hooks: HookRunner, home: Path,
                                                                             project: Path) -> None:
    """The session state stores the outlined mark filtered, the cache and the saving key the file by its
    filtered path: the second full Read passes through as for any file, and the token never reaches the disk."""
    from tests.support.helpers import all_bytes_under
    from tests.test_point_of_action import TOKEN

    path = project / TOKEN / "service.py"
    path.parent.mkdir()
    path.write_text(PY_SOURCE)
    assert outlined(hooks.run("post_tool_use", read_event(hooks, path)))
    # A client answering the next Read with `file_unchanged` gets the file, as after any outline.
    unchanged = hooks.event("PostToolUse", tool_name="Read", tool_input={"file_path": str(path)},
                            tool_response={"type": "file_unchanged", "file": {"filePath": str(path)}})
    assert outlined(hooks.run("post_tool_use", unchanged)) == PY_SOURCE
    assert hooks.run("post_tool_use", read_event(hooks, path))["json"] is None
    conn = db(home, hooks.project)
    first = dict(conn.execute("SELECT * FROM file_signatures").fetchone())
    assert first["path"] == f"{project}/[REDACTED:github-token]/service.py"
    other = HookRunner(hooks.project, session="s2")  # another session's Read is served from that row
    assert outlined(other.run("post_tool_use", read_event(other, path)))
    rows = conn.execute("SELECT * FROM file_signatures").fetchall()
    assert len(rows) == 1 and rows[0]["created_at"] == first["created_at"]
    assert all_bytes_under(home)(TOKEN.encode()) == []


def test_a_subagent_gets_its_own_outline(hooks: HookRunner, big: Path) -> None:
    assert outlined(hooks.run("post_tool_use", read_event(hooks, big)))
    sub = read_event(hooks, big)
    sub.update(agent_id="agent-7", agent_type="Explore")
    assert outlined(hooks.run("post_tool_use", sub))


@pytest.mark.parametrize("extra", [{"offset": 10}, {"limit": 50}, {"offset": 1, "limit": 2000}])
def test_targeted_reads_pass_through(hooks: HookRunner, big: Path, extra: dict) -> None:
    assert hooks.run("post_tool_use", read_event(hooks, big, **extra))["json"] is None


def test_cache_hit_costs_no_parse_and_a_changed_file_is_replaced(hooks: HookRunner, home: Path, big: Path) -> None:
    hooks.run("post_tool_use", read_event(hooks, big))
    conn = db(home, hooks.project)
    first = dict(conn.execute("SELECT * FROM file_signatures").fetchone())
    other = HookRunner(hooks.project, session="s2")
    assert outlined(other.run("post_tool_use", read_event(other, big)))
    second = dict(conn.execute("SELECT * FROM file_signatures").fetchone())
    assert second["created_at"] == first["created_at"] and second["accessed_at"] > first["accessed_at"]
    big.write_text(PY_SOURCE + "\n\ndef brand_new_function(x: int) -> int:\n    return x\n")
    third = HookRunner(hooks.project, session="s3")
    text = outlined(third.run("post_tool_use", read_event(third, big)))
    assert text and "brand_new_function" in text
    rows = conn.execute("SELECT * FROM file_signatures").fetchall()
    assert len(rows) == 1 and rows[0]["content_hash"] != first["content_hash"]
    for r in (other, third):
        assert all(x["exit_code"] == 0 for x in r.results)


def test_small_unknown_binary_and_minified_files_pass_through(hooks: HookRunner, project: Path) -> None:
    small = project / "small.py"
    small.write_text("def f():\n    return 1\n")
    notes = project / "notes.txt"
    notes.write_text("words\n" * 1000)
    binary = project / "blob.py"
    binary.write_bytes(b"\x00\x01binary" * 5000 + b"\n" * 400)
    minified = project / "app.min.js"
    minified.write_text(("function a(b){return b+1}var c=" * 2000) + "\n" * 300)
    objc = project / "RNSViews.h"  # Objective-C: no grammar parses it (as C, a broken outline and slow repairs)
    objc.write_bytes((Path(__file__).parent / "parser" / "fixtures" / "cases" / "RNSViews.h").read_bytes())
    for path in (small, notes, binary, minified, objc):
        assert hooks.run("post_tool_use", read_event(hooks, path))["json"] is None, path


def test_outline_off_disables_it(hooks: HookRunner, big: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_OUTLINE", "off")
    assert hooks.run("post_tool_use", read_event(hooks, big))["json"] is None


def test_files_over_the_byte_cap_pass_through(hooks: HookRunner, big: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_OUTLINE_MAX_BYTES", "1000")
    assert hooks.run("post_tool_use", read_event(hooks, big))["json"] is None


def test_syntax_errors_non_utf8_and_crlf_still_outline(hooks: HookRunner, project: Path) -> None:
    path = project / "broken.py"
    body = PY_SOURCE.replace("def stats(", "def stats(((", 1).replace("\n", "\r\n")
    path.write_bytes(body.encode() + b"\n# caf\xe9\n")
    text = outlined(hooks.run("post_tool_use", read_event(hooks, path)))
    assert text is not None and " search(" in text


def test_stats_report_tokens_saved(hooks: HookRunner, home: Path, big: Path) -> None:
    hooks.run("post_tool_use", read_event(hooks, big))
    cli = Path(sys.executable).parent / "memory"
    proc = subprocess.run([str(cli), "stats", "--json"], capture_output=True, text=True, cwd=hooks.project,
                          env={**os.environ, "MEMORY_HOME": str(home)}, timeout=60)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["outlines"]["outlined_reads"] == 1
    assert data["outlines"]["tokens_saved"] > 1000
    assert data["outlines_last_session"]["tokens_saved"] == data["outlines"]["tokens_saved"]


def test_cleanup_drops_stale_outlines_and_keeps_fresh_ones(hooks: HookRunner, home: Path, big: Path,
                                                          project: Path) -> None:
    """`memory cleanup` drops the cached outline of a deleted file and of one not read for 90 days."""
    gone, old = project / "gone.py", project / "old.py"
    for path in (gone, old):
        path.write_text(PY_SOURCE)
    for path in (big, gone, old):
        assert outlined(hooks.run("post_tool_use", read_event(hooks, path))) is not None
    gone.unlink()
    conn = db(home, project)
    conn.execute("UPDATE file_signatures SET accessed_at = accessed_at - 91 * 86400 WHERE path = ?", (str(old),))
    conn.commit()
    proc = subprocess.run([sys.executable, "-m", "memory", "cleanup", "--json"], capture_output=True, text=True,
                          cwd=hooks.project, env={**os.environ, "MEMORY_HOME": str(home)}, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["outlines_dropped"] == 2
    assert [r[0] for r in conn.execute("SELECT path FROM file_signatures")] == [str(big)]  # the fresh one stays
    conn.close()



def _imported(result: dict) -> set[str]:
    """Modules the hook process imported (PYTHONPROFILEIMPORTTIME lines on its stderr)."""
    return {line.rsplit("|", 1)[-1].strip() for line in result["stderr"].splitlines()
            if line.startswith("import time:")}


@pytest.mark.fastpath
def test_a_cache_hit_imports_no_parser_and_a_miss_no_more_than_it_needs(
        hooks: HookRunner, big: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPROFILEIMPORTTIME", "1")
    cold = hooks.run("post_tool_use", read_event(hooks, big))
    assert outlined(cold)
    loaded = _imported(cold)
    assert {"parser.extract", "parser.grammars"} <= loaded  # it did parse
    # What a cold start must not pay for: typing (tree_sitter's __init__ imports it; the compiled bindings
    # are loaded from their files), dataclasses (and inspect), site's .pth files.
    assert not loaded & {"typing", "tree_sitter", "dataclasses", "inspect", "site"}
    # Nor importlib.util (grammar bindings come through the frozen loader: ~5 ms).
    assert not loaded & {"importlib.util", "importlib", "contextlib", "warnings"}
    other = HookRunner(hooks.project, session="s2")
    hit = other.run("post_tool_use", read_event(other, big))
    assert outlined(hit) == outlined(cold).replace(outlined(cold).split("\n", 1)[0], outlined(hit).split("\n", 1)[0])
    assert not {m for m in _imported(hit) if m.startswith(("tree_sitter", "parser.extract", "parser.preprocess",
                                                            "parser.grammars"))}
    assert "re" not in _imported(hit)  # the header's tokens are counted without it (parser/tokens.py)
    # Nor collections for _sqlite3's statement cache (memory/fastpath/imports.py lends it lru_cache: ~3.5 ms).
    assert not _imported(hit) & {"functools", "collections", "importlib"}


def test_a_file_without_symbols_is_parsed_once(hooks: HookRunner, home: Path, project: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    flat = project / "flat.py"
    flat.write_text("print('step')\n" * 400)
    assert hooks.run("post_tool_use", read_event(hooks, flat))["json"] is None
    row = db(home, project).execute("SELECT symbols, outline FROM file_signatures").fetchone()
    assert row["symbols"] == 0 and row["outline"] == ""
    monkeypatch.setenv("PYTHONPROFILEIMPORTTIME", "1")
    other = HookRunner(project, session="s2")
    again = other.run("post_tool_use", read_event(other, flat))
    assert again["json"] is None and not {m for m in _imported(again) if m.startswith("tree_sitter")}


def test_the_saving_counts_the_header_the_model_reads(hooks: HookRunner, home: Path, big: Path) -> None:
    from parser import estimate_tokens

    text = outlined(hooks.run("post_tool_use", read_event(hooks, big)))
    saving = db(home, hooks.project).execute("SELECT * FROM token_savings").fetchone()
    assert saving["outline_tokens"] == estimate_tokens(text)
    assert saving["original_tokens"] == estimate_tokens(big.read_bytes())
    assert f"~{saving['original_tokens'] - saving['outline_tokens']} tokens withheld" in text


def test_an_outline_cached_in_an_older_format_is_rendered_again(hooks: HookRunner, home: Path, big: Path) -> None:
    from memory.outline.cache import OUTLINE_FORMAT

    assert outlined(hooks.run("post_tool_use", read_event(hooks, big)))
    conn = db(home, hooks.project)
    with conn:  # as an older version left it: another format, another text
        conn.execute("UPDATE file_signatures SET content_hash = replace(content_hash, '/', '/old'), "
                     "outline = '1-2 stale row'")
    other = HookRunner(hooks.project, session="s2")
    text = outlined(other.run("post_tool_use", read_event(other, big)))
    assert text and "stale row" not in text and " search(" in text
    row = conn.execute("SELECT content_hash, outline FROM file_signatures").fetchone()
    assert row["content_hash"].endswith(f"/{OUTLINE_FORMAT}")
    assert "stale row" not in row["outline"]


def test_before_the_venv_the_first_read_says_when_outlines_start(hooks: HookRunner, big: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """An installed plugin's first minute: the setup builds the venv, the hooks run on an interpreter without
    tree-sitter. The first Read of a large file passes through whole with one line saying when outlines
    start; the next Read of the session adds nothing; with no setup running, nothing is said."""
    base = Path(sys.base_prefix) / "bin" / "python3"  # this venv's interpreter without its packages
    if subprocess.run([str(base), "-c", "import tree_sitter"], capture_output=True).returncode == 0:
        pytest.skip("the base interpreter has tree-sitter: no interpreter without it to run the hook on")
    data = tmp_path / "plugin-data"
    data.mkdir()
    (data / "venv.setup-running").write_text(f"{os.getpid()}\n")  # a setup that runs: this process
    monkeypatch.setenv("MEMORY_PYTHON", str(base))
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(data))
    first = hooks.run("post_tool_use", read_event(hooks, big))
    assert first["json"] == {"hookSpecificOutput": {"hookEventName": "PostToolUse",
                                                    "additionalContext": read.OUTLINES_LATER}}, first
    assert hooks.run("post_tool_use", read_event(hooks, big))["json"] is None
    (data / "venv.setup-running").unlink()
    hooks.session = "sess-2"
    assert hooks.run("post_tool_use", read_event(hooks, big))["json"] is None
