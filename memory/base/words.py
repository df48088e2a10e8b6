"""Words: counted nouns in what the plugin prints ("1 memory", "2 memories": one rule, used everywhere),
and splitting text into words without the re module.

Standard library only and no imports: hooks use it too."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing or collections.abc costs a hook milliseconds
    from collections.abc import Callable


class WordChars(dict[int, int]):
    """A str.translate table: the characters `keep` accepts stay, every other becomes a space, filled in as
    characters are met. text.translate(table).split() then gives the words as a regex character class
    would (WordChars(lambda c: c.isalnum() or c == "_") is `\\w`), without importing re: that import
    (enum with it) was ~6 ms CPU of every prompt and startup hook, as much as a bare interpreter's start."""

    def __init__(self, keep: Callable[[str], bool]) -> None:
        super().__init__()
        self.keep = keep

    def __missing__(self, code: int) -> int:
        self[code] = value = code if self.keep(chr(code)) else 32
        return value

_IRREGULAR = {"person": "people", "child": "children", "index": "indexes", "was": "were", "is": "are"}


def plural(noun: str) -> str:
    """The plural of a noun, or of a phrase's last word ("stale section" -> "stale sections")."""
    head, _, last = noun.rpartition(" ")
    if last in _IRREGULAR:
        word = _IRREGULAR[last]
    elif last.endswith("y") and last[-2:-1] not in ("a", "e", "i", "o", "u", ""):
        word = last[:-1] + "ies"
    elif last.endswith(("s", "x", "z", "ch", "sh")):
        word = last + "es"
    else:
        word = last + "s"
    return f"{head} {word}" if head else word


def count(n: int, noun: str, many: str | None = None) -> str:
    """`n` and the noun, plural unless n is 1 (`many` for a plural the rule gets wrong); thousands
    separated: count(1, "memory") == "1 memory", count(1200, "memory") == "1,200 memories"."""
    return f"{n:,} {noun if n == 1 else many or plural(noun)}"


_ALNUM = WordChars(str.isalnum)


def wording(text: str) -> str:
    """A text's words, lower case, one space apart: what it says, whatever its punctuation, case, quoting
    or line breaks (memory/capture/handoff.py and memory/recall/inject.py compare texts by it)."""
    return " ".join(text.lower().translate(_ALNUM).split())


def said_in(part: str, whole: str) -> bool:
    """Whether `whole` (a wording()) already says all of `part`: its words, in order, from a word boundary;
    its last word may be the start of one in `whole`, as where a text was cut to a length (a title, a task)."""
    said = wording(part)
    return bool(said) and f" {said}" in f" {whole}"


def told(title: str, content: str, said: str) -> bool:
    """Whether `said` (a wording()) already says all a memory's line would: its text, and its title (or, for
    a "Label: excerpt" title, the excerpt, which is its text's own words)."""
    return said_in(content, said) and (said_in(title, said) or said_in(title.partition(": ")[2], wording(content)))


def title_and_text(title: str, content: str) -> tuple[str, str]:
    """A memory's title and text for one recalled line, each said once (its whitespace folded): a text that
    opens with its title loses it; a text the title holds is dropped ("Asked: <prompt>"); a "Label: excerpt"
    title of a text that opens with the excerpt ("Fixed: `x` passes again" of "`x` passes again after ...")
    keeps its label only (memory/recall/inject.py and point.py)."""
    body = " ".join(content.split())
    title = " ".join(title.split())
    kind, colon, excerpt = title.partition(": ")
    if body.lower().startswith(title.lower()):
        body = body[len(title):].lstrip(" :-")
    elif body.lower() in title.lower():
        body = ""
    elif colon and excerpt and body.lower().startswith(excerpt.lower()):
        title = kind
    return title, body
