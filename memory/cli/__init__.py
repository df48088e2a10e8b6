"""The `memory` command line: the same operations as the library, one command each.

Cold side, the top layer (above mcp, which `memory mcp` starts): may import every other memory package
and click. Nothing imports it except the entry points (bin/memory, `python -m memory`)."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from typing import Any

import click

from memory import store
from memory.base.classify import TYPES
from memory.base.timeparse import parse_when
from memory.base.words import count
from memory.recall.search import Filters, timeline
from memory.store.workspace import Workspace, all_projects


def _workspace(project: str | None) -> Workspace:
    """--project takes a folder (its git project) or a project key/name from `memory stats --all`."""
    if project and not os.path.isdir(project):
        for meta in all_projects():
            if project in (meta.get("key"), meta.get("name")):
                return Workspace.for_dir(meta["root"]) if os.path.isdir(meta["root"]) else _by_key(meta)
        raise click.UsageError(f"no project {project!r}: give a folder, or a key or name from `memory projects`")
    # As the hooks decide: CLAUDE_PROJECT_DIR stays put when the agent cds (Bash tool, MCP server).
    return Workspace.for_dir(project or os.environ.get("MEMORY_PROJECT_DIR") or os.environ.get("CLAUDE_PROJECT_DIR")
                             or os.getcwd())


def _by_key(meta: dict[str, Any]) -> Workspace:
    from memory.base.project import Project

    return Workspace(Project(meta["key"], meta["name"], meta["root"], meta.get("remote")))


def _open(project: str | None) -> Workspace:
    return _opened(_workspace(project))


def _opened(ws: Workspace) -> Workspace:
    from memory.base import notices

    before = len(notices.pending())
    ws.db  # noqa: B018 - opens and migrates; a corrupt file is moved aside and recorded as a notice
    for notice in notices.pending()[before:]:
        click.echo(f"memory: {notice.get('message')}", err=True)
    return ws


def no_memory_yet(ws: Workspace) -> str:
    return (f"no memory for project {ws.project.name} yet ({ws.project.root}): the plugin records it while you "
            "work there with Claude Code, or `memory save` adds one")


def _existing(ws: Workspace, as_json: bool = False, empty: Any = None) -> Workspace | None:
    """The project's workspace for a read-only command, or None when the project has no database: then
    nothing is created (a read in any folder must not leave a database behind) and the command says so
    (JSON: `empty`)."""
    if os.path.exists(ws.db_path):
        return _opened(ws)
    if as_json:
        _emit(empty)
    else:
        click.echo(no_memory_yet(ws))
    return None


def _existing_or_fail(project: str | None, what: str) -> Workspace:
    """As _existing, for a command about given ids: no database is an error naming them."""
    ws = _workspace(project)
    if not os.path.exists(ws.db_path):
        raise click.ClickException(f"no {what}: {no_memory_yet(ws)}")
    return _opened(ws)


def _date(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts)) if ts else "-"


def _emit(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


project_option = click.option("--project", "-p", help="Project folder, or a project key or name (default: cwd).")
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")


class _Fraction(click.FloatRange):
    """0 to 1, and not NaN (a FloatRange lets NaN through: every comparison with it is false)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if number != number:
            self.fail("nan is not a number from 0 to 1", param, ctx)
        return number


MEMORY_ID = click.IntRange(1, 2**63 - 1)  # SQLite's integer range: a larger number is a usage error, not a crash


def _when(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return parse_when(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _readable(arg: str) -> str:
    """An argument as text SQLite and the terminal accept: bytes that were not UTF-8 reach Python as lone
    surrogates (which no encoder takes) and become U+FFFD; a NUL (only possible in-process) goes too."""
    if arg.isascii() and "\x00" not in arg:
        return arg
    try:
        raw = arg.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no byte came from
        raw = arg.encode("utf-8", "replace")
    return raw.decode("utf-8", "replace").replace("\x00", "\ufffd")


class _Group(click.Group):
    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, [_readable(a) for a in args])


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="claude-memory-plugin", message="memory %(version)s")
@click.option("--home", type=click.Path(file_okay=False), help="Data dir (default: MEMORY_HOME, else "
              "CLAUDE_PLUGIN_DATA, else the installed plugin's).")
def cli(home: str | None) -> None:
    """Persistent memory for Claude Code: search, inspect and manage what the plugin remembers."""
    if home:
        os.environ["MEMORY_HOME"] = os.path.abspath(os.path.expanduser(home))


@cli.command()
@click.argument("query", nargs=-1, required=True)
@click.option("--limit", "-n", default=10, show_default=True, type=click.IntRange(1, 200))
@click.option("--type", "types", multiple=True, type=click.Choice(TYPES), help="Only these types (repeatable).")
@click.option("--since", help="Only memories since a date (2026-11-01) or an age (7d, 12h).")
@click.option("--until", help="Only memories before a date or an age.")
@click.option("--session", help="Only memories of this session id.")
@click.option("--all-projects", "-a", is_flag=True, help="Search every project's memory (hits labelled by project).")
@click.option("--mode", type=click.Choice(["hybrid", "keyword"]), default=None,
              help="hybrid: keyword and vectors fused (default, MEMORY_SEARCH_MODE); keyword: BM25 only.")
@project_option
@json_option
def search(query: tuple[str, ...], limit: int, types: tuple[str, ...], since: str | None, until: str | None,
           session: str | None, all_projects: bool, mode: str | None, project: str | None, as_json: bool) -> None:
    """Search memories (layer 1: id, title, type, score, date)."""
    text = " ".join(query)
    filters = Filters(types=list(types) or None, since=_when(since), until=_when(until), session_id=session)
    if all_projects:
        from memory.cli.more import search_all_projects

        search_all_projects(text, limit, filters, project, as_json)
        return
    ws = _existing(_workspace(project), as_json, [])
    if ws is None:
        return
    from memory.recall import hybrid, layers

    hits, used = layers.search(ws, text, limit=limit, mode=mode, timeout=2.0, in_process=hybrid.in_process,
                               filters=filters)
    if used != (mode or used) and not as_json:
        click.echo(f"memory: no semantic index answered (the background worker answers once it is warm); "
                   f"{used} results", err=True)
    store.log_access(ws.db, [h.id for h in hits], "search", None, text)
    from memory.base import fence

    prov = store.provenance(ws.db, [h.id for h in hits])
    flagged = {h.id for h in hits if fence.is_flagged(prov.get(h.id), h.title, h.content)}
    if as_json:
        _emit([{**h.compact(), "origin": fence.row_label(prov.get(h.id)),
                "flags": [fence.FLAG] if h.id in flagged else []} for h in hits])
        return
    if not hits:
        click.echo("no memories match")
        return
    for h in hits:
        c = h.compact()
        flag = f"  [flagged: {fence.FLAG}]" if h.id in flagged else ""
        click.echo(f"#{c['id']:<6} {c['date']}  {c['type']:<11} {c['score']:>7.2f}  {h.title}{flag}")


@cli.command(name="timeline")
@click.argument("memory_id", type=MEMORY_ID)
@click.option("--before", default=5, show_default=True, type=click.IntRange(0, 100))
@click.option("--after", default=5, show_default=True, type=click.IntRange(0, 100))
@project_option
@json_option
def timeline_cmd(memory_id: int, before: int, after: int, project: str | None, as_json: bool) -> None:
    """Memories recorded around one memory (layer 2)."""
    ws = _existing_or_fail(project, f"memory #{memory_id}")
    rows = timeline(ws.db, memory_id, before, after)
    if not rows:
        raise click.ClickException(f"no memory #{memory_id} in project {ws.project.name}; "
                                   "find ids with `memory search`")
    if as_json:
        _emit([{"id": r["id"], "title": r["title"], "type": r["type"], "date": _date(r["created_at"]),
                "session_id": r["session_id"], "anchor": r["id"] == memory_id} for r in rows])
        return
    for r in rows:
        mark = ">" if r["id"] == memory_id else " "
        click.echo(f"{mark} #{r['id']:<6} {_date(r['created_at'])}  {r['type']:<11} {r['title']}")


@cli.command()
@click.argument("ids", nargs=-1, type=MEMORY_ID, required=True)
@project_option
@json_option
def get(ids: tuple[int, ...], project: str | None, as_json: bool) -> None:
    """Full content of memories by id (layer 3)."""
    ws = _existing_or_fail(project, f"memory with id {', '.join(map(str, ids))}")
    rows = store.get_many(ws.db, list(ids))
    missing = sorted(set(ids) - {r["id"] for r in rows})
    store.log_access(ws.db, [r["id"] for r in rows], "get")
    from memory.base import fence

    if as_json:
        _emit([dict(r) for r in rows])
    else:
        for r in rows:
            click.echo(f"#{r['id']} [{r['type']}] {r['title']}")
            click.echo(f"  date: {_date(r['created_at'])}  importance: {r['importance']:.2f}  "
                       f"session: {r['session_id'] or '-'}  tags: {r['tags'] or '-'}")
            if r["files"]:
                click.echo(f"  files: {', '.join(r['files'].splitlines())}")
            flag = f"  [flagged: {fence.FLAG}: not injected automatically]" \
                if fence.is_flagged(r, r["title"], r["content"]) else ""
            click.echo(f"  from: {fence.row_label(r)}{flag}")
            click.echo("")
            click.echo(r["content"])
            click.echo("")
    if missing:
        raise click.ClickException(f"no memory with id {', '.join(map(str, missing))}")


def _parse_jsonl_line(line: str, number: int, default_project: str | None) -> dict[str, Any]:
    """One --jsonl line, checked and converted completely: every line is, before anything is saved."""
    def bad(why: str) -> click.ClickException:
        return click.ClickException(f"line {number}: {why}")

    try:
        obj = json.loads(line)
    except ValueError as exc:
        raise bad(f"not JSON ({exc.msg}); give one JSON object per line") from None
    if not isinstance(obj, dict):
        raise bad("needs a JSON object with a string \"content\" (and \"title\")")
    content, title = obj.get("content"), obj.get("title")
    if not isinstance(content if content is not None else title, str) or not (content or title):
        raise bad("needs a non-empty string \"content\" (and \"title\")")
    if title is not None and not isinstance(title, str):
        raise bad("\"title\" must be a string")
    content = str(content or title)
    out: dict[str, Any] = {"content": content, "title": title or content.splitlines()[0][:120]}
    out["type"] = obj.get("type", "observation")
    if out["type"] not in TYPES:
        raise bad(f"type must be one of {', '.join(TYPES)}")
    importance = obj.get("importance", 0.5)
    if isinstance(importance, bool) or not isinstance(importance, int | float) or not 0 <= importance <= 1:
        raise bad("importance must be a number from 0 to 1")
    out["importance"] = float(importance)
    tags = obj.get("tags", [])
    if isinstance(tags, str):
        tags = [tags]
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise bad("tags must be a string or a list of strings")
    out["tags"] = tags
    created = obj.get("created_at")
    if isinstance(created, str):
        try:
            created = parse_when(created)
        except ValueError as exc:
            raise bad(f"created_at: {exc}") from None
    elif created is not None and (isinstance(created, bool) or not isinstance(created, int | float)):
        raise bad("created_at must be a date string or a unix time in seconds")
    out["created_at"] = created
    session = obj.get("session_id")
    if session is not None and not isinstance(session, str):
        raise bad("session_id must be a string")
    out["session_id"] = session
    project = obj.get("project") or default_project
    if project is not None and not isinstance(project, str):
        raise bad("project must be a folder or a project key or name")
    try:
        out["workspace"] = _open(project)
    except click.UsageError as exc:
        raise bad(exc.message) from None
    return out


@cli.command()
@click.argument("text", nargs=-1)
@click.option("--title", "-t", help="Title (default: the first line of the content).")
@click.option("--type", "type_", default="learning", show_default=True, type=click.Choice(TYPES))
@click.option("--importance", default=0.7, show_default=True, type=_Fraction(0, 1))
@click.option("--tag", "tags", multiple=True, help="Tag (repeatable).")
@click.option("--expires", help="Forget it after a duration (30d, 12h, 2w, 6mo) or on a date (2027-01-31).")
@click.option("--jsonl", is_flag=True, help="Read many memories from stdin, one JSON object per line "
              "(title, content, type, project, created_at optional); print their ids.")
@project_option
@json_option
def save(text: tuple[str, ...], title: str | None, type_: str, importance: float, tags: tuple[str, ...],
         expires: str | None, jsonl: bool, project: str | None, as_json: bool) -> None:
    """Save a memory from the arguments or stdin."""
    from memory.store.expiry import parse_expires

    try:
        expires_at = parse_expires(expires) if expires else None
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--expires") from None
    if jsonl:
        results = []
        spaces: dict[str | None, Workspace] = {}
        # Every line is checked before any is saved: a bad line leaves the store untouched.
        objects = [(n, _parse_jsonl_line(line, n, project))
                   for n, line in enumerate(sys.stdin, start=1) if line.strip()]
        for number, obj in objects:
            ws = obj["workspace"]
            ws = spaces.setdefault(ws.project.key, ws)
            saved = store.save(ws.db, ws.project.key, store.NewMemory(
                title=obj["title"], content=obj["content"], type=obj["type"], importance=obj["importance"],
                tags=obj["tags"], source="cli", created_at=obj["created_at"], session_id=obj["session_id"]),
                filter_low_value=False)
            results.append({"line": number, "id": saved.id, "action": saved.action})
        if as_json:
            _emit(results)
        else:
            for r in results:
                click.echo(f"{r['id']}\t{r['action']}")
        return
    content = " ".join(text).strip() or (sys.stdin.read().strip() if not sys.stdin.isatty() else "")
    if not content:
        raise click.UsageError("nothing to save: give the text as arguments or on stdin")
    ws = _open(project)
    saved = store.save(ws.db, ws.project.key, store.NewMemory(
        title=title or content.splitlines()[0][:120], content=content, type=type_, importance=importance,
        tags=list(tags), source="cli", expires_at=expires_at), filter_low_value=False)
    if saved.id is None:
        raise click.ClickException("nothing left to save once private text and secrets were removed")
    if as_json:
        _emit({"id": saved.id, "action": saved.action})
    else:
        click.echo(f"saved #{saved.id} ({saved.action})")


@cli.command()
@click.argument("ids", nargs=-1, type=MEMORY_ID, required=True)
@project_option
def forget(ids: tuple[int, ...], project: str | None) -> None:
    """Delete memories by id."""
    ws = _existing_or_fail(project, f"memory with id {', '.join(map(str, ids))}")
    gone = store.forget(ws.db, list(ids))
    missing = sorted(set(ids) - set(gone))
    if gone:
        click.echo(f"forgot {', '.join(f'#{i}' for i in gone)}")
    if missing:
        raise click.ClickException(f"no memory with id {', '.join(map(str, missing))}")


@cli.command()
@project_option
@json_option
def stats(project: str | None, as_json: bool) -> None:
    """Counts of memories, sessions, handoffs and queued work for the project."""
    from memory.present.stats import project_stats

    ws = _workspace(project)
    if _existing(ws, as_json, {"project": ws.project.name, "project_key": ws.project.key, "root": ws.project.root,
                               "database": None, "memories": 0}) is None:
        return
    data = project_stats(ws)
    if as_json:
        _emit(data)
        return
    click.echo(f"project   {data['project']} ({data['root']})")
    click.echo(f"database  {data['database']} ({data['database_bytes'] / 1024:.0f} KiB)")
    click.echo(f"memories  {data['memories']}  " + "  ".join(f"{k}:{v}" for k, v in data["by_type"].items()))
    click.echo("sessions  " + "  ".join(f"{k}:{v}" for k, v in data["sessions"].items()))
    click.echo(f"tool calls {data['tool_calls']}  handoffs {data['handoffs']}  injections {data['injections']}")
    click.echo("queue     " + ("  ".join(f"{k}:{v}" for k, v in data["queue"].items()) or "empty"))
    for label, key in (("outlines (all sessions)", "outlines"), ("outlines (last session)", "outlines_last_session")):
        o = data[key]
        pct = 100 * o["tokens_saved"] / o["original_tokens"] if o["original_tokens"] else 0.0
        click.echo(f"{label}: {count(o['outlined_reads'], 'read')}, {o['tokens_saved']:,} of "
                   f"{count(o['original_tokens'], 'token')} saved ({pct:.0f}%)")
    x = data["extraction"]
    runs = "  ".join(f"{p}:{v['ok']} ok/{v['failed']} failed ({count(v['input_tokens'] + v['output_tokens'], 'token')})"
                     for p, v in x["by_provider"].items()) or "none yet"
    click.echo(f"extraction {count(x['sessions_extracted'], 'session')}, {count(x['learnings'], 'learning')}; {runs}")
    click.echo(f"token budget {x['budget_spent_today_all_projects']:,} of "
               f"{count(x['budget_daily_tokens'], 'paid token')} "
               f"spent today (all projects; this project {x['paid_tokens_today']:,} today, "
               f"{x['paid_tokens_total']:,} in total)")


@cli.command()
@click.option("--limit", "-n", default=20, show_default=True, type=click.IntRange(1, 1000))
@project_option
@json_option
def sessions(limit: int, project: str | None, as_json: bool) -> None:
    """Recent sessions of the project with their summaries."""
    ws = _existing(_workspace(project), as_json, [])
    if ws is None:
        return
    rows = [dict(r) for r in ws.db.execute(
        "SELECT * FROM sessions WHERE project = ? ORDER BY started_at DESC LIMIT ?", (ws.project.key, limit))]
    if as_json:
        _emit(rows)
        return
    if not rows:
        click.echo("no sessions recorded yet")
    for r in rows:
        click.echo(f"{r['id'][:8]}  {_date(r['started_at'])}  {r['status']:<9} prompts:{r['prompt_count']} "
                   f"tools:{r['tool_call_count']}  {r['summary'] or ''}")


@cli.command()
@json_option
def projects(as_json: bool) -> None:
    """Every project that has a memory database."""
    rows = all_projects()
    if as_json:
        _emit(rows)
        return
    for r in rows:
        click.echo(f"{r['key']:<40} {r['root']}")


@cli.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--home", type=click.Path(file_okay=False), help="Data dir to replay into (default: a new scratch dir).")
@click.option("--cwd", help="Project folder to use instead of the cwd recorded in the events.")
@click.option("--show", type=click.IntRange(0, 100000), default=300, show_default=True,
              help="Characters of each hook's output to show.")
@click.option("--keep", is_flag=True, help="Keep the scratch data dir (removed at the end by default).")
@json_option
def replay(file: str, home: str | None, cwd: str | None, show: int, keep: bool, as_json: bool) -> None:
    """Feed recorded hook events (JSON lines) or a transcript through the real hook processes."""
    import shutil

    from memory.base.bootstrap import venv_python
    from memory.hook.replay import replay as run_replay

    scratch = home is None
    home = home or tempfile.mkdtemp(prefix="memory-replay-")
    env = {**os.environ, "MEMORY_HOME": home}
    python = venv_python()
    if python:  # the hooks' own interpreter, found as hooks/run would (a pyenv shim costs 80-180 ms a hook)
        env["MEMORY_PYTHON"] = python
    if scratch:  # no background worker left behind in a scratch dir
        env["MEMORY_WORKER"] = "off"
    if not cwd:
        _note_missing_folders(file)
    try:
        results = _replay_print(run_replay(file, cwd=cwd, env=env), show, as_json)
    finally:
        if scratch and not keep:
            shutil.rmtree(home, ignore_errors=True)
    kept = home if not scratch or keep else None
    if as_json:
        _emit({"home": kept, "python": python, "results": results})
    else:
        ran = [r for r in results if r.get("entry")]
        if ran:
            ms = sorted(r["ms"] for r in ran)
            click.echo(f"{count(len(ran), 'hook')} on {python or 'python3 from PATH'}, p50 {ms[len(ms) // 2]:.1f} ms, "
                       f"max {ms[-1]:.1f} ms; " + (f"data in {kept}" if kept else "scratch data removed (--keep)"))
        bad = [r for r in ran if r["exit_code"] != 0]
        if bad:
            raise click.ClickException(f"{count(len(bad), 'hook')} exited non-zero")


def _replay_print(runs: Any, show: int, as_json: bool) -> list[dict[str, Any]]:
    """Each hook's line as it runs (nothing with --json); returns every result."""
    results = []
    for r in runs:
        results.append(r)
        if as_json:
            continue
        if r.get("entry") is None:
            click.echo(f"{r['event'] or '?':<20} skipped ({r['skipped']})")
            continue
        out = r["stdout"].strip()
        click.echo(f"{r['event']:<20} exit {r['exit_code']}  {r['ms']:>7.1f} ms  "
                   f"{(out[:show] + ('...' if len(out) > show else '')) if out else '(no output)'}")
    return results


def _note_missing_folders(file: str) -> None:
    """Hooks record nothing for a folder that is not there: say so rather than replay into nothing."""
    from memory.hook.replay import events_from_file

    folders = {str(e.get("cwd")) for e in events_from_file(file) if e.get("cwd")}
    for folder in sorted(f for f in folders if not os.path.isdir(f)):
        click.echo(f"replay: the recorded folder {folder} does not exist here, so the hooks record nothing "
                   "for it; pass --cwd DIR to replay into a folder of this machine", err=True)


@cli.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@json_option
def outline(file: str, as_json: bool) -> None:
    """Print the tree-sitter outline of a code file (--json: structured symbols)."""
    from parser import estimate_tokens, outline_file

    result = outline_file(file)
    if as_json:
        data = result.to_json()
        data["symbols"] = [{"name": s["name"], "kind": s["kind"], "start_line": s["start_line"],
                            "end_line": s["end_line"], "signature": s["signature"], "parent": s["parent"],
                            "doc": s["doc"]} for s in data["symbols"]]
        _emit(data)
        return
    text = result.render()
    with open(file, "rb") as fh:
        original = estimate_tokens(fh.read())
    click.echo(text)
    if result.parsed:
        click.echo(f"-- {count(len(result.symbols), 'symbol')}; ~{count(estimate_tokens(text), 'token')} instead of "
                   f"~{original:,}", err=True)


@cli.command()
@click.option("--repair", is_flag=True, help="Fix what can be fixed: salvage a damaged database, rebuild the "
              "full-text index, release jobs of a dead worker, clear notices.")
@project_option
@json_option
def doctor(repair: bool, project: str | None, as_json: bool) -> None:
    """What is installed, which providers are available, data dir and database health."""
    from memory.present.doctor import repair as run_repair
    from memory.present.doctor import report

    if repair:
        for line in run_repair(_workspace(project)):
            click.echo(f"repair: {line}", err=as_json)
    data = report(_workspace(project))
    if as_json:
        _emit(data)
    else:
        for key, value in data.items():
            if isinstance(value, dict):
                click.echo(f"{key}:")
                for k, v in value.items():
                    click.echo(f"  {k}: {v}")
            else:
                click.echo(f"{key}: {value}")
    if not data["database"].get("ok", True):
        sys.exit(1)


from memory.cli.audit import COMMANDS as AUDIT_COMMANDS  # noqa: E402
from memory.cli.learn import COMMANDS as EXTRACT_COMMANDS  # noqa: E402
from memory.cli.more import COMMANDS  # noqa: E402 - they use the helpers above
from memory.cli.semantic import COMMANDS as SEMANTIC_COMMANDS  # noqa: E402
from memory.cli.team import COMMANDS as TEAM_COMMANDS  # noqa: E402

for _command in [*COMMANDS, *SEMANTIC_COMMANDS, *EXTRACT_COMMANDS, *TEAM_COMMANDS, *AUDIT_COMMANDS]:
    cli.add_command(_command)


def main() -> None:
    if hasattr(sys.stdin, "reconfigure"):  # stdin that is not UTF-8: U+FFFD, not a UnicodeDecodeError
        sys.stdin.reconfigure(errors="replace")
    cli(prog_name="memory")
