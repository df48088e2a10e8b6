"""Privacy filter: applied to every text before it reaches the disk (memories, state, handoffs, logs).

`<private>...</private>` is removed with everything inside it, nested and unclosed tags included, and
recognisable secrets are replaced by `[REDACTED:<kind>]`.
"""

from __future__ import annotations

import re

_TAG = re.compile(r"<\s*(/?)\s*private\b[^>]*>", re.I)


def strip_private(text: str) -> str:
    if "private" not in text.lower():
        return text
    out: list[str] = []
    depth = 0
    pos = 0
    for m in _TAG.finditer(text):
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


# (kind, pattern, group to redact or 0 for the whole match)
_SECRETS: list[tuple[str, re.Pattern[str], int]] = [
    ("private-key", re.compile(
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?(-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\Z)",
        re.S), 0),
    ("aws-access-key", re.compile(r"\b(AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b"), 0),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{16,}"), 0),
    ("openai-key", re.compile(r"\bsk-(proj-|svcacct-)?[A-Za-z0-9_\-]{20,}"), 0),
    ("github-token", re.compile(r"\b(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"), 0),
    ("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}"), 0),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"), 0),
    ("stripe-key", re.compile(r"\b(sk|rk|pk)_(live|test)_[A-Za-z0-9]{16,}"), 0),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}"), 0),
    ("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36}"), 0),
    ("huggingface-token", re.compile(r"\bhf_[A-Za-z0-9]{30,}"), 0),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"), 0),
    ("url-password", re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@'\"]+:([^\s@/'\"]+)@"), 1),
    ("bearer-token", re.compile(r"(?i)\b(?:bearer|token)\s+([A-Za-z0-9._~+/\-]{20,}=*)"), 1),
    ("aws-secret", re.compile(r"(?i)aws_?secret_?access_?key['\"]?\s*[:=]\s*['\"]?([A-Za-z0-9/+=]{30,})"), 1),
    ("assigned-secret", re.compile(
        r"(?i)\b[A-Z0-9_]*(?:password|passwd|pwd|secret|token|api_?key|access_?key|private_?key|client_?secret"
        r"|auth)[A-Z0-9_]*['\"]?\s*[:=]\s*['\"]?([^\s'\"`,;()\[\]{}<>]{6,})(?=[\s'\"`,;]|$)",
        re.M), 1),
]


def redact_secrets(text: str) -> str:
    for kind, pattern, group in _SECRETS:
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
    return text


def clean(text: str) -> str:
    """The filter every stored text goes through."""
    if not text:
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
