"""The viewer's pages in process (Starlette's test client through the real guard): an empty data dir, several
projects, escaping of untrusted text, unknown ids, a refused edit."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from memory import store
from memory.store.workspace import Workspace
from memory.ui import app, data
from memory.ui.guard import Secrets
from tests.support.helpers import make_git_project

PORT = 41999  # never bound: the test client calls the app directly; the guard checks the Host against it


def client(home: Path, default_key: str | None = None) -> TestClient:
    keys = Secrets(PORT)
    asgi, _ = app.build(data.Places(str(home), default_key), keys)
    c = TestClient(asgi, base_url=f"http://127.0.0.1:{PORT}")
    assert c.get(f"/?token={keys.token}", follow_redirects=False).status_code == 303
    c.cookies.set(keys.cookie, keys.token)
    c.csrf = keys.csrf  # type: ignore[attr-defined]
    return c


def save(ws: Workspace, title: str, content: str, type_: str = "learning") -> int:
    saved = store.save(ws.db, ws.project.key, store.NewMemory(title=title, content=content, type=type_),
                       filter_low_value=False)
    assert saved.id is not None
    return saved.id


@pytest.fixture
def two(home: Path, tmp_path: Path) -> dict[str, Any]:
    a = Workspace.for_dir(str(make_git_project(tmp_path / "alpha")))
    b = Workspace.for_dir(str(make_git_project(tmp_path / "beta")))
    ids = {"a": save(a, "<script>alert(1)</script> in alpha", "alpha <img src=x onerror=alert(2)> text"),
           "b": save(b, "Beta decision", "beta uses PostgreSQL", "decision")}
    yield {"a": a, "b": b, "ids": ids}
    a.close()
    b.close()


def test_empty_data_dir(home: Path) -> None:
    c = client(home)
    for path in ("/", "/stats", "/redactions"):
        page = c.get(path)
        assert page.status_code == 200 and "No memory yet" in page.text
    assert c.get("/sessions").status_code == 200
    assert c.get("/m/1").status_code == 404


def test_projects_and_escaping(home: Path, two: dict[str, Any]) -> None:
    c = client(home, two["a"].project.key)
    page = c.get("/").text
    assert two["a"].project.key in page and two["b"].project.key in page  # the picker lists both
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    memory = c.get(f"/m/{two['ids']['a']}").text
    assert "<img src=x" not in memory and "&lt;img src=x onerror=alert(2)&gt;" in memory
    other = c.get("/", params={"p": two["b"].project.key, "q": "postgresql", "mode": "keyword"}).text
    assert "Beta decision" in other and "alpha" not in re.sub(r"<option.*?</option>", "", other)


def test_refused_edit_and_unknown_action(home: Path, two: dict[str, Any]) -> None:
    c = client(home, two["a"].project.key)
    second = save(two["a"], "Second in alpha", "another text")
    form = {"csrf": c.csrf, "p": two["a"].project.key, "title": "Second in alpha", "content": "x"}  # type: ignore[attr-defined]
    done = c.post(f"/m/{two['ids']['a']}/edit", data=form, follow_redirects=False)
    assert done.status_code == 303 and "not%20changed" in done.headers["location"]
    assert c.get(done.headers["location"]).status_code == 200
    odd = c.post(f"/m/{second}/explode", data=form, follow_redirects=False)
    assert "unknown%20action" in odd.headers["location"]
    gone = c.post("/m/999/delete", data=form, follow_redirects=False)
    assert "no%20memory%20%23999" in gone.headers["location"]


def test_share_without_a_team_says_nothing_is_sent(home: Path, two: dict[str, Any]) -> None:
    """On a project not linked to a team server, sharing sets the scope only: the page says so, and how to link."""
    ws, mid = two["a"], two["ids"]["a"]  # a learning: team scope by default (team_types)
    c = client(home, ws.project.key)
    page = c.get(f"/m/{mid}").text
    assert "Keep personal" in page and "not linked to a team" in page and "memory team init URL" in page
    form = {"csrf": c.csrf, "p": ws.project.key}  # type: ignore[attr-defined]
    for verb, scope, button in (("unshare", "personal", "Share with team"), ("share", "team", "Keep personal")):
        done = c.post(f"/m/{mid}/{verb}", data=form, follow_redirects=False)
        assert done.status_code == 303
        shown = c.get(done.headers["location"]).text
        notice = re.search(r'<p class="notice" role="status">(.*?)</p>', shown, re.S)
        assert notice and f"scope set to {scope}" in notice[1] and "nothing is sent" in notice[1], shown
        assert "memory team init URL" in notice[1] and button in shown
        assert ws.db.execute("SELECT scope FROM memories WHERE id = ?", (mid,)).fetchone()[0] == scope
    assert ws.db.execute("SELECT count(*) FROM team_outbox").fetchone()[0] == 0  # nothing queued to send


def test_the_redactions_page_shows_no_literal_backticks(home: Path, project: Path) -> None:
    ws = Workspace.for_dir(str(project))
    save(ws, "plain", "nothing secret here")
    ws.close()
    page = client(home).get("/redactions").text
    assert "<code>[REDACTED:...]</code>" in page and "`" not in page.split("<main", 1)[-1].split("</main>")[0]
