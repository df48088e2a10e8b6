"""Hook entrypoint: the logic lives in memory/hook/post_tool_use.py."""

from _entry import run

run("post_tool_use")
