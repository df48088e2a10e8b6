"""What the capture keeps of a session, through the real hook processes (JSON on stdin, real SQLite)."""

from __future__ import annotations

import sqlite3
import string
from pathlib import Path

from memory.base.privacy import clean
from memory.base.project import identify
from tests.support.helpers import HookRunner
from tests.support.secrets_corpus import B62, rand


def db_for(home: Path, project: Path) -> sqlite3.Connection:
    db = sqlite3.connect(home / "projects" / identify(str(project)).key / "memory.db")
    db.row_factory = sqlite3.Row
    return db


def _leaked(home: Path, needles: list[str]) -> list[str]:
    blobs = [p.read_bytes() for p in home.rglob("*") if p.is_file()]
    return [n for n in needles if any(n.encode() in b for b in blobs)]


# Provider tokens as a line of their own (a .env or a config a model edits): the filter catches each alone.
TOKENS = ["ghp_" + rand(36), "github_pat_" + rand(22) + "_" + rand(59), "sk-ant-api03-" + rand(93),
          "sk-proj-" + rand(120), "xoxb-" + rand(12, string.digits) + "-" + rand(24), "glpat-" + rand(20),
          "AKIA" + rand(16, string.ascii_uppercase + string.digits), "sk_live_" + rand(24), "npm_" + rand(36),
          "hf_" + rand(34, B62)]


def test_edit_is_stored_as_text_and_a_secret_on_its_own_line_is_filtered(hooks: HookRunner, home: Path) -> None:
    caught = [t for t in TOKENS if t not in clean(f"x = 1\n{t}\n")]
    assert len(caught) >= 8, "the corpus should hold tokens the filter knows"
    path = str(hooks.project / "settings.py")
    new = "x = 1\n" + "\n".join(caught) + "\ny = 2"
    hooks.tool("Edit", {"file_path": path, "old_string": "x = 1", "new_string": new}, {"filePath": path})
    hooks.tool("MultiEdit", {"file_path": path, "edits": [{"old_string": "y = 2", "new_string": f"y = 3\n{t}"}
                                                          for t in caught]}, {"filePath": path})
    assert _leaked(home, caught) == []
    content = db_for(home, hooks.project).execute(
        "SELECT content FROM memories WHERE title = 'Modified settings.py'").fetchone()[0]
    assert "y = 3\n" in content and "\\n" not in content  # real newlines, no repr()


def test_an_edit_is_filtered_before_it_is_cut(hooks: HookRunner, home: Path) -> None:
    token = "ghp_" + rand(36)
    path = str(hooks.project / "app.py")
    # The token straddles the 300th character: cut first, its first part would stay, matching no rule.
    new = "#" * 280 + "\n" + token + "\n"
    hooks.tool("Edit", {"file_path": path, "old_string": "", "new_string": new}, {"filePath": path})
    content = db_for(home, hooks.project).execute("SELECT content FROM memories WHERE title = 'Modified app.py'"
                                                  ).fetchone()[0]
    assert "[REDACTED" in content
    assert _leaked(home, [token, token[:12]]) == []


def test_an_edit_is_labelled_by_its_tool_not_by_its_text(hooks: HookRunner, home: Path) -> None:
    from memory.base.fence import row_label

    path = str(hooks.project / "app.py")
    hooks.tool("Edit", {"file_path": path, "old_string": "return 1", "new_string": "return 2\n" * 40},
               {"filePath": path})
    hooks.tool("Write", {"file_path": str(hooks.project / "new.py"), "content": "x = 1\n"}, {})
    hooks.tool("WebFetch", {"url": "https://docs.example.com/limits", "prompt": "rate limits"}, {"result": "100/s"})
    rows = {r["title"]: r for r in db_for(home, hooks.project).execute("SELECT * FROM memories")}
    assert row_label(rows["Modified app.py"]) == "tool output of Edit"
    assert row_label(rows["Modified new.py"]) == "tool output of Write"
    assert row_label(rows["Looked up https://docs.example.com/limits"]) == \
        "tool output of WebFetch https://docs.example.com/limits"
