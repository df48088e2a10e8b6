"""Hook entrypoint: the logic lives in memory/hook/pre_tool_use.py."""

from _entry import run

run("pre_tool_use")
