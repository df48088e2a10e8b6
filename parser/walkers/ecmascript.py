"""JavaScript's and TypeScript's queries matched by a walk of every subtree but leaves (parser/walk.py)."""

from __future__ import annotations

from parser.walk import read_patterns
from parser.walkers import every_subtree

TYPE_CHECKING = False  # importing typing costs a hook several ms
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from tree_sitter import Node


# JavaScript (not TypeScript, whose query differs): functions are values anywhere, so every subtree is walked
# but leaves. Compiling its query costs a cold hook ~3.1-3.8 ms; this walk ~1-2 ms on a 1,000-line file.
_JS_CAPTURES = {
    "function_declaration": "definition.function", "generator_function_declaration": "definition.function",
    "function_expression": "definition.function", "generator_function": "definition.function",
    "class_declaration": "definition.class", "class": "definition.class", "method_definition": "definition.method",
    "variable_declarator": "definition.declarator", "assignment_expression": "definition.assignment",
    "pair": "definition.pair", "field_definition": "definition.field",
}
_JS_LEAVES = frozenset({"identifier", "property_identifier", "shorthand_property_identifier", "string", "number",
                        "comment", "regex", "true", "false", "null", "undefined", "this", "super",
                        "statement_identifier", "private_property_identifier", "string_fragment", "escape_sequence",
                        "hash_bang_line", "jsx_text"})


def _string_fragment(string: Node | None) -> Node | None:
    if string is None or string.type != "string":
        return None
    return next((c for c in string.named_children if c.type == "string_fragment"), None)


def _ecmascript_node(captures: dict[str, str]) -> Callable[[Node], Iterator[tuple[int, dict[str, list[Node]]]]]:
    """A visitor yielding the matches of ecmascript.scm's patterns (imports, `require`) and of `captures`, the
    bare node types of the language's own query, whose top node is the node visited."""
    def visit(node: Node) -> Iterator[tuple[int, dict[str, list[Node]]]]:
        capture = captures.get(node.type)
        if capture is not None:
            yield 0, {capture: [node]}
        else:
            yield from _ecmascript_imports(node)
    return visit


def _ecmascript_imports(node: Node) -> Iterator[tuple[int, dict[str, list[Node]]]]:
    kind = node.type
    if kind == "import_statement":
        fragment = _string_fragment(node.child_by_field_name("source"))
        if fragment is not None:
            yield 0, {"import": [fragment]}
    elif kind == "call_expression":  # require('x'): the query's (#eq? @_require "require")
        function, arguments = node.child_by_field_name("function"), node.child_by_field_name("arguments")
        if (function is not None and function.type == "identifier" and function.text == b"require"
                and arguments is not None and arguments.type == "arguments" and arguments.named_child_count):
            fragment = _string_fragment(arguments.named_children[0])
            if fragment is not None:
                yield 0, {"_require": [function], "import": [fragment]}


# The node types _ecmascript_imports yields anything for; a walk's visitor, those and its captures'.
_IMPORT_KINDS = frozenset({"import_statement", "call_expression"})
javascript = every_subtree(_ecmascript_node(_JS_CAPTURES), _JS_LEAVES, _IMPORT_KINDS.union(_JS_CAPTURES))


def typescript(root: Node) -> Iterator[tuple[int, dict[str, list[Node]]]]:
    """TypeScript's and TSX's query: ecmascript.scm's patterns but JavaScript's class field, and typescript.scm's
    bare node types (read from the file, like C++'s). Compiling it costs a cold hook ~4-5 ms (5.41x a bare
    interpreter, docs/benchmarks.md)."""
    if not _ts_walk:
        own = {k: v for k, v in _JS_CAPTURES.items() if k != "field_definition"}
        captures = {**own, **read_patterns("typescript")[0]}
        _ts_walk.append(every_subtree(_ecmascript_node(captures), _JS_LEAVES, _IMPORT_KINDS.union(captures)))
    yield from _ts_walk[0](root)


_ts_walk: list[Callable[[Node], Iterator[tuple[int, dict[str, list[Node]]]]]] = []
