"""The MCP server as a client sees it: the real server process over stdio, driven by the `mcp` client
library (list tools, call each one, bad arguments, paths that try to leave the project)."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import ROOT, make_git_project

mcp = pytest.importorskip("mcp")
from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402

TOOLS = {"search", "timeline", "get", "save", "delete", "stats", "repo_map"}


def _params(home: Path, project: Path, via_launcher: bool = False) -> StdioServerParameters:
    """The test's environment (MEMORY_WORKER=off...), with this checkout first on PYTHONPATH: the venv's
    editable install may point at another checkout (bin/memory puts its own root first the same way)."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "MEMORY_HOME": str(home), "CLAUDE_PROJECT_DIR": str(project), "PYTHONPATH": path}
    if via_launcher:  # what plugin.json's mcpServers runs
        return StdioServerParameters(command=str(ROOT / "bin" / "memory"), args=["mcp"], env=env, cwd=str(project))
    return StdioServerParameters(command=sys.executable, args=["-m", "memory.mcp.server"], env=env, cwd=str(project))


def test_the_server_runs_this_checkouts_code(home: Path, tmp_path: Path) -> None:
    """The interpreter and environment the server is started with import `memory` from this checkout, not
    from wherever the venv's editable install points (bin/memory, the other launcher, puts its root first)."""
    p = _params(home, make_git_project(tmp_path / "app"))
    out = subprocess.run([p.command, "-c", "import memory.mcp.server, memory; print(memory.__file__)"],
                         capture_output=True, text=True, env=p.env, cwd=p.cwd, timeout=60)
    assert out.returncode == 0, out.stderr
    assert Path(out.stdout.strip()) == ROOT / "memory" / "__init__.py"


def session(home: Path, project: Path, body: Callable[[ClientSession], Awaitable[Any]], *,
            via_launcher: bool = False) -> Any:
    async def main() -> Any:
        async with stdio_client(_params(home, project, via_launcher)) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                return await body(s)

    return asyncio.run(main())


async def call(s: ClientSession, name: str, args: dict[str, Any]) -> tuple[bool, str]:
    result = await s.call_tool(name, args)
    return bool(result.is_error), "\n".join(getattr(c, "text", "") for c in result.content)


@pytest.fixture
def world(tmp_path: Path, home: Path) -> dict[str, Any]:
    """A project with a few memories saved through the library, and a second project."""
    from memory import store
    from memory.store.workspace import Workspace

    project = make_git_project(tmp_path / "app")
    other = make_git_project(tmp_path / "billing")
    ws = Workspace.for_dir(str(project))
    ids = {}
    for title, content, type_ in [
        ("Deploys use blue-green switching", "Deploys go through the blue-green switch in deploy.sh; never "
         "restart the old pool first.", "decision"),
        ("Flaky upload test fixed", "test_upload failed on slow disks; the timeout is now 30 s.", "bugfix"),
        ("Cache keys include the locale", "Cache keys carry the locale since the i18n launch.", "learning"),
    ]:
        ids[type_] = store.save(ws.db, ws.project.key, store.NewMemory(title=title, content=content, type=type_),
                                filter_low_value=False).id
    ws.close()
    ows = Workspace.for_dir(str(other))
    ids["other"] = store.save(ows.db, ows.project.key, store.NewMemory(
        title="Invoices are rounded half-even", content="Billing rounds invoice totals half-even (banker's).",
        type="decision"), filter_low_value=False).id
    ows.close()
    return {"home": home, "project": project, "other": other, "ids": ids}


def test_lists_the_seven_tools_with_schemas(world: dict[str, Any]) -> None:
    async def body(s: ClientSession) -> Any:
        return (await s.list_tools()).tools

    tools = session(world["home"], world["project"], body, via_launcher=True)
    by_name = {t.name: t for t in tools}
    assert set(by_name) == TOOLS
    search = by_name["search"].input_schema
    assert search["required"] == ["query"]
    assert {"query", "limit", "types", "project", "since", "until", "all_projects"} <= set(search["properties"])
    assert by_name["get"].input_schema["required"] == ["ids"]
    assert set(by_name["repo_map"].input_schema["properties"]) == {"focus", "tokens"}
    assert all(t.description for t in tools)


def test_repo_map_tool(world: dict[str, Any]) -> None:
    """The repository map through the real server: ranked, within its budget, focus leaning it, bad sizes
    refused (the ranking itself: tests/test_repomap.py)."""
    import shutil

    from parser.tokens import estimate_tokens

    shutil.copytree(ROOT / "tests" / "fixtures" / "repomap", world["project"], dirs_exist_ok=True)

    async def body(s: ClientSession) -> list[tuple[bool, str]]:
        return [await call(s, "repo_map", {"tokens": 64}),
                await call(s, "repo_map", {"tokens": 64, "focus": ["shop/report.py", "slugify"]}),
                await call(s, "repo_map", {"tokens": 10})]

    plain, focused, bad = session(world["home"], world["project"], body, via_launcher=True)
    def body_of(text: str) -> list[str]:  # the map inside the untrusted block, after its heading
        lines = text.splitlines()
        assert lines[0].startswith("<recalled-data") and lines[-1] == "</recalled-data>"
        start = next(i for i, line in enumerate(lines) if line.startswith("Repository map of "))
        return lines[start + 1:-1]

    assert not plain[0] and body_of(plain[1])[:2] == ["shop/store.py", "  4: class Store"]
    assert estimate_tokens("\n".join(body_of(plain[1])) + "\n") <= 64
    assert not focused[0] and body_of(focused[1])[:2] == ["shop/helpers.py", "  4: def slugify(text: str) -> str"]
    assert bad[0] and "tokens" in bad[1]


def test_each_tool_works(world: dict[str, Any]) -> None:
    ids = world["ids"]

    async def body(s: ClientSession) -> dict[str, tuple[bool, str]]:
        out = {}
        out["search"] = await call(s, "search", {"query": "blue green deploy"})
        out["search_typed"] = await call(s, "search", {"query": "deploy upload cache", "types": ["bugfix"]})
        out["timeline"] = await call(s, "timeline", {"id": ids["bugfix"], "before": 1, "after": 1})
        out["timeline_query"] = await call(s, "timeline", {"query": "locale cache keys"})
        out["get"] = await call(s, "get", {"ids": [ids["decision"]]})
        out["save"] = await call(s, "save", {"content": "Run make lint before pushing", "type": "decision",
                                             "tags": ["ci"], "files": ["deploy.sh"], "expires": "30d"})
        out["find_saved"] = await call(s, "search", {"query": "lint pushing"})
        out["stats"] = await call(s, "stats", {})
        out["stats_all"] = await call(s, "stats", {"all_projects": True})
        out["delete"] = await call(s, "delete", {"ids": [ids["learning"]]})
        out["after_delete"] = await call(s, "get", {"ids": [ids["learning"]]})
        return out

    r = session(world["home"], world["project"], body)
    assert not any(err for err, _ in r.values()), r
    first = r["search"][1].splitlines()
    assert first[0].startswith("<recalled-data") and first[-1] == "</recalled-data>"  # inside the fence
    hit = next(line for line in first if line.startswith("#"))
    assert f"#{ids['decision']} " in hit and "[decision]" in hit and "blue-green" in hit
    assert any("timeline(id)" in line for line in first[-3:])
    assert [line for line in r["search_typed"][1].splitlines() if line.startswith("#")] == \
        [line for line in r["search_typed"][1].splitlines() if f"#{ids['bugfix']} " in line]
    assert f"> #{ids['bugfix']} " in r["timeline"][1] and f"#{ids['decision']} " in r["timeline"][1]
    assert f"> #{ids['learning']} " in r["timeline_query"][1]
    assert "never restart the old pool first" in r["get"][1]  # layer 3: the full content
    assert "Saved #" in r["save"][1] and "expires" in r["save"][1]
    assert "Run make lint" in r["find_saved"][1]
    assert "memories" in r["stats"][1] and "decision" in r["stats"][1]
    assert "billing" in r["stats_all"][1] and "app" in r["stats_all"][1]
    assert f"Deleted #{ids['learning']}" in r["delete"][1]
    assert "No memory with id" in r["after_delete"][1]
    # The save went through the library: privacy filter, files relative to the project, expiry set.
    db = sqlite3.connect(next(world["home"].glob("projects/app-*/memory.db")))
    row = db.execute("SELECT files, tags, source, expires_at FROM memories WHERE title LIKE 'Run make lint%'"
                     ).fetchone()
    assert row[0] == "deploy.sh" and row[1] == "ci" and row[2] == "mcp"
    assert 29 * 86400 < row[3] - time.time() <= 30 * 86400
    assert db.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'locale'").fetchone()[0] == 0


def test_layer_1_results_are_compact(world: dict[str, Any]) -> None:
    from memory import store
    from memory.store.workspace import Workspace

    ws = Workspace.for_dir(str(world["project"]))
    for i in range(30):
        store.save(ws.db, ws.project.key, store.NewMemory(
            title=f"Retry policy note {i}", content="retry policy " + "with exponential backoff and jitter " * 40,
            type="learning"), filter_low_value=False)
    ws.close()

    async def body(s: ClientSession) -> tuple[bool, str]:
        return await call(s, "search", {"query": "retry policy backoff", "limit": 20})

    err, text = session(world["home"], world["project"], body)
    hits = [line for line in text.splitlines() if line.startswith("#")]
    assert not err and len(hits) == 20
    # ~4 characters a token: each result line stays within 50-100 tokens.
    assert all(len(line) <= 400 for line in hits), max(map(len, hits))
    assert sum(map(len, hits)) / len(hits) >= 150


def test_cross_project_search_labels_each_hit(world: dict[str, Any]) -> None:
    async def body(s: ClientSession) -> tuple[tuple[bool, str], tuple[bool, str], tuple[bool, str]]:
        return (await call(s, "search", {"query": "decision rounded deploys", "all_projects": True}),
                await call(s, "search", {"query": "rounded invoices"}),
                await call(s, "get", {"ids": [world["ids"]["other"]], "project": "billing"}))

    (err, text), (_, local), (gerr, got) = session(world["home"], world["project"], body)
    assert not err and "(billing)" in text and "(app)" in text
    assert "No memory" in local  # without all_projects only this project is searched
    assert not gerr and "half-even" in got


@pytest.mark.parametrize("name,args,needle", [
    ("search", {"query": ""}, "query"),
    ("search", {"query": "x", "limit": 500}, "limit"),
    ("search", {"query": "x", "types": ["nonsense"]}, "types"),
    ("search", {"query": "x", "since": "last tuesday"}, "cannot read"),
    ("search", {"query": "x", "project": "b", "all_projects": True}, "either project or all_projects"),
    ("timeline", {}, "either id"),
    ("timeline", {"id": 1, "query": "x"}, "either id"),
    ("timeline", {"id": 99999}, "no memory #99999"),
    ("get", {"ids": []}, "ids"),
    ("get", {"ids": "1,2"}, "ids"),
    ("save", {"content": "   "}, "content"),
    ("save", {"content": "x", "importance": 3}, "importance"),
    ("save", {"content": "x", "expires": "soonish"}, "expires"),
    ("delete", {"ids": [424242]}, "no memory with id #424242"),
    ("nope", {}, "nope"),
])
def test_bad_arguments_are_clear_errors(world: dict[str, Any], name: str, args: dict[str, Any], needle: str) -> None:
    async def body(s: ClientSession) -> tuple[bool, str]:
        return await call(s, name, args)

    err, text = session(world["home"], world["project"], body)
    assert err and needle.lower() in text.lower(), text


def test_paths_never_leave_the_project(world: dict[str, Any], tmp_path: Path) -> None:
    project: Path = world["project"]
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / "docs").mkdir()
    (project / "escape").symlink_to(outside)
    attempts = [
        ("save", {"content": "a", "files": ["../../etc/passwd"]}),
        ("save", {"content": "a", "files": ["/etc/passwd"]}),
        ("save", {"content": "a", "files": ["escape/secret.txt"]}),
        ("save", {"content": "a", "files": ["docs/../../x"]}),
        ("save", {"content": "a", "files": ["~/.ssh/id_rsa"]}),
        ("save", {"content": "a", "project": "../billing"}),
        ("save", {"content": "a", "project": str(world["other"])}),
        ("search", {"query": "x", "project": "/etc"}),
        ("search", {"query": "x", "project": "escape"}),
        ("stats", {"project": str(world["home"])}),
        ("get", {"ids": [1], "project": "../../"}),
    ]

    async def body(s: ClientSession) -> list[tuple[bool, str]]:
        return [await call(s, name, args) for name, args in attempts]

    results = session(world["home"], world["project"], body)
    for (name, args), (err, text) in zip(attempts, results, strict=True):
        assert err, (name, args, text)
        assert "outside the project" in text or "'..'" in text or "home-relative" in text, (args, text)
    assert list(outside.iterdir()) == []
    # Nothing was written for any refused call, and nothing appeared outside the data dir and project.
    db = sqlite3.connect(next(world["home"].glob("projects/app-*/memory.db")))
    assert db.execute("SELECT count(*) FROM memories WHERE source = 'mcp'").fetchone()[0] == 0


def test_a_folder_inside_the_project_and_a_project_name_are_accepted(world: dict[str, Any]) -> None:
    (world["project"] / "src").mkdir()

    async def body(s: ClientSession) -> list[tuple[bool, str]]:
        return [await call(s, "save", {"content": "Inside src", "files": ["src/main.py", "./README.md"],
                                       "project": "src"}),
                await call(s, "search", {"query": "rounded", "project": "billing"})]

    (err1, t1), (err2, t2) = session(world["home"], world["project"], body)
    assert not err1 and "project app" in t1
    assert not err2 and "half-even" in t2


def test_the_launcher_serves_every_tool(world: dict[str, Any]) -> None:
    """Spawn through bin/memory to a listed tool, as Claude Code does. How long that takes, first start and
    later ones, is scripts/bench/mcp.py's to measure (a wall-clock bound here would measure the machine)."""
    async def body(s: ClientSession) -> int:
        return len((await s.list_tools()).tools)

    assert session(world["home"], world["project"], body, via_launcher=True) == len(TOOLS)


# -- the fast front (memory/mcp/front.py): the handshake answered from a cache ------------------------

META = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"},
                  "io.modelcontextprotocol/clientCapabilities": {}}}


class Wire:
    """The launcher as Claude Code 2.1.330 talks to it: newline-delimited JSON-RPC, stateless protocol."""

    def __init__(self, home: Path, project: Path) -> None:
        env = {**os.environ, "MEMORY_HOME": str(home), "CLAUDE_PROJECT_DIR": str(project)}
        self.proc = subprocess.Popen([str(ROOT / "bin" / "memory"), "mcp"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=project)

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        self.proc.stdin.flush()

    def receive(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        return json.loads(self.proc.stdout.readline())

    def ask(self, id_: object, method: str, params: dict[str, Any] | None = None) -> tuple[dict[str, Any], float]:
        start = time.perf_counter()
        self.send({"id": id_, "method": method, "params": {**META, **(params or {})}})
        while True:
            message = self.receive()
            if message.get("id") == id_:
                return message, time.perf_counter() - start

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=20)


def handshake(w: Wire) -> list[dict[str, Any]]:
    """What the client does before it uses a tool: discover, listen (waits for the acknowledgement), lists."""
    out = [w.ask("probe", "server/discover")[0]]
    w.send({"id": "listen:0", "method": "subscriptions/listen",
            "params": {**META, "notifications": {"toolsListChanged": True}}})
    ack = w.receive()
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "listen:0"
    out.append(ack)
    out += [w.ask(i, m)[0] for i, m in enumerate(("tools/list", "prompts/list", "resources/list"))]
    return out


def test_the_front_answers_the_handshake_from_a_cache_then_the_real_server_works(world: dict[str, Any]) -> None:
    home, project = world["home"], world["project"]
    first = Wire(home, project)
    cold = handshake(first)
    first.close()
    caches = list((home / "cache").glob("mcp-*.json"))
    assert len(caches) == 1 and oct(caches[0].stat().st_mode & 0o777) == "0o600"
    cached = json.loads(caches[0].read_text())
    assert {k.split(" ", 1)[1].split(" ")[0] for k in cached} >= {"server/discover", "tools/list",
                                                                  "subscriptions/listen"}

    second = Wire(home, project)
    warm = handshake(second)
    assert warm == cold  # the same answers, ids included
    assert {t["name"] for t in warm[2]["result"]["tools"]} == TOOLS
    # The real server answers the calls, and its own acknowledgement of the subscription is not repeated.
    found, _ = second.ask(10, "tools/call", {"name": "search", "arguments": {"query": "blue green deploy"}})
    assert "blue-green" in found["result"]["content"][0]["text"]
    bad, _ = second.ask(11, "tools/call", {"name": "get", "arguments": {"ids": []}})
    assert bad["result"]["isError"] is True
    second.close()
    # How much sooner the cached handshake answers (the SDK import it skips is ~1 s) is scripts/bench/mcp.py's
    # figure, not a wall-clock bound here.


def test_a_cached_handshake_never_goes_stale(world: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    from memory.mcp import front as mcp_front

    monkeypatch.setenv("MEMORY_HOME", str(world["home"]))
    path = mcp_front.cache_path()
    assert Path(path).parent == world["home"] / "cache"
    # The fingerprint covers the server's code: another version of it is another cache file.
    real = mcp_front.fingerprint()
    monkeypatch.setattr(mcp_front, "ROOT", str(world["project"]))
    assert mcp_front.fingerprint() != real
    # A listing with a cursor, or a request without the stateless protocol's version, is never cached.
    assert mcp_front._key({"id": 1, "method": "tools/list", "params": {**META, "cursor": "x"}}) is None
    assert mcp_front._key({"id": 1, "method": "tools/list", "params": {}}) is None
    assert mcp_front._key({"id": 1, "method": "tools/call", "params": META}) is None
    assert mcp_front._key({"id": 1, "method": "tools/list", "params": META}) == "2026-07-28 tools/list"


def test_the_front_exits_when_the_server_dies(tmp_path: Path) -> None:
    code = ("import sys; from memory.mcp.front import Front; "
            f"Front([sys.executable, '-c', 'import sys; sys.exit(3)'], {str(tmp_path / 'c.json')!r}).run()")
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT)
    try:
        assert proc.wait(timeout=20) == 3  # stdin is still open: the client did not leave, the server did
    finally:
        proc.kill()
