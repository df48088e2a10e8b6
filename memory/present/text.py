"""Dates and sizes as the CLI and the MCP server print them."""

from __future__ import annotations

import time


def day(ts: float | None) -> str:
    """2026-11-24, or "-" when there is no time."""
    return time.strftime("%Y-%m-%d", time.localtime(ts)) if ts else "-"


def minute(ts: float | None) -> str:
    """2026-11-24 15:49, or "-" when there is no time."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts)) if ts else "-"


def size(n: float) -> str:
    """Bytes in the largest unit under 1024 of it: 512 B, 1.5 KiB, 2.0 MiB, up to GiB."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"
