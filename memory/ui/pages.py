"""The viewer's HTML, rendered here with the text escaped (html.escape): no template engine, no script
needed to read a page (static/ui.js only asks before a delete and submits the project picker)."""

from __future__ import annotations

import time
from html import escape
from typing import Any
from urllib.parse import urlencode

from memory.base.classify import TYPES
from memory.base.words import count
from memory.present import why
from memory.ui import plots


class Ctx:
    """What every page needs: the project shown, the others to pick from, the CSRF token for its forms."""

    def __init__(self, key: str, name: str, projects: list[dict[str, Any]], csrf: str) -> None:
        self.key, self.name, self.projects, self.csrf = key, name, projects, csrf

    def href(self, path: str, **params: Any) -> str:
        query = urlencode({"p": self.key, **{k: v for k, v in params.items() if v not in (None, "")}}, doseq=True)
        return escape(f"{path}?{query}")


def when(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts)) if ts else "-"


def _picker(ctx: Ctx, path: str) -> str:
    options = "".join(f'<option value="{escape(p["key"])}"{" selected" if p["key"] == ctx.key else ""}>'
                      f'{escape(p.get("name") or p["key"])}</option>' for p in ctx.projects)
    return (f'<form method="get" action="{escape(path)}" class="picker"><label>project '
            f'<select name="p" data-autosubmit>{options}</select></label>'
            '<noscript><button>go</button></noscript></form>')


def layout(ctx: Ctx, title: str, body: str, path: str = "/", notice: str = "") -> str:
    nav = "".join(f'<a href="{ctx.href(href)}"{" class=here" if path == href else ""}>{label}</a>'
                  for href, label in (("/", "Search"), ("/sessions", "Sessions"), ("/stats", "Stats"),
                                              ("/redactions", "Redactions")))
    note = f'<p class="notice" role="status">{escape(notice)}</p>' if notice else ""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)} · memory</title><link rel="stylesheet" href="/static/ui.css">
<script src="/static/ui.js" defer></script></head>
<body><header><strong class="brand">memory</strong><nav>{nav}</nav>{_picker(ctx, path)}</header>
<main>{note}{body}</main></body></html>"""


def _options(values: list[str], chosen: list[str] | str, blank: str | None = None) -> str:
    chosen = [chosen] if isinstance(chosen, str) else chosen
    head = f'<option value="">{escape(blank)}</option>' if blank is not None else ""
    return head + "".join(f'<option value="{escape(v)}"{" selected" if v in chosen else ""}>{escape(v)}'
                          '</option>' for v in values)


def search_form(ctx: Ctx, a: dict[str, Any]) -> str:
    return f"""<form method="get" action="/" class="search" id="search">
<input type="hidden" name="p" value="{escape(ctx.key)}">
<input type="search" name="q" value="{escape(a['q'])}" placeholder="Search memories" autofocus aria-label="query">
<select name="mode" aria-label="mode">{_options(["hybrid", "keyword"], a['mode'])}</select>
<select name="type" aria-label="type">{_options(list(TYPES), a['type'], "any type")}</select>
<label>since <input type="date" name="since" value="{escape(a['since'])}"></label>
<label>until <input type="date" name="until" value="{escape(a['until'])}"></label>
<input type="text" name="session" value="{escape(a['session'])}" placeholder="session id" size="12"
aria-label="session">
<select name="flag" aria-label="trust flag">{_options(["any", "flagged", "clean"], a['flag'])}</select>
<button type="submit">Search</button></form>"""


def _snippet(text: str, n: int = 220) -> str:
    text = " ".join(text.split())
    return escape(text if len(text) <= n else text[:n] + "…")


def search_page(ctx: Ctx, a: dict[str, Any], rows: list[dict[str, Any]], answered: str, notice: str = "") -> str:
    items = []
    for r in rows:
        flag = '<span class="flag">instruction-shaped</span>' if r["flags"] else ""
        pin = '<span class="pin">pinned</span>' if "pinned" in (r.get("tags") or "").split(",") else ""
        score = f'<span class="score">{r["score"]:.2f}</span>' if r["score"] else ""
        items.append(f"""<li class="hit" data-id="{r['id']}"><a href="{ctx.href(f'/m/{r["id"]}')}">#{r['id']}
{escape(r['title'])}</a> <span class="type t-{escape(r['type'])}">{escape(r['type'])}</span>{flag}{pin}{score}
<span class="date">{when(r['created_at'])}</span><p>{_snippet(r['content'])}</p></li>""")
    listing = f'<ol class="hits">{"".join(items)}</ol>' if items else '<p class="empty">no memories match</p>'
    body = (f'{search_form(ctx, a)}<p class="answered">{len(rows)} shown · {escape(answered)}</p>{listing}')
    return layout(ctx, "Search", body, "/", notice)


def _action(ctx: Ctx, mid: int, verb: str, label: str, extra: str = "", confirm: str = "") -> str:
    ask = f' data-confirm="{escape(confirm)}"' if confirm else ""
    return (f'<form method="post" action="/m/{mid}/{verb}" class="action"{ask}>'
            f'<input type="hidden" name="csrf" value="{escape(ctx.csrf)}"><input type="hidden" name="p" '
            f'value="{escape(ctx.key)}">{extra}<button type="submit" name="do" value="{verb}">{label}</button></form>')


def memory_page(ctx: Ctx, m: dict[str, Any], notice: str = "") -> str:
    mid = m["id"]
    flag = ('<span class="flag">instruction-shaped: never injected automatically</span>' if m["flagged"]
            else '<span class="ok">no trust flag</span>')
    rows = [("type", escape(m["type"])), ("created", when(m["created_at"])), ("updated", when(m["updated_at"])),
            ("from", f'<span class="origin">{escape(m["origin_label"])}</span> '
                     f'<small>(origin {escape(m["origin"] or "-")}, detail {escape(m["origin_detail"] or "-")}, '
                     f'source {escape(m["source"])})</small>'),
            ("trust", flag), ("session", _session_link(ctx, m["session_id"])),
            ("host", escape(m.get("host") or "-")),
            ("code", f'<span class="flag">stale: the code changed since ({escape(m["stale"])})</span>'
                     if m.get("stale") else '<span class="ok">unchanged since, as far as recorded</span>'),
            ("importance", f'{m["importance"]:.2f}'), ("tags", escape(m["tags"] or "-")),
            ("files", escape(", ".join(m["files"].splitlines()) or "-")),
            ("scope", escape(m.get("scope") or "-") + (f' · by {escape(m["author"])}' if m.get("author") else "")),
            ("expires", when(m["expires_at"]) if m["expires_at"] else "never"),
            ("used", f'{m["access_count"]} times, last {when(m["accessed_at"])}')]
    facts = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
    injected = _recalls(ctx, m["recalls"])
    pin = _action(ctx, mid, "unpin" if m["pinned"] else "pin", "Unpin" if m["pinned"] else "Pin (keep from eviction)")
    share = ""
    if m.get("scope"):
        team = m["scope"] == "team"
        share = _action(ctx, mid, "unshare" if team else "share", "Keep personal" if team else "Share with team")
        if not m.get("team_linked"):
            share += ('<small class="unlinked">not linked to a team: sharing only sets the scope, nothing is sent '
                      'until <code>memory team init URL</code> links this project</small>')
    retype = _action(ctx, mid, "type", "Change type",
                     f'<select name="type" aria-label="new type">{_options(list(TYPES), m["type"])}</select>')
    edit = f"""<details class="edit"><summary>Edit</summary><form method="post" action="/m/{mid}/edit">
<input type="hidden" name="csrf" value="{escape(ctx.csrf)}"><input type="hidden" name="p" value="{escape(ctx.key)}">
<label>title <input name="title" value="{escape(m['title'])}" size="80"></label>
<label>text <textarea name="content" rows="12" cols="90">{escape(m['content'])}</textarea></label>
<button type="submit">Save</button></form></details>"""
    delete = _action(ctx, mid, "delete", "Delete", confirm=f"Delete memory #{mid}? This cannot be undone.")
    body = f"""<article class="memory" data-id="{mid}"><h1>#{mid} {escape(m['title'])}</h1>
<table class="facts">{facts}</table><pre class="content">{escape(m['content'])}</pre>
<div class="actions">{pin}{retype}{share}{delete}</div>{edit}
<h2>Injected and found: why</h2>{injected}
<p class="searches">shown {count(m['searches'], 'time')} by a search or a read</p></article>"""
    return layout(ctx, f"#{mid}", body, "/m", notice)


def _recalls(ctx: Ctx, recalls: list[dict[str, Any]]) -> str:
    """Each time the memory was injected or found: when, how, in which session, its rank and score parts
    (memory/present/why.py, `memory why`)."""
    if not recalls:
        return "<p>never injected into a session or found by a search</p>"
    rows = []
    for r in recalls:
        rank = f'{r["rank"]} of {r["of"]}' if r.get("rank") and r.get("of") else (r.get("rank") or "-")
        score = f'{r["score"]:.2f}' if isinstance(r.get("score"), int | float) else "-"
        cells = [when(r["at"]), escape(r["what"]), _session_link(ctx, r["session_id"]), escape(str(rank)),
                 escape(r.get("mode") or "-"), score, escape(why.parts_line(r["parts"]) or "-"),
                 _snippet(r["query"] or "", 80)]
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return ('<table class="list recalls"><tr><th>when</th><th>how</th><th>session</th><th>rank</th><th>mode</th>'
            f'<th>score</th><th>score parts</th><th>asked</th></tr>{"".join(rows)}</table>')


def _memory_href(ctx: Ctx, mid: int) -> str:
    return ctx.href(f"/m/{mid}")


def _session_link(ctx: Ctx, sid: str | None) -> str:
    return f'<a href="{ctx.href(f"/s/{sid}")}">{escape(sid[:8])}</a>' if sid else "-"


def sessions_page(ctx: Ctx, rows: list[dict[str, Any]]) -> str:
    items = "".join(f"""<tr><td>{_session_link(ctx, r['id'])}</td><td>{when(r['started_at'])}</td>
<td>{escape(r['status'])}</td><td>{r['prompt_count']}</td><td>{r['tool_call_count']}</td>
<td>{_snippet(r['summary'] or '', 140)}</td></tr>""" for r in rows)
    body = ("<h1>Sessions</h1><table class=list><tr><th>session</th><th>started</th><th>status</th><th>prompts</th>"
            f"<th>tool calls</th><th>summary</th></tr>{items}</table>" if rows else
            "<h1>Sessions</h1><p class=empty>no sessions recorded yet</p>")
    return layout(ctx, "Sessions", body, "/sessions")


def session_page(ctx: Ctx, sid: str, head: dict[str, Any] | None, events: list[dict[str, Any]]) -> str:
    items = []
    for e in events:
        link = f' <a href="{_memory_href(ctx, e["id"])}">#{e["id"]}</a>' if e.get("id") else ""
        given = "".join(f'<li><a href="{_memory_href(ctx, x["id"])}">#{x["id"]}</a> {escape(x["title"])} '
                        f'<span class="type">{escape(x["type"])}</span> <small class="parts">{escape(x["parts"])}'
                        '</small></li>' for x in e.get("memories", []))
        given = f'<ol class="given">{given}</ol>' if given else ""
        if e.get("query"):
            given = f'<p class="asked">for: {_snippet(e["query"], 200)}</p>{given}'
        label = "exact context given to the model" if e["kind"] == "context" else "text"
        text = (f"<details><summary>{label}</summary><pre>{escape(e['text'])}</pre></details>"
                if e.get("text") else "")
        items.append(f"""<li class="ev ev-{e['kind']}"><span class="at">{when(e['at'])[11:]}</span>
<span class="kind">{e['kind']}</span> {escape(e['title'])}{link} <small>{escape(e['detail'] or '')}</small>
{given}{text}</li>""")
    meta = (f"<p>started {when(head['started_at'])} · {escape(head['status'])} · {head['prompt_count']} prompts · "
            f"{head['tool_call_count']} tool calls · {escape(head['cwd'] or '')}</p>" if head else "")
    listing = f'<ol class="timeline">{"".join(items)}</ol>' if items else "<p class=empty>nothing recorded</p>"
    return layout(ctx, f"Session {sid[:8]}", f"<h1>Session {escape(sid)}</h1>{meta}{listing}", "/s")


def _extraction_form(ctx: Ctx, s: dict[str, Any]) -> str:
    """The extractor in force, the form that changes it, and the spend per day and provider."""
    chosen, source = s["extractor"]
    options = "".join(f'<option value="{c}"{" selected" if c == chosen else ""}>{c}</option>'
                      for c in ("anthropic", "ollama", "heuristic", "off"))
    spend = "".join(f"<li>{escape(line)}</li>" for line in s["spend"]) or "<li>no extraction yet</li>"
    return (f'<section class="chart"><h2>Extraction</h2><p>In force: <b>{escape(chosen)}</b> ({escape(source)}). '
            f"anthropic is Claude, paid with your API key, one call per session at most, within "
            f"{s['budget']:,} tokens a day; ollama a local model; heuristic offline.</p>"
            f'<form method="post" action="/settings/extraction" class="action">'
            f'<input type="hidden" name="csrf" value="{escape(ctx.csrf)}"><input type="hidden" name="p" '
            f'value="{escape(ctx.key)}"><select name="extraction">{options}</select>'
            f'<button type="submit">choose</button></form>'
            f"<h3>Spend per day and provider (all projects)</h3><ul class=spend>{spend}</ul></section>")


def stats_page(ctx: Ctx, s: dict[str, Any], notice: str = "") -> str:
    days = s["days"]
    extraction = {d: s["extraction_paid"].get(d, 0) for d in days}
    plots_html = [
        ("Memories per day by type", plots.stacked_bars("memories", "memories per day by type", days, s["by_type"])),
        ("Tokens saved by outlines per day",
         plots.bars_against("outlines", "tokens saved by outlines per day", days, s["outline_saved"], None)),
        ("Paid extraction tokens per day against the daily budget (all projects share it)",
         plots.bars_against("extraction", "extraction tokens per day", days, extraction, s["budget"] or None,
                            "budget")),
        ("Storage of the data dir against its cap",
         plots.gauge("storage", "storage against the cap", s["storage"]["bytes"], s["cap_bytes"],
                     {"databases": s["storage"]["databases"], "vectors": s["storage"]["vectors"]}, "B")),
        ("Memories of this project against the count cap",
         plots.gauge("count", "memories against the count cap", s["memories"], s["cap_memories"],
                     {"memories": s["memories"]})),
    ]
    body = "".join(f'<section class="chart"><h2>{escape(t)}</h2>{svg}</section>' for t, svg in plots_html)
    head = (f"<h1>Stats</h1><p>{s['memories']:,} memories ({s['pinned']:,} pinned) · paid extraction today "
            f"{s['spent_today']:,} of {s['budget']:,} tokens · last {len(days)} days</p>")
    return layout(ctx, "Stats", head + _extraction_form(ctx, s) + body, "/stats", notice)


def redactions_page(ctx: Ctx, r: dict[str, Any], days: list[str]) -> str:
    """What the privacy filter replaced in what is stored: counts by kind, by hook and by day; no value."""
    if not r["total"]:
        body = ("<h1>Redactions</h1><p class=empty>no <code>[REDACTED:...]</code> marker in this project's memories or "
                "handoffs: the privacy filter replaced no secret in what was kept</p>")
        return layout(ctx, "Redactions", body, "/redactions")
    kinds = "".join(f"<tr><td>{escape(k)}</td><td>{n}</td></tr>" for k, n in r["by_kind"].items())
    where = "".join(f"<tr><td>{escape(k)}</td><td>{escape(w)}</td><td>{n}</td></tr>" for k, w, n in r["by_where"])
    plot = plots.stacked_bars("redactions", "secrets redacted per day by kind", days, r["by_day"])
    body = f"""<h1>Redactions</h1><p>{r['total']:,} secrets replaced by the privacy filter in what is stored
(memories and handoffs), counted from their <code>[REDACTED:kind]</code> markers; the values were never
kept. Text inside <code>&lt;private&gt;</code> is removed whole and leaves no marker to count.</p>
<section class="chart"><h2>Per day, by kind (last {len(days)} days)</h2>{plot}</section>
<h2>By kind</h2><table class="list redactions"><tr><th>kind</th><th>count</th></tr>{kinds}</table>
<h2>By kind and where it was caught</h2><table class="list"><tr><th>kind</th><th>hook</th><th>count</th></tr>{where}
</table>"""
    return layout(ctx, "Redactions", body, "/redactions")


def empty_page(ctx: Ctx) -> str:
    return layout(ctx, "memory", "<h1>No memory yet</h1><p>The plugin records memories while you work with Claude "
                  "Code; `memory save` adds one.</p>")
