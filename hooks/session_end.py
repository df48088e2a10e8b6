"""Hook entrypoint: the logic lives in memory/hook/session_end.py."""

from _entry import run

run("session_end")
