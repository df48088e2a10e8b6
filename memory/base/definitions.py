"""Definitions found in source text without a parser: a definition's name from its header or outline row, the
definitions a line is in, and each definition's header (what staleness compares). Language-agnostic and
cheap: a header is a line that starts, after modifiers, with a defining keyword (def, class, func, fn, ...)."""

from __future__ import annotations

_SEPARATORS = str.maketrans(":={}[],;", "        ")  # str.translate, not re: an Edit hook never imports re
_KEYWORDS = frozenset("def class fn func function async pub static public private protected internal final abstract "
                      "override open const let var val struct enum trait impl interface type module mod object "
                      "export default extern unsafe inline virtual constexpr void fun suspend data sealed".split())
_DEFINES = ("def ", "class ", "func ", "fn ", "function ", "fun ", "impl ", "struct ", "interface ", "trait ",
            "enum ", "module ", "mod ", "object ", "type ")
_PREFIXES = ("pub ", "pub(crate) ", "async ", "export ", "static ", "public ", "private ", "protected ",
             "abstract ", "final ", "override ", "default ", "unsafe ", "const ", "data ", "sealed ", "open ")
HEADER_LINES = 40  # a header spread over lines (a long parameter list) is read up to its end, this many at most
HEADER_CHARS = 2000


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


def _defined(body: str, nested: bool = False) -> str:
    """The name a stripped line defines, or ''. Beside keyword headers: a function assigned to a name
    (`app.use = function use(fn) {`, `const f = async (a) => {`) and, `nested` (indented), a method written
    without a keyword (`render(props) {`)."""
    head = body
    while head.startswith(_PREFIXES):
        head = head.split(" ", 1)[1]
    if head.startswith("impl<") or head.startswith("impl ") and " for " in head:
        return _implemented(head)
    if head.startswith(_DEFINES):
        return symbol_name(head) or _contextual(head)
    return _assigned(head) or (_method(head) if nested else "")


def _contextual(head: str) -> str:
    """A definition named by a word that is a keyword elsewhere (`fn default()`, `def type(self)`)."""
    words = head.split("(", 1)[0].split()
    return words[-1] if len(words) > 1 and words[-1].isidentifier() and words[-1] not in _DEFINING else ""


_DEFINING = frozenset(d.strip() for d in _DEFINES)


def _implemented(head: str) -> str:
    """The type a Rust impl block is for: `impl<T> fmt::Display for Wrapper<T> {` -> Wrapper."""
    rest = head[4:]
    if rest.startswith("<"):  # the impl's own generics, which may nest
        depth = 0
        for at, c in enumerate(rest):
            depth += (c == "<") - (c == ">")
            if depth == 0:
                rest = rest[at + 1:]
                break
    rest = rest.split(" for ", 1)[-1].split("{", 1)[0].split(" where", 1)[0]
    return rest.strip().split("<", 1)[0].rsplit("::", 1)[-1].strip()


def _assigned(head: str) -> str:
    """`lhs = function name(`, `lhs = function (`, `lhs = (a) =>`, `lhs = async x =>`: the function's own name,
    else the last part of what it is assigned to."""
    lhs, eq, rhs = head.partition(" = ")
    for word in ("let ", "var ", "const "):
        lhs = lhs.removeprefix(word)
    if not eq or not lhs.replace(".", "").replace("_", "").replace("$", "").isalnum():
        return ""
    rhs = rhs.removeprefix("async ").lstrip()
    if rhs.startswith("function"):
        own = rhs[8:].lstrip("* ").split("(", 1)[0].strip()
        return own if own.isidentifier() else lhs.rsplit(".", 1)[-1]
    arrow = rhs.find("=>")
    if arrow > 0 and (rhs.startswith("(") or rhs[:arrow].strip().isidentifier()):
        return lhs.rsplit(".", 1)[-1]
    return ""


_CONTROL = frozenset("if for while switch catch return function else do with typeof new await yield super this "
                     "match loop unless elif except".split())


def _method(head: str) -> str:
    """`name(params) {`: a method without a keyword (JavaScript, TypeScript), not a call or a control line."""
    name, paren, rest = head.partition("(")
    params, close, after = rest.partition(")")
    if not paren or not close or not name.isidentifier() or name in _CONTROL:
        return ""
    if any(c in params for c in "'\"`(") or not after.lstrip().startswith(("{", ":")) or "{" not in after:
        return ""
    return name


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


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


def _opaque(body: str) -> bool:
    """A line that neither defines nor ends a scope: a comment, a decorator, or a closing bracket line (the
    `) -> None:` of a long header, the `}` of a block)."""
    return body[0] in "#/*\"'@)]}"


def scopes(data: bytes, line: int, limit: int = 400) -> list[str]:
    """The qualified names of the definitions `line` is in, innermost first ("Cart.total", "Cart"): each
    definition above it at a smaller indentation than every line between, looking back at most `limit`
    lines. A statement at a smaller indentation closes the scopes above it."""
    lines = data.decode("utf-8", "replace").splitlines()[max(0, line - limit):line]
    names: list[str] = []
    bound = -1
    for text in reversed(lines):
        body = text.lstrip()
        if not body:
            continue
        depth = _indent(text)
        if bound < 0:  # the line itself: a definition it starts is one the edit is in
            bound = depth + 1
        if depth >= bound or _opaque(body):
            continue
        bound = depth
        name = _defined(body, depth > 0)
        if name:
            names.append(name)
        if depth == 0:
            break
    return [".".join(reversed(names[i:])) for i in range(len(names))]


def headers(text: str, wanted: set[str] | None = None) -> dict[str, str]:
    """Each definition's header by qualified name ("Cart.total"), whitespace folded, comments left out, its
    decorators included; definitions of one name (overloads, a platform's variant) joined. With `wanted`,
    only those names."""
    lines = text.splitlines()
    out: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    for i, line in enumerate(lines):
        body = line.lstrip()
        if not body or _opaque(body):
            continue
        depth = _indent(line)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        name = _defined(body, depth > 0)
        if not name:
            continue
        stack.append((depth, name))
        qualified = ".".join(n for _, n in stack)
        if wanted is None or qualified in wanted:
            header = _decorators(lines, i, depth) + _header(lines, i)
            out[qualified] = f"{out[qualified]} | {header}" if qualified in out else header
    return out


def _decorators(lines: list[str], i: int, depth: int) -> str:
    """The decorator lines (`@...`, each maybe spread over lines) right above the header at line i."""
    start = i
    for j in range(i - 1, max(-1, i - HEADER_LINES), -1):
        body = lines[j].lstrip()
        if not body:
            break
        if _indent(lines[j]) == depth and body[0] == "@":
            start = j
        elif _indent(lines[j]) <= depth and body[0] not in ")]}":
            break
    return "".join(_code(t) + " " for t in lines[start:i])


def _code(line: str) -> str:
    """A line without its trailing comment (`# ...`, `// ...` outside quotes), stripped."""
    for mark in (" #", " //", "\t#", "\t//"):
        at = line.find(mark)
        while at >= 0:
            before = line[:at]
            if before.count('"') % 2 == 0 and before.count("'") % 2 == 0 and before.count("`") % 2 == 0:
                line = before
                break
            at = line.find(mark, at + 1)
    return line.strip()


def _header(lines: list[str], i: int) -> str:
    """The header starting at line i, up to what opens its body: after its parameters close, the first `{`,
    `=>`, `:` or `;` (a one-line body is not part of it)."""
    parts: list[str] = []
    for line in lines[i:i + HEADER_LINES]:
        parts.append(_code(line))
        text = " ".join(parts)
        at = _after_params(text)
        if at >= 0:
            for mark in ("{", "=>", ":", ";"):
                end = text.find(mark, at)
                if end >= 0:
                    return " ".join(text[:end + len(mark)].split())[:HEADER_CHARS]
    return " ".join(" ".join(parts).split())[:HEADER_CHARS]


def _after_params(text: str) -> int:
    """Where the header's brackets are all closed again after its first `(` (0 without one), or -1."""
    first = text.find("(", 4 if text.startswith("pub(") else 0)  # not the `pub(crate)` of a Rust item
    if text.startswith("pub(") and first >= 0:
        first = text.find("(", text.find(")") + 1)
    if first < 0:
        return 0
    depth = 0
    for at in range(first, len(text)):
        c = text[at]
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
            if depth == 0:
                return at + 1
    return -1
