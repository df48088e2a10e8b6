"""The real Cline CLI (npm cline, pinned in scripts/install-clients), its OpenAI-compatible provider pointed at a
fake API on 127.0.0.1 by `cline auth`, hooked by `memory install cline --project` (.clinerules/hooks/<Event>):
its session runs a shell command and an edit, the hooks record them under the Cline host; the CLI reads no
context from its TaskStart hook, so the AGENTS.md section the install wrote reaches its model instead; and the
next Claude Code session is given what Cline did. The hub daemon the CLI starts for its session (`cline
--cline-hub-daemon`, detached in a session of its own) is stopped with `cline hub stop`: none is left."""

from __future__ import annotations

import json
import os
import select
import signal
from pathlib import Path

import pytest

from tests.support import e2e_harness as e2e
from tests.support.fake_openai import FakeChat

pytestmark = pytest.mark.e2e

CLINE_VERSION = "3.0.65"


def test_a_cline_session_is_recalled_by_the_next_claude_code_session(
        run_claude: e2e.RunClaude, tmp_path: Path, memory_home: Path) -> None:
    cline, project, home, claude_after = e2e.host_session("cline", CLINE_VERSION, run_claude, tmp_path)
    home.mkdir()
    # Cline CLI 3.x's own tools: run_commands (a list of commands), editor (old_text / new_text).
    steps = [{"call": "run_commands", "arguments": {"commands": ["grep -c total billing.py"]}},
             {"call": "editor", "arguments": {"path": str(project / "billing.py"), "old_text": "def total(amount):",
                                             "new_text": "def total_with_tax(amount):"}},
             {"text": "Renamed total to total_with_tax."}]
    env = e2e.client_env(home, memory_home, project)
    try:
        with FakeChat(steps) as fake:
            e2e.run_client([cline, "auth", "-p", "openai", "-k", "dummy", "-m", "fake-model", "-b", fake.base_url],
                           project, env)
            e2e.memory_install("cline", "--project", project, env)
            e2e.run_client([cline, "We decided to rename total to total_with_tax", "--json", "-t", "240"], project, env)
        daemons = hub_daemons(home)
        assert daemons, "the CLI started no hub daemon: the stop below proves nothing"
        assert json.loads(e2e.run_client([cline, "hub", "stop"], project, env)) == {"stopped": True}
        for pid in daemons:
            assert exited(pid), f"the hub daemon {pid} outlived `cline hub stop`"
        assert hub_daemons(home) == []
    finally:
        for pid in hub_daemons(home):  # a failure above: the daemon's process group goes with the test
            group = os.getpgid(pid)
            os.killpg(group, signal.SIGKILL) if group != os.getpgrp() else os.kill(pid, signal.SIGKILL)
    main = e2e.renamed(project, fake.requests, 3)
    # The CLI runs TaskStart hooks without reading their answer: the AGENTS.md section reaches its model.
    assert "This project keeps a memory shared by every coding agent" in json.dumps(main[0]["messages"])
    assert e2e.last_hook(memory_home, "cline") == "session_end"
    db = e2e.project_db(memory_home, project)
    assert db.execute("SELECT tool_call_count FROM sessions WHERE host = 'cline'").fetchall() == [(2,)]

    claude_after()


def hub_daemons(home: Path) -> list[int]:
    """The Cline hub daemons running on this HOME (the CLI starts one detached: its own session and process
    group, reparented to init, so the test's process tree does not hold it)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and b"--cline-hub-daemon" in (entry / "cmdline").read_bytes().split(b"\0") \
                    and f"HOME={home}".encode() in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:  # gone meanwhile, or not ours
            continue
    return found


def exited(pid: int) -> bool:
    """Whether the process ends (its pidfd readable), waiting as long as a client run may take."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], 300)[0])
    finally:
        os.close(fd)
