"""Hook entrypoint: the logic lives in memory/handlers/pre_tool_use.py."""

from _entry import run

run("pre_tool_use")
