"""Searches before indexing: while a search is in flight, indexing waits at its next step (between batches)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

# The longest one step of indexing waits for searches: a stream of them must not stop the index for good.
MAX_YIELD_S = 0.5


class SearchFirst:
    """Counts searches in flight; indexing calls pause() between its steps (a batch, its embedding in chunks,
    the in-memory lists' build in chunks), so a search shares the GIL and the cores with at most the step
    under way, not with a whole first index. Indexing runs in the worker's other threads, at lower priority:
    a search would otherwise wait for the interpreter lock behind it (none of 30 searches answered within 5 s
    at 90-99% of a first index of 10,000 memories)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._searching = 0
        self.steps = 0  # indexing steps taken: a search's answer says how many ran while it did
        self.paused = 0  # steps that waited for a search

    @contextmanager
    def searching(self) -> Iterator[None]:
        with self._cond:
            self._searching += 1
        try:
            yield
        finally:
            with self._cond:
                self._searching -= 1
                if not self._searching:
                    self._cond.notify_all()

    def pause(self) -> None:
        """One step of indexing: first wait (at most MAX_YIELD_S) until no search is in flight."""
        with self._cond:
            if self._searching:
                self.paused += 1
                self._cond.wait_for(lambda: not self._searching, timeout=MAX_YIELD_S)
            self.steps += 1
