"""Swift's query (swift.scm) matched by a walk of every subtree but terminals (parser/walk.py)."""

from __future__ import annotations

from parser.walkers import every_subtree, named_of, tokens_of

TYPE_CHECKING = False  # importing typing costs a hook several ms
if TYPE_CHECKING:
    from collections.abc import Iterator

    from tree_sitter import Node


# Swift: swift.scm's bare node types, names by field, the `init` and `deinit` keywords (anonymous children)
# and the imported module. Types and functions may sit in closures and expressions, so every subtree is walked
# but terminals (an identifier that is a contextual keyword, `async`, holds that keyword: no named child).
# Compiling swift.scm costs a cold hook ~15.8 ms (twice a bare interpreter's 7.6 ms).
_SW_CAPTURES = {"class_declaration": "definition.class", "function_declaration": "definition.function",
                "property_declaration": "definition.swift_property"}
_SW_KEYWORDS = {"init_declaration": "init", "deinit_declaration": "deinit"}
_SW_NAMED = {"protocol_declaration": (None, "definition.protocol"),
             "protocol_function_declaration": ("simple_identifier", "definition.method"),
             "typealias_declaration": ("type_identifier", "definition.type")}
_SW_LEAVES = frozenset({"simple_identifier", "type_identifier", "comment", "multiline_comment", "integer_literal",
                        "real_literal", "hex_literal", "oct_literal", "bin_literal", "line_str_text",
                        "str_escaped_char", "nil_literal", "raw_str_end_part", "raw_str_part"})


def _swift_node(node: Node) -> Iterator[tuple[int, dict[str, list[Node]]]]:
    """The matches of swift.scm's patterns whose top node is `node`."""
    kind = node.type
    capture = _SW_CAPTURES.get(kind)
    if capture is not None:
        yield 0, {capture: [node]}
    elif kind in _SW_NAMED:
        node_type, capture = _SW_NAMED[kind]
        for name in node.children_by_field_name("name"):
            if name.type == node_type if node_type else name.is_named and name.type != "ERROR":
                yield 0, {capture: [node], "name": [name]}
    elif kind in _SW_KEYWORDS:
        for token in tokens_of(node, _SW_KEYWORDS[kind]):
            yield 0, {"definition.method": [node], "name": [token]}
    elif kind == "import_declaration":
        for module in named_of(node, "identifier"):
            yield 0, {"import": [module]}


# The node types _swift_node yields anything for.
_SW_KINDS = frozenset({*_SW_CAPTURES, *_SW_NAMED, *_SW_KEYWORDS, "import_declaration"})
matches = every_subtree(_swift_node, _SW_LEAVES, _SW_KINDS)
