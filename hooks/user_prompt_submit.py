"""Hook entrypoint: the logic lives in memory/hook/user_prompt_submit.py."""

from _entry import run

run("user_prompt_submit")
