"""The docs say what the code does: generated pages are current."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_generated_files_are_current() -> None:
    """docs/configuration.md and the manifests' version match ENV_VARS and __version__ (scripts/gen_docs.py)."""
    run = subprocess.run([sys.executable, "-m", "scripts.gen_docs", "--check"], cwd=ROOT, capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stderr


def test_configuration_page_lists_every_variable() -> None:
    from memory.base.config import ENV_VARS

    page = (ROOT / "docs" / "configuration.md").read_text()
    missing = [name for name in ENV_VARS if f"| `{name}` |" not in page]
    assert not missing, f"docs/configuration.md lacks {missing}"


def test_the_version_has_one_home() -> None:
    """memory.__version__ is the version: pyproject.toml reads it, the manifests are written from it."""
    import json
    import tomllib

    import memory

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "memory.__version__"}
    manifests = [json.loads((ROOT / rel).read_text()) for rel in ("plugin.json", ".claude-plugin/plugin.json")]
    market = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    versions = {m["version"] for m in manifests} | {p["version"] for p in market["plugins"]}
    assert versions == {memory.__version__}
