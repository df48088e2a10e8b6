"""Hook entrypoint: the logic lives in memory/handlers/session_start.py."""

from _entry import run

run("session_start")
