"""Dates on the command line: ISO dates and times, or an age such as 30m, 12h, 7d, 2w."""

from __future__ import annotations

import re
import time
from datetime import datetime

_AGE = re.compile(r"^(\d+(?:\.\d+)?)\s*(s|m|min|h|d|w)$")
_UNIT = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_when(text: str) -> float:
    value = text.strip().lower()
    m = _AGE.match(value)
    if m:
        return time.time() - float(m.group(1)) * _UNIT[m.group(2)]
    try:
        return datetime.fromisoformat(text.strip()).timestamp()
    except (ValueError, OverflowError, OSError):  # OverflowError, OSError: a year the clock cannot hold
        raise ValueError(f"cannot read {text!r} as a date: use 2026-11-01, 2026-11-01T14:00 "
                         "or an age like 7d") from None
