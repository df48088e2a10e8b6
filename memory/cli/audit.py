"""`memory audit [--redact]`: secrets already in a data dir, counted by kind (never shown), and removed in place."""

from __future__ import annotations

import click

from memory.cli.common import emit, json_option


@click.command()
@click.option("--redact", is_flag=True, help="Replace what is found by [REDACTED:<kind>] in place (rows and "
              "files), rebuild the full-text indexes and vacuum the databases.")
@json_option
def audit(redact: bool, as_json: bool) -> None:
    """Scan the data dir (every database, log, daily log, spool, state, notice, export there) and this data
    dir's spool in the temp dir for secrets with the privacy filter and detect-secrets; report counts by kind,
    never the values. Exit 1 when some were found and left."""
    import os

    from memory.base.config import data_home
    from memory.present.audit import audit as run

    home = data_home()  # `memory --home DIR audit` for another one
    if not os.path.isdir(home):
        raise click.UsageError(f"no data dir at {home}")
    report = run(home, redact=redact)
    data = report.as_dict()
    data["home"] = home
    data["redacted"] = redact
    if as_json:
        emit(data)
    else:
        click.echo(f"data dir: {home}")
        click.echo(f"scanned: {report.databases} database(s), {report.scanned_values} text values, "
                   f"{report.scanned_files} files")
        if not report.library:
            click.echo("detect-secrets is not installed in this interpreter: the privacy filter alone was used")
        total = data["secrets"]
        click.echo(f"secrets found: {total}" + (f", redacted in {report.redacted_values} values/files" if redact
                                                else ""))
        for kind, n in report.kinds.most_common():
            click.echo(f"  {n:>5}  {kind}")
        if report.places:
            click.echo("where:")
            for place, n in report.places.most_common():
                click.echo(f"  {n:>5}  {place}")
        if report.possible:
            click.echo("possible (detect-secrets entropy only, not redacted): "
                       + ", ".join(f"{k} {n}" for k, n in report.possible.most_common()))
        if total and not redact:
            click.echo("run `memory audit --redact` to remove them")
    if data["secrets"] and not redact:
        raise SystemExit(1)


COMMANDS = [audit]
