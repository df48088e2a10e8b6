"""Captures of a node-types-only tags query, found by walking the tree instead of compiling the query.

C++'s query is thirteen bare node types, yet compiling it against the C++ grammar costs 9-17 ms, paid by
every Read hook that outlines a C++ file it has not seen. For such a query (every pattern `(type) @capture`,
or `(type field: (_) @import)`) a walk of the tree finds the same nodes in ~1-2 ms: it reads the patterns
from the language's .scm file, so the query stays the one description of what is captured, and it skips
subtrees that hold no definition (expressions, argument and parameter lists, literals). Python's, PHP's and
JavaScript's queries have fields, nested patterns and predicates: their patterns are written out in
parser/walkers/ (one module per grammar, loaded for its language only), and a test checks each walk against
the compiled query.
"""

from __future__ import annotations

import os

from parser.grammars import QUERY_DIR, get_language

TYPE_CHECKING = False  # importing typing costs a hook several ms
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from tree_sitter import Node

# Subtrees that never hold a captured node: leaves, literals, expressions and the lists inside a signature.
# (A lambda in a function body may declare a local `using _TL = ...` or class: the query lists it, the walk
# does not; in 400 libstdc++ and LLVM headers that is the only difference, two aliases in ranges_algo.h. The
# aliases are found by their text: lambda_aliases.)
_SKIP = frozenset({
    "identifier", "type_identifier", "field_identifier", "namespace_identifier", "primitive_type",
    "qualified_identifier", "number_literal", "string_literal", "raw_string_literal", "char_literal",
    "concatenated_string", "comment", "true", "false", "null", "nullptr", "this",
    "argument_list", "parameter_list", "template_argument_list", "template_parameter_list",
    "initializer_list", "field_initializer_list", "type_descriptor", "type_qualifier", "sized_type_specifier",
    "call_expression", "binary_expression", "unary_expression", "field_expression", "assignment_expression",
    "conditional_expression", "cast_expression", "pointer_expression", "subscript_expression",
    "parenthesized_expression", "update_expression", "sizeof_expression", "new_expression",
    "delete_expression", "template_function", "expression_statement", "return_statement", "condition_clause",
    "break_statement", "continue_statement", "goto_statement", "throw_statement", "co_return_statement",
    "static_assert_declaration", "attribute_declaration", "attribute_specifier", "noexcept", "trailing_return_type",
    "requires_clause", "enumerator_list", "preproc_arg", "system_lib_string",
})

# Subtrees that hold no captured node unless they hold a parse error: a declarator's parts, type names, base
# classes (their parameter lists, template arguments and expressions are in _SKIP). MemorySSA.h: 1,094 nodes
# entered -> ~700.
_DECLARATORS = frozenset({
    "function_declarator", "pointer_declarator", "reference_declarator", "parenthesized_declarator",
    "array_declarator", "operator_name", "destructor_name", "template_type", "base_class_clause",
})

_patterns: dict[str, tuple[dict[str, str], dict[str, str]]] = {}


def read_patterns(language: str) -> tuple[dict[str, str], dict[str, str]]:
    """(node type -> capture name, node type -> field captured as @import) from the language's .scm."""
    if language not in _patterns:
        captures: dict[str, str] = {}
        imports: dict[str, str] = {}
        with open(os.path.join(QUERY_DIR, f"{language}.scm"), encoding="utf-8") as fh:
            for raw in fh:
                line = raw.split(";", 1)[0].strip()
                if not line:
                    continue
                head, _, capture = line.rpartition(" @")
                bare = head.startswith("(") and head.endswith(")") and " " not in head
                if bare and capture.startswith("definition."):
                    captures[head[1:-1]] = capture
                elif line.endswith(": (_) @import)") and line.count(" ") == 3:
                    node_type, field = line[1:].split(" ", 2)[:2]
                    imports[node_type] = field.rstrip(":")
                else:
                    raise ValueError(f"{language}.scm: not a node-type pattern: {line}")
        _patterns[language] = captures, imports
    return _patterns[language]


def matches(root: Node, language: str, within: Spans | None = None) -> Iterator[tuple[int, dict[str, list[Node]]]]:
    """What `QueryCursor(query).matches(root)` yields for the language's query, in document order; with `within`
    (C's walk only), those of the subtrees overlapping its ranges (Spans, below)."""
    written = _WRITTEN.get(language)
    if written is not None:
        module, name = written
        # __import__ with a fromlist returns the submodule (importlib costs a hook ~1 ms: see parser/__init__.py)
        walker = getattr(__import__(f"parser.walkers.{module}", fromlist=("_",)), name)
        yield from walker(root) if within is None else walker(root, within)
        return
    for capture, node, _name, _parent in captures(root, language):
        yield 0, {capture: [node]}


def captures(root: Node, language: str, parent: Node | None = None) -> Iterator[tuple[str, Node, None, Node | None]]:
    """(capture name, node, None, the node's parent) for each capture of a node-type query (C++'s), in document
    order: what parser/outline.py's _captures yields (None: the @name, which such a query has not). The parent
    comes free with the walk, where node.parent costs ~0.6 us (tree-sitter walks down from the root to find it).
    A TreeCursor moves through the tree without a list of new Node objects per node: MemorySSA.h's walk 1.4 ->
    0.93 ms (with _DECLARATORS). Node types are compared by id (_kind_ids): node.type makes a new str for each
    node read. A node of _SKIP (a comment, an identifier, an expression: half of those read) is passed over
    first: it is never captured (0.72 -> 0.64 ms). `parent`: root's, when the caller knows it."""
    captured, imports, skip, declarators = _kind_ids(language)
    cursor = root.walk()
    parents: list[Node | None] = [parent]  # the ancestors of the cursor's node
    while True:
        node = cursor.node
        if node.is_named:  # else a token: neither captured nor entered
            kind = node.kind_id
            if kind not in skip:
                capture = captured.get(kind)
                if capture is not None:
                    yield capture, node, None, parents[-1]
                field = imports.get(kind)
                if field is not None:
                    target = node.child_by_field_name(field)
                    if target is not None:
                        yield "import", target, None, node
                if (kind not in declarators or node.has_error) and cursor.goto_first_child():
                    parents.append(node)
                    continue
        # on to the node after this one's subtree, in this loop: a function call a node cost the walk ~10%
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return
            parents.pop()


def captures_within(root: Node, language: str, within: Spans) -> Iterator[tuple[str, Node, None, Node | None]]:
    """captures() of the subtrees that overlap `within` (Spans, below): the same for every node that
    starts in one of its ranges. libstdc++'s algorithmfwd.h: its other `#if` branches' one line walked in ~0.02
    ms, the whole tree ~0.5."""
    captured, imports, skip, declarators = _kind_ids(language)
    stack: list[tuple[Node, Node | None]] = [(root, None)]
    while stack:
        node, parent = stack.pop()
        if within.holds_start(node):
            yield from captures(node, language, parent)
            continue
        if not node.is_named:  # as captures() takes each node
            continue
        kind = node.kind_id
        if kind in skip:
            continue
        capture = captured.get(kind)
        if capture is not None:
            yield capture, node, None, parent
        field = imports.get(kind)
        if field is not None:
            target = node.child_by_field_name(field)
            if target is not None:
                yield "import", target, None, node
        if kind not in declarators or node.has_error:
            stack.extend((child, node) for child in reversed(within.children(node)))


class Spans:
    """Sorted, disjoint byte ranges (start, end) of a text, for a walk that needs only the definitions starting
    in them (parser/outline.py _other_branches: the rows a configuration of the `#if`s brings back): it passes
    over a subtree that overlaps none, and walks whole a node that starts in one. What it yields for the nodes
    starting in a range is what the whole walk yields for them: a capture that shares a name with such a node
    (and so may win over it in _collect) holds it or is held by it, and is walked either way."""

    __slots__ = ("starts", "ends")

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        self.starts = [start for start, _end in spans]
        self.ends = [end for _start, end in spans]

    def holds_start(self, node: Node) -> bool:
        """Whether `node` starts in a range."""
        at = node.start_byte
        i = _above(self.starts, at) - 1
        return i >= 0 and at < self.ends[i]

    def children(self, node: Node) -> list[Node]:
        """`node`'s children that overlap a range, in order: found with a cursor from each range's start (a
        namespace of 200 declarations around one range: 2 Node objects made, not 200)."""
        start, end = node.start_byte, node.end_byte
        out: list[Node] = []
        for i in range(_above(self.ends, start), len(self.starts)):
            if self.starts[i] >= end:
                break
            cursor = node.walk()
            if cursor.goto_first_child_for_byte(self.starts[i]) is None:
                continue
            while True:
                child = cursor.node
                if child is None or child.start_byte >= self.ends[i]:
                    break
                if not out or child.start_byte > out[-1].start_byte or child.end_byte > out[-1].end_byte:
                    out.append(child)
                if not cursor.goto_next_sibling():
                    break
        return out


def _above(values: list[int], at: int) -> int:
    """How many of the sorted `values` are `at` or less (bisect_right). Not the `bisect` module: loading its C
    part costs a cold Read ~0.13 ms (see parser/extract.py _bisect_left)."""
    low, high = 0, len(values)
    while low < high:
        middle = (low + high) // 2
        if values[middle] <= at:
            low = middle + 1
        else:
            high = middle
    return low


def lambda_aliases(root: Node, text: bytes, found: set[int]) -> list[tuple[Node, Node, str]]:
    """C++ type aliases (`using Start = std::decay_t<decltype(start)>;`) the walk did not find (not in `found`,
    start bytes of what it did): those inside a lambda, in an expression it passes over (_SKIP), as _collect
    gives them. Found by their text, so that a file without one costs a byte search: no walk of expressions."""
    out: list[tuple[Node, Node, str]] = []
    at = text.find(b"using ")
    while at >= 0:
        if at not in found and (at == 0 or text[at - 1] in b" \t\n{;") and _alias_at(text, at + 6):
            node = root.descendant_for_byte_range(at, at + 5)
            alias = node.parent if node is not None else None
            if alias is not None and alias.type == "alias_declaration":
                name = alias.child_by_field_name("name")
                if name is not None:
                    out.append((alias, name, "type"))
        at = text.find(b"using ", at + 6)
    return out


def _alias_at(text: bytes, at: int) -> bool:
    """Whether `text` at `at` reads `Name =` (an alias), not `namespace x;` or `Base::f;` (a using declaration)."""
    end = at
    while end < len(text) and (text[end] == 95 or text[end:end + 1].isalnum()):  # `_` or an ASCII letter or digit
        end += 1
    while end < len(text) and text[end] in b" \t":
        end += 1
    return end > at and text[end:end + 1] == b"=" and text[end + 1:end + 2] != b"="


_ids: dict[str, tuple[dict[int, str], dict[int, str], frozenset[int], frozenset[int]]] = {}


def _kind_ids(language: str) -> tuple[dict[int, str], dict[int, str], frozenset[int], frozenset[int]]:
    """read_patterns' captures and imports, _SKIP and _DECLARATORS, by the grammar's ids of those named node types
    (what node.kind_id gives; a name the grammar lacks is left out: no node has it)."""
    if language not in _ids:
        grammar = get_language(language)

        def ids(names: Iterable[str]) -> dict[int, str]:
            found = {name: grammar.id_for_node_kind(name, True) for name in names}
            return {kind: name for name, kind in found.items() if kind is not None}

        captured, imports = read_patterns(language)
        # a captured type is never skipped (captures reads _SKIP first)
        _ids[language] = ({k: captured[n] for k, n in ids(captured).items()},
                          {k: imports[n] for k, n in ids(imports).items()},
                          frozenset(ids(_SKIP.difference(captured, imports))), frozenset(ids(_DECLARATORS)))
    return _ids[language]


# Each language's walk, its query's patterns written out rather than read (C++'s are read: see captures): the
# module of parser/walkers/ and its function, imported on first use (all in one module, the other languages'
# walks cost a C++ outline's import ~0.4 ms).
_WRITTEN = {"python": ("python", "matches"), "php": ("php", "matches"), "javascript": ("ecmascript", "javascript"),
            "c": ("c", "matches"), "typescript": ("ecmascript", "typescript"), "tsx": ("ecmascript", "typescript"),
            "ruby": ("ruby", "matches"), "csharp": ("csharp", "matches"), "scala": ("scala", "matches"),
            "java": ("java", "matches"), "kotlin": ("kotlin", "matches"), "swift": ("swift", "matches"),
            "rust": ("rust", "matches")}
# Languages whose query is walked rather than compiled: C++ (its .scm holds only the two simple forms, read
# by read_patterns) and those above. Lua's, Bash's and Go's are still compiled (go.scm in ~1.4 ms: a walk of a
# 1,500-line Go file cost ~3 ms more than the compiled query's matching, a 300-line one ~0.5 ms less).
NODE_TYPES = frozenset({"cpp"})  # the languages of captures()
WALKED = frozenset({*NODE_TYPES, *_WRITTEN})
