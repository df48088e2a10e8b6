"""Figures about a project's memory: counts by type, sessions, queue, database size."""

from __future__ import annotations

import os
from typing import Any

from memory.outline.cache import savings
from memory.store import queue
from memory.store.workspace import Workspace


def project_stats(ws: Workspace) -> dict[str, Any]:
    db = ws.db
    by_type = {r["type"]: r["n"] for r in db.execute(
        "SELECT type, count(*) AS n FROM memories GROUP BY type ORDER BY n DESC")}
    sessions = {r["status"]: r["n"] for r in db.execute("SELECT status, count(*) AS n FROM sessions GROUP BY status")}
    size = sum(os.path.getsize(ws.db_path + s) for s in ("", "-wal") if os.path.exists(ws.db_path + s))
    return {
        "project": ws.project.name,
        "project_key": ws.project.key,
        "root": ws.project.root,
        "database": ws.db_path,
        "database_bytes": size,
        "memories": sum(by_type.values()),
        "by_type": by_type,
        "sessions": sessions,
        "tool_calls": db.execute("SELECT coalesce(sum(tool_call_count), 0) FROM sessions").fetchone()[0],
        "handoffs": db.execute("SELECT count(*) FROM handoffs").fetchone()[0],
        "injections": db.execute("SELECT count(*) FROM access_log WHERE kind LIKE 'inject%'").fetchone()[0],
        "injected_tokens": injected_tokens(ws),
        "queue": queue.counts(db),
        "outlines": savings(db),
        "outlines_last_session": savings(db, _last_session(ws)),
        "outlines_cached_files": db.execute("SELECT count(*) FROM file_signatures").fetchone()[0],
        "extraction": _extraction(ws),
    }


def injected_tokens(ws: Workspace, last: int = 200) -> dict[str, dict[str, int]]:
    """What the hooks gave the model, by kind (session start, prompt, before an edit): how many times and the
    median and largest size in tokens, over the last `last` injections of each kind."""
    from parser.tokens import estimate_tokens

    out: dict[str, dict[str, int]] = {}
    kinds = [r[0] for r in ws.db.execute("SELECT DISTINCT kind FROM injections WHERE kind LIKE 'inject%'")]
    for kind in kinds:
        sizes = sorted(estimate_tokens(r[0] or "") for r in ws.db.execute(
            "SELECT text FROM injections WHERE kind = ? ORDER BY id DESC LIMIT ?", (kind, last)))
        total = ws.db.execute("SELECT count(*) FROM injections WHERE kind = ?", (kind,)).fetchone()[0]
        out[kind] = {"count": total, "median_tokens": sizes[len(sizes) // 2] if sizes else 0,
                     "max_tokens": sizes[-1] if sizes else 0}
    return out


def _extraction(ws: Workspace) -> dict[str, Any]:
    """Which extractors ran and what they cost (memory/store/budget.py); the budget is for all projects."""
    from memory.store import budget

    data = budget.project_spend(ws.db)
    data["budget_daily_tokens"] = budget.daily_budget()
    data["budget_spent_today_all_projects"] = budget.spent_today(ws.home)
    data["by_day_all_projects"] = budget.spend_by_day(ws.home)
    return data


def _last_session(ws: Workspace) -> str:
    row = ws.db.execute("SELECT session_id FROM token_savings ORDER BY at DESC LIMIT 1").fetchone()
    return row["session_id"] if row else ""
