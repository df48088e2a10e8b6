"""Events turned into memories and state changes: prompts and the assistant's last message (this module),
tool events (tools), both pure functions with no I/O; who may make a decision (deciders), handoffs and
summaries, transcripts, and the repository's markdown indexed as memories (mdindex).

Hot side, standard library only: may import base and store. Must not import hook, recall or any cold
package, nor lancedb, anthropic, ollama, mcp, psycopg, numpy, pyarrow or click."""

from __future__ import annotations

import os

from memory.store import NewMemory
from memory.store.state import State, push_unique

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from typing import Any

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


def prompt_event(prompt: str, session: str | None) -> Capture:
    """A user's prompt: the session's task (its first prompt with content of its own), one of its requests,
    its last action; a recallable memory only when it carries content (carries_content), and each decision
    it states. The plugin's own slash commands (`/memory:search ...`) are none of these."""
    cap = Capture()
    text = prompt.strip()
    if not text:
        return cap
    from memory.capture import grants

    arguments = grants.slash_arguments(text)
    if arguments is not None:  # the person typed /memory:save: its `!` block saves as theirs, before or after
        import time

        now = time.time()
        promoted: list[Any] = []

        def grant(s: State) -> None:
            entry = grants.take_pending(s, arguments, now)
            if entry:
                promoted.append(entry)
            grants.add_grant(s, arguments, now)

        cap.change(grant)
        cap.writes.append(lambda db: grants.promote(db, promoted))
    if text.startswith(OWN_SLASH):
        return cap
    meant = carries_content(text) and not text.startswith("/")

    def set_task(s: State) -> None:
        # The first prompt with content is the task; later ones are follow-ups.
        if not s.get("task") and meant:
            s["task"] = text[:500]
        push_unique(s, "prompts", text[:500])
        if meant:  # "continue", "ok", "hello" ask nothing: the last action stays what was done
            s["last_action"] = f"User asked: {text[:200]}"
            s[TURN_ASKED] = True

    cap.change(set_task)
    decisions = [] if text.startswith("/") else decisions_in(text)
    from memory.base.words import said_in, wording  # here: a plain tool hook loads this package, not words

    # A prompt whose stated decisions say all of it would be the same text twice in every search: the
    # decisions are the memory then ("We decided to keep argparse vendored", issue 26 "nothing said twice").
    if meant and not (decisions and said_in(text, wording(" ".join(decisions)))):
        first = text.splitlines()[0][:150]
        cap.memories.append(NewMemory(title=f"Asked: {first}", content=text, type="prompt", importance=0.3,
                                      session_id=session, tags=["prompt"], source="prompt", origin="user",
                                      origin_detail="prompt"))
    for decision in decisions:
        cap.memories.append(NewMemory(title=decision[:150], content=decision, type="decision",
                                      importance=0.8, session_id=session, tags=["user"], source="prompt",
                                      origin="user", origin_detail="prompt"))
        cap.change(lambda s, d=decision: push_unique(s, "decisions", d))
    return cap


# The titles of a command's failure and of its fix in the same session (tools._shell_failed, tools._resolve):
# a failure its session fixed later is told by the fix (memory/recall/inject.py _fixed_later).
FAILED_TITLE = "Command failed: `{}`"
FIXED_TITLE = "Fixed: `{}` passes again"
# In a fix's text, what comes before the error it fixed: a session's summary says the fix without it (the
# fix's memory says the error, once).
FIX_ERROR = ". It failed with: "
# The plugin's slash commands as the prompt hook sees them (commands/*.md of the plugin named "memory").
OWN_SLASH = "/memory:"
# Words that carry no content of their own in a request: English function words, and the greetings,
# thanks and go-aheads of a chat. A prompt needs two words besides these (or one specific token).
_EMPTY_WORDS = frozenset("""a an the and or but if then so to of in on at by for with from into onto about as is
are was were be been am do does did done have has had will would shall should can could may might must it its
this that these those there here i me my we us our you your he she they them their what which who whom how why
when where not no yes yeah yep nope ok okay sure please thanks thank thx ty hi hello hey morning evening good
great nice cool fine perfect right go ahead proceed continue keep going let lets let's now just also too very
really well again more next one all any some same other else still then""".split())


def carries_content(text: str) -> bool:
    """Whether a prompt holds something worth recalling on its own: a stated decision, a specific token
    (a path or file name, an identifier in snake_case, camelCase, dotted or call form, a code span, an
    error code or a name in capitals), or at least two content words. A greeting, a thanks, a go-ahead or
    a number ("hello 14", "ok", "yes do it", "continue") is not: it stays the session's context only."""
    words = 0
    for token in text.split()[:400]:
        if _specific(token.strip(".,;:!?\"'()[]{}<>")):
            return True
        word = token.lower().strip(".,;:!?\"'()[]{}<>")
        if len(word) >= 3 and word.isalpha() and word not in _EMPTY_WORDS:
            words += 1
            if words >= 2:
                return True
    return bool(decisions_in(text))


def _specific(token: str) -> bool:
    """A token that names something: app.py, src/app, format_usage, getUser, os.path, main(), `x`, E501,
    ENOENT, HTTP."""
    if len(token) < 2 or not any(c.isalpha() for c in token):
        return False
    if any(mark in token for mark in ("/", "\\", "_", "::", "()", "`", "#", "=")):
        return True
    if "." in token.strip(".") and all(part[:1].isalnum() for part in token.split(".")):
        return True  # app.py, os.path, v2.1
    if any(c.isdigit() for c in token):
        return True  # E501, sha256, py311 (a bare number has no letter)
    if any(c.isupper() for c in token[1:]) and any(c.islower() for c in token):
        return True  # getUser, ValueError
    return len(token) >= 3 and token.isupper() and token.lower() not in _EMPTY_WORDS  # ENOENT, HTTP; not "HELLO"


# Pasted text (docs/capture.md "Whose words"): told by its form, never by what it says. A prompt this long
# (about 300 words, more than a person types as one message) is a pasted document as a whole.
TYPED_MAX_CHARS = 2000
TYPED_MAX_LINES = 30
# A block set apart: a fence (``` or ~~~) to its close or the end.
_FENCE = r"^[ \t]*(```|~~~).*?(?:^[ \t]*\1[^\n]*$|\Z)"
# Machine output, line by line: a quote or indented block, a timestamp or clock, a log level or CI marker,
# a shell prompt, a stack frame, a bot.
_PASTED_LINE = (r"^(?:[ \t]*>|\t| {4}|[ \t]*(?:\[?\d{4}-\d\d-\d\d|\[?\d\d?:\d\d:\d\d|"
                r"\[?(?:TRACE|DEBUG|INFO|NOTICE|WARN(?:ING)?|ERROR|ERR|FATAL|CRITICAL|PANIC)\b|##\[|::[a-z-]+|"
                r"[$%][ \t]|PS [^>\n]{0,60}>|[\w.-]+@[\w.:~/-]+[$#][ \t]|at \S[^(\n]{0,120}\([^)\n]*:\d+|"
                r"File \"[^\"\n]+\", line \d+|Traceback\b)|[^\n]*\[bot\]).*$")
# "Alice wrote:", "github-actions commented:": the paragraph after it is someone else's.
_SPEAKER = r"^[^\n]{1,80}\b(?:wrote|writes|said|says|commented|replied|posted):[ \t]*\n(?:[^\n]+\n)*[^\n]*"
# Markdown document structure: a heading, an HTML comment, front matter. People do not type these in chat.
_DOCUMENT = r"^(?:#{1,6} \S|<!--|---[ \t]*$)"


def own_words(text: str) -> str:
    """What of a prompt the person typed: '' for a pasted document (too long, or with a document's
    structure), else the text without its pasted parts (fenced, quoted and indented blocks, machine-output
    lines, a quoted speaker's paragraph)."""
    if len(text) > TYPED_MAX_CHARS or text.count("\n") >= TYPED_MAX_LINES:
        return ""
    import re  # prompts only: a tool event never needs it

    if re.search(_DOCUMENT, text, re.M):
        return ""
    text = re.sub(_FENCE, "\n", text, flags=re.M | re.S)
    text = re.sub(_SPEAKER, "\n", text, flags=re.M)
    return re.sub(_PASTED_LINE, "", text, flags=re.M)


def decisions_in(text: str, person: bool = True) -> list[str]:
    """The sentences of a user's text that state a decision: an explicit marker ("Decision: ...", "from now
    on ...") or a plain rule or choice ("We store auth tokens in httpOnly cookies, never localStorage").
    Questions, conditionals and requests ("can we use X?", "use X to fix this") are not decisions; pasted
    text (own_words) is not the user's own statement. `person`: False for the model's text, whose length says
    nothing of pasting (only its fenced and quoted blocks are left out)."""
    out: list[str] = []
    if _DECISION_WORDS.isdisjoint(text.lower().replace("\u2019", "'").translate(_word_chars()).split()):
        return out
    import re

    if person:
        text = own_words(text)
    else:
        text = re.sub(_FENCE, "\n", text, flags=re.M | re.S)
        text = re.sub(r"^[ \t]*>.*$", "", text, flags=re.M)
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


# The turn's marks in the session state: whether a prompt with content of its own was asked since the last
# Stop, and the tool calls counted by then.
TURN_ASKED, TURN_CALLS = "turn_asked", "turn_calls"


def _turn_ended(s: State, said: str) -> None:
    """The assistant's closing words become the last action only when the turn did something: a tool call or
    a request with content. A turn that only continued (after a compaction, "Continuing after compaction.")
    or greeted keeps the last action (and its next step) of the turn that worked."""
    calls = int(s.get("tool_calls", 0))
    if s.get(TURN_ASKED) or calls > int(s.get(TURN_CALLS, 0)) or not s.get("last_action"):
        s["last_action"] = said
    s[TURN_ASKED], s[TURN_CALLS] = False, calls


def stop_event(message: str, session: str | None) -> Capture:
    """The assistant's last message: the last action, and what it says it chose as an observation of the
    model's (memory/capture/deciders.py): assistant text never makes a decision, whatever words it uses."""
    cap = Capture()
    text = message.strip()
    if not text:
        return cap
    summary = " ".join(text.split())[:400]
    cap.change(lambda s: _turn_ended(s, f"Assistant: {summary}"))
    for said in decisions_in(text, person=False):
        cap.memories.append(NewMemory(title=said[:150], content=said, type="observation", importance=0.5,
                                      session_id=session, tags=["assistant"], source="assistant",
                                      origin="assistant"))
    return cap
