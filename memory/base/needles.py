"""Substring gates: which of a fixed set of strings a lower-cased text holds (found from its trigrams), and
a memo that answers "none of them" cheaply for a stream of texts sharing their words (a bulk import).

Standard library only: the privacy filter (memory/base/privacy.py) and the trust flags (memory/base/fence.py)
gate every stored text with these before any regex runs.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable


PIECES_ABOVE = 512  # characters of a text whose trigrams are taken from its distinct pieces (a 1.2 KB chat turn:
# 0.065 -> 0.02 ms; below this the bytes passes cost what they save)


class Needles:
    """A fixed set of strings, looked up by their first three characters: one C-level set intersection over
    a text's trigrams instead of a substring scan per string (2-15x less for ~300 strings; most texts hold
    none of them). Strings shorter than three characters are scanned for directly."""

    def __init__(self, needles: Iterable[str]) -> None:
        self.all = tuple(dict.fromkeys(needles))
        self.short = tuple(t for t in self.all if len(t) < 3)
        self.by_trigram: dict[tuple[str, str, str], list[str]] = {}
        for t in self.all:
            if len(t) >= 3:
                self.by_trigram.setdefault((t[0], t[1], t[2]), []).append(t)
        self.trigrams = frozenset(self.by_trigram)
        # Worked out from one string of every trigram's characters (three each, in by_trigram's order) with
        # C-level passes, not per trigram: every hook builds the privacy filter's (~190 trigrams), and the
        # set unions and a test per trigram cost it ~0.6 M instructions more.
        keys = list(self.by_trigram)
        heads = "".join(map("".join, keys))
        chars = set(heads)
        spaced = set()  # those with whitespace: `pw is` is ("p", "w", " ")
        for blank in (c for c in chars if c.isspace()):
            at = heads.find(blank)
            while at >= 0:
                spaced.add(keys[at // 3])
                at = heads.find(blank, at + 1)
        self.spaced = tuple(spaced)
        # The characters of the other trigrams: a long text's pieces are its runs of these (see _pieces). A
        # character of a spaced trigram is one of them if it occurs more often than in the spaced ones.
        in_spaced = "".join(map("".join, spaced))
        self.letters = "".join(sorted(c for c in chars if c not in in_spaced or heads.count(c) > in_spaced.count(c)))
        self.table = _byte_table(self.letters) if self.letters.isascii() else None

    def _candidates(self, text: str) -> tuple[frozenset[tuple[str, str, str]], str | None]:
        """The trigrams of the strings that `text` holds, and (for a long text) its pieces (_pieces)."""
        if len(text) > PIECES_ABOVE:
            # A trigram without whitespace lies inside one piece: the distinct pieces hold every such trigram of
            # the text (a 300-line outline repeats its words: 18 KB -> 7 KB of tuples to make), and those with
            # whitespace are looked for directly.
            pieces = self._pieces(text)
            found = self.trigrams.intersection(zip(pieces, pieces[1:], pieces[2:], strict=False))
            spaced = [k for k in self.spaced if "".join(k) in text]
            return (found.union(spaced) if spaced else found), pieces
        return self.trigrams.intersection(zip(text, text[1:], text[2:], strict=False)), None  # lengths differ

    def _pieces(self, text: str) -> str:
        """The distinct maximal runs of `letters` in `text`, joined by spaces: a string made of those characters
        occurs in the text where it occurs in these. Found by C-level byte passes (every other byte, UTF-8's
        multi-byte ones included, turned into a space): an outline's `(`, `,`, `*` and `<` split its words as
        whitespace does (MemorySSA.h's outline: 10 KB of whitespace-split pieces -> 7 KB, the gate 0.72 ->
        0.5 ms). With a needle's trigram outside ASCII: the whitespace-split pieces."""
        if self.table is None:
            return " ".join(set(text.split()))
        runs = text.encode("utf-8", "surrogatepass").translate(self.table).split()
        return b" ".join(set(runs)).decode("ascii")

    def any_in(self, text: str) -> bool:
        """Whether `text` holds one of the strings (= any(t in text for t in self.all))."""
        keys, pieces = self._candidates(text)
        scan = _Scan(text, pieces, self.letters)
        return any(map(scan.holds, self.short)) or any(scan.holds(t) for key in keys for t in self.by_trigram[key])

    def present(self, text: str) -> set[str]:
        """The strings `text` holds (= {t for t in self.all if t in text})."""
        keys, pieces = self._candidates(text)
        scan = _Scan(text, pieces, self.letters)
        found = set(filter(scan.holds, self.short))
        for key in keys:
            group = self.by_trigram[key]
            if len(group) == 1:
                if scan.holds(group[0]):
                    found.add(group[0])
                continue
            found.update(filter(scan.holds_prefixed, group))
        return found


def _byte_table(letters: str) -> bytes:
    """bytes.translate's table: each of the ASCII `letters` to itself, every other byte to a space."""
    table = bytearray(b" " * 256)
    for c in letters.encode():
        table[c] = c
    return bytes(table)


class _Scan:
    """`t in text` for one text, looked for in its pieces (Needles._pieces: 2-3x shorter than an outline) when
    `t` is made of their letters."""

    __slots__ = ("text", "pieces", "letters", "scanned")

    def __init__(self, text: str, pieces: str | None, letters: str) -> None:
        self.text, self.pieces, self.letters = text, pieces, letters
        self.scanned: dict[str, bool] = {}

    def holds(self, t: str) -> bool:
        if self.pieces is not None and not t.strip(self.letters):
            return t in self.pieces
        return t in self.text

    def holds_prefixed(self, t: str) -> bool:
        """`holds(t)`, its first four characters and its first word scanned for first, each once per text: the
        strings sharing a trigram share those (46 begin with "pas": `password is`, `passwd was`...), and a long
        text costs ~7 us a scan (a C++ header's outline: 90 scans -> 25)."""
        space = t.find(" ")
        for k in (4, space):
            if 3 < k < len(t):
                prefix = t[:k]
                hit = self.scanned.get(prefix)
                if hit is None:
                    hit = self.scanned[prefix] = self.holds(prefix)
                if not hit:
                    return False
        return self.holds(t)


class PieceMemo:
    """`any_in(text)` of Needles for a stream of texts that share their words (a bulk import): it remembers,
    between texts, which space-free pieces (`text.split(" ")`) hold no marker of a string, and for the others
    which strings to look for.

    A string without a space lies, where it occurs, inside one piece: it is its own marker. A string with
    spaces has each of its space-separated segments inside one piece, and a segment between two spaces is a
    whole piece: its marker is a middle segment (the text must have it as a piece), or else its first or
    last segment (some piece must hold it). So a text none of whose pieces holds a marker (or is one) holds
    no string; otherwise the strings those pieces stand for are looked for in the text with `in`: the
    answer is exact. Strings made of spaces alone are always looked for. A text of known words costs a split
    and three set operations (~2 us for a 250-character chat turn) where the trigram gate costs ~9 us; the
    memo forgets what it learnt past `limit` pieces."""

    def __init__(self, needles: Iterable[str], limit: int = 1 << 18) -> None:
        self.always: list[str] = []
        self.by_marker: dict[str, list[str]] = {}
        self.by_word: dict[str, list[str]] = {}
        for t in dict.fromkeys(needles):
            segments = t.split(" ")
            middles = [s for s in segments[1:-1] if s]
            ends = [s for s in (segments[0], segments[-1]) if s]
            if middles:  # a whole piece: a set lookup, and rarer than a substring
                self.by_word.setdefault(max(middles, key=len), []).append(t)
            elif ends:  # the rarer end: a word of 3 letters or more, else punctuation ("| sh" by "|")
                self.by_marker.setdefault(max(ends, key=lambda s: (len(s) > 2, not s.isalnum(), len(s))),
                                          []).append(t)
            else:
                self.always.append(t)
        self.markers = Needles(self.by_marker)
        self.limit = limit
        self._forget()

    def _forget(self) -> None:
        self.wanted: dict[str, tuple[str, ...]] = {}  # pieces that are a marker word or hold a marker: the
        for word in self.by_word:                       # strings to look for in the text
            self.wanted[word] = self._strings(word)
        self.hit = set(self.wanted)
        self.known = set(self.hit)  # those and the pieces holding no marker

    def _strings(self, piece: str) -> tuple[str, ...]:
        found = [t for m in self.markers.present(piece) for t in self.by_marker[m]]
        return tuple(dict.fromkeys((*found, *self.by_word.get(piece, ()))))

    def present(self, text: str) -> set[str]:
        """The strings `text` holds (= Needles(needles).present(text))."""
        found = {t for t in self.always if t in text}
        words = text.split(" ")
        if not self.known.issuperset(words):  # new pieces: rare once warm
            new = set(words).difference(self.known)
            if len(self.known) + len(new) > self.limit:
                self._forget()
                new = set(words).difference(self.known)
            self._learn(new)
        hits = self.hit.intersection(words)  # two C-level passes over the words, no set of them built
        if hits:
            found.update(t for piece in hits for t in self.wanted[piece] if t in text)
        return found

    def _learn(self, new: set[str]) -> None:
        self.known.update(new)
        # One scan over the new pieces joined by NUL (which no marker holds): a marker found there is in one
        # of them, and none found means none holds one.
        if self.markers.any_in("\x00".join(new)):
            for piece in new:
                strings = self._strings(piece)
                if strings:
                    self.wanted[piece] = strings
                    self.hit.add(piece)
