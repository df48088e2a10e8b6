"""The hook hot path stays lean: what a PostToolUse process imports, and the string-method versions of
regexes it used to compile (checked against the regexes they replaced)."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from memory.base.classify import DEFAULT_LOW_VALUE, is_low_value
from memory.base.project import _slug, normalise_remote, origin_url
from memory.store import normalise

ROOT = Path(__file__).resolve().parents[1]
# What the fast path spares a hook is checked with it on, in both of scripts/test's passes (tests/conftest.py).
pytestmark = pytest.mark.fastpath


# The regex versions, as they were: the oracles of the string-method versions.
def old_normalise_remote(url: str) -> str:
    u = url.strip()
    u = re.sub(r"^[a-z+]+://", "", u)
    u = re.sub(r"^[^@/]+@", "", u)
    u = u.replace(":", "/", 1) if re.match(r"^[^/]+:[^/]", u) else u
    u = re.sub(r"\.git/?$", "", u).rstrip("/")
    return u.lower()


def old_slug(name: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")
    return (s or "project")[:40]


def old_origin_url(text: str) -> str | None:
    m = re.search(r'\[remote "origin"\][^\[]*?url\s*=\s*(\S+)', text, re.S)
    return m.group(1) if m else None


def _random_text(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, n)))


def test_remote_normalisation_matches_the_regexes() -> None:
    rng = random.Random(5)
    known = ["git@github.com:Org/Repo.git", "https://user:pw@github.com/org/repo/", "ssh://git@host:22/o/r.git",
             "git+ssh://h/o/r.git/", "HTTPS://x/y", "file:///srv/repo.git", "host:/abs/path", "a:b", ":x",
             "  git@h:o/r.git\n", "x.git", ".git/", "c:\\repo", "user@host", "@host:o/r"]
    samples = known + [_random_text(rng, "ab:/@.+gitHS \t\n", 14) for _ in range(20000)]
    for url in samples:
        assert normalise_remote(url) == old_normalise_remote(url), url


def test_slug_matches_the_regex() -> None:
    rng = random.Random(6)
    samples = ["my project", "..x..", "--", "", "ünïcode name", "a/b\\c", "x" * 60] + \
        [_random_text(rng, "aZ09._- /é\0\t", 50) for _ in range(20000)]
    for name in samples:
        assert _slug(name) == old_slug(name), name


def test_origin_url_matches_the_regex() -> None:
    rng = random.Random(7)
    real = ('[core]\n\tbare = false\n[remote "upstream"]\n\turl = git@a:b/c.git\n[remote "origin"]\n'
            '\tfetch = +refs/heads/*:refs/remotes/origin/*\n\turl = https://github.com/o/r.git\n')
    samples = [real, '[remote "origin"]\n\tpushurl = x\n\turl = y\n', '[remote "origin"]\nurl=\n[x]\nurl = z',
               '[remote "origin"]\n', '[remote "origin"][remote "origin"] url = q', "url = nothing"]
    parts = ['[remote "origin"]', "[core]", "url", " = ", "=", "pushurl", "\n", "\t", " ", "v1", "[", "x"]
    samples += ["".join(rng.choice(parts) for _ in range(rng.randint(0, 12))) for _ in range(20000)]
    for text in samples:
        assert origin_url(text) == old_origin_url(text), text


def test_normalise_matches_the_regex() -> None:
    spaces = "".join(chr(c) for c in range(0x110000) if chr(c).isspace())
    rng = random.Random(8)
    for _ in range(5000):
        text = _random_text(rng, "aB1" + spaces, 30)
        assert normalise(text) == re.sub(r"\s+", " ", text).strip().lower(), repr(text)


def test_low_value_gate_keeps_every_verdict() -> None:
    patterns = [re.compile(p, re.I) for p in DEFAULT_LOW_VALUE]
    titles = ["Ran `ls -la` (ok)", "Ran `LS` (ok)", "ran `git status` (ok)", "Ran `git commit -m x` (ok)",
              "Ran `pytest -q` (ok)", "Asked: thanks!", "Asked: thank you", "Asked: go ahead.", "Asked: fix it",
              "Searched for x", "Listed files", "Read src/app.py", "Modified a.py", "Ran `lsblk` (ok)",
              "Ran `ſearched` (ok)", "ſearched for x", "Lıſted files", "Asked: oK", "Ran `Kat` (ok)",
              "Ran `ls -la`", "Ran `git status`", "Ran `pytest -q`"]
    rng = random.Random(9)
    words = ["Ran `", "ls", "git ", "status", "` (ok)", "`", "Asked: ", "ok", "yes", "Searched ", "Listed ", "x",
             " ", "!", "ſ", "K", "ı"]
    titles += ["".join(rng.choice(words) for _ in range(rng.randint(1, 6))) for _ in range(20000)]
    for title in titles:
        expected = not title.strip() or any(p.search(title) for p in patterns)
        assert is_low_value(title, "content") == expected, title


def _hook_modules(tmp_path: Path, event: dict, entry: str = "post_tool_use", worker: str = "off",
                  **extra_env: str) -> set[str]:
    """The modules a real hook process has loaded when it exits, from `python -X importtime`."""
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    env = {**os.environ, "MEMORY_HOME": str(tmp_path / "data"), "MEMORY_WORKER": worker, **extra_env}
    for name in ("CLAUDE_PLUGIN_DATA", "CLAUDE_PROJECT_DIR", "MEMORY_PROJECT_DIR", "MEMORY_LOW_VALUE_PATTERNS"):
        env.pop(name, None)
    payload = {"session_id": "s-lean", "transcript_path": "", "cwd": str(project), **event}
    proc = subprocess.run([sys.executable, "-S", "-X", "importtime", str(ROOT / "hooks" / f"{entry}.py")],
                          input=json.dumps(payload).encode(), capture_output=True, env=env, timeout=60)
    assert proc.returncode == 0
    modules = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.decode().splitlines()
               if line.startswith("import time:") and "|" in line}
    assert f"memory.hook.{entry}" in modules, proc.stderr.decode()[-2000:]
    return modules


def test_a_plain_tool_hook_stays_off_the_slow_imports(tmp_path: Path) -> None:
    # What was removed from the hot path: importlib (handler lookup), typing (annotations), hashlib (SHA-256
    # is the builtin module), dataclasses, datetime parsing, logging, pathlib, traceback, ...
    heavy = {"importlib", "typing", "hashlib", "dataclasses", "pathlib", "logging", "traceback", "locale",
             "subprocess", "inspect", "tempfile", "shutil"}
    bash = {"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "pytest -q"},
            "tool_response": {"stdout": "3 passed", "stderr": ""}}
    edit = {"hook_event_name": "PostToolUse", "tool_name": "Edit",
            "tool_input": {"file_path": str(tmp_path / "project" / "a.py"), "old_string": "x", "new_string": "y"},
            "tool_response": {}}
    for event in (bash, edit):
        modules = _hook_modules(tmp_path, event)
        assert not modules & heavy, sorted(modules & heavy)
    # The same command again (its memory is a duplicate, so nothing is queued for the worker): neither the
    # json package nor re (memory/fastpath/jsonlite.py, regexes compiled only when a trigger occurs).
    modules = _hook_modules(tmp_path, bash)
    assert not modules & (heavy | {"re", "json", "json.decoder", "enum"}), sorted(modules & (heavy | {"re", "json"}))
    # Nor the trust flags (a duplicate is written with none: memory/store/__init__.py _flags_for) or the word
    # splitting of prompts.
    assert not modules & {"memory.base.fence", "memory.base.words"}, sorted(modules)


def test_asking_a_running_worker_stays_off_the_socket_module(tmp_path: Path) -> None:
    """A hook that saves a memory wakes the running worker over its socket with the C-level _socket: the
    `socket` package imports enum, selectors and functools (8.7 ms CPU of such a hook)."""
    from memory.base.worker_client import socket_path

    home = tmp_path / "data"
    home.mkdir()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(socket_path(str(home)))
    server.listen(4)
    asked: list[dict] = []

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            asked.append(json.loads(conn.makefile("rb").readline()))
            conn.sendall(b'{"ok": true}\n')

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    bash = {"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "make -j4 all"},
            "tool_response": {"stdout": "built", "stderr": ""}}
    try:
        modules = _hook_modules(tmp_path, bash, worker="on")
        thread.join(10)
    finally:
        server.close()
    assert [a.get("op") for a in asked] == ["wake"]  # the new memory woke the worker through the socket
    assert "_socket" in modules and not modules & {"socket", "selectors", "enum"}, sorted(modules)


def test_flag_constants_are_res() -> None:
    from memory.base import privacy

    assert (privacy._I, privacy._M, privacy._S) == (re.I, re.M, re.S)


def test_secret_triggers_are_necessary() -> None:
    """A secret rule only runs when one of its triggers (and of its `needs`) occurs: on ASCII text, no rule
    may change a text that holds none of them."""
    from memory.base import privacy

    rng = random.Random(10)
    parts = ["password", "PASSWD", "pwd", "passed", "pass", "PASS", "Secret", "token", "api_key", "API-KEY",
             "credential", "=", ": ", "'", '"', "hunter2hunter2", " ", "\n", "bearer ", "x" * 24, "AKIA",
             "ABCDEFGHIJKLMNOP", "sk-", "ghp_", "eyJ", "abcdefghij.", "://u:", "@h", "-----BEGIN RSA PRIVATE KEY-----",
             "db_", "Auth", " --", "-p", "mysql ", "machine ", " is ", "my ", "Basic ", "dXNlcjpwYXNz", "Zz9Kq2Lw8Rt",
             "Authorization", "\t", "<", ">", "</", "sig=", "$2b$", "Q~", "xoxb-", "1234567890"]
    texts = ["".join(rng.choice(parts) for _ in range(rng.randint(1, 8))) for _ in range(20000)]
    for kind, triggers, source, group, flags, check, needs in privacy._SECRETS:
        for text in texts:
            lower = text.lower()
            if any(t in lower for t in triggers) and (not needs or (needs(text) if callable(needs) else
                                                                       any(n in lower for n in needs))):
                continue
            out = privacy._sub(text, kind, source, group, flags, check, [])
            assert out == text, (kind, source, text)


def test_the_discord_rule_runs_only_on_an_id_before_a_dot() -> None:
    """The Discord token's triggers are common trigrams ("ode" of "code"): its pattern runs only when 24 ASCII
    letters or digits end at a "." (privacy._id_before_dot), which every token it finds has."""
    from memory.base import privacy

    rule = next(r for r in privacy._SECRETS if r[0] == "discord-token")
    kind, _triggers, source, group, flags, check, needs = rule
    assert callable(needs)
    token = "MTA" + "k" * 23 + ".Gh3xYz." + "Q" * 30
    rng = random.Random(15)
    parts = ["code", "node", " ", ".", "\n", "MTA", "OD", "Nz", "x" * 12, "k" * 23, ".Gh3xYz.", "Q" * 30, "_", "-",
             "é", token, "decoder.", "a" * 30 + "."]
    changed = 0
    for _ in range(20000):
        text = "".join(rng.choice(parts) for _ in range(rng.randint(1, 9)))
        out = privacy._sub(text, kind, source, group, flags, check, [])
        if out != text:
            changed += 1
            assert needs(text), text
    assert changed > 100  # the texts did hold tokens the rule redacts
    assert privacy.clean(f"the bot runs with {token} in its code.") == \
        "the bot runs with [REDACTED:discord-token] in its code."
    many = ". " * 100 + token  # more dots than the check looks at: the pattern runs, as before
    assert needs(many) and "[REDACTED:discord-token]" in privacy.clean(many)


def test_clean_fast_path_matches_the_full_filter() -> None:
    from memory.base.privacy import clean, redact_secrets, strip_private

    rng = random.Random(13)
    parts = ["<private>", "</private>", "PRIVATE", "password=hunter2hunter2", "key", "Token ", "x" * 21, "/src/a.py",
             "sk-", "ghp_", "AKIA", "ABCDEFGHIJKLMNOP", "://u:p@h", " ", "\n", "é", "pass", "eyJ", "abcdefgh."]
    for _ in range(20000):
        text = "".join(rng.choice(parts) for _ in range(rng.randint(0, 7)))
        assert clean(text) == (redact_secrets(strip_private(text)) if text else text), text


def test_words_match_the_regex() -> None:
    from memory.recall.search import words

    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    assert words(every) == re.findall(r"\w+", every)
    rng = random.Random(14)
    alphabet = "aZ09_ -.,;:!?'\"\t\n\x1c\u00a0\u2028é日本語ß٣²½\u0301\u200bΩ"
    for _ in range(20000):
        text = _random_text(rng, alphabet, 30)
        assert words(text) == re.findall(r"\w+", text), repr(text)


def test_startup_and_compaction_hooks_stay_off_re_json_hashlib_and_datetime(tmp_path: Path) -> None:
    """SessionStart, PreCompact and SessionEnd load neither re (enum with it: ~6 ms CPU), json, hashlib
    (OpenSSL) nor sqlite3's dbapi2 layer (datetime): words are split by str.translate (memory/recall/search.py),
    JSON goes through memory/fastpath/jsonlite.py, and hooks/_entry.py gives them sqlite3 without dbapi2. The one
    that needs no database (PreToolUse) loads no sqlite3 at all."""
    slow = {"re", "json", "enum", "hashlib", "datetime", "sqlite3.dbapi2", "collections"}
    for entry, event in [("session_start", {"hook_event_name": "SessionStart", "source": "startup"}),
                         ("pre_compact", {"hook_event_name": "PreCompact", "trigger": "auto"}),
                         ("session_end", {"hook_event_name": "SessionEnd", "reason": "other"})]:
        modules = _hook_modules(tmp_path, event, entry)
        assert "sqlite3" in modules and not modules & slow, (entry, sorted(modules & slow))
    read = {"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": str(tmp_path / "a.py")}}
    assert not _hook_modules(tmp_path, read, "pre_tool_use") & {"sqlite3", "_sqlite3", *slow}


def test_an_ordinary_prompt_stays_off_re(tmp_path: Path) -> None:
    """A prompt with none of the words a decision needs (capture._DECISION_WORDS) is never split into
    sentences, so the prompt hook loads no re (enum with it: ~6 ms CPU); one with such a word does."""
    plain = {"hook_event_name": "UserPromptSubmit", "prompt": "please fix the failing parser test in src/app.py"}
    modules = _hook_modules(tmp_path, plain, "user_prompt_submit")
    assert not modules & {"re", "enum", "json"}, sorted(modules & {"re", "enum", "json"})
    rule = {"hook_event_name": "UserPromptSubmit", "prompt": "We store auth tokens in httpOnly cookies."}
    assert "re" in _hook_modules(tmp_path, rule, "user_prompt_submit")


def test_the_decision_word_gate_changes_no_verdict() -> None:
    """The gate only skips texts _states_decision would reject: every word it checks for appears in each
    phrase and rule it accepts (checked on 33,071 real turns too; see scripts/bench/decisions.py)."""
    from memory import capture

    texts = ["We store auth tokens in httpOnly cookies, never localStorage.", "Decision: use uv.",
             "From now on run ruff first.", "Going forward, tabs.", "I'm going with SQLite.",
             "We've decided to drop py3.10.", "Our convention: snake_case.", "The rule is no force pushes.",
             "Always pin versions.", "we/they use nix", "We\u2019ll use Redis for caching.",
             "please fix the test", "Can we use Redis?", "the new week answer", "Wie geht's, Weltrule?"]
    gated = [capture.decisions_in(t) for t in texts]

    class Never(frozenset):
        def isdisjoint(self, other: object) -> bool:
            return False

    saved = capture._DECISION_WORDS
    capture._DECISION_WORDS = Never()  # type: ignore[assignment]
    try:
        assert [capture.decisions_in(t) for t in texts] == gated
    finally:
        capture._DECISION_WORDS = saved
    assert sum(map(bool, gated)) >= 9


def test_parse_size_matches_the_regex() -> None:
    """limits.parse_size reads sizes with string methods (a hook's save imports no re): same verdicts and
    values as the regex it replaced, on hand-picked and generated strings."""
    from memory.store.limits import _SIZE_PATTERN, _UNITS, parse_size

    def by_regex(text: str) -> int | None:
        m = re.match(_SIZE_PATTERN, text or "", re.I)
        return int(float(m.group(1)) * _UNITS[m.group(2).lower()]) if m else None

    def by_code(text: str) -> int | None:
        try:
            return parse_size(text)
        except ValueError:
            return None

    cases = ["500MB", "1.5G", "200k", "1048576", " 2 gib ", "3ib", "4 M B", "5.", ".5", "1.2.3", "", "kb", "7KiB\n",
             "+5", "-5", "5e3", "٥ م", "٥٠", "10 tb", "10tbb", "1\u212a", "9 i b", "12 kbit"]
    rng = random.Random(7)
    alphabet = "0123456789.kmgtibKMGTIB \t+-e٥x"
    cases += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 7))) for _ in range(20000)]
    for text in cases:
        assert by_code(text) == by_regex(text), text


def _fake_plugin(root: Path) -> None:
    """A plugin root with the real hooks/_entry.py and fast path finders, a hook `probe` and a few modules of
    `memory`, compiled."""
    import compileall

    (root / "hooks").mkdir(parents=True)
    (root / "memory" / "fastpath").mkdir(parents=True)
    shutil.copy(ROOT / "hooks" / "_entry.py", root / "hooks" / "_entry.py")
    for name in ("__init__.py", "imports.py"):
        shutil.copy(ROOT / "memory" / "fastpath" / name, root / "memory" / "fastpath" / name)
    (root / "hooks" / "probe.py").write_text("from _entry import run\n\nrun('probe')\n")
    for rel, text in {"memory/__init__.py": "", "memory/hook/__init__.py": "", "memory/pkg/__init__.py": "",
                      "memory/x.py": "VALUE = 1\n\n\ndef f():\n    pass\n",
                      "memory/hook/run.py": (
                          "import json\nimport sys\n\n\ndef run(name):\n"
                          "    import memory.pkg\n    import memory.x\n"
                          "    mods = {n: [getattr(m.__loader__, '__name__', type(m.__loader__).__name__), m.__file__, "
                          "m.__cached__, getattr(m, '__path__', None), m.__package__, m.__spec__.parent] "
                          "for n, m in sys.modules.items() if n.startswith('memory')}\n"
                          "    print(json.dumps({'value': memory.x.VALUE, 'modules': mods, "
                          "'code': getattr(memory.x, 'f', run).__code__.co_filename}))\n")}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    assert compileall.compile_dir(str(root / "memory"), quiet=1)


def test_hooks_load_the_plugins_modules_from_their_current_pyc_only(tmp_path: Path) -> None:
    """The fast path's finder (memory/fastpath/imports.py) loads `memory` and `parser` modules straight from their .pyc
    (~15 us CPU a module less than importlib's path finder and loader), with the attributes importlib gives them,
    and never from a .pyc its source has changed since: that one goes to importlib, which compiles the new source."""
    root = tmp_path / "plugin"
    _fake_plugin(root)

    def probe(root: Path = root) -> dict:
        proc = subprocess.run([sys.executable, "-S", str(root / "hooks" / "probe.py")], capture_output=True,
                              env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}, timeout=60)
        assert proc.returncode == 0, proc.stderr.decode()
        return json.loads(proc.stdout)

    got = probe()
    assert got["value"] == 1
    mem, pkg = str(root / "memory"), str(root / "memory" / "pkg")
    assert got["modules"]["memory"] == ["PluginModules", f"{mem}/__init__.py",
                                        f"{mem}/__pycache__/__init__.{sys.implementation.cache_tag}.pyc", [mem],
                                        "memory", "memory"]
    assert got["modules"]["memory.pkg"][1:] == [f"{pkg}/__init__.py",
                                                f"{pkg}/__pycache__/__init__.{sys.implementation.cache_tag}.pyc",
                                                [pkg], "memory.pkg", "memory.pkg"]
    assert got["modules"]["memory.x"] == ["PluginModules", f"{mem}/x.py",
                                          f"{mem}/__pycache__/x.{sys.implementation.cache_tag}.pyc", None,
                                          "memory", "memory"]
    assert got["code"] == f"{mem}/x.py"
    moved = tmp_path / "moved"  # the tree copied with its mtimes: its .pyc still current, their paths the new ones
    shutil.copytree(root, moved, copy_function=shutil.copy2)
    got = probe(moved)
    assert got["modules"]["memory.x"][:2] == ["PluginModules", str(moved / "memory" / "x.py")]
    assert got["code"] == str(moved / "memory" / "x.py")
    (root / "memory" / "x.py").write_text("VALUE = 22\n")  # changed since its .pyc was written
    got = probe()
    assert got["value"] == 22
    assert got["modules"]["memory.x"][0] == "SourceFileLoader"
    assert got["modules"]["memory.pkg"][0] == "PluginModules"


def test_a_read_s_pre_tool_use_loads_no_privacy_filter_notices_or_sha(tmp_path: Path) -> None:
    """PreToolUse runs before every Read and, for a file the client reads whole, writes nothing: the privacy
    filter is loaded only when a log line is written (~3.7 M instructions), and with no spool and no fallback
    folder in the temp dir neither notices nor the SHA-256 module (hashing the data dir's path) is."""
    shm = Path("/dev/shm") / f"claude-memory-{os.getuid()}"
    if shm.is_dir() and any(n.startswith("spool-") for n in os.listdir(shm)):
        pytest.skip(f"{shm} holds a spool of another data dir (events this machine could not write): a hook "
                    "then looks for its own, which is what this test says it does not need to")
    small = tmp_path / "project" / "a.py"
    small.parent.mkdir()
    small.write_text("x = 1\n")
    read = {"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": str(small)}}
    temp = tmp_path / "temp"
    temp.mkdir()
    modules = _hook_modules(tmp_path, read, entry="pre_tool_use", TMPDIR=str(temp), XDG_RUNTIME_DIR=str(temp))
    assert not modules & {"memory.base.privacy", "memory.base.notices", "memory.fastpath.sha", "_sha256", "_sha2"}, \
        sorted(modules)
