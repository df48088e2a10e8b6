"""The web viewer (`memory ui`): a local page over the data dir to search, read, edit, pin, share and delete
memories, follow sessions as timelines and see the stats as plots.

Cold side, beside mcp (below cli, which starts it): may import present, recall (its cold modules too),
store, capture, base, team (a memory's sharing), starlette and uvicorn; never imported by a hook. Everything
the page loads (static/ui.css, static/ui.js, the SVG plots drawn here) ships in this package: no CDN, no network.
The access rules (token then cookie, Host check, CSRF token, loopback only) are in guard.py."""
