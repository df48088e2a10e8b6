"""The plugin's files as Claude Code reads them."""

from __future__ import annotations

import json
import os
import stat

from tests.support.helpers import ROOT


def test_plugin_json_is_identical_to_the_one_claude_code_reads() -> None:
    assert (ROOT / "plugin.json").read_bytes() == (ROOT / ".claude-plugin" / "plugin.json").read_bytes()
    assert json.loads((ROOT / "plugin.json").read_text())["name"] == "memory"


def test_hooks_json_uses_exec_form_and_existing_entrypoints() -> None:
    config = json.loads((ROOT / "hooks" / "hooks.json").read_text())
    events = config["hooks"]
    assert {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PreCompact", "Stop",
            "SessionEnd"} <= set(events)
    assert events["PreToolUse"][0]["matcher"] == "Read|Edit|Write|MultiEdit"
    for groups in events.values():
        for group in groups:
            for hook in group["hooks"]:
                assert hook["type"] == "command"
                assert hook["command"] == "${CLAUDE_PLUGIN_ROOT}/hooks/run"
                (entry,) = hook["args"]
                assert (ROOT / "hooks" / f"{entry}.py").is_file()
                assert (ROOT / "memory" / "hook" / f"{entry}.py").is_file()
    launcher = ROOT / "hooks" / "run"
    assert os.stat(launcher).st_mode & stat.S_IXUSR


def test_marketplace_lists_the_plugin_from_this_folder() -> None:
    market = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    (entry,) = market["plugins"]
    assert entry["name"] == "memory" and entry["source"] == "./"
    assert market["owner"]["name"]


def test_schema_version_constant_matches_the_migrations() -> None:
    from memory.store.db import SCHEMA_VERSION
    from memory.store.migrations import MIGRATIONS

    assert SCHEMA_VERSION == len(MIGRATIONS)


def test_test_files_have_unique_names() -> None:
    """pytest imports test files by their base name (no __init__.py in tests/): two of the same name stop the
    whole run at collection ('import file mismatch'), as tests/e2e/test_install_flow.py once did."""
    names = [p.name for p in (ROOT / "tests").rglob("test_*.py") if "fixtures" not in p.parts]
    assert len(names) == len(set(names)), sorted(n for n in set(names) if names.count(n) > 1)


def test_every_package_says_what_belongs_there_and_what_it_must_not_import() -> None:
    """Each package under memory/ opens with a docstring: its job on the first line, then what it may import
    and what it must not (the [tool.importlinter] contracts in pyproject.toml check the imports themselves)."""
    import ast

    packages = sorted(p.parent for p in (ROOT / "memory").rglob("__init__.py") if "__pycache__" not in p.parts)
    assert len(packages) >= 13
    for package in packages:
        doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
        where = package.relative_to(ROOT)
        assert doc and doc.splitlines()[0].strip(), f"{where} has no docstring saying what belongs there"
        if package == ROOT / "memory":  # the root names the hot and the cold packages
            assert "Hot side" in doc and "Cold side" in doc, where
            continue
        text = " ".join(doc.split()).lower()
        assert "may import" in text or "imports" in text, f"{where}: nothing said of what it may import"
        # The top layer (cli) may import every other package: it says so instead.
        assert any(w in text for w in ("must not import", "never", "every other memory package")), \
            f"{where}: nothing said of what it must not import"


def test_no_import_cycle_except_type_only() -> None:
    """No module of `memory` imports, directly or through others, a module that imports it back (imports
    inside functions count; those under `if TYPE_CHECKING:`, for annotations only, do not)."""
    import grimp

    graph = grimp.build_graph("memory", exclude_type_checking_imports=True, cache_dir=None)
    cycles = []
    for module in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            chain = graph.find_shortest_chain(importer=imported, imported=module)
            if chain:
                cycles.append(" -> ".join((module, *chain)))
    assert not cycles, "\n".join(cycles)
