"""Hook entrypoint: the logic lives in memory/handlers/stop.py."""

from _entry import run

run("stop")
