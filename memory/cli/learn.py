"""`memory import` (past Claude Code transcripts), `memory extract` (learnings of a session, now) and
`memory config extraction` (which extractor runs: the user's consent to paid calls, memory/store/consent.py)."""

from __future__ import annotations

import os
import time

import click

from memory.base.words import count
from memory.cli.common import emit, json_option, open_project, project_option


@click.command(name="import")
@click.argument("path", required=False, type=click.Path(exists=True))
@click.option("--extract", is_flag=True, help="Also extract learnings and summaries (model or heuristic).")
@click.option("--force", is_flag=True, help="Import again files already imported (and sessions recorded live).")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@project_option
@json_option
def import_cmd(path: str | None, extract: bool, force: bool, no_progress: bool, project: str | None,
               as_json: bool) -> None:
    """Import past sessions from Claude Code transcripts (default: this project's transcript folder), or
    from Codex CLI and Gemini CLI session logs.

    PATH is a transcript (.jsonl) or a folder of them (and of the folders under it: ~/.codex/sessions,
    ~/.gemini/tmp/<project>/chats). Without PATH: $CLAUDE_CONFIG_DIR/projects/<this
    folder, / replaced by ->/ (~/.claude by default). Running it again adds nothing; an interrupted
    import resumes where it stopped.
    """
    from memory.capture.transcript import project_transcript_dir
    from memory.learn.importer import find_transcripts, import_paths

    ws = open_project(project)
    source = path or project_transcript_dir(project if project and os.path.isdir(project) else os.getcwd())
    files = find_transcripts(source)
    if not files:
        raise click.ClickException(f"no transcripts (*.jsonl) in {source}; give a file or folder as PATH")
    began = time.perf_counter()
    from memory.base.provenance import agent_reason

    results = [r.to_json() for r in import_paths(ws, files, extract=extract, force=force,
                                                 progress=not (no_progress or as_json), by_agent=agent_reason())]
    imported = [r for r in results if r["status"] in ("imported", "resumed")]
    totals = {"source": source, "files": len(files), "sessions_imported": len(imported),
              "skipped": sum(r["status"] == "skipped" for r in results),
              "failed": sum(r["status"] == "failed" for r in results),
              "observations": sum(r["observations"] for r in imported),
              "learnings": sum(r["learnings"] for r in results),
              "seconds": round(time.perf_counter() - began, 2)}
    if as_json:
        emit({**totals, "results": results})
        return
    for r in results:
        if r["status"] == "failed" or (r["status"] == "skipped" and r["reason"] != "already imported"):
            click.echo(f"{r['status']:<9} {os.path.basename(r['path'])}: {r['reason']}", err=True)
    click.echo(f"imported {count(totals['sessions_imported'], 'session')} ({totals['skipped']} skipped) from "
               f"{source}: {count(totals['observations'], 'observation')}, {count(totals['learnings'], 'learning')} "
               f"in {totals['seconds']} s")
    if totals["failed"]:
        raise click.ClickException(f"{count(totals['failed'], 'file')} could not be read")


@click.command(name="extract")
@click.argument("session_ids", nargs=-1)
@click.option("--force", is_flag=True, help="Extract again from the start, even if already extracted.")
@project_option
@json_option
def extract_cmd(session_ids: tuple[str, ...], force: bool, project: str | None, as_json: bool) -> None:
    """Extract the learnings of sessions now (default: the latest session), as the worker would."""
    from memory.base.provenance import agent_reason
    from memory.learn.run import extract_session

    ws = open_project(project)
    ids = list(session_ids)
    if not ids:
        row = ws.db.execute("SELECT id FROM sessions WHERE project = ? ORDER BY coalesce(ended_at, last_event_at, "
                            "started_at) DESC LIMIT 1", (ws.project.key,)).fetchone()
        if row is None:
            raise click.ClickException("no session recorded in this project yet")
        ids = [row["id"]]
    out = []
    for sid in ids:
        if not ws.db.execute("SELECT 1 FROM sessions WHERE id = ? OR id LIKE ?", (sid, f"{sid}%")).fetchone():
            raise click.ClickException(f"no session {sid!r}; list them with `memory sessions`")
        full = ws.db.execute("SELECT id FROM sessions WHERE id = ? OR id LIKE ? ORDER BY id = ? DESC LIMIT 1",
                             (sid, f"{sid}%", sid)).fetchone()["id"]
        outcome = extract_session(ws, full, trigger="cli", force=force, settle=False, by_agent=agent_reason())
        out.append({"session_id": full, **outcome.to_json(), "summary": outcome.summary})
    if as_json:
        emit(out)
        return
    for o in out:
        click.echo(f"{o['session_id'][:8]}  {o['status']:<8} {o['provider'] or '-':<10} "
                   f"{count(o['learnings'], 'learning')}"
                   + (f"  ({o['reason']})" if o["reason"] else ""))
        for mid in o["saved"]:
            row = ws.db.execute("SELECT type, title FROM memories WHERE id = ?", (mid,)).fetchone()
            if row:
                click.echo(f"  #{mid:<6} [{row['type']}] {row['title']}")


@click.group(name="config")
def config_cmd() -> None:
    """Choices kept in the data dir (environment variables override them: docs/configuration.md)."""


@config_cmd.command(name="extraction")
@click.argument("choice", required=False, type=click.Choice(["anthropic", "ollama", "heuristic", "off"]))
@json_option
def config_extraction(choice: str | None, as_json: bool) -> None:
    """Which extractor learns from finished sessions: anthropic (Claude, paid, within
    MEMORY_DAILY_TOKEN_BUDGET, one call per session at most), ollama (a local model), heuristic (offline,
    the default until you choose) or off. Without CHOICE: the one in force."""
    from memory.base.provenance import agent_reason
    from memory.store import budget, consent

    if choice is not None:
        reason = agent_reason()
        if reason:  # spending the user's money is the user's decision, not the model's (docs/security.md)
            raise click.ClickException(f"not changed: this command was started by the agent ({reason}); run it "
                                       "in your own terminal, or choose in `memory ui`")
        consent.choose(choice)
    chosen, source = consent.choice()
    data = {"extraction": chosen, "source": source, "daily_token_budget": budget.daily_budget(),
            "paid_tokens_today": budget.spent_today()}
    if as_json:
        emit(data)
        return
    paid = (f"; paid calls within {data['daily_token_budget']:,} tokens a day "
            f"({data['paid_tokens_today']:,} spent today)") if chosen == "anthropic" else ""
    click.echo(f"extraction: {chosen} ({source}){paid}")
    if source == "MEMORY_EXTRACTOR" and choice is not None:
        click.echo("note: MEMORY_EXTRACTOR is set in this environment and overrides the recorded choice")


COMMANDS = [import_cmd, extract_cmd, config_cmd]
