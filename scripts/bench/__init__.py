"""Benchmarks, run from the repository root as modules, e.g. `.venv/bin/python -m scripts.bench.hooks --help`.

common.py holds what they share (machine info, timed processes with CPU beside wall, interleaved rounds,
percentiles, JSON output); fill.py fills a project database for those that need a full store. Each module's
docstring says what it measures and how; docs/benchmarks.md keeps dated results.
"""
