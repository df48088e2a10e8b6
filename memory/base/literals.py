"""Secrets inside escaped string literals: a one-line literal's escapes (`\\n`, `\\"`: a `repr()`, a JSON or
code string) glue a secret to the letter before it, so no word-boundary rule of the privacy filter matches
it. Each literal that holds an escape is judged decoded, and written back escaped, redacted, when the filter
finds something in it: the outline cache (memory/outline/screen.py) and `memory audit` (rows an older version
stored as `repr()`) use it. Standard library only: the cold Read hook runs it."""

from __future__ import annotations

from memory.base.privacy import clean

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from collections.abc import Iterator

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "'": "'", "`": "`", "\\": "\\", "/": "/"}
_QUOTES = "\"'`"


def escaped_literals(text: str) -> str:
    """The text with each string literal that holds escapes and a secret redacted, judged decoded."""
    out: list[str] = []
    last = 0
    for start, end, quote in _literals(text):
        body = text[start + 1:end - 1]
        if "\\" not in body:
            continue
        plain = _decoded(body)
        kept = clean(plain)
        if kept != plain:
            out += [text[last:start], quote, _encoded(kept, quote), quote]
            last = end
    return "".join(out) + text[last:] if out else text


def _literals(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, quote) of each quoted run of the text, end after its closing quote; a quote that is not
    closed on its line (a backtick: in the text) opens none."""
    i, n = 0, len(text)
    while i < n:
        quote = text[i]
        if quote in _QUOTES:
            j = i + 1
            while j < n and text[j] != quote and (text[j] != "\n" or quote == "`"):
                j += 2 if text[j] == "\\" else 1
            if j < n and text[j] == quote:
                yield i, j + 1, quote
                i = j + 1
                continue
        i += 1


def _decoded(body: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body):
            out.append(_ESCAPES.get(body[i + 1], body[i:i + 2]))
            i += 2
        else:
            out.append(body[i])
            i += 1
    return "".join(out)


def _encoded(body: str, quote: str) -> str:
    """The body written back inside `quote`s: backslashes, the quote and line breaks escaped again."""
    body = body.replace("\\", "\\\\").replace(quote, "\\" + quote)
    return body.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
