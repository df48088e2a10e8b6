"""Hook entrypoint: the logic lives in memory/handlers/session_end.py."""

from _entry import run

run("session_end")
