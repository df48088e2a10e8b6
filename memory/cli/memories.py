"""The commands about what is remembered: search, timeline and get (the three layers), save, forget, recent,
handoff, sessions, projects and stats."""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from typing import Any

import click

from memory import store
from memory.base.classify import TYPES
from memory.base.provenance import agent_reason
from memory.base.words import count, plural
from memory.cli import author
from memory.cli.common import (
    MEMORY_ID,
    Fraction,
    emit,
    existing,
    existing_or_fail,
    fail_on_missing,
    json_option,
    open_project,
    opened,
    project_option,
    when,
    workspace,
)
from memory.present.export import RECORDS, check_record, exported_project, jsonl_fields, restore_record
from memory.present.text import minute
from memory.recall.search import Filters, Hit, timeline
from memory.store import bulk
from memory.store.workspace import Workspace, all_projects


@click.command()
@click.argument("query", nargs=-1, required=True)
@click.option("--limit", "-n", default=10, show_default=True, type=click.IntRange(1, 200))
@click.option("--type", "types", multiple=True, type=click.Choice(TYPES), help="Only these types (repeatable).")
@click.option("--since", help="Only memories since a date (2026-11-01) or an age (7d, 12h).")
@click.option("--until", help="Only memories before a date or an age.")
@click.option("--session", help="Only memories of this session id.")
@click.option("--all-projects", "-a", is_flag=True, help="Search every project's memory (hits labelled by project).")
@click.option("--as-of", "as_of", help="The time the query is asked at (default now): \"yesterday\", \"last week\" "
              "or \"in March\" in it count from there. A date (2023-05-30T18:00) or an age (7d).")
@click.option("--mode", type=click.Choice(["hybrid", "keyword"]), default=None,
              help="hybrid: keyword and vectors fused (default, MEMORY_SEARCH_MODE); keyword: BM25 only.")
@project_option
@json_option
def search(query: tuple[str, ...], limit: int, types: tuple[str, ...], since: str | None, until: str | None,
           session: str | None, all_projects: bool, as_of: str | None, mode: str | None, project: str | None,
           as_json: bool) -> None:
    """Search memories (layer 1: id, title, type, score, date)."""
    text = " ".join(query)
    filters = Filters(types=list(types) or None, since=when(since), until=when(until), session_id=session,
                      as_of=when(as_of))
    if all_projects:
        search_all_projects(text, limit, filters, project, as_json)
        return
    ws = existing(workspace(project), as_json, [])
    if ws is None:
        return
    from memory.recall import hybrid, layers

    hits, answered = layers.search(ws, text, limit=limit, mode=mode, timeout=2.0, in_process=hybrid.in_process,
                                   filters=filters, wait=layers.STARTING_WAIT_S)
    if not as_json:  # stdout stays the hits alone, for scripts
        click.echo(f"memory: {answered.line()}", err=True)
    layers.log_search(ws, hits, text, answered.mode)
    from memory.base import fence

    prov = store.provenance(ws.db, [h.id for h in hits])
    flagged = {h.id for h in hits if fence.is_flagged(prov.get(h.id), h.title, h.content)}
    if as_json:
        # Each hit says what answered (mode, why): the output stays the list scripts already read.
        emit([{**h.compact(), "origin": fence.row_label(prov.get(h.id)),
                "flags": [fence.FLAG] if h.id in flagged else [], **answered.as_json()} for h in hits])
        return
    if not hits:
        click.echo("no memories match")
        return
    for h in hits:
        click.echo(_hit_line(h, h.id in flagged))


def _hit_line(hit: Hit, flagged: bool) -> str:
    """One search hit: id, date, type, score (0-1), title and, when it reads as orders, its flag."""
    from memory.base.fence import FLAG

    c = hit.compact()
    flag = f"  [flagged: {FLAG}]" if flagged else ""
    return f"#{c['id']:<6} {c['date']}  {c['type']:<11} {c['score']:>7.2f}  {hit.title}{flag}"


@click.command(name="timeline")
@click.argument("memory_id", type=MEMORY_ID)
@click.option("--before", default=5, show_default=True, type=click.IntRange(0, 100))
@click.option("--after", default=5, show_default=True, type=click.IntRange(0, 100))
@project_option
@json_option
def timeline_cmd(memory_id: int, before: int, after: int, project: str | None, as_json: bool) -> None:
    """Memories recorded around one memory (layer 2)."""
    ws = existing_or_fail(project, f"memory #{memory_id}")
    rows = timeline(ws.db, memory_id, before, after)
    if not rows:
        raise click.ClickException(f"no memory #{memory_id} in project {ws.project.name}; "
                                   "find ids with `memory search`")
    if as_json:
        emit([{"id": r["id"], "title": r["title"], "type": r["type"], "date": minute(r["created_at"]),
                "session_id": r["session_id"], "anchor": r["id"] == memory_id} for r in rows])
        return
    for r in rows:
        mark = ">" if r["id"] == memory_id else " "
        click.echo(f"{mark} #{r['id']:<6} {minute(r['created_at'])}  {r['type']:<11} {r['title']}")


@click.command()
@click.argument("ids", nargs=-1, type=MEMORY_ID, required=True)
@project_option
@json_option
def get(ids: tuple[int, ...], project: str | None, as_json: bool) -> None:
    """Full content of memories by id (layer 3)."""
    ws = existing_or_fail(project, f"memory with id {', '.join(map(str, ids))}")
    rows = store.get_many(ws.db, list(ids))
    store.log_access(ws.db, [r["id"] for r in rows], "get")
    from memory.base import fence
    from memory.store import symbols

    old = symbols.stale(ws.db, [r["id"] for r in rows])
    if as_json:
        emit([{**dict(r), "stale": old.get(r["id"])} for r in rows])
    else:
        for r in rows:
            click.echo(f"#{r['id']} [{r['type']}] {r['title']}")
            if r["id"] in old:
                click.echo(f"  stale: the code changed since it was recorded ({old[r['id']]})")
            click.echo(f"  date: {minute(r['created_at'])}  importance: {r['importance']:.2f}  "
                       f"session: {r['session_id'] or '-'}  tags: {r['tags'] or '-'}")
            if r["files"]:
                click.echo(f"  files: {', '.join(r['files'].splitlines())}")
            flag = f"  [flagged: {fence.FLAG}: not injected automatically]" \
                if fence.is_flagged(r, r["title"], r["content"]) else ""
            click.echo(f"  from: {fence.row_label(r)}{flag}")
            click.echo("")
            click.echo(r["content"])
            click.echo("")
    fail_on_missing(ids, {r["id"] for r in rows})


# Rows per transaction. Each commit writes every index page its rows touched, and the random-keyed indexes
# (content_hash, title_key, uid) have a row in almost every leaf page once the store holds ~50,000 memories:
# at 100,000 the commit cost ~25 us a row in batches of 2,000, ~11 in batches of 10,000. The per-memory
# rules run before the write lock is taken (store.save_many), so a batch of 5,000 holds it for its writes
# alone, ~0.3 s at 100,000 memories: a hook waiting for it (busy timeout 5 s) gets its turn between batches.
JSONL_BATCH = 5000


def _batches(items: list[Any], pipeline: bool) -> list[list[Any]]:
    """A project's lines in batches of at most JSONL_BATCH. Pipelined (memory/store/bulk.py), the first
    are smaller, 500 lines doubling: writing starts once 500 rows are made, not 5,000 (~0.25 s)."""
    out, start, size = [], 0, 500 if pipeline else JSONL_BATCH
    while start < len(items):
        out.append(items[start:start + size])
        start, size = start + size, min(2 * size, JSONL_BATCH)
    return out


def _parse_jsonl_line(line: str, number: int, default_project: str | None,
                      places: dict[str | None, Workspace]
                      ) -> tuple[Workspace, store.NewMemory | dict[str, Any], int | None]:
    """One --jsonl line, checked and converted completely: every line is, before anything is saved. A
    project is resolved once per spelling (`places`), its database opened later, once. Also returns the
    line's own `id` (a `memory export` line), which the output maps to the new one. A session or handoff
    record of an export comes back as its checked JSON object."""
    def bad(why: str) -> click.ClickException:
        return click.ClickException(f"line {number}: {why}")

    try:
        obj = json.loads(line)
    except ValueError as exc:
        raise bad(f"not JSON ({exc.msg}); give one JSON object per line") from None
    if not isinstance(obj, dict):
        raise bad("needs a JSON object with a string \"content\" (and \"title\")")
    try:
        if obj.get("record") in RECORDS:  # a session or handoff of an export
            check_record(obj)
            item: store.NewMemory | dict[str, Any] = obj
        else:
            item = store.NewMemory(**jsonl_fields(obj))
    except ValueError as exc:
        raise bad(str(exc)) from None
    project = obj.get("project") or default_project
    if project is not None and not isinstance(project, str):
        raise bad("project must be a folder or a project key or name")
    if project not in places:
        try:
            places[project] = workspace(project)
        except click.UsageError as exc:
            known = exported_project(obj)  # a `memory export` line: its project made here, by its key
            if known is None:
                raise bad(exc.message) from None
            places[project] = known
    old = obj.get("id")
    was = old if isinstance(old, int) and not isinstance(old, bool) else None
    return places[project], item, was


def _save_jsonl(default_project: str | None, as_json: bool) -> None:
    """`save --jsonl`: every line checked first (a bad one saves nothing), then one connection per project
    and one transaction per JSONL_BATCH lines, with each memory under the rules of a single save."""
    places: dict[str | None, Workspace] = {}
    groups: dict[str, tuple[Workspace, list[tuple[int, store.NewMemory, int | None]]]] = {}
    agent = agent_reason()  # every line of a process of the agent's is the agent's, whatever it claims
    records: dict[str, tuple[Workspace, list[tuple[int, dict[str, Any]]]]] = {}
    for number, line in enumerate(sys.stdin, start=1):
        if line.strip():
            ws, item, old = _parse_jsonl_line(line, number, default_project, places)
            if isinstance(item, dict):
                records.setdefault(ws.project.key, (ws, []))[1].append((number, item))
            else:
                groups.setdefault(ws.project.key, (ws, []))[1].append((number, author.settle_cli(item, agent), old))
    total = sum(len(items) for _, items in groups.values())
    results: list[dict[str, Any]] = _restore_records(records)
    pipeline = bulk.pipelined(total)
    plan = [(ws, part) for ws, items in groups.values() for part in _batches(items, pipeline)]
    made = bulk.rows([(ws.project.key, [m for _, m, _ in part]) for ws, part in plan], False, pipeline=pipeline)
    bar = None
    try:
        bar = _progress(total) if total >= 4 * JSONL_BATCH and not as_json else None  # after the fork: a thread
        for i, (ws, batch) in enumerate(plan):
            if i == 0 or plan[i - 1][0] is not ws:
                opened(ws)
                # A page cache of up to 64 MiB for this connection (SQLite's default: 2 MiB): past ~20,000
                # memories the random-keyed indexes (content_hash, title_key, uid) outgrow the default, and
                # every batch then reads their pages back from the OS (~10 us a row at 100,000;
                # docs/benchmarks.md).
                ws.db.execute("PRAGMA cache_size = -65536")
            try:
                saved = store.save_many(ws.db, ws.project.key, [m for _, m, _ in batch], rows=next(made))
            except (sqlite3.Error, bulk.Stopped) as exc:
                raise click.ClickException(
                    f"line {batch[0][0]}: saving stopped ({exc}); its batch of {len(batch)} lines was rolled "
                    f"back, {len(results)} lines of earlier batches were saved") from None
            results += [{"line": n, "id": s.id, "action": s.action, **({"was": old} if old is not None else {})}
                        for (n, _, old), s in zip(batch, saved, strict=True)]
            if bar is not None:
                bar.update(len(batch))
            if i + 1 == len(plan) or plan[i + 1][0] is not ws:
                ws.close()
    finally:
        made.close()
    if bar is not None:
        bar.close()
    results.sort(key=lambda r: r["line"])
    if as_json:
        emit(results)
    elif results:
        click.echo("\n".join(f"{r['id']}\t{r['action']}" for r in results))


def _restore_records(records: dict[str, tuple[Workspace, list[tuple[int, dict[str, Any]]]]]
                     ) -> list[dict[str, Any]]:
    """The sessions and handoffs of an export, one transaction a project, before its memories."""
    from memory.store.db import Tx

    out: list[dict[str, Any]] = []
    for ws, items in records.values():
        opened(ws)
        with Tx(ws.db):
            for number, obj in items:
                rid, action = restore_record(ws.db, ws.project.key, obj)
                out.append({"line": number, "id": rid, "action": action, "record": obj["record"]})
    return out


def _progress(total: int) -> Any:
    """A bar on stderr for a large import, only on a terminal (captured, each render would be a line)."""
    if not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="memory", desc="saving", file=sys.stderr)


@click.command()
@click.argument("text", nargs=-1)
@click.option("--title", "-t", help="Title (default: the first line of the content).")
@click.option("--type", "type_", default="learning", show_default=True, type=click.Choice(TYPES))
@click.option("--importance", default=0.7, show_default=True, type=Fraction(0, 1))
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
        import gc

        # The import holds every line's memory until it is saved: the cyclic collector would walk them all
        # again and again as they pile up (~3 us a line at 100,000 lines), and nothing here makes a cycle.
        gc.disable()
        try:
            _save_jsonl(project, as_json)
        finally:
            gc.enable()
        return
    content = " ".join(text).strip() or (sys.stdin.read().strip() if not sys.stdin.isatty() else "")
    if not content:
        raise click.UsageError("nothing to save: give the text as arguments or on stdin")
    ws = open_project(project)
    agent = author.agent_saving(ws)
    memory = store.NewMemory(title=title or "", content=content, type=type_, importance=importance,
                             tags=list(tags), source="cli", expires_at=expires_at)
    requested = (memory.type, memory.importance, memory.confidence)
    saved = store.save(ws.db, ws.project.key, author.settle_cli(memory, agent), filter_low_value=False)
    if saved.id is None:
        raise click.ClickException("nothing left to save once private text and secrets were removed")
    # A slash save without its grant yet is the person's if their typed prompt follows (older clients).
    told = bool(agent) and not author.await_prompt(ws, saved.id, requested)
    if as_json:
        emit({"id": saved.id, "action": saved.action, **({"by": "agent", "why": agent} if told else {})})
    else:
        click.echo(f"saved #{saved.id} ({saved.action})")
        if told:
            click.echo(author.AS_AGENT.format(reason=agent))


@click.command()
@click.argument("ids", nargs=-1, type=MEMORY_ID, required=True)
@project_option
def forget(ids: tuple[int, ...], project: str | None) -> None:
    """Delete memories by id."""
    ws = existing_or_fail(project, f"memory with id {', '.join(map(str, ids))}")
    gone = store.forget(ws.db, list(ids))
    if gone:
        click.echo(f"forgot {', '.join(f'#{i}' for i in gone)}")
    fail_on_missing(ids, gone)


@click.command()
@project_option
@json_option
def stats(project: str | None, as_json: bool) -> None:
    """Counts of memories, sessions, handoffs and queued work for the project."""
    from memory.present.stats import project_stats

    ws = workspace(project)
    if existing(ws, as_json, {"project": ws.project.name, "project_key": ws.project.key, "root": ws.project.root,
                               "database": None, "memories": 0}) is None:
        return
    data = project_stats(ws)
    if as_json:
        emit(data)
        return
    click.echo(f"project   {data['project']} ({data['root']})")
    click.echo(f"database  {data['database']} ({data['database_bytes'] / 1024:.0f} KiB)")
    click.echo(f"memories  {data['memories']}  " + "  ".join(f"{k}:{v}" for k, v in data["by_type"].items()))
    click.echo("sessions  " + "  ".join(f"{k}:{v}" for k, v in data["sessions"].items()))
    click.echo(f"tool calls {data['tool_calls']}  handoffs {data['handoffs']}  injections {data['injections']}")
    for kind, v in data["injected_tokens"].items():
        click.echo(f"injected  {kind}: {count(v['count'], 'time')}, median {count(v['median_tokens'], 'token')}, "
                   f"largest {v['max_tokens']:,}")
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
    from memory.store import budget, consent

    chosen, source = consent.choice(ws.home)
    click.echo(f"extractor {chosen} ({source}; change with `memory config extraction`)")
    for line in budget.spend_lines(x["by_day_all_projects"]):
        click.echo(f"spent     {line}")


@click.command()
@click.option("--limit", "-n", default=20, show_default=True, type=click.IntRange(1, 1000))
@project_option
@json_option
def sessions(limit: int, project: str | None, as_json: bool) -> None:
    """Recent sessions of the project with their summaries."""
    ws = existing(workspace(project), as_json, [])
    if ws is None:
        return
    rows = [dict(r) for r in ws.db.execute(
        "SELECT * FROM sessions WHERE project = ? ORDER BY started_at DESC LIMIT ?", (ws.project.key, limit))]
    if as_json:
        emit(rows)
        return
    if not rows:
        click.echo("no sessions recorded yet")
    for r in rows:
        click.echo(f"{r['id'][:8]}  {minute(r['started_at'])}  {r['status']:<9} prompts:{r['prompt_count']} "
                   f"tools:{r['tool_call_count']}  {r['summary'] or ''}")


@click.command()
@json_option
def projects(as_json: bool) -> None:
    """Every project that has a memory database."""
    rows = all_projects()
    if as_json:
        emit(rows)
        return
    for r in rows:
        click.echo(f"{r['key']:<40} {r['root']}")


def search_all_projects(text: str, limit: int, filters: Any, project: str | None, as_json: bool) -> None:
    """`memory search --all-projects`: every project's database, hits labelled with their project."""
    from memory.recall.finder import search_all

    if project:
        raise click.UsageError("give either --project or --all-projects, not both")
    found = search_all(text, limit=limit, filters=filters)
    if as_json:
        emit([{**x.hit.compact(), "project": x.project, "project_key": x.key} for x in found])
        return
    if not found:
        click.echo("no memories match in any project")
        return
    from memory.base.fence import instruction_shaped

    width = max(len(x.project) for x in found)
    for x in found:
        flagged = instruction_shaped(f"{x.hit.title}\n{x.hit.content}")
        click.echo(f"{x.project:<{width}}  {_hit_line(x.hit, flagged)}")


def _session_id(ws: Any, given: str) -> str:
    """The session a --session value names: an exact id, or the one session whose id starts with it. An
    unknown or ambiguous value is an error: never another session's handoff in its place."""
    known: dict[str, float] = {}
    for sid, at in ws.db.execute(
            """SELECT id, started_at FROM sessions WHERE project = ? AND substr(id, 1, ?) = ?
               UNION ALL SELECT session_id, min(created_at) FROM handoffs WHERE project = ?
               AND substr(session_id, 1, ?) = ? GROUP BY session_id""",
            (ws.project.key, len(given), given, ws.project.key, len(given), given)):
        if sid:
            known[sid] = min(at or 0, known.get(sid, at or 0))
    if given in known or len(known) == 1:
        return given if given in known else next(iter(known))
    if not known:
        raise click.ClickException(f"no session {given!r} in project {ws.project.name}; "
                                   "`memory sessions` lists them")
    shown = sorted(known, key=lambda s: -known[s])
    listed = ", ".join(f"{s} ({minute(known[s])})" for s in shown[:10])
    more = f" and {len(shown) - 10} more" if len(shown) > 10 else ""
    raise click.ClickException(f"{given!r} starts {count(len(shown), 'session id')} in project {ws.project.name}: "
                               f"{listed}{more}; give more of the id")


@click.command(name="handoff")
@click.option("--session", help="Show this session's handoff (its id, or the start of it); default: the "
              "project's latest.")
@click.option("--current-session", hidden=True, help="What /memory:handoff passes: this session's handoff "
              "when it has one, else the project's latest.")
@project_option
@json_option
def handoff_cmd(session: str | None, current_session: str | None, project: str | None, as_json: bool) -> None:
    """The current handoff: the state of the work that a compaction or a new session starts from."""
    from memory.capture import handoff

    ws = existing(workspace(project), as_json)
    if ws is None:
        return
    if session:
        session = _session_id(ws, session)
        row = ws.db.execute("SELECT * FROM handoffs WHERE project = ? AND session_id = ? "
                            "ORDER BY created_at DESC, id DESC LIMIT 1", (ws.project.key, session)).fetchone()
    else:
        row = handoff.latest(ws, current_session or None)
    if row is None:
        if as_json:
            emit(None)
        elif session:
            click.echo(f"session {session} has no handoff yet in project {ws.project.name}: one is written at "
                       "the end of each turn, before a compaction and when a session ends")
        else:
            click.echo(f"no handoff yet for project {ws.project.name}: one is written at the end of each turn, "
                       "before a compaction and when a session ends")
        return
    if as_json:
        emit(dict(row))
        return
    mine = row["session_id"] in (session, current_session)
    whose = "this session" if mine else f"session {row['session_id'][:8]}"
    click.echo(f"Handoff of {whose} ({row['trigger']}, {minute(row['created_at'])}), project {ws.project.name}:")
    click.echo("")
    click.echo(row["content"])


@click.command()
@click.option("--limit", "-n", default=10, show_default=True, type=click.IntRange(1, 200))
@click.option("--type", "types", multiple=True, type=click.Choice(TYPES),
              help="Only these types (repeatable; default: all but prompts).")
@project_option
@json_option
def recent(limit: int, types: tuple[str, ...], project: str | None, as_json: bool) -> None:
    """The most recent memories of the project, newest first."""
    ws = existing(workspace(project), as_json, [])
    if ws is None:
        return
    shown = list(types) or [t for t in TYPES if t != "prompt"]
    marks = ",".join("?" * len(shown))
    rows = ws.db.execute(
        f"""SELECT id, type, title, created_at, session_id, flags FROM memories WHERE type IN ({marks})
            AND (expires_at IS NULL OR expires_at > ?) ORDER BY created_at DESC, id DESC LIMIT ?""",
        [*shown, time.time(), limit]).fetchall()
    if as_json:
        emit([dict(r) for r in rows])
        return
    if not rows:
        click.echo(_nothing_recent(ws, types))
        return
    for r in rows:
        flag = f"  [flagged: {r['flags']}]" if r["flags"] else ""  # memory/base/fence.py: a person reviews these
        click.echo(f"#{r['id']:<6} {minute(r['created_at'])}  {r['type']:<11} {r['title']}{flag}")


def _nothing_recent(ws: Workspace, types: tuple[str, ...]) -> str:
    """What an empty listing says: what was filtered out of how many, not "no memories" when there are some."""
    total = ws.db.execute("SELECT count(*) FROM memories WHERE expires_at IS NULL OR expires_at > ?",
                          (time.time(),)).fetchone()[0]
    if not total:
        return f"no memories yet in project {ws.project.name}"
    kinds = " or ".join(plural(t) for t in types) if types else "memories but prompts"
    return f"no {kinds} among {count(total, 'memory')} in project {ws.project.name}"


COMMANDS = [search, timeline_cmd, get, save, forget, stats, sessions, projects, handoff_cmd, recent]
