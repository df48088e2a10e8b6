"""The hooks' "now": the wall clock, or the time a replay of past sessions sets in MEMORY_NOW."""

from __future__ import annotations

import os
import time


def now() -> float:
    """Seconds since the epoch: MEMORY_NOW when it holds a number (a replay of past sessions at their own
    dates, scripts/bench/history.py), else time.time(). What the hooks date and what they age (the handoff's
    maximum age, SessionStart's recency, expiry) is measured from here, so a replay sees what its user saw."""
    at = os.environ.get("MEMORY_NOW", "")
    if at:
        try:
            return float(at)
        except ValueError:  # a hook never fails on its environment: the wall clock
            pass
    return time.time()
