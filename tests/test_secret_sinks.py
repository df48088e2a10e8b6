"""Every form of the secrets corpus through every channel the plugin records, into every sink it writes:
the real hook processes (prompts, tool inputs and outputs, edits, todos, turn ends, compaction, a Read of a
code file whose string constants hold the secrets, a locked and a blocked data dir), the CLI (`memory
save --title`, `--jsonl`, `memory import` of a transcript, `memory export`), the MCP tools, and rows pulled
from a team. Each channel gets its own data dir; afterwards every byte of it (SQLite and its WAL, spool,
logs, daily log, exports, the outline cache) and of the temp dir's fallback folder is searched for each
secret's distinctive core, as written, JSON-escaped and repr-escaped. What the hooks print (injected text,
outlines) is searched too.

A further test plants the corpus directly into every table and file of a data dir, runs `memory audit
--redact`, and checks that nothing is left and that `memory audit` then finds nothing."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memory.base.project import identify
from memory.store import ctx_rows
from tests.support.helpers import ROOT, HookRunner, make_git_project
from tests.support.secrets_corpus import SECRETS

BATCH = 48  # corpus forms per event: a handful of hook processes per channel
FORMS = list(enumerate(SECRETS))


# --- what must never be found ------------------------------------------------------------------------

def cores(values: list[str]) -> list[str]:
    """A secret's distinctive core: the value, and for a long one its first and last 16 characters (a cut
    text keeps one end of what it split)."""
    out: list[str] = []
    for v in values:
        if len(v) < 8:
            continue
        out.append(v)
        if len(v) >= 24:
            out += [v[:16], v[-16:]]
    return out


def spellings(needle: str) -> set[bytes]:
    """The bytes a needle takes on disk: as written, JSON-escaped (spool, exports, state) and repr-escaped."""
    return {s.encode() for s in (needle, json.dumps(needle)[1:-1], repr(needle)[1:-1]) if s}


NEEDLES = {i: [b for c in cores(values) for b in spellings(c)] for i, (_f, _t, values) in FORMS}


def blobs(*roots: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for root in roots if root.exists() for p in root.rglob("*") if p.is_file()}


def leaked(found_in: dict[str, bytes], forms: list[tuple[int, Any]] = FORMS) -> dict[int, list[str]]:
    """form index -> the places holding a core of it."""
    out: dict[int, list[str]] = {}
    for i, _ in forms:
        hits = sorted({place for needle in NEEDLES[i] for place, data in found_in.items() if needle in data})
        if hits:
            out[i] = hits
    return out


def describe(found: dict[int, list[str]], base: str = "") -> str:  # the failure message: kinds and places, no values
    return "\n".join(f"#{i} {SECRETS[i][0]}: {[p.replace(base, '') for p in places][:4]}"
                     for i, places in sorted(found.items())[:40])


def batches(forms: list[tuple[int, Any]] = FORMS, size: int = BATCH) -> list[list[tuple[int, tuple[str, str,
                                                                                                     list[str]]]]]:
    return [forms[b:b + size] for b in range(0, len(forms), size)]


def joined(batch: list[tuple[int, Any]], head: str = "item") -> str:
    return "\n\n".join(f"{head}{i:04d}: {text}" for i, (_f, text, _v) in batch)


# --- a channel's world --------------------------------------------------------------------------------

class World:
    """One channel's data dir, temp dir (the fallback spool's) and project, the hooks, the CLI and what
    each printed."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.home = tmp_path / "data"
        self.tmp = tmp_path / "tmp"
        self.tmp.mkdir()
        self.project = make_git_project(tmp_path / "app")
        (self.project / "app.py").write_text("def greet(name):\n    return 'hi ' + name\n")
        monkeypatch.setenv("MEMORY_HOME", str(self.home))
        monkeypatch.setenv("TMPDIR", str(self.tmp))
        monkeypatch.setenv("MEMORY_WORKER", "off")
        for name in ("CLAUDE_PLUGIN_DATA", "CLAUDE_PROJECT_DIR", "MEMORY_PROJECT_DIR"):
            monkeypatch.delenv(name, raising=False)
        self.env = monkeypatch
        self.hooks = HookRunner(self.project, session="sess-sinks")
        self.printed: list[str] = []

    def cli(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "MEMORY_HOME": str(self.home), "MEMORY_WORKER": "off"}
        done = subprocess.run([sys.executable, "-m", "memory", *args], cwd=self.project, env=env, input=stdin,
                              capture_output=True, text=True, timeout=300)
        self.printed.append(done.stdout + done.stderr)
        return done

    def db_path(self) -> Path:
        return self.home / "projects" / identify(str(self.project)).key / "memory.db"

    def db(self) -> sqlite3.Connection:
        return sqlite3.connect(self.db_path(), isolation_level=None)

    def everything(self) -> dict[str, bytes]:
        found = blobs(self.home, self.tmp)
        for k, r in enumerate(self.hooks.results):  # what the hooks printed: injected text, outlines
            found[f"<stdout of hook {k}>"] = r["stdout"].encode()
        for k, text in enumerate(self.printed):
            found[f"<output of command {k}>"] = text.encode()
        return found


# --- the channels -------------------------------------------------------------------------------------

def ch_prompt(w: World) -> None:
    """UserPromptSubmit: the prompt (its title is cut at 150), a decision stated in it (cut at 150 too)."""
    w.hooks.start()
    for batch in batches():
        w.hooks.prompt("please fix the deploy, here is what I have:\n" + joined(batch))
        for i, (_f, text, _v) in batch[:6]:  # the first line is the title; a decision sentence is one too
            w.hooks.prompt(f"Decision: from now on the deploy step item{i:04d} uses {text}")


def ch_bash(w: World) -> None:
    """PostToolUse Bash: the command (its title is cut at 120), stdout and stderr."""
    w.hooks.start()
    for batch in batches():
        text = joined(batch)
        w.hooks.tool("Bash", {"command": text, "description": "deploy"},
                     {"stdout": text, "stderr": text, "interrupted": False})
        for i, (_f, t, _v) in batch[:4]:
            w.hooks.tool("Bash", {"command": f"./deploy.sh --step item{i:04d} {t}"},
                         {"stdout": "ok", "stderr": "", "interrupted": False})


def ch_bash_failure(w: World) -> None:
    """PostToolUseFailure Bash: the error text (its failure line goes to the state, cut at 200 and 300)."""
    w.hooks.start()
    for batch in batches():
        text = joined(batch, head="Error: item")
        w.hooks.tool("Bash", {"command": f"./deploy.sh {batch[0][0]}"}, failed=f"Exit code 1\n{text}")
        w.hooks.tool("Bash", {"command": "make deploy"}, {"stdout": "", "stderr": text, "interrupted": True})


def ch_webfetch(w: World) -> None:
    """PostToolUse WebFetch and WebSearch: the address, the prompt and the page."""
    w.hooks.start()
    for batch in batches():
        text = joined(batch)
        w.hooks.tool("WebFetch", {"url": "https://docs.example.com/setup", "prompt": text}, {"result": text})
        w.hooks.tool("WebSearch", {"query": text}, {"results": [{"title": t, "url":
                     "https://example.com"} for _i, (_f, t, _v) in batch]})


def ch_grep(w: World) -> None:
    """PostToolUse Grep and Glob: the pattern (kept in the state), the matches."""
    w.hooks.start()
    for batch in batches():
        for i, (_f, text, _v) in batch:
            w.hooks.tool("Grep", {"pattern": text, "path": "."},
                         {"mode": "content", "content": f"settings.py:{i}:{text}", "numFiles": 1,
                          "filenames": ["settings.py"]}) if i % 8 == 0 else None
        text = joined(batch)
        w.hooks.tool("Grep", {"pattern": text, "path": "."}, {"mode": "content", "content": text, "numFiles": 1,
                                                               "filenames": ["settings.py"]})


def ch_edit(w: World) -> None:
    """PostToolUse Edit and MultiEdit: the old and new strings (on lines of their own, as code is edited)."""
    w.hooks.start()
    path = str(w.project / "settings.py")
    for batch in batches():
        text = joined(batch)
        w.hooks.tool("Edit", {"file_path": path, "old_string": "x = 1", "new_string": text}, {"filePath": path})
        w.hooks.tool("Edit", {"file_path": path, "old_string": text, "new_string": "x = 2"}, {"filePath": path})
        for i, (_f, t, _v) in batch[:6]:
            w.hooks.tool("Edit", {"file_path": path, "old_string": f"# step {i}", "new_string": f"# step {i}\n{t}\n"},
                         {"filePath": path})
        edits = [{"old_string": f"step_{i} = None", "new_string": t} for i, (_f, t, _v) in batch]
        w.hooks.tool("MultiEdit", {"file_path": path, "edits": edits}, {"filePath": path})


def ch_write(w: World) -> None:
    """PostToolUse Write and NotebookEdit: the content written."""
    w.hooks.start()
    for batch in batches():
        text = joined(batch)
        path = str(w.project / f"notes_{batch[0][0]}.md")
        w.hooks.tool("Write", {"file_path": path, "content": text}, {"type": "create", "filePath": path,
                                                                     "content": text})
        nb = str(w.project / "setup.ipynb")
        w.hooks.tool("NotebookEdit", {"notebook_path": nb, "new_source": text, "edit_mode": "replace"},
                     {"new_source": text})


def ch_todos(w: World) -> None:
    """PostToolUse TodoWrite: each todo (pending ones go to the state, completed ones become memories)."""
    w.hooks.start()
    for batch in batches():
        todos = [{"content": f"item{i:04d} {text}", "status": "pending", "activeForm": "Working"}
                 for i, (_f, text, _v) in batch]
        w.hooks.tool("TodoWrite", {"todos": todos}, {"oldTodos": [], "newTodos": todos})
        done = [{**t, "status": "completed"} for t in todos]
        w.hooks.tool("TodoWrite", {"todos": done}, {"oldTodos": todos, "newTodos": done})


def ch_turn_end(w: World) -> None:
    """Stop's last_assistant_message (the state's last action, cut at 400; what it says it chose), the
    handoff it refreshes, PreCompact's instructions (cut at 300) and its handoff."""
    w.hooks.start()
    for batch in batches():
        text = joined(batch)
        w.hooks.stop(f"Done. I used these values:\n{text}\nWe decided to keep them in .env.")
        w.hooks.prompt("go on")
        line = batch[0][1][1]
        w.hooks.stop(f"We will use {line} for the deploy from now on.")
        w.hooks.run("pre_compact", w.hooks.event("PreCompact", trigger="manual", custom_instructions=text))
    w.hooks.end()


# A body long enough that the outline is worth showing instead of the file.
_BODY = [*(f"    step_{k} = event.get('step_{k}', {k}) * 2 + len(str(context))" for k in range(14)),
         "    return step_0"]


def _py_literal(text: str) -> str:
    """The text as a Python string literal on one line: newlines and quotes escaped (`\\n`, `\\"`)."""
    return json.dumps(text, ensure_ascii=False)


def yaml_doc(value: str) -> list[str]:
    return ["database:", "  host: db.internal", f"  password: {value}", f"  api_token: {value}"]


def toml_doc(value: str) -> list[str]:
    return ["[database]", f'password = "{value}"', "[service]", f'secret_key = "{value}"']


def code_files(project: Path) -> list[Path]:
    """Code files long enough for the Read outline whose module constants hold every form: as one-line
    literals (escaped newlines and quotes), as YAML and TOML inside triple-quoted strings, in a JavaScript
    module, each constant followed by a function so that each is shown with its value."""
    py = ['"""Service settings."""', "import os", ""]
    js = ["// Service settings", ""]
    for i, (_f, text, values) in FORMS:
        py += [f"CONFIG_{i} = {_py_literal(text)}", "", f"def handler_{i}(event, context=None):", *_BODY, ""]
        js += [f"export const CONFIG_{i} = {_py_literal(text)};", "", f"export function handler{i}(event) {{",
               *[f"  const s{k} = event.s{k} * {k};" for k in range(12)], "  return s0;", "}", ""]
        value = values[0]
        if "\n" not in value and '"""' not in value and "\\" not in value:
            py += [f'SETTINGS_YAML_{i} = """', *yaml_doc(value), '"""', "", f"def yaml_{i}(x):", *_BODY, ""]
            py += [f"SETTINGS_TOML_{i} = '''", *toml_doc(value), "'''", "", f"def toml_{i}(x):", *_BODY, ""]
    files = [project / "settings.py", project / "settings.js"]
    files[0].write_text("\n".join(py) + "\n")
    files[1].write_text("\n".join(js) + "\n")
    return files


def ch_read_outline(w: World) -> None:
    """PostToolUse Read of a large code file: the outline cached in SQLite and printed to the model."""
    w.hooks.start()
    for path in code_files(w.project):
        out = w.hooks.run("post_tool_use", w.hooks.read_event(path))
        assert out["json"] and "updatedToolOutput" in out["json"]["hookSpecificOutput"], out  # the outline path
    with w.db() as db:
        assert db.execute("SELECT count(*) FROM file_signatures WHERE symbols > 0").fetchone()[0] == 2


def ch_spool_locked(w: World) -> None:
    """A database locked past the busy timeout: the events go to the spool, then a later hook replays them."""
    w.hooks.start()
    w.env.setenv("MEMORY_BUSY_TIMEOUT_MS", "150")
    holder = w.db()
    holder.execute("BEGIN IMMEDIATE")
    for batch in batches():
        text = joined(batch)
        w.hooks.tool("Bash", {"command": text}, {"stdout": text, "stderr": "", "interrupted": False})
        w.hooks.prompt(text)
    spooled = blobs(w.home / "spool")
    assert len(spooled) >= 2 * len(batches()), "the events were spooled"
    early = {i: p for i, p in leaked(spooled).items() if i not in MISSED_BY_THE_FILTER}
    assert not early, describe(early)
    holder.rollback()
    holder.close()
    w.env.delenv("MEMORY_BUSY_TIMEOUT_MS")
    w.hooks.tool("Bash", {"command": "ls"}, {"stdout": "a b", "stderr": ""})  # replays the spool


def ch_spool_blocked(w: World) -> None:
    """A data dir that cannot be written (its parent is a file): events go to the temp dir's spool."""
    w.env.delenv("XDG_RUNTIME_DIR", raising=False)  # the runner's own runtime dir would take the spool
    blocker = w.home.parent / "blocked"
    blocker.write_text("a file where the data dir's parent should be")
    w.env.setenv("MEMORY_HOME", str(blocker / "data"))
    for batch in batches():
        text = joined(batch)
        w.hooks.tool("Bash", {"command": text}, {"stdout": text, "stderr": "", "interrupted": False})
        w.hooks.prompt(text)
    assert list(w.tmp.rglob("*.json")), "spooled in the temp dir"
    w.env.setenv("MEMORY_HOME", str(w.home))


def ch_logs(w: World) -> None:
    """Texts the hooks log: an event whose folder is not a project (its path quoted in the log), a hook that
    fails on a malformed event; at debug level."""
    w.env.setenv("MEMORY_LOG_LEVEL", "debug")
    w.hooks.start()
    for batch in batches():
        for i, (_f, text, _v) in batch[::6]:
            gone = f"{w.project.parent}/gone-{i}/ {text}"  # not a Path: it would fold the `//` of a URL
            w.hooks.run("user_prompt_submit", {**w.hooks.event("UserPromptSubmit", prompt=text), "cwd": gone})
        text = joined(batch)
        w.hooks.run("post_tool_use", {**w.hooks.event("PostToolUse", tool_name="Bash"),
                                      "tool_input": text, "tool_response": {"stdout": [text, {"x": text}]}})


def ch_mcp(w: World) -> None:
    """The MCP `save` tool: the title and the body (the library the server calls, and the real server)."""
    from memory.mcp import tools

    places = tools.Places(folder=str(w.project), home=str(w.home))
    try:
        for batch in batches():
            for i, (_f, text, _v) in batch:
                tools.save(places, content=f"Setup note item{i:04d}, as the model saved it:\n{text}",
                           title=f"Deploy item{i:04d}: {text}")
            tools.save(places, content=joined(batch))  # no title: the first line is
            pad = "x" * 150
            for i, (_f, text, _v) in batch[:8]:  # a title longer than the store keeps: the secret where it cuts
                tools.save(places, content=f"note {i}", title=f"{pad} {text}")
    finally:
        places.close()
    mcp_server_save(w, [f for f in FORMS[::12]])


def mcp_server_save(w: World, forms: list[tuple[int, Any]]) -> None:
    """The same through the real MCP server process over stdio."""
    pytest.importorskip("mcp")
    import asyncio

    from mcp import ClientSession, StdioServerParameters, stdio_client

    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "MEMORY_HOME": str(w.home), "CLAUDE_PROJECT_DIR": str(w.project), "PYTHONPATH": path}
    params = StdioServerParameters(command=sys.executable, args=["-m", "memory.mcp.server"], env=env,
                                   cwd=str(w.project))

    async def main() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            # A title within the tool's schema (200 characters), not itself JSON: the SDK parses a string
            # argument that is JSON into an object, and the tool then refuses it (not a string).
            for i, (_f, text, _v) in forms:
                args = {"content": f"item{i:04d}\n{text}", **({"title": f"Note: {text}"} if len(text) < 190 else {})}
                result = await s.call_tool("save", args)
                assert not result.is_error, (result.content[0].text, args)
                w.printed.append("\n".join(getattr(c, "text", "") for c in result.content))

    asyncio.run(main())


def ch_cli_save(w: World) -> None:
    """`memory save` with --title, with the first line as title, and `--jsonl`; then `memory export`
    (JSONL and Markdown) into the data dir."""
    for batch in batches():
        text = joined(batch)
        title = batch[0][1][1]
        assert w.cli("save", "--title", f"Deploy settings {title}", text).returncode == 0
        assert w.cli("save", batch[1][1][1] + "\n" + text).returncode == 0
    lines = [json.dumps({"content": f"{text}\nitem{i:04d}"}) for i, (_f, text, _v) in FORMS]
    lines += [json.dumps({"title": f"Step item{i:04d} {text}", "content": text})
              for i, (_f, text, _v) in FORMS[::3]]
    assert w.cli("save", "--jsonl", stdin="\n".join(lines) + "\n").returncode == 0
    exports = w.home / "exports"
    exports.mkdir(mode=0o700)
    assert w.cli("export", "-o", str(exports / "all.jsonl")).returncode == 0
    assert w.cli("export", "--format", "markdown", "-o", str(exports / "all.md")).returncode == 0


def transcript(project: Path, forms: list[tuple[int, Any]]) -> list[dict[str, Any]]:
    """A Claude Code transcript whose prompts, tool calls, results, todos and answers hold the forms."""
    lines: list[dict[str, Any]] = []
    base = {"sessionId": "sess-imported", "cwd": str(project), "version": "2.1.38", "userType": "external"}
    at = 1767225600.0

    def add(kind: str, message: dict[str, Any], **extra: Any) -> None:
        nonlocal at
        at += 5
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(at))
        lines.append({**base, "type": kind, "message": message, "uuid": f"u{len(lines)}", "timestamp": stamp,
                      **extra})

    for b, batch in enumerate(batches(forms)):
        text = joined(batch)
        add("user", {"role": "user", "content": f"please deploy with these:\n{text}"})
        calls = [("Bash", {"command": text}, {"stdout": text, "stderr": "", "interrupted": False}),
                 ("Edit", {"file_path": str(project / "s.py"), "old_string": "a = 1", "new_string": text},
                  {"filePath": str(project / "s.py")}),
                 ("TodoWrite", {"todos": [{"content": t, "status": "completed", "activeForm": "x"}
                                          for _i, (_f, t, _v) in batch]}, {"oldTodos": []}),
                 ("WebFetch", {"url": "https://docs.example.com", "prompt": "setup"}, {"result": text})]
        for k, (tool, tin, result) in enumerate(calls):
            tid = f"toolu_{b}_{k}"
            add("assistant", {"role": "assistant", "content": [{"type": "tool_use", "id": tid, "name": tool,
                                                                "input": tin}]})
            add("user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid,
                                                      "content": json.dumps(result)}]}, toolUseResult=result)
        add("assistant", {"role": "assistant", "content": [{"type": "text", "text": f"Done, I used:\n{text}"}]})
    return lines


def ch_import(w: World) -> None:
    """`memory import` of a transcript holding the forms in every kind of line."""
    path = w.project.parent / "transcript.jsonl"
    path.write_text("\n".join(json.dumps(ln) for ln in transcript(w.project, FORMS)) + "\n")
    done = w.cli("import", str(path), "--no-progress", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["sessions_imported"] == 1
    path.unlink()  # the user's own transcript is not the data dir


def ch_team_pull(w: World) -> None:
    """Rows pulled from the team server, written to the local database (memory/team/outbox.py)."""
    from memory.store.workspace import Workspace
    from memory.team import outbox

    ws = Workspace.for_dir(str(w.project), str(w.home))
    try:
        rows = [{"uid": f"uid-{i}", "machine": "teammate-box", "version": time.time(), "deleted": False,
                 "title": f"Shared item{i:04d} {text}", "content": text, "session_id": None,
                 "type": "learning", "importance": 0.5, "confidence": 0.5, "tags": "team", "files": "",
                 "created_at": time.time(), "updated_at": time.time(), "expires_at": None, "author": "bob"}
                for i, (_f, text, _v) in FORMS]
        outbox.apply_pulled(ws.db, ws.project.key, rows, ("1", 1), machine="my-box")
    finally:
        ws.close()


def straddling(text: str, value: str, cut: int, head: str = "") -> str | None:
    """The one-line text padded so that the secret starts ten characters before `cut` (with `head` before
    the padding): a cut there keeps its first ten characters. None when it cannot be placed so."""
    pad = cut - 10 - len(head) - text.find(value)
    return f"{head}{'x' * (pad - 1)} {text}" if text.find(value) >= 0 and pad > 1 else None


def ch_cut_edges(w: World) -> None:
    """Texts whose secret straddles the length a title or a state line is cut at: a Bash title (120), a
    prompt's title (150), a stated decision (150), a todo (150, 300), the Stop message's state line (400)."""
    w.hooks.start()
    todos = []
    for _i, (_f, text, values) in FORMS[::9]:
        value = max(values, key=len)
        if "\n" in text or len(value) < 12:
            continue
        if (cmd := straddling(text, value, 120)) is not None:
            w.hooks.tool("Bash", {"command": cmd}, {"stdout": "ok", "stderr": "", "interrupted": False})
        if (prompt := straddling(text, value, 150, "Decision: we will use ")) is not None:
            w.hooks.prompt(prompt)
        if (said := straddling(text, value, 400, "Assistant: ")) is not None:
            w.hooks.stop(said)
        todos += [{"content": t, "status": "completed", "activeForm": "x"}
                  for cut in (150, 300) if (t := straddling(text, value, cut, "Completed: ")) is not None]
    w.hooks.tool("TodoWrite", {"todos": todos}, {"oldTodos": []})


CHANNELS: dict[str, Callable[[World], None]] = {
    "prompt": ch_prompt, "bash": ch_bash, "bash-failure": ch_bash_failure, "webfetch": ch_webfetch,
    "grep": ch_grep, "edit": ch_edit, "write": ch_write, "todos": ch_todos, "turn-end": ch_turn_end,
    "read-outline": ch_read_outline, "spool-locked": ch_spool_locked, "spool-blocked": ch_spool_blocked,
    "logs": ch_logs, "mcp-save": ch_mcp, "cli-save-export": ch_cli_save, "import": ch_import,
    "team-pull": ch_team_pull, "cut-edges": ch_cut_edges,
}
QUIET = {"write"}  # a written file's content is not recorded (only its path and size)


def _missed_by_the_filter() -> set[int]:
    """The forms whose core the privacy filter itself leaves in place, given the form alone or among the others
    of its batch as the channels send them: a gap in its rules (memory/base/privacy.py), not in a sink. The
    channels are judged without them; the test below lists them."""
    from memory.base.privacy import clean

    out = set()
    for batch in batches():
        together = clean(joined(batch)).encode()
        for i, (_f, text, _v) in batch:
            alone = clean(text).encode()
            if any(n in alone or n in together for n in NEEDLES[i]):
                out.add(i)
    return out


MISSED_BY_THE_FILTER = _missed_by_the_filter()


def _missed_in_config() -> set[int]:
    """The forms whose value the filter leaves in a YAML or TOML document (as the outline channel's string
    constants hold them), given the document alone: a gap of its rules, not of the outline."""
    from memory.base.privacy import clean

    return {i for i, (_f, _t, values) in FORMS
            if any(n in clean("\n".join(doc(values[0]))).encode() for doc in (yaml_doc, toml_doc) for n in NEEDLES[i])}


GAPS = {"read-outline": MISSED_BY_THE_FILTER | _missed_in_config()}


@pytest.mark.xfail(reason="filter rule: privrules", strict=False)
def test_the_filter_leaves_no_core_of_any_form_alone_in_a_batch_in_yaml_and_toml_or_among_others() -> None:
    """The gaps of the filter's own rules the channels and the audit are judged without: the forms whose core
    it leaves given the form alone, in a batch, in a YAML or TOML document, or among the audit's shares."""
    gaps = GAPS["read-outline"] | missed_among(_SHARES)
    assert not gaps, describe({i: ["privacy.clean"] for i in gaps})


@pytest.mark.parametrize("channel", list(CHANNELS))
def test_no_form_sent_through_a_channel_reaches_any_sink(channel: str, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    w = World(tmp_path, monkeypatch)
    CHANNELS[channel](w)
    for r in w.hooks.results:
        assert r["exit_code"] == 0, r
    everything = w.everything()
    if channel not in QUIET:
        assert any(b"[REDACTED:" in data for data in everything.values()), "the channel recorded something"
    found = leaked(everything)
    if os.environ.get("SINKS_DEBUG"):
        for i, places in sorted(found.items()):
            for place in places[:2]:
                data = everything[place]
                needle = next(n for n in NEEDLES[i] if n in data)
                at = data.find(needle)
                print(f"#{i} {SECRETS[i][0]} {place.replace(str(tmp_path), '')}: {data[max(0, at - 150):at + 60]!r}")
    sinks = {i: p for i, p in found.items() if i not in GAPS.get(channel, MISSED_BY_THE_FILTER)}
    print(f"\n{channel}: {len(found)} of {len(FORMS)} forms reached a sink, {len(sinks)} of them not a gap of the "
          f"filter's rules ({len(w.hooks.results)} hooks)")
    assert not sinks, describe(sinks, str(tmp_path))


# --- memory audit --redact on a data dir an older version left secrets in ------------------------------

def _session(w: World) -> None:
    """An ordinary session first, so that most tables and files have rows: prompts, tools, an outline, a
    handoff, a compaction's job, an import, an export in the data dir, a spooled event."""
    w.hooks.start()
    w.hooks.prompt("fix the zebracorn importer, we decided to keep the retries at three")
    w.hooks.tool("Bash", {"command": "pytest -q"}, failed="Exit code 1\nFAILED test_zebracorn")
    w.hooks.tool("Bash", {"command": "pytest -q"}, {"stdout": "3 passed", "stderr": ""})
    w.hooks.tool("TodoWrite", {"todos": [{"content": "zebracorn retries", "status": "completed"}]}, {"oldTodos": []})
    code = code_files(w.project)[0]
    code.write_text("\n".join(code.read_text().splitlines()[:400]) + "\n")
    w.hooks.run("post_tool_use", w.hooks.read_event(code))
    w.hooks.stop("Done: the zebracorn importer retries three times.")
    w.hooks.compact()
    w.hooks.end()
    path = w.project.parent / "old.jsonl"
    path.write_text("\n".join(json.dumps(ln) for ln in transcript(w.project, [(0, ("x", "zebracorn", []))])) + "\n")
    assert w.cli("import", str(path), "--no-progress").returncode == 0
    (w.home / "exports").mkdir(mode=0o700)
    assert w.cli("export", "-o", str(w.home / "exports" / "memories.jsonl")).returncode == 0


def _plant_json(text: str, secret: str) -> str:
    """A JSON document or JSON lines with the secret added as a string, written as the plugin writes JSON."""
    try:
        value = json.loads(text)
    except ValueError:
        return text + json.dumps({"planted": secret}) + "\n"  # JSON lines
    if isinstance(value, dict):
        value["planted"] = secret
    elif isinstance(value, list):
        value.append(secret)
    return json.dumps(value, ensure_ascii=False, indent=2 if "\n" in text.strip() else None)


# The corpus in 35 shares (the forms the filter alone or in a batch misses left out): one a place, in turn.
_PLANTABLE = [f for f in FORMS if f[0] not in MISSED_BY_THE_FILTER]
_SHARES = ["\n".join(text for _i, (_f, text, _v) in _PLANTABLE[k % 7::7][k // 7 % 5::5]) for k in range(35)]


def missed_among(texts: list[str]) -> set[int]:
    """The forms a core of which the filter leaves in one of these texts that holds the form: a gap of its
    rules in that context (memory/base/privacy.py), which no audit can close."""
    from memory.base.privacy import clean

    out = set()
    for text in texts:
        kept = clean(text).encode()
        out |= {i for i, (_f, form, _v) in FORMS if form in text and any(n in kept for n in NEEDLES[i])}
    return out


def plant_everywhere(w: World) -> tuple[list[str], list[int]]:
    """Every text column of every row (five a table) of the project database and every text file of the data
    dir and of the temp dir's spool, each given a share of the corpus, bypassing the filter as an older
    version would have written it; and a corrupt copy of the database. Returns the places and the forms."""
    places: list[str] = []

    def share() -> str:
        k = len(places)
        return _SHARES[k % len(_SHARES)]

    db = w.db()
    # The worker (off here) keeps the neighbour index: one row of it, as it would have written it (the index
    # keeps no text; the ledger keeps what it indexed, compressed).
    mid, title, content, tags = db.execute("SELECT id, title, content, tags FROM memories LIMIT 1").fetchone()
    doc = ctx_rows.insert(db, mid, (title, content, tags, f"zebracorn context\n{share()}"))
    db.execute("INSERT INTO memory_index (memory_id, created_at, provider, text_hash, indexed_at, doc) "
               "VALUES (?, 0, 'p', 'h', 0, ?)", (mid, doc))
    places.append("memories_ctx.ctx")
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
                                       "'sqlite_%' AND name NOT LIKE 'memories_fts%' AND name NOT LIKE "
                                       "'memories_ctx_%'")]
    for table in tables:
        cols = [r[1] for r in db.execute(f'PRAGMA table_info("{table}")')]
        try:
            db.execute(f'SELECT rowid FROM "{table}" LIMIT 0')
            key = "rowid"
        except sqlite3.OperationalError:  # WITHOUT ROWID: the primary key's columns, joined
            key = " || ".join(f'"{r[1]}"' for r in db.execute(f'PRAGMA table_info("{table}")') if r[5])
        for row in db.execute(f'SELECT {key}, * FROM "{table}" LIMIT 5').fetchall():
            for col, value in zip(cols, row[1:], strict=True):
                if not isinstance(value, str) or col in ("id", "uid", "session_id", "project"):
                    continue
                new = _plant_json(value, share()) if value[:1] in "{[" else f"{value}\n{share()}"
                try:
                    db.execute(f'UPDATE "{table}" SET "{col}" = ? WHERE {key} = ?', (new, row[0]))
                except sqlite3.IntegrityError:
                    continue  # a column with a CHECK (a status): no text anyone wrote
                places.append(f"{table}.{col}")
    db.close()
    assert {"memories.content", "memories.title", "handoffs.content", "session_state.state", "sessions.summary",
            "file_signatures.outline", "queue.payload", "memory_files.path", "memories_ctx.ctx"} <= set(places), places
    copy = w.db_path().with_name("memory.db.corrupt-1767225600")
    copy.write_bytes(w.db_path().read_bytes())
    (w.home / "logs").mkdir(exist_ok=True)
    (w.home / "logs" / "hooks.log.1").write_text("2026-01-01T00:00:00 INFO old rotated log\n")
    (w.home / "spool").mkdir(exist_ok=True)
    (w.home / "spool" / "0001-1-post_tool_use.json.bad").write_text('{"hook": "post_tool_use", "event": ')
    elsewhere = w.tmp / f"claude-memory-{os.getuid()}"
    spool = elsewhere / f"spool-{_fallback_name(w.home)}"
    spool.mkdir(parents=True, mode=0o700)
    (spool / "0002-1-user_prompt_submit.json").write_text(json.dumps({"hook": "user_prompt_submit", "event": {}}))
    (elsewhere / "notices.jsonl").write_text(json.dumps({"kind": "disk-full", "message": "x"}) + "\n")
    for path in sorted(p for root in (w.home, elsewhere) for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if b"\0" in data[:8192] or path.name.endswith(("-wal", "-shm")) or path.name == "reserve":
            continue
        text = data.decode()
        secret = share()
        planted = _plant_json(text, secret) if path.suffix in (".json", ".jsonl") else f"{text}{secret}\n"
        path.write_text(planted)
        places.append(path.name)
    return places, [i for i, _ in _PLANTABLE]


def _fallback_name(home: Path) -> str:
    from hashlib import sha256

    return sha256(str(home).encode()).hexdigest()[:12]


def test_audit_redact_cleans_every_table_and_file_and_then_finds_nothing(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    w = World(tmp_path, monkeypatch)
    _session(w)
    places, planted = plant_everywhere(w)
    everything = blobs(w.home, w.tmp)
    assert len(leaked(everything, [(i, None) for i in planted])) == len(planted), "every form was planted"

    first = w.cli("audit", "--json")
    assert first.returncode == 1, first.stderr[-2000:]
    found = json.loads(first.stdout)
    assert found["secrets"] >= len(places), (found["secrets"], len(places))
    where = " ".join(found["by_place"])
    for place in ("memory.db:memories", "memory.db:handoffs", "memory.db:session_state", "memory.db:file_signatures",
                  "memory.db:memory_files", "memory.db:memories_ctx", "memory.db:queue", "memory.db.corrupt",
                  "logs", "daily", "spool", "exports", "projects", "temp dir"):
        assert place in where, (place, found["by_place"])

    done = w.cli("audit", "--redact")
    assert done.returncode == 0, done.stderr[-2000:]
    db = w.db()
    docs = {f"memory_index.doc {m}": "\x00".join(ctx_rows.unpack(d)).encode()
            for m, d in db.execute("SELECT memory_id, doc FROM memory_index WHERE doc IS NOT NULL")}
    db.close()
    assert docs
    left = leaked({**blobs(w.home, w.tmp), **docs}, [(i, None) for i in planted])
    gaps = missed_among(_SHARES)  # the filter itself leaves them in the text they were planted in: its rules'
    assert not {i: p for i, p in left.items() if i not in gaps}, describe(left, str(tmp_path))
    for path in [*w.home.rglob("*.json"), *w.tmp.rglob("*.json")]:
        json.loads(path.read_text())  # still JSON: strings were redacted inside it
    again = w.cli("audit", "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["secrets"] == 0, again.stdout[-2000:]
    found = w.cli("search", "zebracorn", "--json")
    assert found.returncode == 0 and json.loads(found.stdout), found.stdout[-500:]  # the indexes were rebuilt
