"""`memory doctor`: what is installed, which providers are reachable, where the data is, database health."""

from __future__ import annotations

import importlib.util
import os
import socket
import sqlite3
import sys
from typing import Any

from memory import __version__
from memory.config import data_home, log_path
from memory.db import DatabaseCorrupt, connect, schema_version
from memory.migrations import MIGRATIONS
from memory.workspace import Workspace, all_projects

OPTIONAL = {
    "tree_sitter": "Read outlines",
    "lancedb": "semantic recall (vector store)",
    "sentence_transformers": "local embeddings",
    "anthropic": "Claude Haiku extraction",
    "ollama": "Ollama embeddings and extraction",
    "mcp": "MCP server",
    "tqdm": "progress bars",
}


def _ollama_up(host: str) -> bool:
    hostport = host.split("://", 1)[-1].split("/", 1)[0]
    name, _, port = hostport.rpartition(":")
    try:
        with socket.create_connection((name or "127.0.0.1", int(port or 11434)), timeout=0.3):
            return True
    except (OSError, ValueError):
        return False


def check_db(path: str) -> dict[str, Any]:
    if not os.path.exists(path):
        return {"exists": False, "ok": True}
    try:
        db = connect(path, migrate=False)
    except DatabaseCorrupt as exc:
        return {"exists": True, "ok": False, "problem": str(exc)}
    try:
        integrity = db.execute("PRAGMA quick_check").fetchone()[0]
        version = schema_version(db)
        fts_ok = True
        try:
            # rank=1 also compares the external-content index with the memories table
            db.execute("INSERT INTO memories_fts(memories_fts, rank) VALUES('integrity-check', 1)")
        except sqlite3.DatabaseError:
            fts_ok = False
        n = db.execute("SELECT count(*) FROM memories").fetchone()[0] if version else 0
        return {"exists": True, "ok": integrity == "ok" and fts_ok, "integrity": integrity, "fts_ok": fts_ok,
                "schema_version": version, "schema_latest": len(MIGRATIONS), "memories": n}
    except sqlite3.DatabaseError as exc:
        return {"exists": True, "ok": False, "problem": f"{type(exc).__name__}: {exc}"}
    finally:
        db.close()


def report(ws: Workspace) -> dict[str, Any]:
    home = data_home()
    deps = {name: importlib.util.find_spec(name) is not None for name in OPTIONAL}
    ollama_host = os.environ.get("OLLAMA_HOST", "http://127.0.0.1:11434")
    errors = 0
    log = log_path()
    if os.path.exists(log):
        with open(log, encoding="utf-8", errors="replace") as fh:
            errors = sum(1 for line in fh if " ERROR " in line)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    venvs = [p for p in (os.path.join(os.environ.get("CLAUDE_PLUGIN_DATA", ""), "venv", "bin", "python"),
                         os.path.join(root, ".venv", "bin", "python")) if os.path.isabs(p) and os.path.exists(p)]
    return {
        "version": __version__,
        "python": f"{sys.version.split()[0]} at {sys.executable}",
        "hook_interpreter": venvs[0] if venvs else "python3 from PATH (no venv yet: stdlib-only hooks)",
        "plugin_root": root,
        "data_dir": home,
        "data_dir_writable": os.access(home, os.W_OK) if os.path.exists(home) else os.access(
            os.path.dirname(home) or ".", os.W_OK),
        "dependencies": {f"{k} ({OPTIONAL[k]})": v for k, v in deps.items()},
        "providers": {
            "anthropic (ANTHROPIC_API_KEY set)": bool(os.environ.get("ANTHROPIC_API_KEY")) and deps["anthropic"],
            f"ollama at {ollama_host}": _ollama_up(ollama_host),
            "keyword recall (FTS5)": True,
        },
        "project": {"name": ws.project.name, "key": ws.project.key, "root": ws.project.root,
                    "remote": ws.project.remote},
        "database": {"path": ws.db_path, **check_db(ws.db_path)},
        "projects_known": len(all_projects(home)),
        "hook_log": log,
        "hook_errors_logged": errors,
    }
