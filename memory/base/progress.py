"""Indexing progress: a rate of memories per second and the time left, as `memory worker status` and
`memory reindex` print them ("640 of 10,000 memories, 14.2/s, about 11 min left").

Standard library only, no imports: the worker, the CLI and its status all use it."""

from __future__ import annotations


class Rate:
    """Memories per second over recent batches: an exponential average of each batch's rate, so a change
    of load (hooks, another project's batches) shows within a few batches, one slow batch does not."""

    def __init__(self, weight: float = 0.3) -> None:
        self.weight = weight
        self.per_s: float | None = None

    def add(self, n: int, seconds: float) -> None:
        if n <= 0 or seconds <= 0:
            return
        now = n / seconds
        self.per_s = now if self.per_s is None else self.per_s + self.weight * (now - self.per_s)


def duration(seconds: float) -> str:
    """A rough time for a person: "40 s", "11 min", "2.5 h"."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def line(done: int, total: int, per_s: float | None) -> str:
    """"640 of 10,000 memories, 14.2/s, about 11 min left" (no rate known: the counts alone)."""
    out = f"{done:,} of {total:,} memories"
    if per_s:
        out += f", {per_s:.1f}/s"
        if total > done:
            out += f", about {duration((total - done) / per_s)} left"
    return out
