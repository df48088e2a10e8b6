"""The docs say what the code does: generated pages are current, every command is documented, links hold."""

from __future__ import annotations

import ast
import asyncio
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import click
import pytest

from tests.support.helpers import stated_plugin_mb

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]


def _docs_text() -> str:
    return "\n".join(page.read_text() for page in PAGES)


def test_generated_files_are_current() -> None:
    """docs/configuration.md, docs/cli.md, docs/storage.md's tables and the manifests' version match ENV_VARS, the
    click commands, the migrations and __version__ (scripts/gen_docs.py)."""
    run = subprocess.run([sys.executable, "-m", "scripts.gen_docs", "--check"], cwd=ROOT, capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stderr


def test_the_storage_page_lists_every_table_a_database_has(tmp_path: Path) -> None:
    """The generated list is the schema a real database gets: every table of a migrated project database (but
    FTS5's own shadow tables) is named in docs/storage.md, with each of its columns."""
    from memory.store.db import connect

    db = connect(str(tmp_path / "memory.db"))
    page = (ROOT / "docs" / "storage.md").read_text()
    virtual = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE sql LIKE 'CREATE VIRTUAL TABLE%'")]
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
                                       "'sqlite_%'") if not any(r[0].startswith(f"{v}_") for v in virtual)]
    assert len(tables) >= 20
    for table in tables:
        row = next((line for line in page.splitlines() if line.startswith(f"| `{table}` (m")), "")
        assert row, table
        for (column,) in db.execute(f"SELECT name FROM pragma_table_info('{table}')"):
            assert re.search(rf" {re.escape(column)}( \(m\d+\))?(,| \|)", row), (table, column)
    db.close()


def test_configuration_page_lists_every_variable() -> None:
    from memory.base.config import ENV_VARS

    page = (ROOT / "docs" / "configuration.md").read_text()
    missing = [name for name in ENV_VARS if f"| `{name}` |" not in page]
    assert not missing, f"docs/configuration.md lacks {missing}"


def test_the_version_has_one_home() -> None:
    """memory.__version__ is the version: pyproject.toml reads it, the manifests are written from it."""
    import memory

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "memory.__version__"}
    manifests = [json.loads((ROOT / rel).read_text()) for rel in ("plugin.json", ".claude-plugin/plugin.json")]
    market = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    versions = {m["version"] for m in manifests} | {p["version"] for p in market["plugins"]}
    assert versions == {memory.__version__}


def _cli_commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for name, command in group.commands.items():
        found.append((*prefix, name))
        if isinstance(command, click.Group):
            found += _cli_commands(command, (*prefix, name))
    return found


def _documented(path: tuple[str, ...], text: str) -> bool:
    """`memory team pull` is documented as itself or inside an alternation: `memory team push|pull|sync`."""
    *parents, name = path
    head = r"\s+".join(["memory", *map(re.escape, parents)])
    return re.search(rf"{head}\s+(?:[\w-]+\\?\|)*{re.escape(name)}(?![\w-])", text) is not None


def test_every_cli_command_is_documented() -> None:
    from memory.cli import cli

    text = _docs_text()
    commands = _cli_commands(cli)
    assert ("team", "pull") in commands and ("search",) in commands
    missing = [" ".join(path) for path in commands if not _documented(path, text)]
    assert not missing, f"memory commands in no doc: {missing}"


def test_every_mcp_tool_is_documented(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_HOME", str(tmp_path))
    from memory.mcp.server import build

    names = [tool.name for tool in asyncio.run(build().list_tools())]
    assert "search" in names
    text = _docs_text()
    missing = [name for name in names if f"| `{name}` |" not in text]
    assert not missing, f"MCP tools in no doc's table: {missing}"


def test_the_readmes_mcp_table_lists_exactly_the_servers_tools(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_HOME", str(tmp_path))
    from memory.mcp.server import build

    names = {tool.name for tool in asyncio.run(build().list_tools())}
    readme = (ROOT / "README.md").read_text()
    table = readme.split("| MCP tool (", 1)[1].split("\n\n", 1)[0]
    listed = set(re.findall(r"^\| `(\w+)` \|", table, flags=re.M))
    assert listed == names, f"README's MCP table: missing {names - listed}, extra {listed - names}"


def test_the_install_size_docs_state_is_what_is_tracked() -> None:
    """docs/install.md states what a marketplace install copies (the tracked files, and the plugin alone as
    scripts/build_plugin.py writes it): within 15%."""
    import subprocess

    names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    files = [ROOT / n for n in filter(None, names.decode().split("\0")) if (ROOT / n).is_file()]
    total = sum(p.stat().st_size for p in files) / 1e6
    tests = sum(p.stat().st_size for p in files if p.relative_to(ROOT).parts[0] == "tests") / 1e6
    text = (ROOT / "docs" / "install.md").read_text()
    stated = re.search(r"tracked files, about ([\d.]+) MB, of\s+which\s+tests/\s+are\s+([\d.]+)\s+MB", text)
    assert stated, "docs/install.md no longer states the install's size"
    assert abs(total - float(stated[1])) <= 0.15 * float(stated[1]), f"tracked files: {total:.1f} MB"
    assert abs(tests - float(stated[2])) <= 0.15 * float(stated[2]), f"tests/: {tests:.1f} MB"
    from scripts.build_plugin import plugin_files

    plugin = sum((ROOT / n).stat().st_size for n in plugin_files(ROOT)) / 1e6
    alone = stated_plugin_mb()
    assert abs(plugin - alone) <= 0.15 * alone, f"the plugin alone: {plugin:.1f} MB"
    readme = re.search(r"scripts/setup --install\n.*?no caches: about ([\d.]+) MB", (ROOT / "README.md").read_text(),
                       flags=re.S)
    assert readme and abs(plugin - float(readme[1])) <= 0.15 * float(readme[1]), "README: the plugin's size"


def test_the_documented_install_is_the_one_the_packaging_test_runs() -> None:
    """README and docs/install.md give `scripts/setup --install` as the install, in a command block; the
    real-client test (tests/e2e/test_packaging.py) runs exactly that from a used clone."""
    block = "\n    scripts/setup --install\n"
    for page in (ROOT / "README.md", ROOT / "docs" / "install.md"):
        assert block in page.read_text(), f"{page.name} no longer gives the install command"
    test = (ROOT / "tests" / "e2e" / "test_packaging.py").read_text()
    assert '"scripts" / "setup"), "--install"]' in test


def test_every_slash_command_is_documented() -> None:
    names = [path.stem for path in (ROOT / "commands").glob("*.md")]
    assert "search" in names
    text = _docs_text()
    missing = [name for name in names if f"/memory:{name}" not in text]
    assert not missing, f"slash commands in no doc: {missing}"


def _anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    out = set()
    for line in page.read_text().splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            out.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return out


def test_every_link_leads_to_a_file_of_the_repository() -> None:
    bad = []
    for page in PAGES:
        text = page.read_text()
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # a web address
            rel, _, anchor = target.partition("#")
            dest = (page.parent / rel).resolve() if rel else page
            if not dest.is_relative_to(ROOT) or not dest.exists():
                bad.append(f"{page.name}: {target}")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                bad.append(f"{page.name}: {target} (no such heading)")
        if "../" in text:
            bad.append(f"{page.name}: names a path outside the repository (../)")
    assert not bad, bad


def test_every_path_the_docs_name_exists() -> None:
    """memory/..., tests/..., scripts/... named in the docs exist (the benchmark log and the changelog may
    name what a file was called then)."""
    bad = []
    for page in PAGES:
        if page.name in ("benchmarks.md", "CHANGELOG.md"):
            continue
        for path in re.findall(r"(?<![\w./~-])(?:memory|parser|tests|scripts|hooks|bin|commands)/[\w./-]*",
                               page.read_text()):
            path = path.rstrip(".")
            if any(c in path for c in "<*{") or not path:
                continue
            if not (ROOT / path).exists():
                bad.append(f"{page.name}: {path}")
    assert not bad, bad


def _variables_read() -> dict[str, str]:
    """The plugin's own environment variables (MEMORY_*, CLAUDE_*, ANTHROPIC_*, OLLAMA_*) its code reads,
    each with one file that reads it: Python through os.environ/env()/env_int(), the launchers as $NAME."""
    python = re.compile(r"""(?:environ\.get|environ\.pop|environ\[|getenv|\benv|\benv_int)\(?\s*"""
                        r"""["']([A-Z][A-Z0-9_]+)["']""")
    shell = re.compile(r"\$\{?([A-Z][A-Z0-9_]+)")
    found: dict[str, str] = {}
    sources = [(p, python) for folder in ("memory", "parser", "hooks") for p in (ROOT / folder).rglob("*.py")]
    sources += [(ROOT / rel, shell) for rel in ("hooks/run", "bin/memory", "scripts/setup")]
    for path, pattern in sources:
        for name in pattern.findall(path.read_text()):
            if name.startswith(("MEMORY_", "CLAUDE_", "ANTHROPIC_", "OLLAMA_")):
                found.setdefault(name, str(path.relative_to(ROOT)))
    return found


def test_every_variable_the_code_reads_is_in_the_configuration_page() -> None:
    """ENV_VARS is the home of the settings; what else the code reads (variables the plugin passes to its own
    processes, ANTHROPIC_AUTH_TOKEN) is at least named on the generated page."""
    read = _variables_read()
    assert {"MEMORY_HOME", "MEMORY_PYTHON", "MEMORY_OUTLINE", "MEMORY_WORKER_LOCK_FD"} <= set(read)
    page = (ROOT / "docs" / "configuration.md").read_text()
    missing = [f"{name} ({where})" for name, where in read.items() if f"`{name}`" not in page]
    assert not missing, f"read by the code, named nowhere in docs/configuration.md: {missing}"


def test_every_path_the_code_comments_name_exists() -> None:
    """Comments and docstrings are docs too: the memory/..., parser/..., tests/..., scripts/... paths they name
    exist (a module that moved leaves its old path behind in the comments that pointed at it)."""
    import io
    import tokenize

    pattern = re.compile(r"(?<![\w./~-])(?:memory|parser|tests|scripts|hooks|bin|commands)/[\w./-]*[\w/]")
    bad = []
    for folder in ("memory", "parser", "hooks", "scripts"):
        for source in sorted((ROOT / folder).rglob("*.py")):
            text = source.read_text()
            words = [t.string for t in tokenize.generate_tokens(io.StringIO(text).readline)
                     if t.type == tokenize.COMMENT]
            words += [ast.get_docstring(node) or "" for node in ast.walk(ast.parse(text))
                      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))]
            for path in pattern.findall("\n".join(words)):
                if any(c in path for c in "<*{") or path.endswith((".bundle",)):
                    continue
                if not (ROOT / path).exists() and not (ROOT / path.rstrip("/")).exists():
                    bad.append(f"{source.relative_to(ROOT)}: {path}")
    assert not bad, "\n".join(bad)
