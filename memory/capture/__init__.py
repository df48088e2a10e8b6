"""Events turned into memories and state changes: tool events and prompts to observations (this module,
pure functions, no I/O), who may make a decision (deciders), handoffs and summaries, transcripts, and
the repository's markdown indexed as memories (mdindex).

Hot side, standard library only: may import base and store. Must not import hook, recall or any cold
package, nor lancedb, anthropic, ollama, mcp, psycopg, numpy, pyarrow or click."""

from __future__ import annotations

import os

from memory.base.classify import classify
from memory.base.privacy import clean
from memory.store import NewMemory
from memory.store.state import State, push_unique

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from typing import Any

MAX_TODO_MEMORIES = 20  # completed todos saved one by one per TodoWrite; the rest share one memory
EDIT_TOOLS = {"Edit", "MultiEdit", "Write", "NotebookEdit"}
_ERROR_WORDS = ("error", "exception", "traceback", "failed", "failure", "fatal", "panic", "cannot", "not found",
                "denied")
# How a user states a decision (decisions_in below; measured in scripts/bench/decisions.py).
# Explicit markers, anywhere in a sentence:
_DECISION_PHRASES = ("decision:", "we'll use", "we will use", "we're going with", "we are going with",
                     "i'm going with", "from now on", "going forward", "should always", "should never",
                     "must always", "must never", "the convention is", "our convention", "convention:",
                     "the rule is", "our rule", "rule:")
# Matched word by word ("our rule" is not in "your rulers"): the phrases as _states_decision tokenises text.
_PHRASE_WORDS = tuple(f" {p.replace(':', ' :')} " for p in _DECISION_PHRASES)
# A plain statement of a rule or choice, at the start of a clause: "we [adverbs] <rule verb>" ("We store
# auth tokens in httpOnly cookies", "we don't use ORMs", "we keep X"), "always/never ..." ("never Y"),
# "[I|we] [have] decided", "we chose".
_RULE_VERBS = frozenset("use store keep prefer put write run deploy name follow avoid target support pin ship "
                        "require allow log format lint release host cache stick standardize standardise commit "
                        "merge rebase squash vendor bundle build serve hash encrypt validate test document".split())
_RULE_ADVERBS = frozenset("always never only still now also generally usually just strictly no longer don't do "
                          "not".split())
# "Never heard of it", "Always great to chat": a sentence opening with always/never states no rule when
# the next word is one of these.
_NOT_A_RULE_AFTER = frozenset("been heard mind seen saw had knew thought tried liked loved love great good fun happy "
                              "glad nice a an here there by say really sure give forget up on".split())
_CLAUSE_BREAKS = frozenset(", ; : and but so".split())
# A sentence opening like this asks, wonders or supposes: it states nothing.
_NOT_STATEMENTS = frozenset("can could should would will shall do does did is are was were am why how what where when "
                            "which who whom whose whether if unless maybe perhaps wonder any have has had isn't "
                            "aren't doesn't didn't won't wouldn't shouldn't can't couldn't what's how's where's "
                            "who's please let's".split())
_SENTENCE_END = r"(?<=[.!?])\s+|\n+"  # compiled on first use: a first compile costs a hook ~3 ms
# Every decision _states_decision accepts holds one of these words (its phrases' and rules' own words), so a
# text without any needs no sentence split: the prompt hook then never imports re (~3-6 ms CPU).
_DECISION_WORDS = frozenset("we we'll we're always never decided decision i'm now forward convention rule".split())


_WORD_CHARS: dict[int, int] | None = None  # [a-z'] (as _states_decision splits): a WordChars, on first use


def _word_chars() -> dict[int, int]:
    """_WORD_CHARS, made when first needed: a tool event never splits words (importing memory.base.words
    cost a tool hook ~0.35 M instructions)."""
    global _WORD_CHARS
    if _WORD_CHARS is None:
        from memory.base.words import WordChars

        _WORD_CHARS = WordChars("abcdefghijklmnopqrstuvwxyz'".__contains__)
    return _WORD_CHARS


class Capture:
    def __init__(self) -> None:
        self.memories: list[NewMemory] = []
        self.changes: list[Any] = []  # callables applied to the session state
        self.writes: list[Any] = []  # callables(db) run in the same transaction

    def change(self, fn: Any) -> None:
        self.changes.append(fn)


def rel(path: str, root: str) -> str:
    path = path.replace("\\", "/")
    try:
        r = os.path.relpath(path, root)
    except ValueError:
        return path
    return path if r.startswith("..") else r


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_text(v) for v in value)
    if isinstance(value, dict):
        if "text" in value and isinstance(value["text"], str):
            return value["text"]
        return "\n".join(f"{k}: {_text(v)}" for k, v in value.items() if isinstance(v, str | int | float))
    return str(value)


# Lines a failed command prints that are not its failure: package managers' update and funding banners,
# notices and warnings, and Claude Code's own `Exit code N` header (kept only when nothing else is left).
_NOISE_START = ("npm notice", "npm warn", "npm http", "npm timing", "npm info", "npm verb", "[notice]", "warning",
                "warn ", "(node:", "(use `node --trace", "yarn run v", "done in ", "info visit", "hint:",
                "browserslist:", "debugger attached", "waiting for the debugger", "exit code ")
_NOISE_IN = ("new version of", "new minor version", "new major version", "new patch version", "new release of",
             "update available", "to update, run", "install -g npm", "looking for funding", "npm fund",
             "npm audit", "is outdated. please run")
# What a failure looks like, most telling first: an exception or compiler error line, a test runner's
# failure marker (pytest's `E`, jest's `●`, node's `✖`, TAP's `not ok`). Matched over the whole text at
# once: a Python loop over the lines costs several times more, and a failed command may print megabytes.
_FAILURE_LINE = (r"^[ \t]*(?:E\s+\S.*|[\w.]*(?:Error|Exception|Failure)\b.*|(?:error|fatal|panic)(?:\[\w+\])?:.*|"
                 r"[●✖✗×]\s.*|not ok\b.*|assert(?:ion)?\b.*)$")


def _noise(line: str) -> bool:
    low = line.lower()
    return (low.startswith(_NOISE_START) or any(n in low for n in _NOISE_IN)
            or not any(c.isalnum() for c in line[:200]) or line.startswith(("==", "__")))


def failure_line(text: str) -> str:
    """The line that says why a command failed: the exception a Python traceback ends with, else the first
    exception, compiler error or test-failure line, else the first line with an error word, else the last
    line; banners and notices (npm's "New minor version of npm available!") never count."""
    import re

    if len(text) > 64_000:  # the failure is near the start or the end; each 100 KB scanned costs ~5 ms
        text = f"{text[:32_000]}\n{text[-32_000:]}"
    tb = text.rfind("Traceback (most recent call last)")
    if tb >= 0:
        for ln in text[tb:].splitlines()[1:]:
            if ln.strip() and not ln[0].isspace() and not _noise(ln.strip()):
                return ln.strip()[:300]
    # ASCII-folded, lower-cased: the same positions as `text`; str.find per word is ~30x faster than re.I
    low = text.encode("ascii", "replace").decode("ascii").lower()
    strong = re.compile(_FAILURE_LINE, re.M)
    for find in (lambda pos: (m.start() if (m := strong.search(text, pos)) else -1),
                 lambda pos: min((i for w in _ERROR_WORDS if (i := low.find(w, pos)) >= 0), default=-1)):
        pos = 0
        while (at := find(pos)) >= 0:
            start, end = text.rfind("\n", 0, at) + 1, text.find("\n", at)
            end = len(text) if end < 0 else end
            line, pos = text[start:end].strip(), end + 1
            if not _noise(line):
                return re.sub(r"^E\s+", "", line)[:300]  # pytest's E marker
    lines = [ln.strip() for ln in text.splitlines()[-200:] if ln.strip()]
    kept = [ln for ln in lines if not _noise(ln)]
    exits = [ln for ln in text.splitlines()[:5] if ln.lower().startswith("exit code ")]
    return (kept or exits or [""])[-1][:300]


def _exit_code_error(err_text: str) -> bool:
    if not err_text:  # the common case (the command did not fail): no regex to compile
        return False
    import re

    return bool(re.match(r"exit code [1-9]", err_text, re.I))


# How much of an edit's old or new string the privacy filter reads before it is cut: a secret that starts
# within the kept part ends long before this, and the filter's cost stays bounded on a huge edit.
_EDIT_SCAN = 20_000


def edit_text(old: object, new: object, limit: int) -> str:
    """An edit's old and new strings as text, with their own newlines (never repr(), whose literal `\\n`
    glued a secret on its own line to the letter n, so that no word-boundary rule matched it); each is
    filtered whole, then cut to `limit` characters (a cut first could split a secret so no rule matched)."""
    o, n = _filtered(old, limit), _filtered(new, limit)
    if o and n:
        return f"replaced:\n{o}\nwith:\n{n}"
    if n:
        return f"added:\n{n}"
    return f"removed:\n{o}" if o else ""


def _filtered(value: object, limit: int) -> str:
    text = clean(str(value or "")[:_EDIT_SCAN]).strip("\r\n")
    if not text.strip():
        return ""
    return text if len(text) <= limit else f"{text[:limit]}..."


def _command_key(cmd: str) -> str:
    return " ".join(cmd.split())[:200]


def tool_event(event: dict[str, Any], root: str) -> Capture:
    cap = Capture()
    tool = str(event.get("tool_name") or "")
    tin = event.get("tool_input") if isinstance(event.get("tool_input"), dict) else {}
    resp = event.get("tool_response")
    failed = event.get("hook_event_name") == "PostToolUseFailure" or bool(event.get("error"))
    session = str(event.get("session_id") or "") or None
    agent = event.get("agent_type") or (event.get("agent_id") and "subagent")
    tags = [f"tool:{tool.lower()}"] + ([f"agent:{agent}"] if agent else [])

    # Provenance: the tool whose output (or input) the text is; a web page also by its address.
    target = str(tin.get("url") or tin.get("query") or "") if tool in ("WebFetch", "WebSearch") else ""
    detail = f"{tool} {target[:120]}" if target else tool

    def mem(title: str, content: str, type_: str, importance: float, files: list[str] | None = None) -> None:
        cap.memories.append(NewMemory(title=title, content=content, type=type_, importance=importance,
                                      tags=list(tags), files=files or [], session_id=session,
                                      origin="tool", origin_detail=detail))

    def count(state: State) -> None:
        state["tool_calls"] = int(state.get("tool_calls", 0)) + 1

    cap.change(count)
    path = str(tin.get("file_path") or tin.get("notebook_path") or "")
    if tool == "Read" and path:
        r = rel(path, root)
        cap.change(lambda s: push_unique(s, "files_read", path))
        if not agent:
            cap.change(lambda s: s.__setitem__("last_action", f"Read {r}"))
        mem(f"Read {r}", f"Read {r}", "observation", 0.1, [path])
    elif tool in EDIT_TOOLS and path:
        r = rel(path, root)
        cap.change(lambda s: push_unique(s, "files_modified", path))
        if tool == "Write":
            from memory.base.words import count

            detail = f"Wrote {r} ({count(len(str(tin.get('content', '')).splitlines()), 'line')})"
        elif tool == "MultiEdit":
            from memory.base.words import count

            edits = tin.get("edits") if isinstance(tin.get("edits"), list) else []
            detail = f"Edited {r} ({count(len(edits), 'edit')})"
            for e in edits[:3]:
                if isinstance(e, dict):
                    detail += "\n" + edit_text(e.get("old_string"), e.get("new_string"), 150)
        else:
            change = edit_text(tin.get("old_string"), tin.get("new_string"), 300)
            detail = f"Edited {r}:\n{change}" if change else f"Edited {r}"
        if failed:
            detail += f"\nThe edit failed: {_text(event.get('error'))[:300]}"
        cap.change(lambda s: s.__setitem__("last_action", detail.splitlines()[0].rstrip(":")[:300]))
        mem(f"Modified {r}", detail, "change", 0.35, [path])
    elif tool == "Bash":
        cmd = str(tin.get("command") or "").strip()
        if not cmd:
            return cap
        key = _command_key(cmd)
        out = resp if isinstance(resp, dict) else {}
        stderr = _text(out.get("stderr"))
        stdout = _text(out.get("stdout")) if out else _text(resp)
        err_text = _text(event.get("error")) if failed else ""
        is_fail = failed or bool(out.get("interrupted")) or _exit_code_error(err_text)
        short = cmd.splitlines()[0][:120]
        cap.change(lambda s: push_unique(s, "commands", key))
        if is_fail:
            error = failure_line(err_text + "\n" + stderr + "\n" + stdout) or "failed"

            def record_error(s: State) -> None:
                s["errors"] = [e for e in s.get("errors", []) if e.get("command") != key][-9:]
                s["errors"].append({"command": key, "error": error})
                if not agent:
                    s["last_action"] = f"`{short}` failed: {error[:200]}"

            cap.change(record_error)
            mem(f"Command failed: `{short}`", f"`{cmd[:500]}` failed:\n{err_text}\n{stderr}\n{stdout}".strip(),
                "bugfix" if classify(error) == "bugfix" else "observation", 0.45)
        else:
            cap.change(lambda s: _resolve(s, key, short, cap, session, tags))
            if not agent:
                cap.change(lambda s: s.__setitem__("last_action", f"Ran `{short}`"))
            body = (stdout + ("\n" + stderr if stderr.strip() else "")).strip()
            mem(f"Ran `{short}` (ok)", f"`{cmd[:500]}`\n{body}", "observation", 0.15)
    elif tool == "TodoWrite":
        todos = tin.get("todos") if isinstance(tin.get("todos"), list) else []
        todos = [t for t in todos if isinstance(t, dict)]
        before = {}
        if isinstance(resp, dict) and isinstance(resp.get("oldTodos"), list):
            before = {str(t.get("content")): t.get("status") for t in resp["oldTodos"] if isinstance(t, dict)}

        def set_todos(s: State) -> None:
            s["todos"] = [{"content": str(t.get("content", ""))[:300], "status": str(t.get("status", ""))}
                          for t in todos][:30]

        cap.change(set_todos)
        done = [c for t in todos if t.get("status") == "completed" and (c := str(t.get("content", "")))
                and before.get(c) != "completed"]
        for content in done[:MAX_TODO_MEMORIES]:
            mem(f"Completed: {content[:150]}", f"Completed todo: {content}", classify(content, "feature"), 0.45)
        if len(done) > MAX_TODO_MEMORIES:  # one memory for the rest: a save costs ~0.4 ms, classify more
            rest = done[MAX_TODO_MEMORIES:]
            from memory.base.words import count

            mem(f"Completed {count(len(rest), 'more todo')}",
                "Completed todos: " + "; ".join(c[:100] for c in rest[:50]), "feature", 0.3)
    elif tool in ("WebFetch", "WebSearch"):
        target = str(tin.get("url") or tin.get("query") or "")
        if target:
            body = _text(resp)[:1500]
            mem(f"Looked up {target[:150]}", f"{tool} {target}\n{body}", "discovery", 0.3)
    elif tool in ("Task", "Agent"):
        desc = str(tin.get("description") or tin.get("prompt") or "")[:150]
        if desc:
            mem(f"Delegated: {desc}", f"Subagent task: {desc}\nResult: {_text(resp)[:1500]}", "observation", 0.3)
    elif tool in ("Grep", "Glob"):
        pattern = str(tin.get("pattern") or "")
        cap.change(lambda s: s.__setitem__("last_action", f"Searched for {pattern[:100]!r}") if not agent else None)
    return cap


def _resolve(state: State, key: str, short: str, cap: Capture, session: str | None, tags: list[str]) -> None:
    """A command that failed earlier in the session now succeeds: an error was fixed."""
    errors = state.get("errors", [])
    match = [e for e in errors if e.get("command") == key]
    if not match:
        return
    state["errors"] = [e for e in errors if e.get("command") != key]
    fixes = [os.path.basename(p) for p in state.get("files_modified", [])[-3:]]
    text = f"`{short}` failed with: {match[-1].get('error', '')}. It passes now"
    text += f" after changes to {', '.join(fixes)}." if fixes else "."
    push_unique(state, "fixed", text)
    cap.memories.append(NewMemory(title=f"Fixed: `{short}` passes again", content=text, type="bugfix",
                                  importance=0.75, tags=[*tags, "fixed"], session_id=session,
                                  files=state.get("files_modified", [])[-3:], origin="tool", origin_detail="Bash"))


def prompt_event(prompt: str, session: str | None) -> Capture:
    cap = Capture()
    text = prompt.strip()
    if not text:
        return cap

    def set_task(s: State) -> None:
        # The first substantial prompt is the task; later ones are follow-ups.
        if not s.get("task") and len(text) > 3 and not text.startswith("/"):
            s["task"] = text[:500]
        push_unique(s, "prompts", text[:500])
        s["last_action"] = f"User asked: {text[:200]}"

    cap.change(set_task)
    if not text.startswith("/"):
        first = text.splitlines()[0][:150]
        cap.memories.append(NewMemory(title=f"Asked: {first}", content=text, type="prompt", importance=0.3,
                                      session_id=session, tags=["prompt"], source="prompt", origin="user",
                                      origin_detail="prompt"))
        for decision in decisions_in(text):
            cap.memories.append(NewMemory(title=decision[:150], content=decision, type="decision",
                                          importance=0.8, session_id=session, tags=["user"], source="prompt",
                                          origin="user", origin_detail="prompt"))
            cap.change(lambda s, d=decision: push_unique(s, "decisions", d))
    return cap


def decisions_in(text: str) -> list[str]:
    """The sentences of a user's text that state a decision: an explicit marker ("Decision: ...", "from now
    on ...") or a plain rule or choice ("We store auth tokens in httpOnly cookies, never localStorage").
    Questions, conditionals and requests ("can we use X?", "use X to fix this") are not decisions; text in
    code fences and quoted lines ("> ...") is not the user's own statement."""
    out: list[str] = []
    if _DECISION_WORDS.isdisjoint(text.lower().replace("\u2019", "'").translate(_word_chars()).split()):
        return out
    import re  # prompts only: a tool event never needs it

    if "```" in text:
        text = re.sub(r"```.*?(```|$)", "\n", text, flags=re.S)
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith(">"))
    for sentence in re.split(_SENTENCE_END, text):
        sentence = " ".join(sentence.split()).strip(" -*#")
        if 12 <= len(sentence) <= 400 and sentence not in out and _states_decision(sentence):
            out.append(sentence)
    return out[:5]


def _states_decision(sentence: str) -> bool:
    import re

    lower = sentence.lower()
    words = re.findall(r"[a-z']+|[,;:]", lower.replace("\u2019", "'"))
    if not words or lower.endswith("?") or words[0] in _NOT_STATEMENTS:
        return False
    joined = f" {' '.join(words)} "
    if any(p in joined for p in _PHRASE_WORDS):
        return True
    for i, w in enumerate(words):
        starts = i == 0 or words[i - 1] in _CLAUSE_BREAKS
        if w in ("always", "never") and (i == 0 or (starts and words[0] in _RULE_VERBS)) and \
                i + 1 < len(words) and words[i + 1] not in _NOT_A_RULE_AFTER and not words[i + 1].endswith("ing"):
            return True  # "Never commit .env files", "Use tabs, never spaces"; not "never been there"
        if w == "decided" and _decided_by(words[max(0, i - 3):i]):
            return True
        if w == "we" and starts:
            j = i + 1
            while j < len(words) and words[j] in _RULE_ADVERBS:
                j += 1
            if j < len(words) and (words[j] in _RULE_VERBS or words[j] == "chose"):
                return True
    return False


def _decided_by(before: list[str]) -> bool:
    """ "we decided", "we've decided", "I have (now) decided": a choice made. A bare "I decided to ..." is
    left out: in the measured prompts it told a story ("I decided to give it a try") far more often."""
    if not before or before[-1] in ("not", "haven't", "hasn't", "hadn't"):
        return False
    if before[-1] in ("we", "we've", "i've"):
        return True
    return "have" in before and any(w in ("we", "i") for w in before)


def stop_event(message: str, session: str | None) -> Capture:
    """The assistant's last message: the last action, and what it says it chose as an observation of the
    model's (memory/capture/deciders.py): assistant text never makes a decision, whatever words it uses."""
    cap = Capture()
    text = message.strip()
    if not text:
        return cap
    summary = " ".join(text.split())[:400]
    cap.change(lambda s: s.__setitem__("last_action", f"Assistant: {summary}"))
    for said in decisions_in(text):
        cap.memories.append(NewMemory(title=said[:150], content=said, type="observation", importance=0.5,
                                      session_id=session, tags=["assistant"], source="assistant",
                                      origin="assistant"))
    return cap
