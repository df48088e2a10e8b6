"""Kotlin's query (kotlin.scm) matched by a walk of every subtree but terminals (parser/walk.py)."""

from __future__ import annotations

from parser.walkers import every_subtree, named_of, tokens_of

TYPE_CHECKING = False  # importing typing costs a hook several ms
if TYPE_CHECKING:
    from collections.abc import Iterator

    from tree_sitter import Node


# Kotlin: kotlin.scm's bare node types, the `companion` and `constructor` keywords (anonymous children, the
# query's "companion" @name), a type alias's name and the imported path. Classes and functions may sit in
# any expression (`object : Runnable { ... }`, a lambda), so every subtree is walked but terminals. Compiling
# kotlin.scm costs a cold hook ~9.8 ms (more than a bare interpreter's 7.6 ms).
_KT_CAPTURES = {"class_declaration": "definition.class", "object_declaration": "definition.object",
                "function_declaration": "definition.function", "property_declaration": "definition.const_property"}
_KT_KEYWORDS = {"companion_object": ("companion", "definition.object"),
                "secondary_constructor": ("constructor", "definition.method")}
_KT_LEAVES = frozenset({"identifier", "line_comment", "block_comment", "number_literal", "float_literal",
                        "string_content", "escape_sequence", "label"})


def _kotlin_node(node: Node) -> Iterator[tuple[int, dict[str, list[Node]]]]:
    """The matches of kotlin.scm's patterns whose top node is `node`."""
    kind = node.type
    capture = _KT_CAPTURES.get(kind)
    if capture is not None:
        yield 0, {capture: [node]}
    elif kind in _KT_KEYWORDS:
        keyword, capture = _KT_KEYWORDS[kind]
        for token in tokens_of(node, keyword):
            yield 0, {capture: [node], "name": [token]}
    elif kind == "type_alias":
        for name in node.children_by_field_name("type"):
            if name.type == "identifier":
                yield 0, {"definition.type": [node], "name": [name]}
    elif kind == "import":
        for path in named_of(node, "qualified_identifier"):
            yield 0, {"import": [path]}


# The node types _kotlin_node yields anything for.
_KT_KINDS = frozenset({*_KT_CAPTURES, *_KT_KEYWORDS, "type_alias", "import"})
matches = every_subtree(_kotlin_node, _KT_LEAVES, _KT_KINDS)
