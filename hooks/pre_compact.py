"""Hook entrypoint: the logic lives in memory/hook/pre_compact.py."""

from _entry import run

run("pre_compact")
