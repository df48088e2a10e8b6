"""Shared entrypoint for every hook process: one JSON event in, at most one JSON object out, exit 0."""

import os
import sys

# The hooks run from the plugin root, which need not be pip-installed: import `memory` from there.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from memory.hookrun import run  # noqa: E402

__all__ = ["run"]
