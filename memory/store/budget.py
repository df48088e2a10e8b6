"""The daily token budget of paid extraction, and the record of what every extraction spent.

Spend is recorded per project (the `extractions` table of each project database), but money is the
user's, not the project's: the budget is checked against today's paid tokens summed over every project
in the data dir. "Today" is the local date. Local models (Ollama) are recorded too, and not counted.
"""

from __future__ import annotations

import glob
import os
import sqlite3
import time

from memory.base.config import data_home, env_int
from memory.store.db import Tx


def today(now: float | None = None) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(now))


def daily_budget() -> int:
    return max(0, env_int("MEMORY_DAILY_TOKEN_BUDGET"))


def _paid_today(db: sqlite3.Connection, day: str) -> int:
    try:
        row = db.execute("SELECT coalesce(sum(input_tokens + output_tokens), 0) FROM extractions "
                         "WHERE day = ? AND paid = 1", (day,)).fetchone()
    except sqlite3.OperationalError:  # a database that predates the extractions table
        return 0
    return int(row[0])


def spent_today(home: str | None = None, day: str | None = None) -> int:
    """Paid tokens spent today across every project database under the data dir."""
    day = day or today()
    total = 0
    for path in glob.glob(os.path.join(home or data_home(), "projects", "*", "memory.db")):
        try:
            db = sqlite3.connect(path, timeout=5)  # read only in practice; "mode=ro" fails on a WAL file
        except sqlite3.Error:
            continue
        try:
            total += _paid_today(db, day)
        except sqlite3.Error:
            pass
        finally:
            db.close()
    return total


def remaining(home: str | None = None) -> int:
    return max(0, daily_budget() - spent_today(home))


def record(db: sqlite3.Connection, *, session_id: str, trigger: str, provider: str, model: str, status: str,
           paid: bool, input_tokens: int = 0, output_tokens: int = 0, learnings: int = 0, offset_from: int = 0,
           offset_to: int = 0, progress: int = 0, error: str | None = None, summary: str | None = None) -> None:
    from memory.base.log import filtered

    error = filtered(error, 500) if error else None  # it may quote what the provider read: filtered, then cut
    now = time.time()
    with Tx(db):
        db.execute(
            """INSERT INTO extractions (session_id, trigger, provider, model, status, paid, input_tokens,
               output_tokens, learnings, offset_from, offset_to, progress, summary, error, day, at)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            (session_id, trigger, provider, model, status, int(paid), input_tokens, output_tokens, learnings,
             offset_from, offset_to, progress, summary or None, error, today(now), now),
        )


def project_spend(db: sqlite3.Connection) -> dict[str, object]:
    """For `memory stats`: extractions by provider and status, tokens today and in total."""
    day = today()
    by_provider: dict[str, dict[str, int]] = {}
    for r in db.execute("""SELECT provider, status, count(*) AS n, sum(input_tokens) AS tin,
                           sum(output_tokens) AS tout FROM extractions GROUP BY provider, status"""):
        p = by_provider.setdefault(r["provider"], {"runs": 0, "ok": 0, "failed": 0, "input_tokens": 0,
                                                   "output_tokens": 0})
        p["runs"] += r["n"]
        if r["status"] in ("ok", "empty"):
            p["ok"] += r["n"]
        elif r["status"] == "failed":
            p["failed"] += r["n"]
        p["input_tokens"] += r["tin"] or 0
        p["output_tokens"] += r["tout"] or 0
    learnings = db.execute("SELECT coalesce(sum(learnings), 0) FROM extractions WHERE status = 'ok'").fetchone()[0]
    return {
        "by_provider": by_provider,
        "learnings": int(learnings),
        "paid_tokens_today": _paid_today(db, day),
        "paid_tokens_total": int(db.execute("SELECT coalesce(sum(input_tokens + output_tokens), 0) FROM "
                                            "extractions WHERE paid = 1").fetchone()[0]),
        "sessions_extracted": int(db.execute("SELECT count(DISTINCT session_id) FROM extractions WHERE status "
                                             "IN ('ok', 'empty')").fetchone()[0]),
    }


def spend_by_day(home: str | None = None, days: int = 7) -> list[dict[str, object]]:
    """Tokens per local day and provider over the last `days` days, every project together, newest first:
    what `memory stats`, `memory doctor` and the viewer's stats page show (paid and local apart)."""
    since = time.time() - days * 86400
    totals: dict[tuple[str, str, int], list[int]] = {}
    for path in glob.glob(os.path.join(home or data_home(), "projects", "*", "memory.db")):
        try:
            db = sqlite3.connect(path, timeout=5)
            try:
                rows = db.execute("""SELECT day, provider, paid, count(*), sum(input_tokens + output_tokens)
                                     FROM extractions WHERE at >= ? AND status != 'budget'
                                     GROUP BY day, provider, paid""", (since,)).fetchall()
            finally:
                db.close()
        except sqlite3.Error:
            continue
        for day, provider, paid, calls, tokens in rows:
            t = totals.setdefault((day, provider, int(paid)), [0, 0])
            t[0] += int(calls)
            t[1] += int(tokens or 0)
    return [{"day": d, "provider": p, "paid": bool(paid), "runs": c, "tokens": t}
            for (d, p, paid), (c, t) in sorted(totals.items(), key=lambda kv: (kv[0][0], kv[0][1]), reverse=True)]


def spend_lines(rows: list[dict[str, object]]) -> list[str]:
    """One line per day: each provider's runs and tokens (paid ones against the budget)."""
    by_day: dict[str, list[str]] = {}
    cap = daily_budget()
    for r in rows:
        tokens = int(r["tokens"])  # type: ignore[call-overload]
        cost = f"{tokens:,} paid tokens" + (f" ({round(100 * tokens / cap)}% of the budget)" if cap else "") \
            if r["paid"] else f"{tokens:,} tokens (free)"
        by_day.setdefault(str(r["day"]), []).append(f"{r['provider']} {r['runs']} runs, {cost}")
    return [f"{day}  {'; '.join(parts)}" for day, parts in by_day.items()]
