"""The plugin's MCP server (stdio): the 3-layer memory tools for the model, on the official `mcp` SDK.

Claude Code starts it from plugin.json's mcpServers through bin/memory (which picks the plugin's venv). Importing the
SDK is most of its start time (see docs/commands.md, MCP server); the memory library is imported with it but opens no
database until the first call, and the vector side (memory/recall/hybrid.py) only when a search needs it.
Run by hand: `memory mcp` (stdin/stdout speak JSON-RPC).
"""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from memory.base.classify import TYPES
from memory.base.safepath import PathRejected
from memory.mcp import tools

TypeName = Literal[TYPES]  # type: ignore[valid-type]  # the memory types, as an enum in the schema

INSTRUCTIONS = """Persistent memory of this project's earlier sessions (decisions, fixes, learnings, docs).
Search in three layers to spend few tokens: `search` returns one short line per memory; `timeline`
shows what was recorded around one of them; `get` returns the full content of the ids you choose.
`save` stores something worth remembering; `delete` removes memories; `stats` shows what is stored.
`repo_map` lists the repository's most referenced definitions, optionally around files or symbols."""

Project = Annotated[str | None, Field(description="Another project: its key or name (stats with all_projects "
                                                  "lists them) or a folder inside this project. Default: this "
                                                  "project.")]
Ids = Annotated[list[int], Field(min_length=1, max_length=20, description="Memory ids from search or timeline.")]


def _run(fn: object, *args: object, **kwargs: object) -> str:
    """Input problems become tool errors the model can read and correct; any other failure (a full or
    read-only data dir, a damaged database) a tool error of one line saying what is wrong and what to do
    (memory/present/failure.py; the traceback goes to the hook log), never a crash of the server.

    The tools are async so that they run on the event loop's thread: the SDK runs sync tools in worker
    threads, and a SQLite connection may only be used by the thread that opened it. The queries take
    milliseconds, and there is one client."""
    try:
        return fn(*map(tools.readable, args), **kwargs)  # type: ignore[operator, no-any-return]
    except (tools.ToolInputError, PathRejected) as exc:
        raise ToolError(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - told as the tool's result, the server goes on
        from memory.present.failure import report

        raise ToolError(report(f"mcp {getattr(fn, '__name__', 'tool')}", exc)) from None


def build(places: tools.Places | None = None) -> MCPServer:
    where = places or tools.Places()
    server: MCPServer = MCPServer(name="memory", instructions=INSTRUCTIONS, log_level="WARNING")
    read_only = ToolAnnotations(readOnlyHint=True, openWorldHint=False)

    @server.tool(annotations=read_only, structured_output=False)
    async def search(
        query: Annotated[str, Field(min_length=1, max_length=1000, description="What to look for (keywords).")],
        limit: Annotated[int, Field(ge=1, le=50, description="Results at most.")] = 10,
        types: Annotated[list[TypeName] | None, Field(description="Only these memory types (default: all but "
                                                                   "prompt, the user's own requests).")] = None,
        project: Project = None,
        since: Annotated[str | None, Field(description="Only memories since a date (2026-11-01) or an age "
                                                       "(7d, 12h).")] = None,
        until: Annotated[str | None, Field(description="Only memories before a date or an age.")] = None,
        all_projects: Annotated[bool, Field(description="Search every project's memory; results are "
                                                        "labelled with their project.")] = False,
    ) -> str:
        """Layer 1: find memories. One compact line each: id, date, type, title and the start of the content.
        Follow with timeline(id) for context or get(ids) for the full text."""
        return _run(tools.search, where, query, limit, list(types) if types else None, project, since, until,
                    all_projects)

    @server.tool(annotations=read_only, structured_output=False)
    async def timeline(
        id: Annotated[int | None, Field(ge=1, description="The memory to look around (from search).")] = None,
        query: Annotated[str | None, Field(max_length=1000, description="Instead of id: the best match for "
                                                                         "this query is the anchor.")] = None,
        before: Annotated[int, Field(ge=0, le=20, description="Memories recorded before it.")] = 3,
        after: Annotated[int, Field(ge=0, le=20, description="Memories recorded after it.")] = 3,
        project: Project = None,
    ) -> str:
        """Layer 2: what was recorded just before and after one memory in the same project (oldest first)."""
        return _run(tools.timeline_tool, where, id, query, before, after, project)

    @server.tool(annotations=read_only, structured_output=False)
    async def get(ids: Ids, project: Project = None) -> str:
        """Layer 3: the full content and details of the chosen memories."""
        return _run(tools.get, where, list(ids), project)

    @server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False, openWorldHint=False),
                 structured_output=False)
    async def save(
        content: Annotated[str, Field(min_length=1, max_length=20000, description="What to remember.")],
        # No max_length: a refusal echoes the value to the client (a secret in it too); store.save filters the
        # title whole, then cuts it to 200 characters.
        title: Annotated[str | None, Field(description="Short title (default: first line).")] = None,
        type: Annotated[TypeName, Field(description="Kind of memory.")] = "learning",
        importance: Annotated[float, Field(ge=0, le=1, description="0-1; kept at most 0.5 (a save of "
                                                                   "yours is the model's).")] = 0.7,
        tags: Annotated[list[str] | None, Field(max_length=20, description="Tags.")] = None,
        files: Annotated[list[str] | None, Field(max_length=50, description="Related files inside the "
                                                                            "project.")] = None,
        expires: Annotated[str | None, Field(description="Forget it after a duration (30d, 12h, 2w) or on a "
                                                         "date (2027-01-31).")] = None,
        project: Project = None,
    ) -> str:
        """Save a memory (a learning, fix or fact) for later sessions. It is recorded as the model's, below
        what the user said: a 'decision' is stored as an observation (only the user makes decisions, with
        /memory:save). Private text and secrets are removed before it is stored."""
        return _run(tools.save, where, content, title, type, importance, tags, files, expires, project)

    @server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=True,
                                             openWorldHint=False), structured_output=False)
    async def delete(ids: Annotated[list[int], Field(min_length=1, max_length=100, description="Memory ids.")],
               project: Project = None) -> str:
        """Delete memories by id (with their search index entries and vectors)."""
        return _run(tools.delete, where, list(ids), project)

    @server.tool(annotations=read_only, structured_output=False)
    async def stats(project: Project = None,
              all_projects: Annotated[bool, Field(description="List every project instead.")] = False) -> str:
        """What is stored: counts by type, sessions, size against the cap; or every project with all_projects."""
        return _run(tools.stats, where, project, all_projects)

    @server.tool(annotations=read_only, structured_output=False)
    async def repo_map(
        focus: Annotated[list[str] | None, Field(description="Files (paths from the project root) or symbols you "
                                                             "work on: the map leans towards what they use and "
                                                             "what uses them.")] = None,
        tokens: Annotated[int, Field(ge=64, le=16000, description="Size of the map in tokens.")] = 1024,
    ) -> str:
        """A map of this repository: its most referenced definitions (classes, functions) as signature lines
        with line numbers, grouped by file, ranked by how much the rest of the code uses them."""
        return _run(tools.repo_map, where, list(focus) if focus else None, tokens)

    return server


def main() -> None:
    import os

    os.umask(0o077)  # what a save creates in the data dir: owner-only
    build().run("stdio")


if __name__ == "__main__":
    main()
