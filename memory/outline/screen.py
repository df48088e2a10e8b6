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

# What a text may hold and still be judged as the outline shows it (one short line, no escape): the filter of
# the rendered outline reads it so. parser/extract.py's VALUE_CAP.
_SHOWN_WHOLE = 100


def install() -> None:
    """Make the parser screen every definition's text (each process that outlines calls this once)."""
    from parser import extract

    extract.SCREEN = screen


def screen(text: str) -> str:
    """The text with its secrets redacted, judged as written: string escapes decoded, line breaks kept."""
    if len(text) <= _SHOWN_WHOLE and "\n" not in text and "\\" not in text:
        return text  # as the rendered outline shows it, where the filter reads it anyway
    if "\\" in text:
        from memory.base.literals import escaped_literals  # here: most files' definitions hold no escape

        text = escaped_literals(text)
    return clean(text)
