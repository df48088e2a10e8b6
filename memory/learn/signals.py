"""What in a session is worth learning from: errors and their fixes, insights the assistant stated while
debugging, decisions, the user's corrections, facts from a compaction summary.

Shared by the heuristic extractor (which turns these signals into learnings) and the model prompt (which
lays them out so that a long session fits the model's input without being cut blindly).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memory.capture import decisions_in
from memory.capture.transcript import EDIT_TOOLS, Digest, Text, ToolCall

# Commands that only look around: their failures teach nothing and they are not fixes.
READ_ONLY = {"ls", "cat", "head", "tail", "tree", "find", "grep", "rg", "pwd", "echo", "which", "wc", "file",
             "stat", "du", "df", "env", "printenv", "sleep", "true", "date", "whoami", "lsof", "ps", "git status",
             "git log", "git diff", "git show", "git branch", "git remote", "git fetch", "bd show", "bd ready",
             "bd list", "type", "command", "sed", "awk", "jq", "curl", "open", "xdg-open"}
_TRIVIAL_STEP = ("cd ", "export ", "source ", ". ", "echo ", "mkdir ", "git add", "sleep ", "set ", "printf ",
                 "true", "clear")
_RUNNERS_3 = {"npm", "pnpm", "yarn", "bun", "uv", "poetry", "bundle", "pipenv", "hatch", "pdm"}
_RUNNERS_2 = {"python", "python3", "npx", "cargo", "go", "mix", "make", "git", "docker", "bd", "pip", "pip3",
              "node", "dotnet", "mvn", "gradle", "./gradlew", "rake", "composer", "php", "deno", "kubectl",
              "terraform", "swift", "rustup", "gh", "just", "tox", "nox", "elixir", "iex", "rails", "bin/rails"}
_ENV_PREFIX = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*=(?:'[^']*'|\"[^\"]*\"|\S*)\s+|timeout\s+\d+\S*\s+|sudo\s+"
                         r"|time\s+|nice\s+)+")
_ERROR_LINE = re.compile(r"\b\w*(?:Error|Exception)\b|\berror\b|\bfailed\b|\bfailure|\bFAIL\b|\[[A-Z]{3,}\]"
                         r"|not found|cannot|can't|undefined|denied|refused|invalid|unknown|missing|no such"
                         r"|is not|does not|doesn't|expected|timed? ?out|panic|fatal|warning:", re.I)
_NOISE_LINE = re.compile(r"^\s*(?:npm warn|warning: unused|at |\d+\s*\||[│┃|]\s*$|[-=~^]{3,}|Exit code \d+\s*$)",
                         re.I)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(\"'])|\n+")
# (pattern, weight): phrases that introduce a cause, a rule or a fix rather than narration.
_INSIGHT_MARKERS: list[tuple[re.Pattern[str], int]] = [
    (re.compile(r"\b(?:the|that's the|this is the) (?:real )?(?:issue|problem|bug|culprit|cause)\b", re.I), 3),
    (re.compile(r"\broot cause\b|\bturns out\b|\bthe fix (?:is|was)\b|\bfalse positive\b|\bworkaround\b", re.I), 3),
    (re.compile(r"\bthe (?:correct|right|proper) (?:way|format|api|approach|syntax|name)\b", re.I), 3),
    (re.compile(r"\bI see\b|\bnow I understand\b|\bso the\b", re.I), 1),
    (re.compile(r"\b(?:doesn't|does not|didn't|did not|isn't|is not|cannot|can't|won't) (?:exist|work|support|"
                r"accept|return|take|recogni[sz]e|honou?r|allow|bypass|skip)", re.I), 2),
    (re.compile(r"\b(?:because|since|due to)\b", re.I), 1),
    (re.compile(r"\b(?:instead of|rather than|not wrapped|directly)\b", re.I), 1),
    (re.compile(r"\b(?:requires?|must|needs? to|has to|expects?|only works|returns?|takes a)\b", re.I), 1),
    (re.compile(r"\b(?:deprecated|renamed|moved to|no longer)\b", re.I), 2),
]
_NARRATION = re.compile(r"^(?:let me|let's|i'll|i will|now let|now i'll|now,? let|first,? let|next,? let|okay|ok,"
                        r"|great|perfect|excellent|good|done|all tests|i have|i've|here's|here is|summary|"
                        r"looking at|checking|i'm going|i am going|i need to (?:read|check|look|see|find|run))",
                        re.I)
_LEADING_FILLER = re.compile(r"^(?:(?:I see|Now I understand|Got it|Good|Perfect|Great|Ah|OK|Okay)[.!,:]?\s*"
                             r"(?:[-–—]\s*)?)+", re.I)
_CODEISH = re.compile(r"`[^`]+`|\b\w+\.\w{1,5}\b|\b[a-z]+_[a-z_]+\b|\b[a-z]+[A-Z]\w+\b|\b[A-Z][a-z]+[A-Z]\w*\b"
                      r"|\w+\(\)|/\w+|\b\w+::\w+|:\w+\b|--\w[\w-]+")
_CORRECTION = re.compile(r"^(?:no\b|nope|wrong|stop|don't|do not|never|actually|that's not|that is not|not what"
                         r"|i said|i told|please don't|instead|why did you|you (?:didn't|did not|forgot|broke))"
                         r"|\b(?:still (?:does not|doesn't|not|fails|broken)|didn't work|did not work|not working"
                         r"|doesn't work|you broke|revert)\b", re.I)
_SUMMARY_FACT = re.compile(r"fixed by|\bfix(?:ed)?:|root cause|because|instead of|doesn't exist|does not exist"
                           r"|false positive|workaround|\bmust\b|needs? to be|not supported|caused by|solution",
                           re.I)


def split_shell(line: str) -> list[str]:
    """Split a command line on `&&`, `||`, `;` and `|` outside quotes (a `-e 'a; b'` stays whole)."""
    parts: list[str] = []
    buf: list[str] = []
    quote = ""
    i = 0
    while i < len(line):
        ch = line[i]
        if quote:
            if ch == quote:
                quote = ""
            buf.append(ch)
        elif ch in "'\"":
            quote = ch
            buf.append(ch)
        elif line.startswith(("&&", "||"), i) or ch in ";|":
            parts.append("".join(buf).strip())
            buf = []
            if line.startswith(("&&", "||"), i):
                i += 1
            parts.append("|" if ch == "|" and not line.startswith("||", i - 1) else ";")
        else:
            buf.append(ch)
        i += 1
    parts.append("".join(buf).strip())
    return parts


def command_family(command: str) -> str:
    """What a shell command does, as two or three words: `npm run build`, `git commit`, `pytest`.

    A chain (`cd x && npm test`, `git add -A && git commit -m ...`) is named by its last real step; pipes,
    redirections, environment assignments and flags are dropped.
    """
    text = re.sub(r"\\\n\s*", " ", command.strip())  # line continuations
    first = text.splitlines()[0] if text else ""
    tokens_seq = split_shell(first)
    steps: list[str] = []
    piped = False
    for tok in tokens_seq:
        if tok == "|":
            piped = True
        elif tok == ";":
            piped = False
        elif tok and not piped:
            steps.append(tok)
    steps = [s for s in steps if not s.startswith(_TRIVIAL_STEP) and s not in ("true", "clear")] or steps
    if not steps:
        return ""
    step = re.split(r"\s+\d?>&?\d?\s*|\s+>\s*", steps[-1])[0]
    step = _ENV_PREFIX.sub("", step).strip()
    tokens = [t.strip("'\"") for t in step.split() if t and not t.startswith("-")]
    if not tokens:
        return ""
    head = tokens[0] if tokens[0] in _RUNNERS_2 else tokens[0].rsplit("/", 1)[-1]  # .venv/bin/python: python
    tokens[0] = head
    if head in ("python", "python3") and len(tokens) > 1 and not tokens[1].endswith(".py"):
        return " ".join(tokens[:2])  # python -m pytest -> "python pytest"
    n = 3 if head in _RUNNERS_3 and len(tokens) > 1 and tokens[1] in ("run", "exec", "x") else (
        2 if head in _RUNNERS_2 | _RUNNERS_3 else 1)
    return " ".join(tokens[:n])[:60]


def is_read_only(family: str) -> bool:
    return family in READ_ONLY or family.split(" ")[0] in READ_ONLY


_STRONG_ERROR = re.compile(r"\*\* \(\w+|\b\w+(?:Error|Exception)\b|^(?:error|fatal|FAIL|FAILED)\b|\berror(?:\[\w+\])?:"
                           r"|\b\d+ (?:failures?|failed|errors?)\b|\[[A-Z]{3,}\]|not found|No such file"
                           r"|[Cc]annot|permission denied|is not a function|undefined", re.M)


def error_lines(text: str, limit: int = 2) -> list[str]:
    """The most telling lines of an error output, headline first: exceptions, `error:` lines, `[TAG]`
    lines, failure counts; a long dump line (a struct printed whole) only when nothing else is there."""
    text = text.replace("\\n", "\n")  # output that was JSON-escaped on its way
    scored: list[tuple[int, int, str]] = []
    for i, raw in enumerate(text.splitlines()):
        ln = raw.strip()
        if len(ln) < 6 or _NOISE_LINE.match(ln):
            continue
        score = 3 if _STRONG_ERROR.search(ln) else (1 if _ERROR_LINE.search(ln) else 0)
        if score and len(ln) > 240:
            score = 1
        if score:
            scored.append((score, i, ln[:220]))
    if any(sc == 3 for sc, _, _ in scored):
        scored = [x for x in scored if x[0] == 3]  # weak lines only when there is nothing better
    picked: list[str] = []
    for _, _, ln in sorted(scored, key=lambda x: (-x[0], x[1])):
        if ln not in picked:
            picked.append(ln)
        if len(picked) >= limit:
            break
    if not picked:
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        rest = [ln for ln in lines if not re.match(r"^Exit code \d+$", ln)]
        picked = [(rest or lines or ["failed"])[-1][:220]]
    return picked


def sentences(text: str) -> list[str]:
    out = []
    for s in _SENTENCE.split(text):
        s = " ".join(s.split()).strip(" -*#>|")
        if 25 <= len(s) <= 400:
            out.append(s)
    return out


_FINDINGS_HEAD = re.compile(r"\b(?:key )?(?:findings?|learned|lessons?|takeaways?|gotchas?|caveats?|important"
                            r"|root cause|what (?:went wrong|i found))\b[^\n]{0,40}:\s*$", re.I)


def findings(text: str) -> list[str]:
    """Bullets under a 'Key findings:' / 'Lessons learned:' line: the assistant's own list of learnings."""
    out: list[str] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not _FINDINGS_HEAD.search(line):
            continue
        for nxt in lines[i + 1:]:
            item = nxt.strip()
            if not item:
                if out:
                    break
                continue
            if not item.startswith(("-", "*", "•")) and not re.match(r"\d+[.)] ", item):
                break
            item = re.sub(r"^(?:[-*•]|\d+[.)])\s*", "", item).replace("**", "").strip()
            if 20 <= len(item) <= 400:
                out.append(item)
    return out[:6]


def insight_score(sentence: str) -> int:
    if _NARRATION.match(sentence) or sentence.endswith("?") or sentence.endswith(":"):
        return 0
    score = sum(w for p, w in _INSIGHT_MARKERS if p.search(sentence))
    if score == 0:
        return 0
    score += min(2, len(_CODEISH.findall(sentence)))
    return score


def tidy(sentence: str) -> str:
    s = _LEADING_FILLER.sub("", sentence).strip()
    s = re.sub(r"^(?:Let me [^.]*\.\s*)", "", s)
    return (s[:1].upper() + s[1:]) if s else s


class Episode:
    """A command that failed, and what happened until it passed (or the session ended)."""

    def __init__(self, family: str, call: ToolCall) -> None:
        self.family = family
        self.command = call.command.splitlines()[0][:200]
        self.errors: list[str] = []
        self.failures = 0
        self.resolved = False
        self.fix_files: list[str] = []
        self.fix_commands: list[str] = []
        self.explanations: list[tuple[int, str]] = []  # (score, sentence)
        self.start = call.seq
        self.end = call.seq
        self.fail(call)

    def fail(self, call: ToolCall) -> None:
        self.failures += 1
        self.end = call.seq
        for line in error_lines(call.result):
            if line not in self.errors and len(self.errors) < 4:
                self.errors.append(line)

    def best_explanations(self, n: int = 2) -> list[str]:
        ranked = sorted(self.explanations, key=lambda x: -x[0])
        return [s for _, s in ranked[:n]]

    def __repr__(self) -> str:
        return f"Episode({self.family!r}, {'fixed' if self.resolved else 'open'}, {self.failures}x, {self.errors[:1]})"


@dataclass
class Signals:
    episodes: list[Episode] = field(default_factory=list)
    insights: list[tuple[int, str, int]] = field(default_factory=list)  # (score, sentence, seq), outside any episode
    user_decisions: list[str] = field(default_factory=list)
    assistant_decisions: list[str] = field(default_factory=list)
    corrections: list[str] = field(default_factory=list)
    summary_facts: list[str] = field(default_factory=list)
    commands: dict[str, list[int]] = field(default_factory=dict)  # family -> [ok count, failed count]
    final_message: str = ""


_STRONG_DECISION = re.compile(r"\b(?:decided|decision:|we'll use|we will use|going with|from now on|always use"
                              r"|never use|convention|chose)\b", re.I)


def analyse(d: Digest) -> Signals:
    sig = Signals()
    events: list[ToolCall | Text] = sorted([*d.calls, *d.texts], key=lambda e: e.seq)
    first_prompt = d.prompts[0] if d.prompts else None
    open_eps: dict[str, Episode] = {}
    for ev in events:
        if isinstance(ev, ToolCall):
            _call(sig, open_eps, ev)
        elif ev.role == "assistant" and not ev.sidechain:
            sig.final_message = ev.text
            for bullet in findings(ev.text):
                sig.insights.append((5 + min(2, len(_CODEISH.findall(bullet))), bullet, ev.seq))
            for s in sentences(ev.text):
                score = insight_score(s)
                if score >= 2:
                    if open_eps:  # said while an error was open: likely its explanation
                        for ep in open_eps.values():
                            ep.explanations.append((score + 2, tidy(s)))
                    else:
                        sig.insights.append((score, tidy(s), ev.seq))
                if _STRONG_DECISION.search(s) and s not in sig.assistant_decisions:
                    sig.assistant_decisions.append(s)
        elif ev.role in ("user", "command"):
            for dec in decisions_in(ev.text):
                if dec not in sig.user_decisions:
                    sig.user_decisions.append(dec)
            if ev is not first_prompt and _CORRECTION.search(ev.text[:300]):
                sig.corrections.append(" ".join(ev.text.split())[:300])
        elif ev.role == "compact-summary":
            for line in ev.text.splitlines():
                line = line.strip(" -*\u2022\t")
                if 20 <= len(line) <= 400 and _SUMMARY_FACT.search(line) and _CODEISH.search(line):
                    if line not in sig.summary_facts:
                        sig.summary_facts.append(line)
    sig.episodes += list(open_eps.values())  # unresolved at the end of the session
    sig.episodes.sort(key=lambda e: e.start)
    return sig


def _call(sig: Signals, open_eps: dict[str, Episode], call: ToolCall) -> None:
    if call.name in EDIT_TOOLS and call.path and not call.is_error:
        for ep in open_eps.values():
            if call.path not in ep.fix_files:
                ep.fix_files.append(call.path)
        return
    if call.name != "Bash" or not call.command:
        return
    fam = command_family(call.command)
    if not fam:
        return
    counts = sig.commands.setdefault(fam, [0, 0])
    if call.failed:
        counts[1] += 1
        if is_read_only(fam) or not call.answered:
            return
        if fam in open_eps:
            open_eps[fam].fail(call)
        else:
            open_eps[fam] = Episode(fam, call)
        return
    counts[0] += 1
    ep = open_eps.pop(fam, None)
    if ep is not None:
        ep.resolved = True
        ep.end = call.seq
        sig.episodes.append(ep)
    elif not is_read_only(fam):
        for other in open_eps.values():
            if len(other.fix_commands) < 3 and fam not in other.fix_commands:
                other.fix_commands.append(fam)
