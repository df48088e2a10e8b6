"""Outline a source file: its definitions as signatures with line ranges.

One tags-style query per language (parser/queries/<language>.scm) captures
``@definition.<kind>`` nodes with their ``@name`` and ``@import`` nodes; this
module turns the matches into nested symbols. It never raises: anything it
cannot outline becomes a ``parsed=False`` summary.
"""

from __future__ import annotations

from collections import Counter

from parser import extract, walk
from parser.grammars import GrammarUnavailable, get_parser, get_query, ts
from parser.languages import language_for_path, refine_language
from parser.preprocess import mask_macros

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from typing import Any

    from tree_sitter import Node

# Average bytes per line above which a file is taken as minified/generated:
# tree-sitter would parse it, but line numbers would carry no information.
MINIFIED_BYTES_PER_LINE = 300
MINIFIED_MIN_BYTES = 1000

# Kinds whose nested functions are methods.
_TYPE_KINDS = frozenset({"class", "struct", "interface", "trait", "impl", "enum",
                         "object", "protocol", "extension", "record"})
# Names captured from a keyword token, because the construct has no name.
_KEYWORD_NAMES = frozenset({"init", "deinit", "companion", "constructor", "operator"})

# When one name is captured by several patterns, the most specific kind wins:
# constant < class/function (generic patterns) < interface, enum, method...
_KIND_RANK = {"constant": 0, "variable": 0, "class": 1, "function": 1}


_SYMBOL_FIELDS = ("name", "kind", "start_line", "end_line", "signature", "parent", "doc", "depth")
_OUTLINE_FIELDS = ("path", "language", "total_lines", "imports", "symbols", "parsed", "error_ratio",
                   "total_bytes", "reason", "import_count")


# Plain classes, not dataclasses: importing dataclasses (and the inspect module it pulls in) costs a
# hook that outlines a file ~8 ms.
class Symbol:
    __slots__ = _SYMBOL_FIELDS

    def __init__(self, name: str, kind: str, start_line: int, end_line: int, signature: str,
                 parent: str | None = None, doc: str | None = None, depth: int = 0) -> None:
        self.name = name
        self.kind = kind
        self.start_line = start_line  # 1-based, inclusive
        self.end_line = end_line  # 1-based, inclusive
        self.signature = signature
        self.parent = parent  # qualified name of the enclosing symbol
        self.doc = doc
        self.depth = depth

    @property
    def qualified_name(self) -> str:
        return f"{self.parent}.{self.name}" if self.parent else self.name

    def to_json(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in _SYMBOL_FIELDS}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Symbol) and self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dataclass it replaces

    def __repr__(self) -> str:
        return f"Symbol({self.kind} {self.qualified_name} L{self.start_line}-{self.end_line})"


class Outline:
    __slots__ = _OUTLINE_FIELDS

    def __init__(self, path: str, language: str | None, total_lines: int, imports: list[str] | None = None,
                 symbols: list[Symbol] | None = None, parsed: bool = False, error_ratio: float = 0.0,
                 total_bytes: int = 0, reason: str | None = None, import_count: int = 0) -> None:
        self.path = path
        self.language = language
        self.total_lines = total_lines
        self.imports = imports if imports is not None else []  # "module" or "module (3)"
        self.symbols = symbols if symbols is not None else []
        self.parsed = parsed
        self.error_ratio = error_ratio  # share of lines touched by ERROR / MISSING nodes
        self.total_bytes = total_bytes
        self.reason = reason  # why parsed is False
        self.import_count = import_count  # import statements/specs seen, before dedup

    def render(self, max_chars: int | None = None) -> str:
        from parser.render import render

        return render(self, max_chars)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {f: getattr(self, f) for f in _OUTLINE_FIELDS}
        data["imports"] = list(self.imports)
        data["symbols"] = [s.to_json() for s in self.symbols]
        data["error_ratio"] = round(self.error_ratio, 4)
        return data

    def __repr__(self) -> str:
        return f"Outline({self.path!r}, {self.language}, {len(self.symbols)} symbols, parsed={self.parsed})"


def _line_count(source: bytes) -> int:
    if not source:
        return 0
    return source.count(b"\n") + (0 if source.endswith(b"\n") else 1)


def _fallback(path: str, language: str | None, source: bytes, reason: str) -> Outline:
    return Outline(path=path, language=language, total_lines=_line_count(source),
                   total_bytes=len(source), parsed=False, reason=reason)


def _error_rows(root: Node) -> set[int]:
    """Rows touched by ERROR nodes (whole span) and MISSING nodes.

    Iterative: pathological nesting must not hit the recursion limit."""
    rows: set[int] = set()
    stack = [root]
    while stack:
        for child in stack.pop().children:
            if child.is_error:
                rows.update(range(child.start_point.row, child.end_point.row + 1))
            elif child.is_missing:
                rows.add(child.start_point.row)
            elif child.has_error:
                stack.append(child)
    return rows


def _error_ratio(root: Node, total_lines: int) -> float:
    if not root.has_error:
        return 0.0
    if root.is_error:  # nothing parsed at all
        return 1.0
    return min(1.0, len(_error_rows(root)) / max(total_lines, 1))


def _end_line(node: Node) -> int:
    end = node.end_point
    # A node ending at column 0 ends with the previous line's newline.
    if end.column == 0 and end.row > node.start_point.row:
        return end.row
    return end.row + 1


def _node_text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", errors="replace")


def _preference(node: Node, kind: str) -> tuple[int, int]:
    # Same name captured twice: the more specific kind wins, then the larger
    # node (with its decorators / export keyword) over the bare one.
    return _KIND_RANK.get(kind, 2), node.end_byte - node.start_byte


def _clean_name(text: str, language: str) -> str:
    name = " ".join(text.split()).strip("'\"`")
    if name.startswith("[") and name[1:2] in ("'", '"', "`"):
        name = name.strip("[]").strip("'\"`")  # JS get ['async'] () -> async
    if language == "cpp":
        # Foo<T>::bar -> bar, get<int> -> get, A::operator== -> operator== (ctags and readers use the
        # bare name); a conversion operator keeps its type: `operator B<T>() const &` -> operator B<T>.
        at = name.find("operator")
        if at >= 0 and (at == 0 or not (name[at - 1].isalnum() or name[at - 1] == "_")):
            name = name[at:]
            paren = name.find("(", len("operator") + (2 if name.startswith("operator()") else 0))
            return name[:paren].rstrip() if paren > len("operator") else name
        name = _strip_template_args(name).rsplit("::", 1)[-1]
    return name


def _strip_template_args(name: str) -> str:
    """`Foo<A<B>>::bar<int>` -> `Foo::bar`."""
    if "<" not in name:
        return name
    out, depth = [], 0
    for ch in name:
        if ch == "<":
            depth += 1
        elif ch == ">" and depth:
            depth -= 1
        elif not depth:
            out.append(ch)
    return "".join(out).strip()


def _collect(root: Node, language: str) -> tuple[list[tuple[Node, Node, str]], list[Node]]:
    """Run the language's query: (definition, name, kind) triples and imports."""
    by_name: dict[tuple[int, int], tuple[Node, Node, str]] = {}
    imports: list[Node] = []
    # C/C++: the query's node types found by a walk (compiling the C++ query costs a hook 9-17 ms).
    found = (walk.matches(root, language) if language in walk.WALKED
             else ts().QueryCursor(get_query(language)).matches(root))
    for _pattern, caps in found:
        if "import" in caps:
            imports.extend(caps["import"])
        names = caps.get("name")
        for cap, nodes in caps.items():
            if not cap.startswith("definition."):
                continue
            node, kind = nodes[0], cap[len("definition."):]
            if kind in extract.RESOLVED_KINDS:
                resolved = extract.resolve(node, kind)
                if resolved is None:
                    continue
                node, name, kind = resolved
            else:
                name = names[0] if names else extract.name_of(node)
                if name is None:
                    continue
                if not names:
                    kind = extract.refine_kind(node, kind)
            key = (name.start_byte, name.end_byte)
            seen = by_name.get(key)
            if seen is not None and _preference(seen[0], seen[2]) >= _preference(node, kind):
                continue
            by_name[key] = (node, name, kind)
    if language == "ruby":
        imports.extend(extract.ruby_requires(root))
    # One definition captured with nested names (Rust `impl Foo<T>` gives
    # both `Foo<T>` and `Foo`): keep the innermost name.
    by_def: dict[tuple[int, int, str], tuple[Node, Node, str]] = {}
    for entry in by_name.values():
        node, name, kind = entry
        key = (node.start_byte, node.end_byte, kind)
        seen = by_def.get(key)
        if seen is not None:
            s_name = seen[1]
            if s_name.start_byte <= name.start_byte and name.end_byte <= s_name.end_byte:
                by_def[key] = entry
                continue
            if name.start_byte <= s_name.start_byte and s_name.end_byte <= name.end_byte:
                continue
            by_def[(node.start_byte, node.end_byte, f"{kind}@{name.start_byte}")] = entry
            continue
        by_def[key] = entry
    return list(by_def.values()), imports


def _summarise_imports(nodes: list[Node]) -> list[str]:
    counts = Counter(extract.import_name(n) for n in nodes)
    return [name if count == 1 else f"{name} ({count})" for name, count in counts.items()]


def _build_symbols(entries: list[tuple[Node, Node, str]], source: bytes,
                   language: str) -> list[Symbol]:
    entries.sort(key=lambda e: (e[0].start_byte, -e[0].end_byte))
    symbols: list[Symbol] = []
    stack: list[tuple[int, Symbol]] = []  # (end_byte, symbol) of open ancestors
    for node, name_node, kind in entries:
        while stack and (stack[-1][0] <= node.start_byte or stack[-1][0] < node.end_byte):
            stack.pop()
        parent = stack[-1][1] if stack else None
        if kind == "function" and parent is not None and parent.kind in _TYPE_KINDS:
            kind = "method"
        name = _clean_name(_node_text(name_node), language)
        start_line, end_line = node.start_point.row + 1, _end_line(node)
        if (parent is not None and parent.name == name and parent.start_line == start_line
                and parent.end_line == end_line):
            continue  # `x.run = function run() {}`: one symbol, not two
        # A keyword standing in for the name (`init`, `companion`) may sit
        # anywhere before the body; only a real name bounds the search.
        after = name_node.end_byte if name_node.type not in _KEYWORD_NAMES else node.start_byte
        body = extract.find_body(node, after)
        symbol = Symbol(
            name=name,
            kind=kind,
            start_line=start_line,
            end_line=end_line,
            signature=extract.signature(node, body, source, language),
            parent=parent.qualified_name if parent else None,
            doc=extract.doc_line(node, body, language),
            depth=len(stack),
        )
        symbols.append(symbol)
        stack.append((node.end_byte, symbol))
    return symbols


def outline_source(source: bytes, path: str, language: str | None = None) -> Outline:
    """Outline ``source`` (the file's bytes); ``language`` overrides detection."""
    try:
        if language is None:
            language = refine_language(language_for_path(path, head=source[:256]), path, source)
        if language is None:
            return _fallback(path, None, source, "no grammar for this file type")
        total_lines = _line_count(source)
        if (len(source) >= MINIFIED_MIN_BYTES
                and len(source) / max(total_lines, 1) > MINIFIED_BYTES_PER_LINE):
            return _fallback(path, language, source, "minified or generated (very long lines)")
        try:
            parser = get_parser(language)
            if language not in walk.WALKED:
                get_query(language)
        except GrammarUnavailable:
            return _fallback(path, language, source, f"grammar for {language} not installed")
        # C/C++: parse a copy with derailing macros blanked (same offsets).
        tree = parser.parse(mask_macros(source) if language in ("c", "cpp") else source)
        root = tree.root_node
        entries, import_nodes = _collect(root, language)
        error_ratio = _error_ratio(root, total_lines)
        return Outline(
            path=path,
            language=language,
            total_lines=total_lines,
            imports=_summarise_imports(import_nodes),
            symbols=_build_symbols(entries, source, language),
            parsed=True,
            error_ratio=error_ratio,
            total_bytes=len(source),
            import_count=len(import_nodes),
        )
    except Exception as exc:  # never break the caller (a hook): summarise instead
        return _fallback(path, language, source, f"outline failed: {type(exc).__name__}: {exc}")


def outline_file(path: str) -> Outline:
    """Read ``path`` and outline it; unreadable files give a fallback summary."""
    try:
        with open(path, "rb") as fh:
            source = fh.read()
    except OSError as exc:
        return _fallback(path, None, b"", f"unreadable: {exc.strerror or exc}")
    return outline_source(source, path)
