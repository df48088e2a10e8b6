"""A cheap, deterministic token estimate for source code and outlines.

No tokenizer ships offline, so this approximates a BPE tokenizer on code:
one regex pass (``TOKEN_PATTERN``) counts

* each identifier-ish word, split every 8 letters (long and camelCase-free
  identifiers cost more than one token), a leading run of ``_`` riding along;
* each group of up to 3 digits;
* each pair of adjacent punctuation characters (``()``, ``->``, ``==`` are
  usually single tokens);
* each non-ASCII character;
* each newline together with the indentation after it.

Spaces between words are free (BPE glues them to the next word). On code it
lands close to ``len(text) / 4`` but tracks dense punctuation and deep
indentation better. The same function measures the original file and its
outline, so savings are comparable even where the absolute number is off.

ASCII text gets the same count from C-level passes over its bytes and a bit mask
(``_count_ascii``, ~6 ms per MB), and so does text with at most 16 distinct
non-ASCII characters once they are replaced by ASCII stand-ins of their class
(``_count_few_others``); other text costs the regex about 60 ms per MB. Texts above
``SAMPLE_ABOVE`` characters are counted on evenly spaced slices and scaled:
a 2 MB file costs ~8 ms and the estimate stays within a few percent.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Iterator

TOKEN_PATTERN = r"_*[A-Za-z]{1,8}|\d{1,3}|[^\w\s]{1,2}|[^\x00-\x7f]|\n[ \t]*"
_compiled = None  # compiled on first use: ASCII texts are counted without it (_count_ascii)


def _class_table() -> bytes:
    """A bytes.translate table: each ASCII byte to the bit of its class in the pattern (1 letters,
    `_*[A-Za-z]{1,8}`: the underscores ride along, cost nothing; 2 digits, `\\d{1,3}`; 4 punctuation,
    `[^\\w\\s]{1,2}`, where \\s is str.isspace, \\x1c-\\x1f included), every other byte to 0."""
    table = bytearray(256)
    for i in range(128):
        c = chr(i)
        table[i] = 1 if c.isalpha() else 2 if c.isdigit() else 0 if c == "_" or c.isspace() else 4
    return bytes(table)


_CLASSES = _class_table()
_RUNS = ((b"\x01", 8), (b"\x02", 3), (b"\x04", 2))  # (a class's byte, its characters per token)

SAMPLE_ABOVE = 256 * 1024
_SLICES = 16
_SLICE_CHARS = 8 * 1024


def token_re() -> re.Pattern[str]:
    global _compiled
    if _compiled is None:
        from memory.fastpath import recode

        _compiled = recode.compile(TOKEN_PATTERN)
    return _compiled


def _count_ascii(data: bytes) -> int:
    """TOKEN_PATTERN's findall count for ASCII text, by C-level passes (a test checks the two agree): each run
    of a class of length L is ceil(L / per) = 1 + (L - 1) // per tokens, each newline one (its indentation
    rides along). Each byte becomes its class's bit (_CLASSES), the bytes an int: the bytes of a run but its
    first are those sharing their bit with the previous byte (a shift and an `and`, every class at once, the
    classes' bits being apart), the runs the set bits less those, and (L - 1) // per the non-overlapping
    `per` bytes of the class in a row among those. MemorySSA.h's 49 KB in ~0.25 ms (0.53 with an int per
    class), against 1.8 ms for the regex pass."""
    n = 0
    for chunk in _chunks(data):
        size = len(chunk) + 1
        marks = int.from_bytes(chunk.translate(_CLASSES), "little")
        inner = marks & (marks << 8)  # the bytes of a run but its first
        n += chunk.count(b"\n") + marks.bit_count() - inner.bit_count()
        inner_bytes = inner.to_bytes(size, "little")
        n += sum(inner_bytes.count(c * per) for c, per in _RUNS)
    return n


# Bytes counted at a time, cut after a newline (which no run and no UTF-8 sequence crosses): a whole file's
# copies and ints, over 128 KB, were each allocated afresh and their pages faulted in at every step (a cold
# count of DebugInfoMetadata.h, 150 KB: 1.38 -> 1.03 ms).
_CHUNK = 16384


def _chunks(data: bytes) -> Iterator[bytes]:
    start, size = 0, len(data)
    while start < size:
        end = data.find(b"\n", start + _CHUNK) + 1 or size
        yield data[start:end] if start or end < size else data
        start = end


_ASCII_BYTES = bytes(range(128))


def _count_few_others(data: bytes) -> int | None:
    """The pattern's count for UTF-8 text with at most 16 distinct non-ASCII characters (an outline's `…`, a
    comment's accents), each replaced by an ASCII stand-in of its class: a decimal digit joins digit runs
    (`\\d`), other punctuation joins punctuation runs (`[^\\w\\s]`), anything else (a letter, a space) is a
    token of its own (`[^\\x00-\\x7f]`) and breaks runs, as a space does. None: more, or not UTF-8. On the
    bytes, not the decoded text: a 138 KB file with one emoji is 550 KB of str (4 bytes a character), whose
    copies cost a cold hook ~1.5 ms more."""
    rest = data.translate(None, _ASCII_BYTES)
    try:
        others = {c: c.encode() for c in set(rest.decode())}
    except UnicodeDecodeError:
        return None
    # Every non-ASCII byte in one of the characters' sequences, or the bytes are not UTF-8 (`\xc3A\xa9`).
    if len(others) > 16 or sum(data.count(seq) * len(seq) for seq in others.values()) != len(rest):
        return None
    n = 0
    for chunk in _chunks(data):
        for c, seq in others.items():
            if c.isdecimal():
                chunk = chunk.replace(seq, b"0")
            elif c.isalnum() or c.isspace():
                n += chunk.count(seq)
                chunk = chunk.replace(seq, b" ")
            else:
                chunk = chunk.replace(seq, b"\x7f")
        n += _count_ascii(chunk)
    return n


def _utf8(text: str) -> bytes | None:
    try:
        return text.encode()
    except UnicodeEncodeError:  # a lone surrogate
        return None


def estimate_tokens(text: str | bytes) -> int:
    """Estimated token count of ``text`` (bytes are decoded leniently)."""
    if len(text) <= SAMPLE_ABOVE and text.isascii():  # most code: counted without the regex
        return _count_ascii(text if isinstance(text, bytes) else text.encode("ascii"))
    if isinstance(text, bytes):
        few = _count_few_others(text) if len(text) <= SAMPLE_ABOVE else None
        if few is not None:
            return few
        text = text.decode("utf-8", errors="replace")
    size = len(text)
    if size <= SAMPLE_ABOVE:
        data = _utf8(text)
        few = _count_few_others(data) if data is not None else None
        if few is not None:
            return few
    token = token_re()
    if size <= SAMPLE_ABOVE:
        return token.subn("", text)[1]  # the findall count without a list of every token: ~20% faster
    step = size // _SLICES
    counted = sum(
        len(token.findall(text, i * step, i * step + _SLICE_CHARS)) for i in range(_SLICES)
    )
    return round(counted * size / (_SLICES * _SLICE_CHARS))
