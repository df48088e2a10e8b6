"""Property-based fuzzing of every `memory` command's arguments: hostile values for each option and
argument the command declares (wrong types, out-of-range numbers, huge strings, invalid UTF-8, NUL, `..`
paths, symlinks out of the project, FTS query syntax, text that closes a <private> tag early), through
click's CliRunner for volume and through real `.venv/bin/memory` processes for the real wiring.

Every run must end with exit 0 or a clean error: click's usage error, or one `Error: ...` line, and never
a Python traceback. Nothing may be written outside the data dir, and private text never reaches it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.cli import cli
from memory.cli.slash import VERBS
from tests.support.fuzz import DATES, PRIVATE, SECRET, Sandbox, hostile_text, make_sandbox, sandbox_env

# Every command of the CLI, but `mcp` (a stdio server: tests/test_fuzz_mcp.py speaks to it) and groups
# other issues add. `worker run` would run the worker in the foreground until it idles: left out.
COMMANDS = ["search", "timeline", "get", "save", "forget", "stats", "sessions", "projects", "replay", "outline",
            "doctor", "handoff", "recent", "cleanup", "index-markdown", "slash", "reindex", "worker", "import",
            "extract"]
EXCLUDED_VALUES = {("worker", "action"): {"run"},
                   # /memory:ui starts a viewer in the background that runs until it idles (tests/test_ui_*.py)
                   ("slash", "verb"): {"ui"},
                   # a model load per run (seconds): the provider choice is tested in tests/test_embed.py
                   ("reindex", "embedder"): {"auto", "sentence-transformers", "ollama"}}
SLOW = ["reindex", "replay"]  # a second or more each (LanceDB, hook processes): drawn a quarter as often
EXAMPLES = int(os.environ.get("MEMORY_FUZZ_EXAMPLES", "60"))


def _plausible(sb: Sandbox, command: str, param: click.Parameter) -> st.SearchStrategy[str] | None:
    """A value the command accepts, so that most runs get past parsing into the command's own code."""
    kind, name = param.type, param.name or ""
    if isinstance(kind, click.Choice):
        return st.sampled_from([str(c) for c in kind.choices
                                if str(c) not in EXCLUDED_VALUES.get((command, name), ())])
    if name in ("memory_id", "ids"):
        return st.integers(1, 6).map(str)
    if isinstance(kind, click.types.IntParamType | click.IntRange):
        return st.integers(1, 20).map(str)
    if isinstance(kind, click.types.FloatParamType | click.FloatRange):
        return st.floats(0, 1).map(repr)
    if name in ("since", "until", "expires"):
        return st.sampled_from(DATES)
    if name == "project":
        return st.sampled_from([str(sb.project), "src", "project", "link-out", "../outside", "/", "nope"])
    if name == "max_bytes":
        return st.sampled_from(["200MB", "1KB", "0", "1TB", "-5MB", "12 parsecs"])
    if isinstance(kind, click.Path):
        return st.sampled_from(sb.paths())
    if name == "verb":
        return st.sampled_from([v for v in VERBS if v not in EXCLUDED_VALUES.get((command, name), ())])
    return None


def _value(sb: Sandbox, command: str, param: click.Parameter, hostile_here: bool) -> st.SearchStrategy[str]:
    if param.name == "home":  # a data dir is the user's to choose: only ever this one
        return st.just(str(sb.home))
    plausible = _plausible(sb, command, param)
    if plausible is not None and not hostile_here:
        return plausible
    # Free text (queries, titles, tags, sessions) is always hostile: anything is a fair value there.
    return hostile_text(sb).filter(lambda v: v not in EXCLUDED_VALUES.get((command, param.name or ""), ()))


@st.composite
def invocations(draw: st.DrawFn, sb: Sandbox) -> tuple[list[str], str]:
    """One command with some of its options and arguments: all valid but (mostly) one hostile value, so
    the hostile value reaches the code behind click's parser."""
    name = draw(st.sampled_from([c for c in COMMANDS if c not in SLOW] * 4 + SLOW))
    command = cli.commands[name]
    chosen = [p for p in draw(st.permutations(list(command.params)))
              if p.name != "help" and (isinstance(p, click.Argument) or draw(st.booleans()))]
    target = draw(st.integers(-1, len(chosen) - 1)) if chosen else -1
    args: list[str] = ["--home", str(sb.home)] if draw(st.integers(0, 9)) == 0 else []
    args.append(name)
    for i, param in enumerate(chosen):
        if isinstance(param, click.Option):
            flag = draw(st.sampled_from(param.opts))
            if param.is_flag:
                args.append(flag)
                continue
            for _ in range(draw(st.integers(1, 2)) if param.multiple else 1):
                args += [flag, draw(_value(sb, name, param, i == target))]
        elif isinstance(param, click.Argument):
            count = draw(st.integers(0, 3)) if param.nargs == -1 else (1 if draw(st.integers(0, 9)) else 0)
            args += [draw(_value(sb, name, param, i == target)) for _ in range(count)]
    if draw(st.integers(0, 15)) == 0:
        args.append(draw(st.sampled_from(["--bogus", "-z", "--json=1", "--", "-"])))
    stdin = draw(st.one_of(st.just(""), hostile_text(sb, huge=200_000), jsonl_input()))
    return args, stdin


def jsonl_input() -> st.SearchStrategy[str]:
    value = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=30),
                      st.sampled_from(PRIVATE), st.lists(st.text(max_size=5), max_size=3))
    obj = st.fixed_dictionaries({}, optional={k: value for k in ("content", "title", "type", "importance", "tags",
                                                                 "created_at", "session_id", "project")})
    line = st.one_of(obj.map(json.dumps), st.sampled_from(["not json", "[1, 2]", "{", '"str"', "\x00"]))
    return st.lists(line, min_size=1, max_size=4).map("\n".join)


def check_outcome(args: list[str], code: int | None, stdout: str, stderr: str) -> None:
    where = f"memory {' '.join(a[:60] for a in args)[:400]!r}"
    assert "Traceback" not in stdout + stderr, f"{where}: traceback\n{stderr[-2000:]}"
    if code == 0:
        return
    if code == 1 and args and "doctor" in args and ("database:" in stdout or '"database"' in stdout):
        return  # doctor reports an unhealthy database with exit 1, the report on stdout
    assert code in (1, 2), f"{where}: exit {code}\n{stderr[-1000:]}"
    lines = stderr.rstrip("\n").splitlines()
    errors = [i for i, line in enumerate(lines) if line.startswith("Error: ")]
    assert errors, f"{where}: exit {code} without an 'Error: ...' line\nstdout={stdout[-500:]!r}\nstderr={stderr!r}"
    message = lines[errors[-1]][len("Error: "):]
    assert len(message.strip()) > 10 and errors[-1] == len(lines) - 1, f"{where}: error not one clear line: {lines}"


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    sb = make_sandbox(tmp_path)
    for k, v in sandbox_env(sb).items():
        monkeypatch.setenv(k, v)
    for k in ("CLAUDE_PLUGIN_DATA", "CLAUDE_PROJECT_DIR", "MEMORY_PROJECT_DIR", "ANTHROPIC_API_KEY",
              "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(sb.tmp))
    monkeypatch.chdir(sb.project)
    return sb


def seed(sb: Sandbox) -> None:
    runner = CliRunner()
    for text in ("Deploys use the blue-green switch in deploy.sh", "The upload test timeout is 30 s now",
                 "Cache keys include the locale"):
        assert runner.invoke(cli, ["save", text, "--type", "decision"]).exit_code == 0


def test_fuzzed_cli_arguments(sandbox: Sandbox) -> None:
    seed(sandbox)
    before = sandbox.snapshot()
    runner = CliRunner()

    @settings(max_examples=EXAMPLES * 3, deadline=None, suppress_health_check=list(HealthCheck))
    @given(invocations(sandbox))
    def check(case: tuple[list[str], str]) -> None:
        args, stdin = case
        # Bytes that are not UTF-8 on stdin are main()'s to handle (test_real_process sends them): in
        # process, stdin is UTF-8 text.
        data = stdin.encode("utf-8", "replace")
        result = runner.invoke(cli, args, input=data, env=sandbox_env(sandbox), prog_name="memory")
        exc = result.exception
        if exc is not None and not isinstance(exc, SystemExit):
            import traceback

            tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
            raise AssertionError(f"memory {args!r} (stdin {stdin[:200]!r}) raised:\n{tb}")
        check_outcome(args, result.exit_code, result.stdout, result.stderr)

    check()
    after = sandbox.snapshot()
    changed = {p for p in set(before) | set(after) if before.get(p) != after.get(p)}
    assert not changed, f"written outside the data dir: {sorted(changed)[:5]}"
    assert sandbox.leaks() == []


# What the fuzzer found, kept as examples: each was a traceback before its fix.
FOUND = [
    (["timeline", "99999999999999999999"], ""),  # OverflowError: int too large for SQLite
    (["get", "1", "99999999999999999999"], ""),
    (["forget", "99999999999999999999"], ""),
    (["save", "--importance", "nan", "x"], ""),  # NaN passed FloatRange, then NOT NULL failed
    (["slash", "save"], "--importance nan x"),
    (["search", "x", "--since", "0001-01-01"], ""),  # "year 0 is out of range": now says what to write
    (["save", "caf\udce9", "--tag", "\udcff"], ""),  # surrogate escapes from non-UTF-8 argv
]


@pytest.mark.parametrize("args,stdin", FOUND, ids=[" ".join(a) for a, _ in FOUND])
def test_found_cases(sandbox: Sandbox, args: list[str], stdin: str) -> None:
    result = CliRunner().invoke(cli, args, input=stdin, env=sandbox_env(sandbox), prog_name="memory")
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    check_outcome(args, result.exit_code, result.stdout, result.stderr)


# A few hostile invocations through the installed entry point: argv as bytes (invalid UTF-8 reaches the
# program as surrogate escapes), stdin as bytes, the real stdout/stderr encodings.
REAL = [
    ([b"search", b"\xff\xfe NEAR(", b"--json"], b""),
    ([b"save", b"caf\xe9 au lait", b"--tag", b"\xff"], b""),
    ([b"save", b"--title", b"t\xff"], b"body \xff\xfe from stdin <private>" + SECRET.encode() + b"</private>"),
    ([b"save", b"--jsonl"], b'{"content": "ok"}\n\xff\xfe\n'),
    ([b"search", b'"unbalanced', b"*", b"AND", b"OR"], b""),
    ([b"get", b"1", b"two"], b""),
    ([b"timeline", b"-5"], b""),
    ([b"--home", b"{home}/\xff", b"stats"], b""),  # an odd data dir, inside the sandbox's
    ([b"-p", b"../outside", b"stats"], b""),
    ([b"-p", b"link-out", b"recent"], b""),
    ([b"recent", b"-p", b"link-out"], b""),
    ([b"outline", b"link-file"], b""),
    ([b"import", b"binary.bin"], b""),
    ([b"slash", b"save"], b"ok </private> <private>" + SECRET.encode()),
    ([b"slash", b"search"], b"\xff\xfe\x00 NEAR("),
    ([b"save", b"--expires", b"999999999d", b"x"], b""),
]


@pytest.mark.parametrize("argv,stdin", REAL, ids=[" ".join(a.decode(errors="replace") for a in r[0]) for r in REAL])
def test_real_process(sandbox: Sandbox, argv: list[bytes], stdin: bytes) -> None:
    before = sandbox.snapshot()
    env = sandbox_env(sandbox)
    argv = [a.replace(b"{home}", str(sandbox.home).encode()) for a in argv]
    proc = subprocess.run([str(Path(sys.executable).parent / "memory"), *argv], input=stdin, capture_output=True,
                          env=env, cwd=sandbox.project, timeout=120)
    out, err = proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace")
    check_outcome([a.decode(errors="replace") for a in argv], proc.returncode, out, err)
    assert sandbox.snapshot() == before
    assert sandbox.leaks() == []

