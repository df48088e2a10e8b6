"""Which extractor the user chose, and the one-line notices that make paid extraction visible at SessionStart.

No paid model call happens until the user has chosen once: `memory config extraction anthropic|ollama|
heuristic|off` (or the viewer's stats page) records the choice in `<data dir>/extraction.json`, and an
explicit MEMORY_EXTRACTOR (anything but `auto`) counts as one too. Until then the offline heuristic runs,
and the first SessionStart with an API key in the environment says so in one line: the provider, the
daily budget and how to choose. The first SessionStart of a day after a day with paid spend carries one
receipt line. Hot path: standard library only, one small file read per SessionStart.
"""

from __future__ import annotations

import os
import sqlite3
import time

from memory.base.config import data_home, env, env_int
from memory.fastpath import jsonlite as json  # not the json package: it imports re (~5-10 ms a hook)

FILE = "extraction.json"
CHOICES = ("anthropic", "ollama", "heuristic", "off")
HOW = "`memory config extraction anthropic|ollama|heuristic|off` (or the viewer's stats page)"
RECEIPT_DAYS = 7  # a receipt looks back this many days for unreported spend


def _path(home: str | None) -> str:
    return os.path.join(home or data_home(), FILE)


def load(home: str | None = None) -> dict[str, object]:
    try:
        with open(_path(home), encoding="utf-8") as fh:
            data = json.loads(fh.read())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save(home: str | None, data: dict[str, object]) -> None:
    """Write the whole file at once (a reader never sees half of it)."""
    path = _path(home)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, json.dumps(data).encode())
    finally:
        os.close(fd)
    os.replace(tmp, path)


def choose(choice: str, home: str | None = None, by: str = "cli") -> None:
    """Record the user's choice (a person's command or the viewer, never a hook or the model)."""
    if choice not in CHOICES:
        raise ValueError(f"unknown extractor {choice!r}: one of {', '.join(CHOICES)}")
    data = load(home)
    data.update(choice=choice, chosen_at=time.time(), chosen_by=by)
    _save(home, data)


def choice(home: str | None = None) -> tuple[str, str]:
    """(the extractor in force, where it comes from): an explicit MEMORY_EXTRACTOR, the recorded choice,
    else `heuristic` with source `default` (no choice yet: nothing paid runs)."""
    from_env = (env("MEMORY_EXTRACTOR") or "auto").strip().lower()
    if from_env not in ("", "auto"):
        return from_env, "MEMORY_EXTRACTOR"
    chosen = load(home).get("choice")
    if chosen in CHOICES:
        return str(chosen), "memory config extraction"
    return "heuristic", "default"


def paid_configured() -> bool:
    """Whether a paid provider could run here: an Anthropic key in the environment."""
    return bool(os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN"))


def _day(offset_days: int, now: float | None = None) -> str:
    return time.strftime("%Y-%m-%d", time.localtime((now or time.time()) - offset_days * 86400))


def paid_by_day(home: str | None, days: list[str]) -> dict[str, int]:
    """Paid tokens per local day across every project database under the data dir (os.listdir, not glob:
    glob imports re, which a hook cannot afford)."""
    root = os.path.join(home or data_home(), "projects")
    out: dict[str, int] = {}
    try:
        names = os.listdir(root)
    except OSError:
        return out
    marks = ", ".join("?" * len(days))
    for name in names:
        path = os.path.join(root, name, "memory.db")
        if not os.path.isfile(path):
            continue
        try:
            db = sqlite3.connect(path, timeout=1)
            try:
                rows = db.execute(f"SELECT day, sum(input_tokens + output_tokens) FROM extractions WHERE paid = 1 "
                                  f"AND day IN ({marks}) GROUP BY day", days).fetchall()
            finally:
                db.close()
        except sqlite3.Error:  # a database that predates the table, or is busy: no receipt from it today
            continue
        for day, tokens in rows:
            out[day] = out.get(day, 0) + int(tokens or 0)
    return out


def _receipt(data: dict[str, object], home: str | None, now: float | None) -> str:
    """The receipt line of the newest earlier day with paid spend not reported yet ('' when none)."""
    since = str(data.get("receipt_through") or "")
    days = [d for d in (_day(i, now) for i in range(1, RECEIPT_DAYS + 1)) if d > since]
    spent = {d: n for d, n in paid_by_day(home, days).items() if n > 0} if days else {}
    if not spent:
        return ""
    day = max(spent)
    when = "yesterday" if day == _day(1, now) else f"on {day}"
    budget = max(0, env_int("MEMORY_DAILY_TOKEN_BUDGET"))
    share = f", {round(100 * spent[day] / budget)}% of the daily budget" if budget else ""
    return f"memory: {spent[day]:,} paid extraction tokens {when}{share} (`memory stats` shows them per day)"


def _notice() -> str:
    budget = max(0, env_int("MEMORY_DAILY_TOKEN_BUDGET"))
    return (f"memory: session learnings are extracted offline; Claude ({env('MEMORY_ANTHROPIC_MODEL')}, your "
            f"API key, at most {budget:,} tokens a day) runs only once you choose it: {HOW}")


def session_start_lines(home: str | None = None, now: float | None = None) -> list[str]:
    """The lines for the user at SessionStart: the consent notice once, and a receipt once a day."""
    data = load(home)
    today = _day(0, now)
    lines: list[str] = []
    changed = False
    if paid_configured() and choice(home)[1] == "default" and not data.get("noticed_at"):
        lines.append(_notice())
        data["noticed_at"] = now or time.time()
        changed = True
    if data.get("receipt_checked") != today:  # the databases are read at most once a day
        line = _receipt(data, home, now)
        if line:
            lines.append(line)
        data["receipt_checked"] = today
        data["receipt_through"] = _day(1, now)
        changed = True
    if changed:
        try:
            _save(home, data)
        except OSError:  # a read-only data dir: the line is shown again next time, which is the lesser harm
            pass
    return lines
