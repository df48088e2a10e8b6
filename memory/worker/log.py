"""The worker's log line: logs/worker.log (its stderr), through the privacy filter."""

from __future__ import annotations

import os
import sys
import time

from memory.base.log import filtered


def log(message: str) -> None:
    """One line of logs/worker.log (the worker's stderr), through the privacy filter like every write (then
    cut, long enough for a traceback)."""
    text = filtered(message, 16_000)
    sys.stderr.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} worker pid={os.getpid()} {text}\n")
    sys.stderr.flush()
