"""The offline extractor: learnings without a model, from the signals a session leaves behind.

A learning must name something (a command, an error, a file, an identifier); sentences that could be
said of any session ("the tests pass now") are never produced. Sources, strongest first: facts a
compaction summary records ("X doesn't exist - fixed by Y"), commands that failed and then passed (with
the files changed and the explanation given in between), decisions the user stated, explanations the
assistant gave while an error was open, errors that kept failing, and corrections the user repeated.
"""

from __future__ import annotations

import re
from typing import Any

from memory.capture.transcript import Digest
from memory.learn import Extraction, Learning, Summary
from memory.learn.signals import _CODEISH, Episode, Signals, analyse, is_read_only

NAME = "heuristic"
_PATH = re.compile(r"(?<![\w/])(?:[\w.-]+/)*[\w-]+\.(?:py|js|jsx|ts|tsx|go|rs|rb|ex|exs|java|kt|c|h|cc|cpp|hpp|cs"
                   r"|php|swift|scala|lua|sh|md|json|ya?ml|toml|ini|cfg|sql|html|css|scss|vue|svelte|lock)\b")
_MD = re.compile(r"\*\*|__|^#+\s*")


def _short(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def _files_in(text: str) -> list[str]:
    return list(dict.fromkeys(_PATH.findall(text)))[:6]


def _specific(text: str) -> bool:
    return bool(_CODEISH.search(text) or _PATH.search(text))


class _Candidate:
    def __init__(self, score: float, learning: Learning) -> None:
        self.score = score
        self.learning = learning
        self.words = set(re.findall(r"[a-z0-9_]{3,}", f"{learning.title} {learning.content}".lower()))


def _episode_learning(d: Digest, ep: Episode) -> _Candidate | None:
    err = ep.errors[0] if ep.errors else "an error"
    errors = "; ".join(_short(e, 200) for e in ep.errors[:3]).rstrip(".")
    why = ep.best_explanations(2)
    files = [d.rel(f) for f in ep.fix_files[:6]]
    times = f" ({ep.failures} times)" if ep.failures > 1 else ""
    if ep.resolved:
        how = []
        if files:
            how.append(f"changing {', '.join(files)}")
        if ep.fix_commands:
            how.append("running " + ", ".join(f"`{c}`" for c in ep.fix_commands))
        content = f"`{_short(ep.command, 160)}` failed{times} with: {errors}."
        if why:
            content += " " + " ".join(why)
        content += f" Fixed by {' and '.join(how)}; then `{ep.family}` passed." if how else \
            f" It passed again afterwards (`{ep.family}`)."
        if not (why or how) and not _specific(err):
            return None
        title = f"`{ep.family}` failed with \"{_short(err, 90)}\" - fixed"
        # A fix that is one command ("run `mix format`") is the crispest rule a session can leave.
        score = 6 + (2 if why else 0) + (1 if how else 0) + (1 if ep.fix_commands and not files else 0)
        return _Candidate(score, Learning("bugfix", title, content, 0.8 if why else 0.7, files))
    if ep.failures < 2 and not why:
        return None  # one failure left at the end of a session: too little to call it known
    content = f"`{_short(ep.command, 160)}` kept failing{times} with: {errors}."
    if why:
        content += " " + " ".join(why)
    tried = files[:4] + [f"`{c}`" for c in ep.fix_commands]
    if tried:
        content += f" Tried: {', '.join(tried)}; not resolved in that session."
    title = f"Unresolved: `{ep.family}` fails with \"{_short(err, 90)}\""
    return _Candidate(4 + min(2, ep.failures - 1) + (1 if why else 0),
                      Learning("discovery", title, content, 0.6, files))


def _candidates(d: Digest, sig: Signals, state: dict[str, Any] | None) -> list[_Candidate]:
    out: list[_Candidate] = []
    for fact in sig.summary_facts[:8]:
        clean = _MD.sub("", fact).strip(" :")
        if not _specific(clean):
            continue
        out.append(_Candidate(7, Learning("learning", _short(clean, 120), clean, 0.8, _files_in(clean))))
    for ep in sig.episodes:
        c = _episode_learning(d, ep)
        if c:
            out.append(c)
    for dec in sig.user_decisions[:4]:
        out.append(_Candidate(6.5, Learning("decision", _short(dec, 120), f"The user decided: {dec}", 0.85,
                                            _files_in(dec), evidence=dec)))
    for dec in sig.assistant_decisions[:3]:
        if _specific(dec):
            out.append(_Candidate(3.5, Learning("decision", _short(dec, 120), dec, 0.7, _files_in(dec))))
    for score, sentence, _ in sorted(sig.insights, key=lambda x: -x[0])[:6]:
        if score >= 3 and _specific(sentence):
            out.append(_Candidate(score, Learning("discovery", _short(sentence, 120), sentence, 0.65,
                                                  _files_in(sentence))))
    if len(sig.corrections) >= 2:
        body = "; ".join(f"\"{_short(c, 140)}\"" for c in sig.corrections[:4])
        out.append(_Candidate(6, Learning("learning", f"User corrections (repeated): {_short(sig.corrections[0], 90)}",
                                          f"The user had to correct the work {len(sig.corrections)} times: {body}",
                                          0.75, _files_in(body))))
    elif sig.corrections and _specific(sig.corrections[0]):
        c = sig.corrections[0]
        out.append(_Candidate(3, Learning("learning", f"User correction: {_short(c, 100)}",
                                          f"The user pointed out: \"{c}\"", 0.6, _files_in(c))))
    if state and not d.calls:  # no transcript: what the hooks recorded is all there is
        for fixed in (state.get("fixed") or [])[-3:]:
            out.append(_Candidate(5, Learning("bugfix", _short(str(fixed), 120), str(fixed), 0.7)))
        for dec in (state.get("decisions") or [])[-3:]:
            out.append(_Candidate(4, Learning("decision", _short(str(dec), 120), str(dec), 0.75,
                                              evidence=str(dec))))
    return out


def _pick(cands: list[_Candidate], limit: int) -> list[Learning]:
    chosen: list[_Candidate] = []
    for c in sorted(cands, key=lambda c: -c.score):
        if any(len(c.words & o.words) / max(1, min(len(c.words), len(o.words))) > 0.6 for o in chosen):
            continue  # the same thing said twice (a summary fact and the episode it describes)
        chosen.append(c)
        if len(chosen) >= limit:
            break
    return [c.learning for c in chosen]


def summarise(d: Digest, sig: Signals, learnings: list[Learning], state: dict[str, Any] | None = None) -> Summary:
    state = state or {}
    # The hooks saw the real first prompt; a digest read from an offset (after a compaction) starts
    # mid-session, so its first prompt is not the task.
    live_task = str(state.get("task") or "")
    asked = live_task if (live_task and d.start_offset > 0) else (d.task or live_task)
    done_parts = []
    files = [d.rel(f) for f in d.files_changed()] or [d.rel(str(f)) for f in state.get("files_modified", [])]
    if files:
        more = f" (+{len(files) - 6} more)" if len(files) > 6 else ""
        done_parts.append(f"changed {', '.join(files[:6])}{more}")
    fixed = [f"`{e.family}`" for e in sig.episodes if e.resolved]
    if fixed:
        done_parts.append(f"fixed {', '.join(dict.fromkeys(fixed))}")
    ran = sorted(((ok, fam) for fam, (ok, _) in sig.commands.items() if ok and not is_read_only(fam)),
                 reverse=True)[:3]
    if ran:
        done_parts.append("ran " + ", ".join(f"`{fam}`" for _, fam in ran))
    if not done_parts and sig.final_message:
        done_parts.append(_short(sig.final_message, 200))
    nxt = [f"`{e.family}` still fails ({_short(e.errors[0], 80) if e.errors else 'error'})"
           for e in sig.episodes if not e.resolved and e.failures >= 2][:2]
    nxt += [str(t.get("content", ""))[:100] for t in state.get("todos", [])
            if isinstance(t, dict) and t.get("status") != "completed"][:3]
    return Summary(asked=_short(asked.splitlines()[0] if asked else "", 240), done="; ".join(done_parts),
                   learned="; ".join(lr.title for lr in learnings[:2]), next="; ".join(nxt))


def extract(d: Digest, state: dict[str, Any] | None = None, limit: int = 5) -> Extraction:
    sig = analyse(d)
    learnings = _pick(_candidates(d, sig, state), limit)
    return Extraction(learnings, summarise(d, sig, learnings, state), NAME)
