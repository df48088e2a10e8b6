"""What the real client sends after a compaction for a code file the session read as an outline (issue 29 item 4):
Claude Code re-reads up to five recently read files from disk and attaches them to the compacted context,
without the Read tool's hooks, so no hook output keeps them to the outline. This test measures it; the
figures are in docs/outlines.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_outline_read import big_module
from tests.support.e2e_harness import EVERY_CLIENT, REPO, RunClaude, make_git_repo
from tests.support.fake_anthropic import Turns, all_text, is_compaction, text, tool_result_text, tool_results, tool_use

pytestmark = [pytest.mark.e2e, EVERY_CLIENT]


def test_after_a_compaction_the_client_attaches_the_whole_file_not_its_outline(
        run_claude: RunClaude, tmp_path: Path) -> None:
    source, _ = big_module()
    project = make_git_repo(tmp_path / "project", {"big.py": source})
    big = project / "big.py"
    common = {"cwd": project, "home": tmp_path / "home", "plugin_dir": REPO}
    work = Turns([tool_use("Read", {"file_path": str(big)}), text("Read big.py.")],
                 summary="The user asked to look at big.py; it was read.")
    first = run_claude("Look at big.py", script=work, **common)
    assert first.returncode == 0, first.describe()
    outline = tool_result_text(tool_results(first.main_requests[1])[-1])
    assert "[memory plugin] Outline:" in outline and "BODY_MARKER_7" not in outline  # the Read got the outline

    compact = run_claude("/compact", resume=first.session_id, script=work, **common)
    assert compact.returncode == 0, compact.describe()
    assert any(is_compaction(r) for r in compact.requests), "no compaction request reached the API"

    follow = run_claude("Carry on.", resume=first.session_id, script=Turns([text("Done.")]), **common)
    assert follow.returncode == 0, follow.describe()
    after = all_text(follow.main_requests[0])
    # Measured on 2.1.330 and 2.1.197 (2026-12-07): the file's whole text is back, not the outline.
    whole = all(f"BODY_MARKER_{i}" in after for i in (0, 7, 59))
    print(f"\n[outline] after /compact: file {len(source)} chars, outline {len(outline)} chars, request "
          f"{len(after)} chars, whole file attached: {whole}, outline attached: {'[memory plugin] Outline:' in after}")
    assert whole and "[memory plugin] Outline:" not in after
