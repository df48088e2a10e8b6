"""Scala's query (scala.scm) matched by a walk of every subtree but terminals (parser/walk.py)."""

from __future__ import annotations

from parser.walkers import every_subtree

TYPE_CHECKING = False  # importing typing costs a hook several ms
if TYPE_CHECKING:
    from collections.abc import Iterator

    from tree_sitter import Node


# Scala: scala.scm's bare node types (definitions nest in blocks, lambdas, `new { ... }`), every subtree walked
# but terminals. Compiling scala.scm costs a cold hook ~13.6 ms (a bare interpreter ~7.6 ms).
_SCALA_CAPTURES = {
    "class_definition": "definition.class", "object_definition": "definition.object",
    "trait_definition": "definition.trait", "enum_definition": "definition.enum",
    "function_definition": "definition.function", "function_declaration": "definition.function",
    "type_definition": "definition.type", "given_definition": "definition.constant",
    "val_definition": "definition.val", "import_declaration": "import",
}
_SCALA_LEAVES = frozenset({"identifier", "type_identifier", "operator_identifier", "comment", "block_comment",
                           "integer_literal", "floating_point_literal", "boolean_literal", "character_literal",
                           "null_literal", "escape_sequence"})


def _scala_node(node: Node) -> Iterator[tuple[int, dict[str, list[Node]]]]:
    capture = _SCALA_CAPTURES.get(node.type)
    if capture is not None:
        yield 0, {capture: [node]}


# The node types _scala_node yields anything for.
matches = every_subtree(_scala_node, _SCALA_LEAVES, frozenset(_SCALA_CAPTURES))
