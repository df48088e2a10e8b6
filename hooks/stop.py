"""Hook entrypoint: the logic lives in memory/hook/stop.py."""

from _entry import run

run("stop")
