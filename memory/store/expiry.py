"""Expiring memories: `--expires 30d` on save, and the ids cleanup removes once the date has passed.

Search already skips expired memories (search.Filters); cleanup deletes them for good.
"""

from __future__ import annotations

import re
import sqlite3
import time
from datetime import datetime

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)\s*(s|m|min|h|d|w|mo|y)$")
_SECONDS = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 604800, "mo": 2592000, "y": 31536000}
NEVER = ("never", "none", "no", "off", "0")


def parse_expires(text: str, now: float | None = None) -> float | None:
    """'30d', '12h', '2w', '6mo', '1y' from now, or a date ('2027-01-31'); 'never' -> None.

    Raises ValueError with what to write instead."""
    value = text.strip().lower()
    if value in NEVER:
        return None
    now = time.time() if now is None else now
    m = _DURATION.match(value)
    if m:
        seconds = float(m.group(1)) * _SECONDS[m.group(2)]
        if seconds <= 0:
            raise ValueError("an expiry must be in the future: use e.g. 30d, 12h, 2w or a date")
        return now + seconds
    try:
        when = datetime.fromisoformat(text.strip()).timestamp()
    except ValueError:
        raise ValueError(f"cannot read {text!r} as an expiry: use a duration (30d, 12h, 2w, 6mo, 1y), "
                         "a date (2027-01-31) or 'never'") from None
    if when <= now:
        raise ValueError(f"the expiry {text!r} is already past")
    return when


def expired_ids(db: sqlite3.Connection, now: float | None = None) -> list[int]:
    now = time.time() if now is None else now
    return [r[0] for r in db.execute(
        "SELECT id FROM memories WHERE expires_at IS NOT NULL AND expires_at <= ? ORDER BY id", (now,))]
