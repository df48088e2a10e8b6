"""`memory import`: Claude Code transcripts of past sessions become sessions, observations and (with
--extract) learnings, as if the plugin had been installed when they ran.

The transcript is turned into the hook events it implies (memory/hook/replay.py) and each event goes through
the same capture code the hooks use (memory/capture/), in this process rather than one hook process
per event. Idempotent and resumable: the `imports` table remembers, per file, how many events were
applied, committed in the same transaction as their effects, so a killed import resumes at the first
event not yet applied and a finished file is skipped (unless it grew: a resumed session goes on).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

from memory import capture, store
from memory.base.bounds import bound
from memory.base.event import from_claude
from memory.base.privacy import clean
from memory.capture import hostlogs, summary, tools, transcript
from memory.capture.deciders import settle
from memory.capture.screen import screened
from memory.hook import replay
from memory.store import state as session_state
from memory.store.db import Tx
from memory.store.workspace import Workspace

IMPORT_SOURCES = {"prompt": "import:prompt", "assistant": "import:assistant"}
BATCH = 40  # events per transaction: one commit per batch, and the unit a killed import redoes


@dataclass
class FileResult:
    path: str
    session_id: str = ""
    status: str = ""  # imported, resumed, skipped, extracted, failed
    reason: str = ""
    events: int = 0
    observations: int = 0
    learnings: int = 0
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def find_transcripts(path: str) -> list[str]:
    """A file, or the *.jsonl in a folder and the folders under it (Codex CLI keeps its session logs by
    date: sessions/YYYY/MM/DD/rollout-*.jsonl), oldest first (so sessions are imported in order). Subagent
    transcripts (<session>/subagents/agent-*.jsonl) are not sessions of their own."""
    if os.path.isfile(path):
        return [path]
    if not os.path.isdir(path):
        return []
    files = [os.path.join(folder, n) for folder, dirs, names in os.walk(path) for n in names
             if n.endswith(".jsonl") and not n.startswith("agent-") and os.path.basename(folder) != "subagents"]
    return sorted(files, key=lambda p: (os.path.getmtime(p), p))


def _ts(event: dict[str, Any]) -> float | None:
    return transcript.parse_time(event.get("timestamp"))


def _capture_for(raw: dict[str, Any], sid: str, root: str) -> tuple[capture.Capture | None, int, int]:
    """The capture of one event, and how it counts (prompts, tool calls); None when the hooks ignore it. The
    event is bounded, typed and its texts filtered first, as the hooks do (memory/capture/screen.py)."""
    name = raw.get("hook_event_name")
    entry = replay.ENTRYPOINTS.get(str(name))
    if entry is None:
        return None, 0, 0
    event = screened(from_claude(entry, bound(raw)[0]))
    if name == "UserPromptSubmit" and event.prompt is not None:
        return capture.prompt_event(event.prompt, sid), 1, 0
    if entry == "post_tool_use" and event.tool:
        return tools.tool_event(event, root), 0, 1
    if name == "Stop":
        return capture.stop_event(event.last_message, sid), 0, 0
    return None, 0, 0


def _apply(ws: Workspace, sid: str, cap: capture.Capture, when: float | None, by_agent: str = "") -> int:
    """A capture's writes, like handlers.common.apply, but dated at the event and without exporting
    session-state.json (that file is the live session's, not an imported one's). Returns inserts.
    `by_agent`: why the importing process is the agent's (memory/base/provenance.py): then the file's
    prompts are no person's words (the model may have written the file)."""
    if cap.changes:
        def change(s: session_state.State) -> None:
            for fn in cap.changes:
                fn(s)

        session_state.update(ws, sid, change, export=False)
    for write in getattr(cap, "writes", []):
        write(ws.db)
    inserted = 0
    for m in cap.memories:
        m.created_at = m.created_at or when
        # Imported, and whose words they were (memory/capture/deciders.py): the user's prompts may hold decisions.
        m.source = IMPORT_SOURCES.get(m.source, "import")
        if by_agent and m.source == IMPORT_SOURCES["prompt"]:
            m.source, m.origin_detail = "import", f"imported by a process of the agent's: {by_agent}"[:200]
        if store.save(ws.db, ws.project.key, settle(m)).action == "inserted":
            inserted += 1
    return inserted


def _row(ws: Workspace, path: str) -> Any:
    return ws.db.execute("SELECT * FROM imports WHERE path = ?", (path,)).fetchone()


def _extracted(ws: Workspace, sid: str) -> bool:
    return ws.db.execute("SELECT 1 FROM extractions WHERE session_id = ? AND status IN ('ok', 'empty')",
                         (sid,)).fetchone() is not None


def import_file(ws: Workspace, path: str, *, extract: bool = False, force: bool = False,
                by_agent: str = "") -> FileResult:
    res = FileResult(os.path.abspath(path))
    path = res.path
    began = time.perf_counter()
    try:
        st = os.stat(path)
    except OSError as exc:
        res.status, res.reason = "failed", str(exc)
        return res
    row = _row(ws, path)
    if force and row is not None:
        with Tx(ws.db):
            ws.db.execute("DELETE FROM imports WHERE path = ?", (path,))
        row = None
    # Another client's log (Codex CLI, Gemini CLI) as the Claude Code lines it means.
    host, lines = hostlogs.claude_lines(replay.read_lines(path), hostlogs.folder_of(path))
    digest = transcript.from_lines(lines)
    digest.host = host
    sid = digest.session_id or os.path.splitext(os.path.basename(path))[0]
    res.session_id = sid
    if not lines or not (digest.prompts or digest.calls):
        res.status, res.reason = "skipped", "no conversation in the file"
        return res
    done_before = int(row["events_done"]) if row is not None else 0
    finished = row is not None and row["status"] == "done" and int(row["size"]) == st.st_size
    if row is None and not force:
        live = ws.db.execute("SELECT source FROM sessions WHERE id = ?", (sid,)).fetchone()
        if live is not None and live["source"] != "import":
            res.status, res.reason = "skipped", "recorded live by the hooks"
            return res
    if not finished:
        events = list(replay.transcript_events(lines, with_time=True))
        res.events = _apply_events(ws, path, sid, digest, events, done_before, st, by_agent)
        res.observations = _observations(ws, sid)
        res.status = "resumed" if done_before else "imported"
    else:
        res.status, res.reason = "skipped", "already imported"
    if extract and (not finished or not _extracted(ws, sid)):  # extraction itself skips what it has seen
        from memory.learn.run import extract_session

        outcome = extract_session(ws, sid, trigger="import", transcript_path=path, settle=False,
                                  created_at=digest.ended_at, by_agent=by_agent)
        res.learnings = outcome.learnings
        with Tx(ws.db):
            ws.db.execute("UPDATE imports SET learnings = ?, updated_at = ? WHERE path = ?",
                          (outcome.learnings, time.time(), path))
        if res.status == "skipped":
            res.status, res.reason = "extracted", ""
    res.seconds = round(time.perf_counter() - began, 3)
    return res


def _observations(ws: Workspace, sid: str) -> int:
    """Memories the import made for this session (dedup may have merged some into existing ones)."""
    return int(ws.db.execute("SELECT count(*) FROM memories WHERE session_id = ? AND source LIKE 'import%'",
                             (sid,)).fetchone()[0])


def _apply_events(ws: Workspace, path: str, sid: str, d: transcript.Digest, events: list[dict[str, Any]],
                  done_before: int, st: os.stat_result, by_agent: str = "") -> int:
    root = d.cwd or ws.project.root  # paths are shown relative to the folder the session ran in
    now = time.time()
    with Tx(ws.db):
        ws.db.execute(
            """INSERT INTO sessions (id, project, source, cwd, transcript_path, started_at, last_event_at, status,
               host) VALUES (?, ?, 'import', ?, ?, ?, ?, 'active', ?) ON CONFLICT(id) DO NOTHING""",
            (sid, ws.project.key, clean(d.cwd) if d.cwd else d.cwd, clean(path), d.started_at or st.st_mtime,
             d.ended_at or st.st_mtime, d.host),
        )
        ws.db.execute(
            """INSERT INTO imports (path, session_id, size, mtime, events_done, status, updated_at)
               VALUES (?, ?, ?, ?, ?, 'running', ?) ON CONFLICT(path) DO UPDATE SET
               size = excluded.size, mtime = excluded.mtime, status = 'running', updated_at = excluded.updated_at""",
            (path, sid, st.st_size, st.st_mtime, done_before, now),
        )
    applied = 0
    for start in range(done_before, len(events), BATCH):
        batch = events[start:start + BATCH]
        with Tx(ws.db):  # the batch's effects and its checkpoint commit together
            prompts = tools = 0
            for ev in batch:
                cap, p, t = _capture_for(ev, sid, root)
                if cap is None:
                    continue
                _apply(ws, sid, cap, _ts(ev), by_agent)
                prompts += p
                tools += t
            ws.db.execute("""UPDATE sessions SET prompt_count = prompt_count + ?, tool_call_count = tool_call_count
                             + ? WHERE id = ?""", (prompts, tools, sid))
            ws.db.execute("UPDATE imports SET events_done = ?, updated_at = ? WHERE path = ?",
                          (start + len(batch), time.time(), path))
        applied += len(batch)
    # The turn end and session end synthesised at the end of the file are not counted as done: if the
    # session is resumed the file grows, and those events then come (at the same place) from real lines.
    tail = sum(1 for ev in events[-2:] if ev.get("hook_event_name") in ("Stop", "SessionEnd"))
    state = session_state.load(ws, sid)
    with Tx(ws.db):
        ws.db.execute(
            """UPDATE sessions SET status = 'completed', ended_at = ?, last_event_at = ?, end_reason = 'import',
               summary = COALESCE(summary, ?) WHERE id = ?""",
            (d.ended_at or st.st_mtime, d.ended_at or st.st_mtime, summary.heuristic(state, root) or None, sid),
        )
        observations = _observations(ws, sid)
        ws.db.execute("""UPDATE imports SET status = 'done', observations = ?, events_done = ?, updated_at = ?
                         WHERE path = ?""", (observations, max(0, len(events) - tail), time.time(), path))
    return applied


def import_paths(ws: Workspace, files: list[str], *, extract: bool = False, force: bool = False,
                 progress: bool = True, by_agent: str = "") -> Iterator[FileResult]:
    """Import each file, with a tqdm progress bar on stderr (when `progress` and tqdm is installed)."""
    bar = None
    if progress:
        try:
            from tqdm import tqdm

            bar = tqdm(total=len(files), unit="session", file=sys.stderr, desc="import", dynamic_ncols=True)
        except ImportError:
            bar = None
    totals = {"sessions": 0, "observations": 0, "learnings": 0}
    try:
        for path in files:
            res = import_file(ws, path, extract=extract, force=force, by_agent=by_agent)
            if res.status in ("imported", "resumed"):
                totals["sessions"] += 1
            totals["observations"] += res.observations if res.status in ("imported", "resumed") else 0
            totals["learnings"] += res.learnings
            if bar is not None:
                bar.set_postfix(totals, refresh=False)
                bar.update(1)
            yield res
    finally:
        if bar is not None:
            bar.close()
