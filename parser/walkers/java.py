"""Java's query (java.scm) matched by a walk of every subtree but terminals (parser/walk.py)."""

from __future__ import annotations

from parser.walkers import every_subtree, field_of, named_of

TYPE_CHECKING = False  # importing typing costs a hook several ms
if TYPE_CHECKING:
    from collections.abc import Iterator

    from tree_sitter import Node


# Java: java.scm's named declarations, `static final` fields and imports. Anonymous classes and local classes
# sit in expressions and blocks, so every subtree is walked but terminals. Compiling java.scm costs a cold
# hook ~2.5 ms.
_JAVA_NAMED = {
    "class_declaration": "definition.class", "interface_declaration": "definition.interface",
    "enum_declaration": "definition.enum", "record_declaration": "definition.record",
    "annotation_type_declaration": "definition.interface", "method_declaration": "definition.method",
    "constructor_declaration": "definition.method",
}
_JAVA_LEAVES = frozenset({"identifier", "type_identifier", "line_comment", "block_comment", "decimal_integer_literal",
                          "hex_integer_literal", "octal_integer_literal", "binary_integer_literal",
                          "decimal_floating_point_literal", "hex_floating_point_literal", "true", "false",
                          "null_literal", "character_literal", "string_fragment", "escape_sequence", "void_type",
                          "integral_type", "floating_point_type", "boolean_type"})


def _java_static_final(modifiers: Node) -> bool:
    """The query's `(modifiers "static" "final")`: an anonymous "static" token, then later a "final" one."""
    wanted = "static"
    for token in modifiers.children:
        if token.type == wanted and not token.is_named:
            if wanted == "final":
                return True
            wanted = "final"
    return False


def _java_node(node: Node) -> Iterator[tuple[int, dict[str, list[Node]]]]:
    """The matches of java.scm's patterns whose top node is `node`."""
    kind = node.type
    capture = _JAVA_NAMED.get(kind)
    if capture is not None:
        name = field_of(node, "name", "identifier")
        if name is not None:
            yield 0, {capture: [node], "name": [name]}
    elif kind == "field_declaration":
        if any(c.type == "modifiers" and _java_static_final(c) for c in node.named_children):
            for declarator in node.children_by_field_name("declarator"):
                name = field_of(declarator, "name", "identifier") if declarator.type == "variable_declarator" else None
                if name is not None:
                    yield 0, {"definition.constant": [node], "name": [name]}
    elif kind == "import_declaration":
        for target in named_of(node, "scoped_identifier"):
            yield 0, {"import": [target]}


# The node types _java_node yields anything for.
_JAVA_KINDS = frozenset({*_JAVA_NAMED, "field_declaration", "import_declaration"})
matches = every_subtree(_java_node, _JAVA_LEAVES, _JAVA_KINDS)
