"""Definitions found in source text without a parser: a definition's name from its header or outline row, the
definitions a line is in, and each definition's header (what staleness compares). Language-agnostic and
cheap: a header is a line that starts, after modifiers, with a defining keyword (def, class, func, fn, ...)."""

from __future__ import annotations

_SEPARATORS = str.maketrans(":={}[],;", "        ")  # str.translate, not re: an Edit hook never imports re
_KEYWORDS = frozenset("def class fn func function async pub static public private protected internal final abstract "
                      "override open const let var val struct enum trait impl interface type module mod object "
                      "export default extern unsafe inline virtual constexpr void fun suspend data sealed".split())
_DEFINES = ("def ", "class ", "func ", "fn ", "function ", "fun ", "impl ", "struct ", "interface ", "trait ",
            "enum ", "module ", "object ", "type ")
_PREFIXES = ("pub ", "pub(crate) ", "async ", "export ", "static ", "public ", "private ", "protected ",
             "abstract ", "final ", "override ", "default ", "unsafe ", "const ", "data ", "sealed ", "open ")
HEADER_LINES = 6  # a header spread over lines (a long parameter list) is read up to its end, this many at most
HEADER_CHARS = 400


def symbol_name(signature: str) -> str:
    """A definition's name from its outline signature or header line: the last word before the first `(`
    that is not a keyword, else the first such word ("class Foo(Base)" -> Foo, "func (r *T) Name(x int)" ->
    Name, "MAX = 3" -> MAX)."""
    sig = signature.split(" # ", 1)[0]
    if sig[:1].isdigit():  # an outline's names-only row ("4 constants: A, B"): no one definition
        return ""
    if sig.startswith(("func (", "(")):  # Go methods (an outline row drops `func`): the receiver comes first
        sig = sig[sig.find(")") + 1:]
    head, paren, _ = sig.partition("(")
    words = [w.strip("*&").split("<", 1)[0] for w in head.translate(_SEPARATORS).split()]
    names = [w for w in words if w and w not in _KEYWORDS and (w[0].isalpha() or w[0] == "_")]
    if not names:
        return ""
    return names[-1] if paren else names[0]


def _defined(body: str) -> str:
    """The name a stripped line defines, or ''."""
    head = body
    while head.startswith(_PREFIXES):
        head = head.split(" ", 1)[1]
    return symbol_name(head) if head.startswith(_DEFINES) else ""


def enclosing(data: bytes, line: int, limit: int = 400) -> list[str]:
    """The definitions whose header lines stand above `line` at a smaller indentation, innermost first,
    looking back at most `limit` lines: the symbols of a file the outline cache has no rows for."""
    lines = data.decode("utf-8", "replace").splitlines()[max(0, line - limit):line]
    names: list[str] = []
    indent = 1 << 30
    for text in reversed(lines):
        body = text.lstrip()
        depth = len(text) - len(body)
        if not body or depth >= indent and names:
            continue
        name = _defined(body)
        if name:
            names.append(name)
            indent = depth
            if depth == 0:
                break
    return names


def headers(text: str, wanted: set[str] | None = None) -> dict[str, str]:
    """Each definition's header, whitespace folded, by name (the first definition of a name wins); with
    `wanted`, only those names."""
    lines = text.splitlines()
    out: dict[str, str] = {}
    for i, line in enumerate(lines):
        body = line.lstrip()
        if not body or body[0] in "#/*\"'":
            continue
        name = _defined(body)
        if name and name not in out and (wanted is None or name in wanted):
            out[name] = _header(lines, i)
    return out


def _header(lines: list[str], i: int) -> str:
    """The header starting at line i, up to the line that opens its body (`:` or `{` at the end, or `;`)."""
    parts: list[str] = []
    for line in lines[i:i + HEADER_LINES]:
        parts.append(line.strip())
        if line.rstrip().endswith((":", "{", ";", "=>", "= {")) or "{" in line and line.count("(") <= line.count(")"):
            break
    return " ".join(" ".join(parts).split())[:HEADER_CHARS]
