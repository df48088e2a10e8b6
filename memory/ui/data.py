"""What the viewer's pages show, read from one project's database: search hits, a memory with its provenance
and injections, sessions as timelines, the daily series the stats plots draw."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from typing import Any

from memory import store
from memory.base import fence
from memory.base.project import Project
from memory.present import why
from memory.recall.search import Filters, Hit
from memory.store import symbols
from memory.store.edit import is_pinned
from memory.store.workspace import Workspace, all_projects
from memory.team.outbox import link_row

SEARCH_KIND = "ui-search"  # access_log's kind for the viewer's searches (memory/present/why.py LABELS)
DAY = "date({col}, 'unixepoch', 'localtime')"  # the local day of a unix time, as `memory stats` counts days


class Places:
    """The data dir's projects, each workspace opened once per thread: the pages run in Starlette's
    threadpool, and an sqlite3 connection must stay in the thread that made it. A thread's workspaces live
    in a threading.local, dropped (their connections closed) when the thread ends."""

    def __init__(self, home: str, default_key: str | None = None) -> None:
        self.home = home
        self.default_key = default_key
        self._local = threading.local()

    @property
    def _open(self) -> dict[str, Workspace]:
        """This thread's open workspaces, by project key."""
        if not hasattr(self._local, "open"):
            self._local.open = {}
        return self._local.open

    def projects(self) -> list[dict[str, Any]]:
        """Projects that have a database, the most recently written first."""
        out = []
        for meta in all_projects(self.home):
            path = os.path.join(self.home, "projects", str(meta.get("key")), "memory.db")
            if os.path.exists(path):
                out.append({**meta, "mtime": max(os.path.getmtime(p) for p in (path, path + "-wal")
                                                 if os.path.exists(p))})
        return sorted(out, key=lambda m: -m["mtime"])

    def get(self, key: str | None) -> Workspace | None:
        known = {m["key"]: m for m in self.projects()}
        key = key if key in known else self.default_key if self.default_key in known else next(iter(known), None)
        if key is None:
            return None
        if key not in self._open:
            meta = known[key]
            self._open[key] = Workspace(Project(key, meta.get("name") or key, meta.get("root") or "",
                                                meta.get("remote")), self.home)
        return self._open[key]

    def close(self) -> None:
        """Close this thread's connections (the server's, when it stops)."""
        while self._open:
            self._open.popitem()[1].close()


def _flag_clause(flag: str) -> str:
    return {"flagged": " AND flags != ''", "clean": " AND flags = ''"}.get(flag, "")


def browse(db: sqlite3.Connection, project: str, filters: Filters, flag: str, limit: int) -> list[sqlite3.Row]:
    """No query: the newest memories that pass the filters. `project = ?` lets SQLite walk the index on
    (project, created_at) backwards instead of sorting every row (100,000 memories: ~35 ms of CPU a page
    without it)."""
    where, args = ["project = ?", "(expires_at IS NULL OR expires_at > ?)"], [project, time.time()]
    if filters.types:
        where.append(f"type IN ({','.join('?' * len(filters.types))})")
        args += filters.types
    for clause, value in (("created_at >= ?", filters.since), ("created_at < ?", filters.until),
                          ("session_id = ?", filters.session_id)):
        if value is not None:
            where.append(clause)
            args.append(value)
    return db.execute(f"""SELECT id, type, title, content, created_at, session_id, flags, tags, 0.0 AS score
                          FROM memories WHERE {' AND '.join(where)}{_flag_clause(flag)}
                          ORDER BY created_at DESC, id DESC LIMIT ?""", [*args, limit]).fetchall()


def search(ws: Workspace, query: str, mode: str, filters: Filters, flag: str, limit: int) -> tuple[list[Any], str]:
    """Hits for a query (hybrid as `memory search` runs it, or keyword), then the trust-flag filter; or the
    newest memories without one. Returns rows (dict-like) and the line saying what answered."""
    if not query.strip():
        return [dict(r) for r in browse(ws.db, ws.project.key, filters, flag, limit)], "newest first"
    from memory.recall import hybrid, layers

    hits, answered = layers.search(ws, query, limit=limit * 3 if flag != "any" else limit, mode=mode, timeout=2.0,
                                   in_process=hybrid.in_process, filters=filters, wait=layers.STARTING_WAIT_S)
    prov = store.provenance(ws.db, [h.id for h in hits])
    rows = [_hit_row(h, prov.get(h.id)) for h in hits]
    if flag != "any":
        rows = [r for r in rows if bool(r["flags"]) == (flag == "flagged")][:limit]
    shown = {r["id"] for r in rows}
    layers.log_search(ws, [h for h in hits if h.id in shown], query, answered.mode, kind=SEARCH_KIND)
    return rows, answered.line()


def _hit_row(h: Hit, prov: Any) -> dict[str, Any]:
    flagged = fence.is_flagged(prov, h.title, h.content)
    return {"id": h.id, "type": h.type, "title": h.title, "content": h.content, "created_at": h.created_at,
            "session_id": h.session_id, "score": h.score, "flags": fence.FLAG if flagged else "",
            "tags": prov["tags"] if prov is not None else ""}


def memory(ws: Workspace, memory_id: int) -> dict[str, Any] | None:
    """One memory with everything a person checks before trusting it."""
    row = ws.db.execute("SELECT * FROM memories WHERE id = ?", (memory_id,)).fetchone()
    if row is None:
        return None
    out = dict(row)
    out["origin_label"] = fence.row_label(row)
    out["host"] = why.host_of(ws.db, row["session_id"])  # the coding agent it came from
    out["flagged"] = fence.is_flagged(row, row["title"], row["content"])
    out["pinned"] = is_pinned(row["tags"])
    out["stale"] = symbols.stale(ws.db, [memory_id]).get(memory_id)  # the code it is about changed since
    out["team_linked"] = link_row(ws.db) is not None  # unlinked, sharing only sets the scope
    out["recalls"] = why.recalls(ws.db, memory_id, limit=200)  # injections and searches, with score parts
    out["searches"] = ws.db.execute("SELECT count(*) FROM access_log WHERE memory_id = ? AND kind NOT LIKE "
                                    "'inject%'", (memory_id,)).fetchone()[0]
    return out


def sessions(ws: Workspace, limit: int = 200) -> list[dict[str, Any]]:
    return [dict(r) for r in ws.db.execute(
        "SELECT * FROM sessions WHERE project = ? ORDER BY started_at DESC LIMIT ?", (ws.project.key, limit))]


def timeline(ws: Workspace, session_id: str) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """A session's events in order: prompts, tool calls and other memories, handoffs (a `compact` one,
    written by PreCompact, marks a compaction), and what was injected at SessionStart and at each prompt."""
    db = ws.db
    head = db.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
    events: list[dict[str, Any]] = []
    for r in db.execute("SELECT id, type, title, content, origin, origin_detail, created_at FROM memories "
                        "WHERE session_id = ? ORDER BY created_at, id LIMIT 5000", (session_id,)):
        kind = "prompt" if r["type"] == "prompt" else "tool" if r["origin"] == "tool" else "memory"
        events.append({"at": r["created_at"], "kind": kind, "title": r["title"], "id": r["id"],
                       "detail": r["origin_detail"] or r["type"], "text": r["content"]})
    for r in db.execute("SELECT trigger, content, created_at FROM handoffs WHERE session_id = ? ORDER BY created_at",
                        (session_id,)):
        kind = "compaction" if r["trigger"] == "compact" else "handoff"
        events.append({"at": r["created_at"], "kind": kind, "title": f"handoff ({r['trigger']})",
                       "detail": r["trigger"], "text": r["content"]})
    events += _injections(db, session_id)
    events.sort(key=lambda e: (e["at"], e["kind"] != "context"))
    return (dict(head) if head else None), events


def _injections(db: sqlite3.Connection, session_id: str) -> list[dict[str, Any]]:
    """Each injection at SessionStart or for a prompt as one event: the memories it named, in rank order,
    and the exact text the hook gave the model (the `injections` table, memory/present/why.py). Older
    injections, recorded before that table, are grouped from access_log and have no text."""
    groups: dict[Any, dict[str, Any]] = {}
    for inj in why.session_injections(db, session_id):
        if inj["kind"].startswith("inject"):
            groups[inj["id"]] = {"at": inj["at"], "kind": "context", "id": None, "memories": [],
                                 "title": _CONTEXT.get(inj["kind"], inj["kind"]), "query": inj["query"],
                                 "detail": f"{inj['kind']}, {inj['mode']}" if inj["mode"] else inj["kind"],
                                 "text": inj["text"] or ""}
    for r in db.execute("""SELECT a.kind, a.at, a.query, a.memory_id, a.injection_id, a.parts, m.title, m.type
                           FROM access_log a LEFT JOIN memories m ON m.id = a.memory_id
                           WHERE a.session_id = ? AND a.kind LIKE 'inject%' ORDER BY a.at, a.rank, a.id""",
                        (session_id,)):
        key = r["injection_id"] if r["injection_id"] in groups else (r["kind"], r["at"])
        g = groups.setdefault(key, {"at": r["at"], "kind": "context", "id": None, "memories": [], "text": "",
                                    "title": _CONTEXT.get(r["kind"], r["kind"]), "query": r["query"],
                                    "detail": r["kind"]})
        g["memories"].append({"id": r["memory_id"], "title": r["title"] or "(deleted)", "type": r["type"] or "",
                              "parts": why.parts_line(_parts(r["parts"]))})
    return list(groups.values())


_CONTEXT = {"inject-start": "context at session start", "inject-prompt": "context for a prompt",
            "inject-edit": "context before an edit"}


def _parts(raw: str | None) -> dict[str, float]:
    import json

    try:
        parts = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return {k: parts[k] for k in why.ORDER if k in parts}


def _per_day(db: sqlite3.Connection, sql: str, args: tuple[Any, ...] = ()) -> dict[str, Any]:
    return {r[0]: r[1] for r in db.execute(sql, args)}


def choose_extraction(home: str, choice: str) -> str:
    """Record the person's choice of extractor from the stats page; what was done, in words."""
    from memory.store import consent

    try:
        consent.choose(choice, home, by="viewer")
    except ValueError as exc:
        return f"not changed: {exc}"
    return f"extraction: {choice}"


def stats_days(days: int) -> list[str]:
    """The last `days` local days, oldest first."""
    return [time.strftime("%Y-%m-%d", time.localtime(time.time() - i * 86400)) for i in range(days - 1, -1, -1)]


def stats(ws: Workspace, days: int = 30) -> dict[str, Any]:
    """The series the stats page plots, over the last `days` local days."""
    from memory.store import budget, consent, limits
    from memory.store.evict import usage

    db, since = ws.db, time.time() - days * 86400
    day_list = stats_days(days)
    by_type: dict[str, dict[str, int]] = {}
    for r in db.execute(f"SELECT {DAY.format(col='created_at')} AS d, type, count(*) FROM memories "
                        "WHERE created_at >= ? GROUP BY d, type", (since,)):
        by_type.setdefault(r[1], {})[r[0]] = r[2]
    saved = _per_day(db, f"SELECT {DAY.format(col='at')} AS d, sum(original_tokens - outline_tokens) "
                         "FROM token_savings WHERE at >= ? GROUP BY d", (since,))
    paid = _per_day(db, "SELECT day, sum(input_tokens + output_tokens) FROM extractions "
                        "WHERE at >= ? AND paid = 1 GROUP BY day", (since,))
    local = _per_day(db, "SELECT day, sum(input_tokens + output_tokens) FROM extractions "
                         "WHERE at >= ? AND paid = 0 GROUP BY day", (since,))
    used = usage(ws.home)
    total = db.execute("SELECT count(*) FROM memories").fetchone()[0]
    return {"days": day_list, "by_type": by_type, "outline_saved": saved, "extraction_paid": paid,
            "extraction_local": local, "budget": budget.daily_budget(), "spent_today": budget.spent_today(ws.home),
            "storage": used, "cap_bytes": limits.max_bytes(), "memories": total,
            "spend": budget.spend_lines(budget.spend_by_day(ws.home, days)), "extractor": consent.choice(ws.home),
            "cap_memories": limits.max_memories(),
            "pinned": db.execute("SELECT count(*) FROM memories WHERE instr(',' || tags || ',', ',pinned,') > 0")
            .fetchone()[0]}


_MARK = "[REDACTED:"


def _where(origin: str | None, detail: str | None, source: str | None) -> str:
    """Which hook (or command) caught a memory's secrets, from its provenance."""
    if origin == "tool":
        return f"PostToolUse ({detail})" if detail else "PostToolUse"
    if origin == "file":
        return "PostToolUse (Read)"
    if origin == "user":
        return "UserPromptSubmit" if detail in (None, "", "prompt") else f"user ({detail})"
    return origin or source or "recorded"


def _marks(title: str, content: str) -> dict[str, int]:
    """Markers by kind in one memory: a title is mostly the content's first line, so a secret redacted in
    both counts once (the larger count of the two, per kind)."""
    counts: list[dict[str, int]] = []
    for text in (title, content):
        found: dict[str, int] = {}
        for piece in text.split(_MARK)[1:]:
            kind = piece.split("]", 1)[0][:40]
            found[kind] = found.get(kind, 0) + 1
        counts.append(found)
    return {k: max(counts[0].get(k, 0), counts[1].get(k, 0)) for k in {*counts[0], *counts[1]}}


def redactions(ws: Workspace) -> dict[str, Any]:
    """Counts of the privacy filter's `[REDACTED:<kind>]` markers in what is stored, by kind, by the hook
    that caught them and by day: the markers hold no value, and neither does this. `<private>` text leaves
    no marker (it is removed whole), so it cannot be counted here."""
    by_kind: dict[str, int] = {}
    by_where: dict[tuple[str, str], int] = {}
    by_day: dict[str, dict[str, int]] = {}
    rows = list(ws.db.execute(
        f"""SELECT title, content AS text, origin, origin_detail, source, {DAY.format(col='created_at')} AS d
            FROM memories WHERE instr(content, ?) > 0 OR instr(title, ?) > 0""", (_MARK, _MARK)))
    rows += [{"title": "", "text": r["content"], "origin": f"handoff ({r['trigger']})", "origin_detail": None,
              "source": None, "d": r["d"]} for r in ws.db.execute(
        f"SELECT content, trigger, {DAY.format(col='created_at')} AS d FROM handoffs WHERE instr(content, ?) > 0",
        (_MARK,))]
    for r in rows:
        where = _where(r["origin"], r["origin_detail"], r["source"])
        for kind, n in _marks(r["title"], r["text"]).items():
            by_kind[kind] = by_kind.get(kind, 0) + n
            by_where[(kind, where)] = by_where.get((kind, where), 0) + n
            day = by_day.setdefault(kind, {})
            day[r["d"]] = day.get(r["d"], 0) + n
    return {"by_kind": dict(sorted(by_kind.items(), key=lambda kv: -kv[1])), "by_day": by_day,
            "by_where": sorted(((k, w, n) for (k, w), n in by_where.items()), key=lambda x: (-x[2], x[0], x[1])),
            "total": sum(by_kind.values())}

