"""Huge inputs through the real hook processes: a 20 MB prompt, tool output, assistant message, compaction
instructions and transcript, and a TodoWrite of 20,000 items. Every hook exits 0, what is stored is cut
with a marker, and no secret (nor a fragment of one cut at the edge) reaches the disk. How long they take
is shown by scripts/bench/huge.py, not asserted here."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memory.base import bounds
from memory.base.project import identify
from tests.support.helpers import HookRunner, all_bytes_under

MB20 = 20 * 1024 * 1024
SECRET = "ghp_" + "Q7xK2mN9pL4vR8sT1wY6zB3cD5fG0hJ"  # a GitHub token shape the filter knows


def db(home: Path, project: Path) -> sqlite3.Connection:
    return sqlite3.connect(home / "projects" / identify(str(project)).key / "memory.db")


def huge_text(tail: str = "") -> str:
    """20 MB of words with a token at the start, one in the middle, and one split by where a hook cuts."""
    edge = bounds.MAX_STRING // 2 - 14  # the token straddles the head's cut: 14 characters before it
    head = "lead " + SECRET + " "
    filler = "lorem ipsum " * ((edge - len(head)) // 12)
    text = head + filler + "x" * (edge - len(head) - len(filler)) + " " + SECRET
    body = "dolor sit amet " * ((MB20 - len(text) - len(tail)) // 15)
    middle = len(body) // 2
    return text + " " + body[:middle] + SECRET + " " + body[middle:] + tail


def no_secret_on_disk(home: Path) -> None:
    find = all_bytes_under(home)
    for fragment in (SECRET[:10].encode(), SECRET[-12:].encode(), SECRET[4:14].encode()):
        assert find(fragment) == [], fragment


def test_cut_keeps_head_and_tail_without_split_words() -> None:
    text = "alpha " * 10_000 + "END"
    out = bounds.cut(text, 2000)
    assert out.startswith("alpha alpha") and out.endswith("alpha END") and "characters cut by memory" in out
    assert "\nalph\n" not in out and len(out) < 2100
    solid = "z" * 100_000  # no space to back off to: the slack goes with the partial word
    assert len(bounds.cut(solid, 2000)) < 2000
    assert bounds.cut("short", 2000) == "short"


def test_a_secret_split_by_the_cut_leaves_no_fragment() -> None:
    from memory.base.privacy import clean

    for at in range(2, len(SECRET) - 2):  # the cut falls at every position inside the token
        text = "a " * ((1000 - at) // 2) + ("a" if at % 2 else "") + SECRET + " b" * 5000
        text = text[:1000 - at] + SECRET + text[1000 - at + len(SECRET):]
        kept = clean(bounds.cut(text, 2000))
        assert SECRET[:at][-8:] not in kept or at < 8, at
        assert SECRET[4:12] not in kept, at


def test_bound_caps_lists_nodes_and_total() -> None:
    event = {"todos": [{"content": f"t{i}"} for i in range(20_000)], "many": ["y" * 50_000] * 100}
    out, cut = bounds.bound(event)
    assert len(out["todos"]) == bounds.MAX_ITEMS and cut > 0
    assert sum(len(s) for s in out["many"]) <= bounds.MAX_TOTAL + (bounds.MIN_STRING + 100) * len(out["many"])
    deep, _ = bounds.bound({"deep": [[["x" * 10] * 300] * 300] * 300})  # 27 million strings in all

    def count(v: object) -> int:
        return 1 + sum(count(x) for x in v) if isinstance(v, list) else 1

    assert count(deep["deep"]) <= bounds.MAX_NODES + 1
    small = {"a": "b", "n": [1, 2, 3]}
    assert bounds.bound(small) == (small, 0)


def test_a_20mb_prompt_is_cut_and_no_secret_leaks(hooks: HookRunner, home: Path) -> None:
    hooks.start()
    result = hooks.run("user_prompt_submit", hooks.event("UserPromptSubmit", prompt=huge_text("FINAL WORDS")))
    assert result["exit_code"] == 0
    (content,) = db(home, hooks.project).execute("SELECT content FROM memories WHERE type = 'prompt'").fetchone()
    assert "characters cut" in content and content.endswith("FINAL WORDS") and len(content) < 5000
    no_secret_on_disk(home)


def test_giant_tool_output_stop_and_compaction(hooks: HookRunner, home: Path, tmp_path: Path) -> None:
    hooks.start()
    hooks.prompt("Build the project")
    hooks.tool("Bash", {"command": "make build"}, failed="Exit code 2\n" + huge_text("FINAL ERROR: disk full"))
    hooks.tool("Bash", {"command": "make docs"}, {"stdout": huge_text("the last line"), "stderr": ""})
    hooks.tool("WebFetch", {"url": "https://example.com/big"}, huge_text())
    hooks.tool("Read", {"file_path": str(hooks.project / "app.py")},
               {"type": "text", "file": {"filePath": str(hooks.project / "app.py"), "content": huge_text(),
                                         "numLines": 2, "startLine": 1, "totalLines": 2}})
    hooks.stop(huge_text("Decision: we will use a bounded queue."))
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text(('{"type": "user", "message": {"role": "user", "content": "' + "w " * 1000 + '"}}\n')
                          * (MB20 // 2000))
    event = hooks.event("PreCompact", trigger="manual", custom_instructions=huge_text())
    event["transcript_path"] = str(transcript)
    assert hooks.run("pre_compact", event)["json"] is None
    end = hooks.event("SessionEnd", reason=huge_text())
    end["transcript_path"] = str(transcript)
    hooks.run("session_end", end)
    start = hooks.event("SessionStart", source=huge_text())
    start["transcript_path"] = str(transcript)
    hooks.run("session_start", start)
    rows = dict(db(home, hooks.project).execute("SELECT title, content FROM memories").fetchall())
    failed = rows["Command failed: `make build`"]
    assert "characters cut" in failed and "FINAL ERROR: disk full" in failed
    assert rows["Ran `make docs`"].endswith("the last line")
    assert all(len(c) < 5000 for c in rows.values())
    no_secret_on_disk(home)


def test_a_todowrite_of_20000_items_is_capped(hooks: HookRunner, home: Path) -> None:
    hooks.start()
    todos = [{"content": f"Finish part {i} of the migration", "status": "completed", "activeForm": "x"}
             for i in range(20_000)]
    todos[5]["content"] = f"Rotate {SECRET} in CI"
    old = [dict(t, status="pending") for t in todos[:10]]
    result = hooks.tool("TodoWrite", {"todos": todos}, {"oldTodos": old, "newTodos": todos})
    assert result["exit_code"] == 0
    titles = [r[0] for r in db(home, hooks.project).execute("SELECT title FROM memories")]
    completed = [t for t in titles if t.startswith("Completed")]
    assert 1 < len(completed) <= 22, len(completed)
    assert any(t.startswith("Completed ") and "more todos" in t for t in completed)
    no_secret_on_disk(home)


def test_an_event_past_the_64mb_read_limit_is_reported_not_silently_lost(hooks: HookRunner, home: Path) -> None:
    hooks.start()
    event = hooks.event("UserPromptSubmit", prompt="word " * (70 * 1024 * 1024 // 5))
    assert hooks.run("user_prompt_submit", event)["exit_code"] == 0
    assert "larger than 64 MB was not recorded" in (home / "logs" / "hooks.log").read_text()
    start = hooks.run("session_start", hooks.event("SessionStart", source="startup"))
    assert "larger than 64 MB" in start["json"]["systemMessage"]
