"""Privacy filter: applied to every text before it reaches the disk (memories, state, handoffs, logs).

`<private>...</private>` is removed with everything inside it, nested and unclosed tags included, and
recognisable secrets are replaced by `[REDACTED:<kind>]`.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

# re.I, re.M, re.S: `re` is imported only when a pattern is first compiled (importing it costs a hook
# process a few ms, and most texts hold no trigger; a test checks the values).
_I, _M, _S = 2, 8, 16
_TAG_SOURCE = r"<\s*(/?)\s*private\b[^<>]*>"  # [^<>]: a tag never spans another tag


def strip_private(text: str) -> str:
    if "private" not in text.lower():
        return text
    out: list[str] = []
    depth = 0
    pos = 0
    for m in _pattern(_TAG_SOURCE, _I).finditer(text):
        if depth == 0:
            out.append(text[pos : m.start()])
        closing = m.group(1) == "/"
        if closing:
            depth = max(0, depth - 1)  # a stray closing tag at depth 0 is dropped
        else:
            depth += 1
        pos = m.end()
    if depth == 0:  # an unclosed tag hides everything after it
        out.append(text[pos:])
    return "".join(out)


# (kind, trigger substrings (lower case), pattern, group to redact or 0 for the whole match).
# Patterns are compiled on first use, and only run when a trigger occurs in the text: compiling all of
# them costs a hook process several ms, and most texts contain none of the triggers.
_SECRET_NAME = (
    r"\b(?:[A-Za-z0-9]+[_\-.])*(?i:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key"
    r"|client[_-]?secret|auth[_-]?token|credentials?)(?:[A-Z][A-Za-z0-9]*)?(?:[_\-.][A-Za-z0-9]+)*"
)
_SECRETS: list[tuple[str, tuple[str, ...], str, int, int]] = [
    ("private-key", ("private key",),
     r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?(-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\Z)", 0, _S),
    ("aws-access-key", ("akia", "asia", "agpa", "aida", "aroa", "anpa"),
     r"\b(AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b", 0, 0),
    ("anthropic-key", ("sk-ant-",), r"\bsk-ant-[A-Za-z0-9_\-]{16,}", 0, 0),
    ("openai-key", ("sk-",), r"\bsk-(proj-|svcacct-)?[A-Za-z0-9_\-]{20,}", 0, 0),
    ("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
     r"\b(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})", 0, 0),
    ("gitlab-token", ("glpat-",), r"\bglpat-[A-Za-z0-9_\-]{20,}", 0, 0),
    ("slack-token", ("xox",), r"\bxox[abposr]-[A-Za-z0-9\-]{10,}", 0, 0),
    ("stripe-key", ("_live_", "_test_"), r"\b(sk|rk|pk)_(live|test)_[A-Za-z0-9]{16,}", 0, 0),
    ("google-api-key", ("aiza",), r"\bAIza[0-9A-Za-z_\-]{35}", 0, 0),
    ("npm-token", ("npm_",), r"\bnpm_[A-Za-z0-9]{36}", 0, 0),
    ("huggingface-token", ("hf_",), r"\bhf_[A-Za-z0-9]{30,}", 0, 0),
    ("jwt", ("eyj",), r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", 0, 0),
    ("url-password", ("://",), r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@'\"]+:([^\s@/'\"]+)@", 1, 0),
    ("bearer-token", ("bearer", "token"), r"\b(?:bearer|token)\s+([A-Za-z0-9._~+/\-]{20,}=*)", 1, _I),
    ("aws-secret", ("secret",), r"aws_?secret_?access_?key['\"]?\s*[:=]\s*['\"]?([A-Za-z0-9/+=]{30,})", 1, _I),
    # NAME = value where a whole segment of NAME is a secret word (DB_PASSWORD, api-key, clientSecret; not
    # max_tokens or author): quoted values up to their closing quote, then bare values.
    ("assigned-secret", ("passw", "pwd", "secret", "token", "key", "credential"),
     _SECRET_NAME + r"['\"]?\s*[:=]\s*(['\"])([^'\"\n]{4,})\1", 2, 0),
    ("assigned-secret", ("passw", "pwd", "secret", "token", "key", "credential"),
     _SECRET_NAME + r"['\"]?\s*[:=]\s*([^\s'\"`,;()\[\]{}<>]{6,})(?=[\s'\"`,;]|$)", 1, _M),
]
_NAME_VALUE = ("assigned-secret", "aws-secret")  # patterns with a mandatory [:=]
_COMPILED: dict[str, re.Pattern[str]] = {}


def _pattern(source: str, flags: int) -> re.Pattern[str]:
    pattern = _COMPILED.get(source)
    if pattern is None:
        import re

        pattern = _COMPILED[source] = re.compile(source, flags)
    return pattern


def redact_secrets(text: str) -> str:
    lower = text.lower()
    for kind, triggers, source, group, flags in _SECRETS:
        if not any(t in lower for t in triggers):
            continue
        if kind in _NAME_VALUE and "=" not in text and ":" not in text:
            continue  # NAME = value / NAME: value needs one of them ("the tokenizer" is no secret)
        pattern = _pattern(source, flags)
        if group == 0:
            text = pattern.sub(f"[REDACTED:{kind}]", text)
        else:
            def repl(m: re.Match[str], kind: str = kind, group: int = group) -> str:
                s, e = m.span(group)
                base = m.start()
                whole = m.group(0)
                if m.group(group).startswith("[REDACTED"):
                    return whole
                return whole[: s - base] + f"[REDACTED:{kind}]" + whole[e - base :]

            text = pattern.sub(repl, text)
        lower = text.lower()
    return text


_ALL_TRIGGERS = tuple(dict.fromkeys(t for _kind, triggers, *_ in _SECRETS for t in triggers))


def clean(text: str) -> str:
    """The filter every stored text goes through."""
    if not text:
        return text
    # Most texts hold no trigger at all: one lower() and a plain loop, instead of a generator per secret
    # kind (a long session's state holds hundreds of paths, all cleaned at every tool call).
    lower = text.lower()
    if "private" not in lower:
        for t in _ALL_TRIGGERS:
            if t in lower:
                break
        else:
            return text
    return redact_secrets(strip_private(text))


def clean_obj(value: object) -> object:
    """`clean` applied to every string inside a JSON-like value."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, list):
        return [clean_obj(v) for v in value]
    if isinstance(value, dict):
        return {k: clean_obj(v) for k, v in value.items()}
    return value
