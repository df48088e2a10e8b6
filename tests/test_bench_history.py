"""The coding-memory benchmark (scripts/bench/history.py) on a small generated repository: it replays every
commit through the real hooks and reports each point and method in the agreed JSON shape (figures checked
for sanity only; the real figures come from ../shared/data/git, docs/benchmarks.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.helpers import ROOT

FUNCS = ["parse", "render", "load", "save"]
FATES = {"kept", "past the limit", "moved past the limit: code changed since", "shown this session", "same prompt",
         "said at start", "flagged"}


def _commit(repo: Path, message: str, when: int) -> None:
    env = {"GIT_AUTHOR_DATE": f"{when} +0000", "GIT_COMMITTER_DATE": f"{when} +0000", "HOME": str(repo.parent)}
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m",
                    message], check=True, env=env)


def _source(version: dict[str, int]) -> str:
    return "\n\n".join(f"def {f}(value):\n    \"\"\"{f} it.\"\"\"\n    step = {version[f]}\n    return value + step\n"
                       for f in FUNCS)


def make_history(repo: Path, commits: int = 14) -> Path:
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    version = dict.fromkeys(FUNCS, 0)
    (repo / "app.py").write_text(_source(version))
    _commit(repo, "Add the app module", 1_700_000_000)
    for i in range(commits):
        f = FUNCS[i % len(FUNCS)]
        version[f] += 1
        (repo / "app.py").write_text(_source(version))
        _commit(repo, f"Make {f} step by {version[f]} for the report totals", 1_700_000_000 + 3600 * (i + 1))
    return repo


def test_the_history_benchmark_on_a_generated_repository(tmp_path: Path) -> None:
    repo = make_history(tmp_path / "repo")
    out = subprocess.run([sys.executable, "-m", "scripts.bench.history", "--repo", str(repo), "--commits", "14",
                          "--embedder", "hashing", "--json", "--dump", str(tmp_path / "dump.jsonl"),
                          "--point-variants"], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["repo"] == "repo" and result["sessions"] == 14 and result["questions"] >= 2
    variants = {"stale 1", "stale .75", "stale .5", "stale .5 but about"}  # --point-variants
    for point, methods in (("prompt", {"plugin", "plugin injected only", "keyword", "bm25", "bm25 without prompts",
                                       "hybrid"}),
                           ("point_of_action", {"plugin", "file_history", *variants}),
                           ("session_start", {"plugin"})):
        assert set(result[point]) == methods
        for m in result[point].values():
            assert 0 <= m["recall_at_5"] <= 1 and m["ci95"][0] <= m["recall_at_5"] <= m["ci95"][1]
            assert m["precision"] is None or 0 <= m["precision"] <= 1
    # The hooks ran at each commit's date (MEMORY_NOW): the commit an hour before handed over at every start.
    start = result["session_start"]["plugin"]
    assert start["handoff_shown"] == 1.0 and start["chars_median_with_handoff"] == start["chars_median"]
    assert start["parts_mean"]["handoff"] > 0 and round(sum(start["parts_mean"].values()), 1) == start["chars"]
    # Each commit changes a function the commit 4 before it changed: the file's history finds the gold session.
    assert result["point_of_action"]["file_history"]["recall_at_5"] == 1.0
    # The in-process ranking with the hook's own weights is what the hook gave, question by question summed.
    hook, same = result["point_of_action"]["plugin"], result["point_of_action"]["stale .5 but about"]
    assert (same["recall_at_5"], same["precision"]) == (hook["recall_at_5"], hook["precision"])
    assert set(result["staleness"]) >= {"recall", "false_stale"}
    assert all(n > 0 for n in result["prompt_misses"].values())
    diffs = result["prompt_differences"]
    assert set(diffs) == {"hybrid - keyword", "keyword - bm25", "plugin - bm25", "plugin injected only - bm25"}
    # The issue's recall@5 counts the hook's search where fewer than 5 are injected: never below the strict one.
    strict = result["prompt"]["plugin injected only"]
    assert result["prompt"]["plugin"]["recall_at_5"] >= strict["recall_at_5"]
    assert result["prompt"]["plugin"]["precision"] == strict["precision"]
    for d in diffs.values():
        assert d["ci95"][0] <= d["diff"] <= d["ci95"][1] and d["better"] + d["worse"] <= result["questions"]
    # One line a question, each ranked list from the store the plugin keeps: prompt memories in BM25's too.
    dumped = [json.loads(line) for line in (tmp_path / "dump.jsonl").read_text().splitlines()]
    assert len(dumped) == result["questions"]
    assert any(t == "prompt" for q in dumped for _, t in q["bm25"])
    assert all(set(q) == {"sha", "gold", "bm25", "keyword", "hybrid", "point", "prompt"} and q["gold"] for q in dumped)
    # What the prompt hook injected is its own search's kept hits, in order; each hit's fate is told.
    for q in dumped:
        p = q["prompt"]
        assert p["mode"] == "keyword" and set(p["steps"]) == {"keyword", "fusion off", "bounded", "two shared words",
                                                              "seen left out"}
        assert p["steps"]["seen left out"] == p["top5"] == [s for _, s, *_ in p["search"][:5]]
        # (in the hook's order: those whose code changed since moved last, memories before repository docs)
        kept = {(i, s, t) for i, s, t, _, fate, _ in p["search"] if fate == "kept"}
        assert {tuple(x) for x in p["injected"]} == kept
        assert all(fate in FATES for *_, fate, _ in p["search"])
    # The point of action's whole ranking: what the hook showed is its head, every session of the file in it.
    for q in dumped:
        ranked = [s for s, _, _ in q["point"]["ranked"]]
        assert ranked[:len(q["point"]["plugin"])] == q["point"]["plugin"]
        assert set(q["point"]["file_sessions"]) <= set(ranked)


def test_recalled_ids_are_read_from_line_ends_only() -> None:
    sys.path.insert(0, str(ROOT))
    from scripts.bench.history import _ID

    text = ("Recorded in past sessions about a.go:\n"
            "- [change] Modified a.go (task: Fix typos (#1514)) (tool output of Edit, 2021-12-07, #186)\n"
            "- [prompt] Asked: Add a validator (#2397) (user prompt, 2026-04-25, #12)\n"
            "- 2026-04-24: Asked: fix completions (#2356) | Changed: a.go | Last: Fixes #2257 (see #7)")
    assert [int(a or b) for a, b in _ID.findall(text)] == [186, 12]


def test_prompt_recall_counts_the_search_only_where_fewer_are_injected() -> None:
    sys.path.insert(0, str(ROOT))
    from scripts.bench.history import issue_recall, miss_cause

    gold = {"g"}
    assert issue_recall(["a", "g"], ["a", "b"], gold) == 1.0
    assert issue_recall(["a", "b"], ["a", "b", "g"], gold) == 1.0  # fewer than 5 injected: the search's top 5
    assert issue_recall(["a", "b", "c", "d", "e"], ["g"], gold) == 0.0  # 5 injected: those alone
    assert issue_recall([], ["a", "b", "c", "d", "e", "g"], gold) == 0.0  # the top 5, no further
    steps = {"keyword": ["g"], "fusion off": ["g"], "bounded": ["g"], "two shared words": [], "seen left out": []}
    assert miss_cause({"search": [], "steps": steps}, [], {"g"}, gold) == "lost at: two shared words"
    held = {"search": [(7, "g", "change", 0.5, "said at start", False)], "steps": steps}
    assert miss_cause(held, ["a"], {"g"}, gold) == "search held it; left out: said at start"
    assert miss_cause(held, ["g"], {"g"}, gold) is None and miss_cause(held, [], {"a"}, gold) is None


def test_a_startup_text_is_split_by_its_headings() -> None:
    sys.path.insert(0, str(ROOT))
    from memory.base import fence
    from scripts.bench.history import start_parts

    body = ("Handoff from the memory plugin (where the previous session in this project stopped, 2023-11-14):\n"
            "Task: a\nMemories of project p from earlier sessions:\n- m\n"
            "Recent sessions in this project (what was asked, done, learned, left):\n- r")
    text = f"{fence.OPEN}\n{body}\n{fence.CLOSE}"
    parts = start_parts(text)
    assert sum(parts.values()) == len(text) and parts["other"] == len(fence.OPEN) + len(fence.CLOSE) + 2
    assert parts["handoff"] == body.index("Memories of")
    assert parts["recent sessions"] == len(body) - body.index("Recent")
    assert start_parts(f"{fence.OPEN}\nRecent sessions in this project (x):\n- r\n{fence.CLOSE}")["handoff"] == 0


def test_the_startup_ids_are_read_from_memory_lines_and_handoff_notes() -> None:
    """A handoff's note names its memory as "- [type #N] title" (memory/capture/handoff.py render), a listed
    memory's line ends ", #N)": the benchmark's SessionStart recall reads both, in the order shown."""
    sys.path.insert(0, str(ROOT))
    from memory.capture.handoff import render
    from scripts.bench.history import _ID

    notes = [{"type": "bugfix", "id": 41, "title": "Fixed: `make` passes again", "content": "x"},
             {"type": "decision", "id": 7, "title": "Keep argparse vendored", "content": "y"}]
    body = render({"task": "add a parser"}, "/p", notes)  # type: ignore[arg-type]
    listed = "- Parser reads stdin (change, 2024-01-02, #93)"
    found = [int(a or b) for a, b in _ID.findall(f"{body}\n{listed}\n- not an id #5] here")]
    assert found == [41, 7, 93], (found, body)
