"""Hook entrypoint: the logic lives in memory/handlers/pre_compact.py."""

from _entry import run

run("pre_compact")
