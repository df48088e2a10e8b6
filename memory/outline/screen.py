"""The privacy filter on a definition's text as written, before the parser joins it onto one line and cuts it.

An outline shows a constant with its value (`API_TOKEN = "..."`), on one line and at most 100 characters.
Filtered only once rendered, a secret could pass: a YAML or TOML document inside a string constant, joined
onto one line, reads as prose (`password: hunter2 api_token: ...`); a one-line literal's escapes (`\\n`,
`\\"`) glue a secret to the letter before it, so no word-boundary rule matches; and a value cut at 100
characters may keep half a token. So the parser hands each definition's text to `screen` first
(parser/extract.py's SCREEN): a string literal holding escapes is judged with them decoded, then the whole
text with its own line breaks, and only then joined and cut. The rendered outline is filtered again
(memory/outline/cache.py). Standard library only: the cold Read hook runs it."""

from __future__ import annotations

from memory.base.privacy import clean

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from collections.abc import Iterator

# What a text may hold and still be judged as the outline shows it (one short line, no escape): the filter of
# the rendered outline reads it so. parser/extract.py's VALUE_CAP.
_SHOWN_WHOLE = 100
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "'": "'", "`": "`", "\\": "\\", "/": "/"}
_QUOTES = "\"'`"


def install() -> None:
    """Make the parser screen every definition's text (each process that outlines calls this once)."""
    from parser import extract

    extract.SCREEN = screen


def screen(text: str) -> str:
    """The text with its secrets redacted, judged as written: string escapes decoded, line breaks kept."""
    if len(text) <= _SHOWN_WHOLE and "\n" not in text and "\\" not in text:
        return text  # as the rendered outline shows it, where the filter reads it anyway
    if "\\" in text:
        text = _escaped_literals(text)
    return clean(text)


def _escaped_literals(text: str) -> str:
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
