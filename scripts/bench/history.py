"""The coding-memory benchmark on a real repository history (issue 26).

    python -m scripts.bench.history --repo GIT_DIR_OR_BUNDLE [--commits N] [--embedder hashing|auto|...] [--json]
        [--point-variants]

Each non-merge first-parent commit (the last N, oldest first) is replayed as one session of one project through
the real hook processes, at the commit's author date: SessionStart; UserPromptSubmit with the commit's subject;
a Read of each touched source file (at most 5) with its content at the parent; one Edit per hunk (at most 10,
old and new text from the diff), each file's first Edit preceded by its PreToolUse; Stop with the commit's body
(or subject) as the last assistant message; SessionEnd. The hooks and the benchmark's own searches run with
MEMORY_NOW at the commit's date (memory/base/clock.py): what they store is dated by it and what SessionStart ages
(the handoff's maximum age, recency) is aged by it, as its user saw it then; the benchmark then orders a session's
rows within its commit's date, in the order they were made.

The questions are the commits of the last 20% whose changed symbols (tree-sitter: functions, classes, methods)
were changed by earlier replayed commits, the gold sessions. For each, measured before its own events are
stored (the hooks recall before they record): (a) at UserPromptSubmit with its subject, (b) at the point-of-action
hook before its first Edit, (c) at SessionStart: recall@5 (a gold session's memory among the injected items, or
among the top 5 of a search), precision (the share of injected items from gold sessions), characters injected,
and a 95% bootstrap interval of recall@5; at SessionStart also the share that showed a handoff. At SessionStart a
shown handoff is one item, its session's (the first), and a memory its notes name ("- [type #N]") another.
Baselines in the
same run: plain FTS5 BM25 (FTS5's own weights, the subject's words OR-ed) over every memory the plugin keeps, the
prompt memories ("Asked: ...") included: the
same store keyword mode and hybrid search rank, so that what differs is the ranking, not what is searched (a
baseline that leaves a type out is itself a ranking rule; "bm25 without prompts" is reported beside it as a
diagnostic only); the plugin's keyword search, hybrid search (the worker's ProjectIndex with --embedder), and
at the point of action "the last sessions that touched this file" (what `git log -- FILE` gives). A memory is
gold when its session is a gold session, whatever its type: a gold session's prompt memory counts (it names
the session that did the work, whose timeline `memory why` opens). At the prompt, paired differences of
recall@5 (hybrid - keyword, keyword - bm25, plugin - bm25) with 95% bootstrap intervals; --dump writes each
question's ranked lists for re-ranking offline.

The prompt's `plugin` row is the issue's recall@5: a gold session among the items the UserPromptSubmit hook
injected, or, where it injected fewer than 5, among the top 5 of its own search (inject.prompt_search, run
in-process between SessionStart and the prompt hook, with the hook's arguments); "plugin injected only" is the
injected items alone. `prompt_misses` counts, over the questions where BM25's or keyword mode's top 5 holds a
gold session and the hook injected none, why (miss_cause): what left the gold hits of the hook's search out,
or the first of the search's rules (SEARCH_STEPS) that lost them.

Staleness: each memory that recorded a symbol's signature (memory_symbols) is marked stale or not by the
plugin; the truth is whether that symbol's signature (tree-sitter) changed or it disappeared in a later
replayed commit. Recall = stale-marked among changed; false_stale = stale-marked among unchanged.

`--json` prints one JSON object as its last line. Development data: ../shared/data/git/*.bundle.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from memory.base import fence  # noqa: E402
from memory.capture import handoff  # noqa: E402
from memory.recall.search import Filters, keyword_search  # noqa: E402
from memory.store.workspace import Workspace  # noqa: E402
from parser import language_for_path, outline_source  # noqa: E402
from scripts.bench.common import arguments, keyword_variant, machine, machine_line  # noqa: E402

LAUNCHER = str(ROOT / "hooks" / "run")
MAX_READS, MAX_EDITS, EDIT_CHARS = 5, 10, 4000
SYMBOL_KINDS = {"function", "method", "class", "struct", "interface", "trait", "impl", "enum", "type",
                "constructor", "module"}
# A recalled line's memory id closes its provenance: "(tool output of Edit, 2024-05-19, #550)" at the line's end.
# Only there: a commit subject in a line ("task: Fix typos (#1514))") names a pull request, not a memory.
# A memory's id where an injection names it: a listed memory's line ends ", #N)"; a handoff's note of one
# reads "- [type #N] title" (memory/capture/handoff.py).
_ID = re.compile(r", #(\d+)\)$|^- \[[\w-]+ #(\d+)\] ", re.M)
HANDOFF_HEAD = "Handoff from the memory plugin ("  # memory/recall/inject.py: a handoff shown at SessionStart
# The startup block's parts by their headings (memory/recall/inject.py session_start_body), in their order.
START_PARTS = (("handoff", HANDOFF_HEAD), ("memories", "Memories of project "),
               ("recent sessions", "Recent sessions in this project ("))


def start_parts(text: str) -> dict[str, int]:
    """The characters of each part of a SessionStart's text (from its heading to the next); "other": the fence
    and what no heading starts."""
    at = sorted((text.find(head), name) for name, head in START_PARTS if head in text)
    out = {name: 0 for name, _ in START_PARTS}
    close = text.rfind("\n" + fence.CLOSE)
    for (start, name), (end, _) in zip(at, [*at[1:], (len(text) if close < 0 else close, "")], strict=True):
        out[name] = end - start
    out["other"] = len(text) - sum(out.values())
    return out


class Commit:
    def __init__(self, sha: str, parent: str, date: float, subject: str, body: str) -> None:
        self.sha, self.parent, self.date, self.subject, self.body = sha, parent, date, subject, body
        self.session = f"h-{sha[:12]}"
        self.files: list[str] = []  # source files touched (repository paths)
        self.hunks: list[tuple[str, str, str]] = []  # (path, old, new)
        self.symbols: set[tuple[str, str]] = set()  # (path, qualified name) changed


def git(repo: Path, *args: str, check: bool = True) -> str:
    out = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=check)
    return out.stdout.decode("utf-8", "replace")


def clone(source: str, into: Path) -> Path:
    subprocess.run(["git", "clone", "-q", source, str(into)], check=True, capture_output=True)
    git(into, "config", "user.email", "bench@example.invalid")
    git(into, "config", "user.name", "bench")
    return into


def commits(repo: Path, n: int) -> list[Commit]:
    """The last n non-merge first-parent commits that have a parent, oldest first."""
    shas = git(repo, "rev-list", "--first-parent", "--no-merges", "HEAD").split()
    out: list[Commit] = []
    for sha in shas:
        meta = git(repo, "show", "-s", "--format=%P%x00%at%x00%s%x00%b", sha).split("\x00")
        parents = meta[0].split()
        if len(parents) != 1:
            continue
        out.append(Commit(sha, parents[0], float(meta[1]), meta[2].strip(), meta[3].strip()))
        if len(out) == n:
            break
    return out[::-1]


def source_file(path: str) -> bool:
    return language_for_path(path) is not None and "vendor/" not in path and "node_modules/" not in path


def diff(repo: Path, c: Commit) -> None:
    """The commit's touched source files, its hunks (1 line of context) and the symbols it changed."""
    names = [p for p in git(repo, "diff", "--name-only", "--no-renames", c.parent, c.sha).split("\n") if p]
    c.files = [p for p in names if source_file(p)]
    for path in c.files:
        text = git(repo, "diff", "-U1", "--no-color", "--no-renames", c.parent, c.sha, "--", path)
        old_lines: set[int] = set()
        new_lines: set[int] = set()
        for old, new, o_at, n_at in hunks(text):
            if len(c.hunks) < MAX_EDITS and (old.strip() or new.strip()):
                c.hunks.append((path, old[:EDIT_CHARS], new[:EDIT_CHARS]))
            old_lines |= o_at
            new_lines |= n_at
        c.symbols |= changed_symbols(repo, c.parent, path, old_lines)
        c.symbols |= changed_symbols(repo, c.sha, path, new_lines)


def hunks(text: str) -> Iterator[tuple[str, str, set[int], set[int]]]:
    """(old text, new text, removed line numbers, added line numbers) of each hunk of a unified diff."""
    head = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")
    old: list[str] = []
    new: list[str] = []
    o_at: set[int] = set()
    n_at: set[int] = set()
    o = n = 0
    started = False
    for line in text.split("\n"):
        m = head.match(line)
        if m:
            if started:
                yield "\n".join(old), "\n".join(new), o_at, n_at
            old, new, o_at, n_at = [], [], set(), set()
            o, n, started = int(m[1]), int(m[2]), True
        elif started and line.startswith("-"):
            old.append(line[1:])
            o_at.add(o)
            o += 1
        elif started and line.startswith("+"):
            new.append(line[1:])
            n_at.add(n)
            n += 1
        elif started and line.startswith(" "):
            old.append(line[1:])
            new.append(line[1:])
            o, n = o + 1, n + 1
    if started:
        yield "\n".join(old), "\n".join(new), o_at, n_at


def file_symbols(repo: Path, rev: str, path: str) -> dict[str, tuple[int, int, str]]:
    """qualified name -> (first line, last line, signature) of a file's definitions at a revision."""
    data = subprocess.run(["git", "-C", str(repo), "show", f"{rev}:{path}"], capture_output=True).stdout
    if not data:
        return {}
    out = {}
    for s in outline_source(data, path).symbols:
        if s.kind in SYMBOL_KINDS:
            out[s.qualified_name] = (s.start_line, s.end_line, " ".join(s.signature.split()))
    return out


def signatures(repo: Path, rev: str, path: str) -> dict[str, str]:
    """qualified name -> signature of a file's definitions at a revision; the definitions of one name (Python
    overloads, a struct and its impl) joined in order, none dropped."""
    data = subprocess.run(["git", "-C", str(repo), "show", f"{rev}:{path}"], capture_output=True).stdout
    out: dict[str, str] = {}
    for s in outline_source(data, path).symbols if data else []:
        if s.kind in SYMBOL_KINDS:
            sig = " ".join(s.signature.split())
            out[s.qualified_name] = f"{out[s.qualified_name]} | {sig}" if s.qualified_name in out else sig
    return out


def changed_symbols(repo: Path, rev: str, path: str, lines: set[int]) -> set[tuple[str, str]]:
    if not lines:
        return set()
    syms = file_symbols(repo, rev, path)
    return {(path, name) for name, (a, b, _) in syms.items() if any(a <= ln <= b for ln in lines)}


# -- the replay -------------------------------------------------------------------------------------------


class Replay:
    def __init__(self, work: Path, home: Path, embedder: str | None) -> None:
        self.work, self.home = work, home
        self.env = {**os.environ, "MEMORY_HOME": str(home), "MEMORY_WORKER": "off", "MEMORY_EMBEDDER": "hashing"}
        for name in ("CLAUDE_PLUGIN_DATA", "CLAUDE_PROJECT_DIR", "MEMORY_PROJECT_DIR"):
            self.env.pop(name, None)
        self.base = {"transcript_path": "", "cwd": str(work), "permission_mode": "default"}
        self.ws = Workspace.for_dir(str(work), home=str(home))
        self.index = None
        self.indexed = 0
        self.keyword_weights: list[str] = []
        self.dump: list[dict[str, Any]] | None = None  # each question's ranked lists (--dump)
        # called before the first Edit's PreToolUse of a measured commit: the point of action's variants
        self.at_edit: Any = None
        # called between SessionStart and UserPromptSubmit of a measured commit: the prompt hook's search
        self.at_prompt: Any = None
        self.searched: dict[str, Any] = {}  # the last measured commit's prompt search (prompt_search)
        self.baselines: set[str] = set()  # the sessions of its BM25 and keyword mode top 5
        self.misses: dict[str, int] = {}  # why the prompt hook missed a gold session a baseline found (miss_cause)
        if embedder:
            from memory.recall import embed
            from memory.worker import ProjectIndex

            self.index = ProjectIndex(str(home), self.ws.project.key, embed.choose(embedder))
            self.index.check_provider()

    def hook(self, entry: str, session: str, **fields: Any) -> str:
        event = {**self.base, "session_id": session, **fields}
        proc = subprocess.run([LAUNCHER, entry], input=json.dumps(event).encode(), capture_output=True,
                              env=self.env, timeout=60)
        out = proc.stdout.decode("utf-8", "replace").strip()
        if proc.returncode != 0:
            raise SystemExit(f"history: hook {entry} exited {proc.returncode}: {proc.stderr[-500:]!r}")
        if not out:
            return ""
        return str(json.loads(out).get("hookSpecificOutput", {}).get("additionalContext", ""))

    def at(self, c: Commit) -> None:
        """The replay's clock at the commit's date: the hooks' (their env) and this process's own searches."""
        self.env["MEMORY_NOW"] = os.environ["MEMORY_NOW"] = repr(c.date)

    def session(self, c: Commit) -> dict[str, str]:
        """One commit as a session; returns what SessionStart, the prompt and the first Edit were given."""
        git(self.work, "checkout", "-q", "-f", c.parent)
        got = {"session_start": self.hook("session_start", c.session, hook_event_name="SessionStart",
                                          source="startup")}
        if HANDOFF_HEAD in got["session_start"]:  # whose handoff it showed: the hook's own choice, at its moment
            shown = handoff.for_startup(self.ws, c.session)[0]
            got["handoff_session"] = str(shown["session_id"]) if shown is not None else ""
        if self.at_prompt is not None:  # the prompt hook's own search, at the moment the hook runs
            self.at_prompt(c)
        got["prompt"] = self.hook("user_prompt_submit", c.session, hook_event_name="UserPromptSubmit",
                                  prompt=c.subject)
        got["point_of_action"] = ""
        for path in c.files[:MAX_READS]:
            full = self.work / path
            if full.is_file():
                text = full.read_text("utf-8", "replace")
                self.hook("post_tool_use", c.session, hook_event_name="PostToolUse", tool_name="Read",
                          tool_input={"file_path": str(full)},
                          tool_response={"type": "text", "file": {"filePath": str(full), "content": text}})
        seen: set[str] = set()
        for path, old, new in c.hunks:
            full = str(self.work / path)
            tin = {"file_path": full, "old_string": old, "new_string": new}
            if path not in seen:
                seen.add(path)
                if len(seen) == 1 and self.at_edit is not None:
                    self.at_edit(c, full, old, new)
                note = self.hook("pre_tool_use", c.session, hook_event_name="PreToolUse", tool_name="Edit",
                                 tool_input=tin)
                if len(seen) == 1:
                    got["point_of_action"] = note
                    got["edit_path"] = full
            self.apply(full, old, new)  # as the client does: the file is edited before PostToolUse
            self.hook("post_tool_use", c.session, hook_event_name="PostToolUse", tool_name="Edit",
                      tool_input=tin, tool_response={"filePath": full})
        git(self.work, "checkout", "-q", "-f", c.sha)
        self.hook("stop", c.session, hook_event_name="Stop", stop_hook_active=False,
                  last_assistant_message=c.body or c.subject)
        self.hook("session_end", c.session, hook_event_name="SessionEnd", reason="other")
        self.date(c)
        return got

    @staticmethod
    def apply(path: str, old: str, new: str) -> None:
        """The hunk's edit on disk (its first occurrence); a hunk that no longer matches is left to the checkout."""
        try:
            text = Path(path).read_text("utf-8")
        except (OSError, UnicodeDecodeError):
            return
        if old and old in text:
            Path(path).write_text(text.replace(old, new, 1), "utf-8")

    def date(self, c: Commit) -> None:
        """The session's rows moved to the commit's date, in the order they were made."""
        db = self.ws.db
        with db:
            db.execute("UPDATE memories SET created_at = ? + (id % 1000) / 1000.0, updated_at = ? "
                       "WHERE session_id = ?", (c.date, c.date, c.session))
            db.execute("UPDATE sessions SET started_at = ?, ended_at = ? WHERE id = ?", (c.date, c.date, c.session))
            db.execute("UPDATE handoffs SET created_at = ? WHERE session_id = ?", (c.date, c.session))
        if self.index is not None:
            ids = [r[0] for r in db.execute("SELECT id FROM memories WHERE id > ? ORDER BY id", (self.indexed,))]
            if ids:
                self.index.index(ids)
                self.indexed = ids[-1]


# -- measures ---------------------------------------------------------------------------------------------


def session_of(db: sqlite3.Connection, ids: list[int]) -> list[str]:
    if not ids:
        return []
    rows = dict(db.execute(f"SELECT id, coalesce(session_id, '') FROM memories WHERE id IN "
                           f"({','.join('?' * len(ids))})", ids).fetchall())
    return [rows.get(i, "") for i in ids]


def scored(sessions: list[str], gold: set[str], chars: int) -> dict[str, Any]:
    hit = 1.0 if any(s in gold for s in sessions[:5]) else 0.0
    precision = sum(1 for s in sessions if s in gold) / len(sessions) if sessions else None
    return {"recall": hit, "precision": precision, "chars": chars}


def plain_bm25(db: sqlite3.Connection, query: str, exclude: str, limit: int = 5,
               without: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """(session, type) of FTS5's own BM25 over every memory the plugin keeps, the query's words OR-ed: the
    plainest keyword search of the same store keyword mode searches. `without` leaves types out (a diagnostic
    row only: a baseline that sees fewer rows is not plain BM25 of the same store)."""
    words = list(dict.fromkeys(re.findall(r"\w+", query.lower())))
    if not words:
        return []
    match = " OR ".join(f'"{w}"' for w in words)
    left_out = "".join(" AND m.type != ?" for _ in without)
    return [(r[0], r[1]) for r in db.execute(
        "SELECT m.session_id, m.type FROM memories_fts f JOIN memories m ON m.id = f.rowid WHERE memories_fts "
        f"MATCH ? AND coalesce(m.session_id, '') != ?{left_out} ORDER BY bm25(memories_fts) LIMIT ?",
        (match, exclude, *without, limit))]


def file_history(db: sqlite3.Connection, path: str, exclude: str, limit: int = 5) -> list[str]:
    """The last sessions that changed the file, newest first (what `git log -- FILE` gives)."""
    rows = db.execute("SELECT m.session_id, max(m.created_at) AS at FROM memory_files f JOIN memories m "
                      "ON m.id = f.memory_id WHERE f.path = ? AND m.type = 'change' AND m.session_id != ? "
                      "GROUP BY m.session_id ORDER BY at DESC LIMIT ?", (path, exclude, limit)).fetchall()
    return [r[0] for r in rows]


def ci95(values: list[float], seed: int = 26, rounds: int = 2000) -> list[float]:
    if not values:
        return [0.0, 0.0]
    rng = random.Random(seed)
    means = sorted(sum(rng.choice(values) for _ in values) / len(values) for _ in range(rounds))
    return [round(means[int(0.025 * rounds)], 3), round(means[int(0.975 * rounds) - 1], 3)]


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    recalls = [r["recall"] for r in rows]
    precisions = [r["precision"] for r in rows if r["precision"] is not None]
    return {**start_summary(rows),
            "recall_at_5": round(sum(recalls) / len(recalls), 3) if recalls else None,
            "precision": round(sum(precisions) / len(precisions), 3) if precisions else None,
            "chars": round(sum(r["chars"] for r in rows) / len(rows), 1) if rows else None,
            "chars_median": statistics.median(r["chars"] for r in rows) if rows else None,
            "ci95": ci95(recalls), "n": len(rows)}


def start_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """SessionStart's: the share that showed a handoff, the characters of those that did, each part's mean."""
    if not rows or "handoff" not in rows[0]:
        return {}
    shown = [r for r in rows if r["handoff"]]
    return {"handoff_shown": round(len(shown) / len(rows), 3),
            "chars_median_with_handoff": statistics.median(r["chars"] for r in shown) if shown else None,
            "parts_mean": {k: round(sum(r["parts"][k] for r in rows) / len(rows), 1) for k in rows[0]["parts"]}}


def paired(a: list[dict[str, Any]], b: list[dict[str, Any]], seed: int = 26, rounds: int = 2000) -> dict[str, Any]:
    """Recall@5 of a less b over the same questions: the mean, a 95% bootstrap interval (questions resampled
    in pairs) and how many questions each way."""
    d = [x["recall"] - y["recall"] for x, y in zip(a, b, strict=True)]
    return {"diff": round(sum(d) / len(d), 3) if d else None, "ci95": ci95(d, seed, rounds),
            "better": sum(x > 0 for x in d), "worse": sum(x < 0 for x in d)}


# The prompt point's comparisons the issue's targets name: hybrid against keyword mode, keyword mode against BM25.
PAIRS = (("hybrid", "keyword"), ("keyword", "bm25"), ("plugin", "bm25"), ("plugin injected only", "bm25"))


def variant_pairs(variants: list[str]) -> list[tuple[str, str]]:
    """Each keyword-mode variant's row against plain BM25, keyword mode and hybrid."""
    return [(f"keyword {v}", b) for v in variants for b in ("bm25", "keyword")] + \
        [("hybrid", f"keyword {v}") for v in variants]


def staleness(repo: Path, db: sqlite3.Connection, commits_by_session: dict[str, Commit], last: str) -> dict[str, Any]:
    """The plugin's stale marks against the truth: did the recorded symbol's signature change by the end?"""
    try:
        rows = db.execute("SELECT s.memory_id, s.path, s.name, s.stale_at, m.session_id FROM memory_symbols s "
                          "JOIN memories m ON m.id = s.memory_id").fetchall()
    except sqlite3.OperationalError:
        return {"recall": None, "false_stale": None, "memories": 0, "note": "no memory_symbols table"}
    work = str(repo)
    cache: dict[tuple[str, str], dict[str, str]] = {}

    def sig(rev: str, rel: str, name: str) -> str | None:
        if (rev, rel) not in cache:
            cache[(rev, rel)] = signatures(repo, rev, rel)
        return cache[(rev, rel)].get(name)  # names are qualified as the parser qualifies them ("Cart.total")

    changed = unchanged = caught = false = 0
    for _mid, path, name, stale_at, session in rows:
        c = commits_by_session.get(session)
        if c is None or not path.startswith(work + os.sep):
            continue
        rel = os.path.relpath(path, work)
        then, now = sig(c.sha, rel, name), sig(last, rel, name)
        if then is None:
            continue
        if now != then:
            changed += 1
            caught += stale_at is not None
        else:
            unchanged += 1
            false += stale_at is not None
    return {"recall": round(caught / changed, 3) if changed else None,
            "false_stale": round(false / unchanged, 3) if unchanged else None,
            "changed": changed, "unchanged": unchanged}


def run(source: str, n: int, embedder: str | None, keep: str | None = None,
        keyword_weights: list[str] | None = None, dump: str | None = None,
        variants: bool = False) -> dict[str, Any]:
    tmp = Path(keep or tempfile.mkdtemp(prefix="bench-history-"))
    try:
        return _run(source, n, embedder, tmp, keyword_weights or [], dump, variants)
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)


def _run(source: str, n: int, embedder: str | None, tmp: Path, keyword_weights: list[str],
         dump: str | None = None, variants: bool = False) -> dict[str, Any]:
    repo = clone(source, tmp / "repo")
    work = clone(str(repo), tmp / "work")
    todo = commits(repo, n)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for c in todo:
        diff(repo, c)
    test_from = len(todo) - max(1, len(todo) // 5)
    replay = Replay(work, tmp / "data", embedder)
    replay.keyword_weights = keyword_weights
    replay.dump = [] if dump else None
    changed_by: dict[tuple[str, str], list[str]] = {}
    points: dict[str, dict[str, list[dict[str, Any]]]] = {"prompt": {}, "point_of_action": {}, "session_start": {}}
    questions = 0
    for i, c in enumerate(todo):
        gold = {s for sym in c.symbols for s in changed_by.get(sym, [])}
        measured = i >= test_from and bool(gold) and bool(c.hunks)
        replay.at(c)
        if measured:
            questions += 1
            measure_before(replay, c, gold, points)
        replay.at_edit = None
        replay.at_prompt = (lambda c, gold=gold: prompt_search(replay, c, gold)) if measured else None
        if measured and (variants or replay.dump is not None):
            replay.at_edit = lambda c, path, old, new, gold=gold: at_edit(replay, c, path, old, new, gold, points,
                                                                          variants)
        got = replay.session(c)
        if measured:
            measure_hooks(replay, c, gold, got, points)
        for sym in c.symbols:
            changed_by.setdefault(sym, []).append(c.session)
    result = {
        "repo": Path(source).name.removesuffix(".bundle"), "sessions": len(todo), "questions": questions,
        **{point: {method: summary(rows) for method, rows in by.items()} for point, by in points.items()},
        "prompt_differences": {f"{a} - {b}": paired(points["prompt"][a], points["prompt"][b])
                               for a, b in (*PAIRS, *variant_pairs(keyword_weights))
                               if a in points["prompt"] and b in points["prompt"]},
        "prompt_misses": replay.misses,
        "staleness": staleness(work, replay.ws.db, {c.session: c for c in todo}, todo[-1].sha),
        "replay_seconds": round(time.perf_counter() - wall0, 1), "embedder": embedder,
        "bench_cpu_seconds": round(time.process_time() - cpu0, 1),
    }
    replay.ws.close()
    if dump and replay.dump is not None:
        Path(dump).write_text("".join(json.dumps(q) + "\n" for q in replay.dump), "utf-8")
    return result


def measure_before(replay: Replay, c: Commit, gold: set[str], points: dict[str, dict[str, list]]) -> None:
    """The baselines at the moment the commit's session starts (nothing of it stored yet)."""
    db = replay.ws.db
    add = points["prompt"].setdefault
    bm25 = plain_bm25(db, c.subject, c.session, limit=20)
    add("bm25", []).append(scored([s for s, _ in bm25[:5]], gold, 0))
    work = plain_bm25(db, c.subject, c.session, without=("prompt",))
    add("bm25 without prompts", []).append(scored([s for s, _ in work], gold, 0))
    hits = keyword_search(db, c.subject, limit=5, filters=Filters(exclude_session=c.session))
    add("keyword", []).append(scored([h.session_id or "" for h in hits], gold, 0))
    replay.baselines = {s for s, _ in bm25[:5]} | {h.session_id or "" for h in hits}
    if replay.dump is not None:
        deep = keyword_search(db, c.subject, limit=20, filters=Filters(exclude_session=c.session))
        replay.dump.append({"sha": c.sha, "gold": sorted(gold), "bm25": bm25, "keyword": [
            (h.session_id or "", h.type, round(h.score, 4)) for h in deep]})
    for v in replay.keyword_weights:  # keyword mode with some of its additions taken away (--keyword-variants)
        with keyword_variant(v):
            hits = keyword_search(db, c.subject, limit=5, filters=Filters(exclude_session=c.session))
        add(f"keyword {v}", []).append(scored([h.session_id or "" for h in hits], gold, 0))
    if replay.index is not None:
        found = replay.index.search(c.subject, 5, Filters(exclude_session=c.session))
        add("hybrid", []).append(scored(session_of(db, [s.id for s in found]), gold, 0))
        if replay.dump is not None:
            deep_h = replay.index.search(c.subject, 20, Filters(exclude_session=c.session))
            types = dict(db.execute(f"SELECT id, type FROM memories WHERE id IN ({','.join('?' * len(deep_h))})",
                                    [h.id for h in deep_h]).fetchall()) if deep_h else {}
            sessions = session_of(db, [h.id for h in deep_h])
            replay.dump[-1]["hybrid"] = [(sess, types.get(h.id, ""), round(h.score, 4))
                                         for h, sess in zip(deep_h, sessions, strict=True)]
    path, old, _ = c.hunks[0]
    points["point_of_action"].setdefault("file_history", []).append(
        scored(file_history(db, str(replay.work / path), c.session), gold, 0))


# The point of action's ranking with other weights for a memory whose code changed since (the hook: half, but
# not one about the edited definition), ranked in-process at the moment the hook runs, on the same store:
# (name, stale factor, spare_about).
POINT_VARIANTS = (("stale 1", 1.0, False), ("stale .75", 0.75, False), ("stale .5", 0.5, False),
                  ("stale .5 but about", 0.5, True))


def at_edit(replay: Replay, c: Commit, path: str, old: str, new: str, gold: set[str],
            points: dict[str, dict[str, list]], variants: bool) -> None:
    """Before the hook of a measured commit's first Edit: its variants (--point-variants), the ranking (--dump)."""
    if variants:
        point_variants(replay, c, path, old, new, gold, points)
    if replay.dump is not None and replay.dump and replay.dump[-1]["sha"] == c.sha:
        replay.dump[-1]["point"] = point_ranking(replay, c, path, old, new)


def point_ranking(replay: Replay, c: Commit, path: str, old: str, new: str) -> dict[str, Any]:
    """The point of action's whole ranking (every session of the file's candidates, no cut, no floor: session,
    score, its line's type) and every session that changed the file, newest first, for reading offline."""
    from memory.recall import point

    shown, floor = point.SHOWN, point.FLOOR
    point.SHOWN, point.FLOOR = 10**6, float("-inf")
    try:
        chosen, names, _ = point.rank(replay.ws, c.session, path, old, point._identifiers(old + "\n" + new), [])
    finally:
        point.SHOWN, point.FLOOR = shown, floor
    return {"path": os.path.relpath(path, replay.work), "about": names,
            "ranked": [(r["session_id"] or "", round(score, 4), r["type"]) for score, r in chosen],
            "file_sessions": file_history(replay.ws.db, path, c.session, limit=10**6)}


def point_variants(replay: Replay, c: Commit, path: str, old: str, new: str, gold: set[str],
                   points: dict[str, dict[str, list]]) -> None:
    """The point-of-action ranking's variants, scored as the plugin's note is (its sessions, best first)."""
    from memory.recall import point

    said = point._identifiers(old + "\n" + new)
    for name, stale, spare in POINT_VARIANTS:
        chosen, _, _ = point.rank(replay.ws, c.session, path, old, said, [], stale=stale, spare_about=spare)
        sessions = [r["session_id"] or "" for _, r in chosen]
        points["point_of_action"].setdefault(name, []).append(scored(sessions, gold, 0))


# The prompt hook's search with its rules added one at a time, from keyword mode as `memory search` runs it:
# (name, KEYWORD_FUSION variant, bounded for a hook, min_terms, the seen set left out in SQL). The last is the
# hook's own search (inject.prompt_search); the first step that loses a gold session keyword mode's top 5 holds
# says why the hook's set misses it.
SEARCH_STEPS = (("keyword", "", False, 1, False), ("fusion off", "fusion=off", False, 1, False),
                ("bounded", "fusion=off", True, 1, False), ("two shared words", "fusion=off", True, 2, False),
                ("seen left out", "fusion=off", True, 2, True))


def prompt_search(replay: Replay, c: Commit, gold: set[str]) -> None:
    """The prompt hook's own search (inject.prompt_search, same arguments, same moment: after SessionStart
    recorded what it showed), each hit's fate in the hook (injected, or what left it out), and the search's
    top 5 with its rules added one at a time (SEARCH_STEPS)."""
    from memory import store
    from memory.base.config import env_int
    from memory.recall import inject

    ws, db = replay.ws, replay.ws.db
    want = env_int("MEMORY_PROMPT_RECALL_LIMIT")
    hits, mode = inject.prompt_search(ws, c.session, c.subject, want)
    shown = inject._already_shown(ws, c.session, [h.id for h in hits])
    said = inject._said_at_start(ws, c.session)
    prov = inject.provenance(ws, [h.id for h in hits])
    fate: dict[int, str] = {}
    for h in hits:
        fate[h.id] = ("shown this session" if h.id in shown else
                      "same prompt" if store.content_hash(h.content) == store.content_hash(c.subject) else
                      "said at start" if said and inject.said_by(h, said) else
                      "flagged" if inject.flagged(h, prov.get(h.id)) else "kept")
    by_score = [h for h in hits if fate[h.id] == "kept"]
    kept, old = inject._stale_last(ws, by_score)
    for h in kept[want:]:  # within the limit by its score, but moved last as its code changed since
        fate[h.id] = "moved past the limit: code changed since" if by_score.index(h) < want else "past the limit"
    searched = not (len(c.subject.strip()) < 8 or c.subject.lstrip().startswith("/"))  # else the hook stops
    if not searched:
        fate = {h.id: "prompt not searched" for h in hits}
    steps = {}
    for name, variant, bounded, min_terms, seen in SEARCH_STEPS:
        shown_in = c.session if seen and shown_some(db, c.session) else None
        with keyword_variant(variant):
            found = keyword_search(db, c.subject, limit=want + 1 + inject.FLAGGED_ROOM, min_terms=min_terms,
                                   filters=Filters(exclude_session=c.session, not_shown_in=shown_in),
                                   max_candidates=env_int("MEMORY_RECALL_CANDIDATES") if bounded else None)
        steps[name] = [h.session_id or "" for h in found[:5]]
    replay.searched = {"mode": mode, "top5": [h.session_id or "" for h in hits[:5] if searched], "steps": steps,
                       "search": [(h.id, h.session_id or "", h.type, round(h.score, 4), fate[h.id],
                                   h.id in old) for h in hits]}


def issue_recall(injected: list[str], top5: list[str], gold: set[str]) -> float:
    """Recall@5 as issue 26 defines it: a gold session among the injected items, or in the top 5 of the same
    search where fewer than 5 are injected."""
    return 1.0 if any(s in gold for s in injected[:5]) or (
        len(injected) < 5 and any(s in gold for s in top5[:5])) else 0.0


def miss_cause(searched: dict[str, Any], injected: list[str], baselines: set[str], gold: set[str]) -> str | None:
    """Why the prompt hook injected no gold session where BM25's or keyword mode's top 5 holds one: the fate of
    the gold hits in the hook's search, or the first of its rules (SEARCH_STEPS) that left gold out of its top 5;
    None when no baseline found one or the hook did."""
    if any(s in gold for s in injected) or not baselines & gold:
        return None
    fates = sorted({fate for _, s, _, _, fate, _ in searched.get("search", []) if s in gold})
    if fates:
        return "search held it; left out: " + ", ".join(fates)
    steps = searched.get("steps", {})
    if not any(s in gold for s in steps.get("keyword", [])):
        return "keyword mode's top 5 lacks it (BM25's holds it)"
    lost = next((name for name, top in steps.items() if not any(s in gold for s in top)), "search past its top 5")
    return f"lost at: {lost}"


def shown_some(db: sqlite3.Connection, session: str) -> bool:
    return db.execute("SELECT 1 FROM access_log WHERE session_id = ? AND kind LIKE 'inject%' LIMIT 1",
                      (session,)).fetchone() is not None


def measure_hooks(replay: Replay, c: Commit, gold: set[str], got: dict[str, str],
                  points: dict[str, dict[str, list]]) -> None:
    """What the plugin's hooks gave the commit's session, scored. At the prompt, `plugin` is the issue's
    recall@5: a gold session among the injected items, or, where fewer than 5 were injected, among the top 5
    of the hook's own search; "plugin injected only" is the injected items alone."""
    db = replay.ws.db
    for point in ("prompt", "point_of_action", "session_start"):
        text = got.get(point, "")
        ids = [int(a or b) for a, b in _ID.findall(text)]
        sessions = session_of(db, ids)
        if point == "session_start" and got.get("handoff_session"):  # the handoff is one item: its session's
            sessions = [got["handoff_session"], *sessions]
        row = scored(sessions, gold, len(text))
        if point == "session_start":
            row["handoff"] = 1.0 if HANDOFF_HEAD in text else 0.0
            row["parts"] = start_parts(text)
        if point == "prompt":
            points[point].setdefault("plugin injected only", []).append(dict(row))
            row["recall"] = issue_recall(sessions, replay.searched.get("top5", []), gold)
            cause = miss_cause(replay.searched, sessions, replay.baselines, gold)
            if cause:
                replay.misses[cause] = replay.misses.get(cause, 0) + 1
            if replay.dump and replay.dump[-1]["sha"] == c.sha:
                types = dict(db.execute(f"SELECT id, type FROM memories WHERE id IN ({','.join('?' * len(ids))})",
                                        ids).fetchall()) if ids else {}
                replay.dump[-1]["prompt"] = {"injected": [(i, s, types.get(i, "")) for i, s in zip(ids, sessions,
                                                                                                   strict=True)],
                                             **replay.searched}
        points[point].setdefault("plugin", []).append(row)
        if point == "point_of_action" and replay.dump and "point" in replay.dump[-1]:
            replay.dump[-1]["point"]["plugin"] = session_of(db, ids)


def print_table(r: dict[str, Any]) -> None:
    print(f"{r['repo']}: {r['sessions']} sessions replayed, {r['questions']} questions "
          f"(replay {r['replay_seconds']} s; {machine_line(machine())})")
    for point in ("prompt", "point_of_action", "session_start"):
        for method, s in r[point].items():
            print(f"  {point:<16} {method:<13} recall@5 {s['recall_at_5']!s:>6} {s['ci95']!s:<16} "
                  f"precision {s['precision']!s:>6}  chars {s['chars']!s:>7} (median {s['chars_median']!s})  "
                  f"n={s['n']}" + (f"  handoff shown {s['handoff_shown']} (chars median with one "
                                   f"{s['chars_median_with_handoff']}; parts' mean {s['parts_mean']})"
                                   if "handoff_shown" in s else ""))
    for pair, d in r["prompt_differences"].items():
        print(f"  prompt recall@5 {pair}: {d['diff']} {d['ci95']} better {d['better']}, worse {d['worse']}")
    for cause, n in sorted(r["prompt_misses"].items(), key=lambda x: -x[1]):
        print(f"  prompt: no gold session injected where a baseline's top 5 holds one, {n}x: {cause}")
    print(f"  staleness: {r['staleness']}")


def main() -> None:
    ap = arguments(__doc__)
    ap.add_argument("--repo", required=True, help="a git directory or a bundle")
    ap.add_argument("--commits", type=int, default=200)
    ap.add_argument("--embedder", default="auto", help="the hybrid baseline's embedder ('' for none)")
    ap.add_argument("--keep", help="work in this folder and keep it")
    ap.add_argument("--keyword-weights", default="", help="keyword mode's title,content,tags weights to try too at "
                    "the prompt, ';' between them (\"1,1,1;0,1,0\")")
    ap.add_argument("--keyword-variants", default="", help="keyword mode with some of its additions taken away, "
                    "ranked too at the prompt, ';' between variants, '+' within one (\"importance=off;query=words;"
                    "weights=1,1,1\": scripts/bench/common.py keyword_variant)")
    ap.add_argument("--dump", help="write each question's gold sessions and ranked lists (top 20 of keyword "
                    "mode and hybrid: session, type, score; the point of action's whole ranking; what the prompt "
                    "hook injected and its own search, each hit's fate) to this JSONL file")
    ap.add_argument("--point-variants", action="store_true", help="the point of action's ranking with other "
                    "weights for a memory whose code changed since, beside the hook's (POINT_VARIANTS)")
    args = ap.parse_args()
    variants = [f"weights={w.strip()}" for w in args.keyword_weights.split(";") if w.strip()]
    variants += [v.strip() for v in args.keyword_variants.split(";") if v.strip()]
    result = run(args.repo, args.commits, args.embedder or None, args.keep, variants, args.dump, args.point_variants)
    if args.json:
        print_table(result)
        print(json.dumps(result))
    else:
        print_table(result)


if __name__ == "__main__":
    main()
