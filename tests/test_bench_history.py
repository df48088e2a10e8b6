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
    for point, methods in (("prompt", {"plugin", "keyword", "bm25", "bm25 without prompts", "hybrid"}),
                           ("point_of_action", {"plugin", "file_history", *variants}),
                           ("session_start", {"plugin"})):
        assert set(result[point]) == methods
        for m in result[point].values():
            assert 0 <= m["recall_at_5"] <= 1 and m["ci95"][0] <= m["recall_at_5"] <= m["ci95"][1]
            assert m["precision"] is None or 0 <= m["precision"] <= 1
    # Each commit changes a function the commit 4 before it changed: the file's history finds the gold session.
    assert result["point_of_action"]["file_history"]["recall_at_5"] == 1.0
    # The in-process ranking with the hook's own weights is what the hook gave, question by question summed.
    hook, same = result["point_of_action"]["plugin"], result["point_of_action"]["stale .5 but about"]
    assert (same["recall_at_5"], same["precision"]) == (hook["recall_at_5"], hook["precision"])
    assert set(result["staleness"]) >= {"recall", "false_stale"}
    diffs = result["prompt_differences"]
    assert set(diffs) == {"hybrid - keyword", "keyword - bm25", "plugin - bm25"}
    for d in diffs.values():
        assert d["ci95"][0] <= d["diff"] <= d["ci95"][1] and d["better"] + d["worse"] <= result["questions"]
    # One line a question, each ranked list from the store the plugin keeps: prompt memories in BM25's too.
    dumped = [json.loads(line) for line in (tmp_path / "dump.jsonl").read_text().splitlines()]
    assert len(dumped) == result["questions"]
    assert any(t == "prompt" for q in dumped for _, t in q["bm25"])
    assert all(set(q) == {"sha", "gold", "bm25", "keyword", "hybrid"} and q["gold"] for q in dumped)


def test_recalled_ids_are_read_from_line_ends_only() -> None:
    sys.path.insert(0, str(ROOT))
    from scripts.bench.history import _ID

    text = ("Recorded in past sessions about a.go:\n"
            "- [change] Modified a.go (task: Fix typos (#1514)) (tool output of Edit, 2021-12-07, #186)\n"
            "- [prompt] Asked: Add a validator (#2397) (user prompt, 2026-04-25, #12)\n"
            "- 2026-04-24: Asked: fix completions (#2356) | Changed: a.go | Last: Fixes #2257 (see #7)")
    assert [int(x) for x in _ID.findall(text)] == [186, 12]
