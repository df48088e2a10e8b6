"""How a model reads text, for the trust checks: invisible characters skipped, compatibility forms
(fullwidth, mathematical letters, ligatures) folded, letters and punctuation of other scripts that look like
ASCII read as that ASCII, HTML entities and backslash escapes decoded (repeatedly: `&amp;lt;` reads `<`).

memory/base/fence.py asks it about text that is not plain ASCII or holds `&` or `\\`: which characters open a
tag or end a role word, and the folded text its instruction patterns read. Each distinct character is looked
at once (unicodedata, a C module) and the answer kept; nothing is a list of chosen code points: invisible is
a format character (Cf), a variation selector, a filler or a tag character; lookalikes are Unicode's
confusables (memory/base/lookalikes.py), compatibility decompositions and case folds, the names that say
LESS-THAN SIGN, ANGLE BRACKET or SOLIDUS, and a Latin letter's name (`ʙ` SMALL CAPITAL B). Standard library
only (hooks import it)."""

from __future__ import annotations

import unicodedata

from memory.base.lookalikes import FROM, TO

MARK = "\u2039"  # the fence's own inert `<` (fence.py): read as itself, so a neutralised text stays neutral
_LOOKALIKE: dict[str, str] = {}
_READ: dict[str, str] = {}  # character -> what it reads as ('' for invisible)
_FOLD: dict[str, str] = {}  # the same, with combining marks dropped (for matching words)
# Named entities decoded without loading html.entities (1 ms): those a tag, a role marker or an order uses.
_ENTITIES = {"lt": "<", "gt": ">", "amp": "&", "sol": "/", "colon": ":", "vert": "|", "verbar": "|", "excl": "!",
             "quest": "?", "nbsp": " ", "quot": '"', "apos": "'", "num": "#", "semi": ";", "period": ".",
             "lowbar": "_", "hyphen": "-", "dash": "-", "equals": "=", "dollar": "$", "lpar": "(", "rpar": ")"}


def _lookalike(c: str) -> str | None:
    if not _LOOKALIKE:
        _LOOKALIKE.update(zip(FROM, TO, strict=True))
    return _LOOKALIKE.get(c)


def invisible(c: str) -> bool:
    """A character that shows nothing but may split a word or a tag: format characters (Cf: zero widths,
    joiners, bidi controls, soft hyphen, tag characters, the Mongolian vowel separator), variation
    selectors, the combining grapheme joiner, Hangul and other fillers, blank braille."""
    o = ord(c)
    if o < 0x80:
        return False
    cat = unicodedata.category(c)
    if cat == "Cf" or 0xE0000 <= o <= 0xE0FFF or (cat == "Cn" and 0x2060 <= o <= 0x206F):
        return True
    name = unicodedata.name(c, "")  # the default-ignorable marks and letters, and the fillers, by name
    return ("VARIATION SELECTOR" in name or "GRAPHEME JOINER" in name or name.endswith("FILLER")
            or "VOWEL INHERENT" in name or name == "BRAILLE PATTERN BLANK")


def shapes(c: str) -> bool:
    """An invisible character that shapes its neighbours' glyphs (the zero-width joiner and non-joiner,
    variation selectors: emoji sequences, Persian and Indic text): kept where text is shown, skipped where
    it is read."""
    return c in "\u200c\u200d" or "VARIATION SELECTOR" in unicodedata.name(c, "")


def _by_name(c: str) -> str | None:
    """`<`, `>` or `/` for a character whose name says it is one (fullwidth, small, heavy, angle brackets,
    division and fraction slashes), whatever confusables.txt lists."""
    name = unicodedata.name(c, "")
    plain = not any(w in name for w in ("EQUAL", "NOT ", " OR ", "BESIDE", "ABOVE", "BELOW"))
    if plain and ("LESS-THAN" in name or "LEFT ANGLE BRACKET" in name or "LEFT-POINTING ANGLE" in name
                  or "LEFT ARROWHEAD" in name):
        return "<"
    if plain and ("GREATER-THAN" in name or "RIGHT ANGLE BRACKET" in name or "RIGHT-POINTING ANGLE" in name
                  or "RIGHT ARROWHEAD" in name):
        return ">"
    if ("SOLIDUS" in name or "SLASH" in name) and "REVERSE" not in name and "BACK" not in name \
            and " WITH " not in name:
        return "/"
    return None


def latin_letter(c: str) -> str | None:
    """The ASCII letter a Latin letter's name says it is at heart: `ʙ` LATIN LETTER SMALL CAPITAL B is b,
    `ɪ` small capital I is i (a turned, reversed or ligature letter says no single letter)."""
    name = unicodedata.name(c, "")
    if not name.startswith("LATIN "):
        return None
    words = name.split()
    if "LETTER" not in words:
        return None
    rest = words[words.index("LETTER") + 1:]
    if rest[:2] == ["SMALL", "CAPITAL"]:
        rest = rest[2:]
    if not rest or len(rest[0]) != 1 or not rest[0].isalpha():
        return None
    return rest[0] if "CAPITAL" in words[:words.index("LETTER")] else rest[0].lower()


def _small_of(c: str) -> str | None:
    """A small letter whose capital reads as an ASCII letter reads as that letter, small: Greek `κ` (`Κ` is
    K), Cyrillic `т` (`Т` is T): they look like the Latin letter's small capital."""
    up = c.upper()
    if len(up) != 1 or up == c or not c.isalpha():
        return None
    got = _lookalike(up) or latin_letter(up)
    return got.lower() if got and got.isalpha() and got.isascii() else None


def read(c: str) -> str:
    """What one character reads as: '' if invisible, the ASCII it imitates, its compatibility form (NFKC),
    or itself. (Tag characters, invisible on screen, read as the ASCII they spell: text smuggled in them is
    flagged, and the fence drops them from what it shows.)"""
    got = _READ.get(c)
    if got is not None:
        return got
    if c.isascii():
        got = c
    elif c == MARK:
        got = c
    elif 0xE0020 <= ord(c) <= 0xE007E:
        got = chr(ord(c) - 0xE0000)  # a tag character spells its ASCII to a model that decodes them
    elif invisible(c):
        got = ""
    else:
        nfkc = unicodedata.normalize("NFKC", c)
        folded = c.casefold()  # `ß` reads `ss`
        got = nfkc if nfkc.isascii() and nfkc else folded if folded.isascii() else \
            _lookalike(c) or _by_name(c) or latin_letter(c) or _small_of(c) or nfkc
        if got == "l" and c.isupper():
            got = "I"  # a capital I read as the lower-case l confusables.txt gives (Cyrillic І, Greek Ι)
        if len(got) > 1 and not got.isascii():
            got = c
    _READ[c] = got
    return got


def _fold_char(c: str) -> str:
    got = _FOLD.get(c)
    if got is None:
        got = "" if unicodedata.category(c) in ("Mn", "Me") else read(c)
        _FOLD[c] = got
    return got


def is_mark(c: str) -> bool:
    """A combining mark or an invisible character: skipped between a tag's `<` and its name."""
    return not c.isascii() and (unicodedata.category(c) in ("Mn", "Me") or invisible(c))


def fold(text: str) -> str:
    """The text as read: invisible characters and combining marks dropped, lookalikes and compatibility
    forms as the ASCII they imitate, then entities and escapes decoded (and what they decode to read the
    same way): not lower-cased."""
    text = _fold_unicode(text)
    if "&" in text or "\\" in text:
        for lead in "&\\":
            if lead in text:
                text = decode(text, lead)
        text = _fold_unicode(text)
    return text


def _fold_unicode(text: str) -> str:
    if text.isascii():
        return text
    text = text.translate(_fold_table(text))
    text = unicodedata.normalize("NFKD", text)  # accented letters to their base and a mark, dropped next
    return text if text.isascii() else text.translate(_fold_table(text))


def _fold_table(text: str) -> dict[int, str]:
    return {ord(c): _fold_char(c) for c in set(text) if not c.isascii()}


# -- entities and escapes ---------------------------------------------------------------------------------


def _entity_once(text: str, j: int) -> tuple[str, int] | None:
    """The character of the entity whose name starts at text[j] (just after its `&`), and where it ends."""
    if text.startswith("#", j):
        k = j + 1
        base = 10
        if text[k:k + 1] in ("x", "X"):
            base, k = 16, k + 1
        end = k
        digits = "0123456789abcdefABCDEF" if base == 16 else "0123456789"
        while end < len(text) and end - k < 8 and text[end] in digits:
            end += 1
        if end == k:
            return None
        try:
            ch = chr(int(text[k:end], base))
        except (ValueError, OverflowError):
            return None
        return ch, end + 1 if text.startswith(";", end) else end
    end = j
    while end < len(text) and end - j < 32 and text[end].isascii() and text[end].isalnum():
        end += 1
    name = text[j:end]
    if not name:
        return None
    semi = text.startswith(";", end)
    ch = _ENTITIES.get(name)
    if ch is None and semi:
        from html.entities import html5  # a dict: no re

        ch = html5.get(name + ";")
    if ch is None:  # `&LT;`, and `&lt` run into what follows (`&ltsystem>`): browsers read both as `<`
        legacy = next((n for n in ("lt", "gt", "amp") if name.lower().startswith(n)), None)
        if legacy is None:
            return None
        ch, end, semi = _ENTITIES[legacy], j + len(legacy), text.startswith(";", j + len(legacy))
    return ch, end + 1 if semi else end


def entity_at(text: str, at: int) -> tuple[str, int] | None:
    """The entity at text[at] (an `&`), decoded until it is no entity (`&amp;lt;` is `<`), and its end."""
    got = _entity_once(text, at + 1)
    if got is None:
        return None
    ch, end = got
    while ch == "&":
        more = _entity_once(text, end)
        if more is None:
            break
        ch, end = more
    return ch, end


def decode(text: str, lead: str) -> str:
    """Every entity (`lead` "&") or backslash escape (`lead` "\\") in the text decoded."""
    out: list[str] = []
    done = 0
    at = text.find(lead)
    while at >= 0:
        got = decoded_at(text, at)
        if got is not None:
            out.append(text[done:at] + got[0])
            done = got[1]
            at = text.find(lead, done)
        else:
            at = text.find(lead, at + 1)
    out.append(text[done:])
    return "".join(out)


_HEX = frozenset("0123456789abcdefABCDEF")


def escape_at(text: str, at: int) -> tuple[str, int] | None:
    """A backslash escape at text[at] (`\\u003c`, `\\U0000003c`, `\\x3c`, `\\u{3c}`, any number of
    backslashes, any case) decoded, and its end."""
    k = at
    while k < len(text) and text[k] == "\\":
        k += 1
    kind = text[k:k + 1]
    kind = "x" if kind == "X" else kind
    if kind not in ("u", "U", "x"):
        return None
    k += 1
    if kind == "u" and text.startswith("{", k):
        end = text.find("}", k, k + 10)
        digits, stop = (text[k + 1:end], end + 1) if end > 0 else ("", k)
    else:
        n = {"u": 4, "U": 8, "x": 2}[kind]
        if kind == "U" and not (len(text) >= k + 8 and _HEX.issuperset(text[k:k + 8])):
            n = 4  # `\U003C`: a `\u` escape with its letter capitalised reads the same
        digits, stop = text[k:k + n], k + n
        if len(digits) != n:
            return None
    if not digits or not _HEX.issuperset(digits):
        return None
    try:
        return chr(int(digits, 16)), stop
    except (ValueError, OverflowError):
        return None


def decoded_at(text: str, at: int) -> tuple[str, int] | None:
    """The character an entity or escape at text[at] stands for, and its end; None if there is none."""
    c = text[at]
    if c == "&":
        return entity_at(text, at)
    if c == "\\":
        return escape_at(text, at)
    return None
