"""Hook entrypoint: the logic lives in memory/hook/session_start.py."""

from _entry import run

run("session_start")
