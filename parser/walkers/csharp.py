"""C#'s query (csharp.scm) matched by a walk of every subtree but terminals (parser/walk.py)."""

from __future__ import annotations

from parser.walkers import every_subtree, tokens_of

TYPE_CHECKING = False  # importing typing costs a hook several ms
if TYPE_CHECKING:
    from collections.abc import Iterator

    from tree_sitter import Node


# C#: csharp.scm's bare node types, `operator` tokens and `using` targets. Local functions, lambdas and
# anonymous types sit in expressions, so every subtree is walked but terminals. Compiling csharp.scm costs a
# cold hook ~8.9 ms (a bare interpreter ~7.6 ms); a test checks the walk against the query.
_CS_CAPTURES = {
    "class_declaration": "definition.class", "interface_declaration": "definition.interface",
    "struct_declaration": "definition.struct", "enum_declaration": "definition.enum",
    "record_declaration": "definition.record", "delegate_declaration": "definition.type",
    "namespace_declaration": "definition.module", "file_scoped_namespace_declaration": "definition.module",
    "method_declaration": "definition.method", "constructor_declaration": "definition.method",
    "destructor_declaration": "definition.method", "property_declaration": "definition.property",
    "event_declaration": "definition.property", "local_function_statement": "definition.function",
    "field_declaration": "definition.const_field",
}
_CS_LEAVES = frozenset({"identifier", "comment", "integer_literal", "real_literal", "boolean_literal", "null_literal",
                        "predefined_type", "string_literal_content", "escape_sequence", "character_literal_content",
                        "verbatim_string_literal", "raw_string_content", "modifier"})


def _csharp_node(node: Node) -> Iterator[tuple[int, dict[str, list[Node]]]]:
    """The matches of csharp.scm's patterns whose top node is `node`."""
    kind = node.type
    capture = _CS_CAPTURES.get(kind)
    if capture is not None:
        yield 0, {capture: [node]}
    elif kind == "operator_declaration":  # (operator_declaration "operator" @name): the anonymous token
        for token in tokens_of(node, "operator"):
            yield 0, {"definition.method": [node], "name": [token]}
    elif kind == "using_directive":  # (using_directive (_) @import): any named child but an error
        for target in node.named_children:
            if target.type != "ERROR":
                yield 0, {"import": [target]}


# The node types _csharp_node yields anything for.
_CS_KINDS = frozenset({*_CS_CAPTURES, "operator_declaration", "using_directive"})
matches = every_subtree(_csharp_node, _CS_LEAVES, _CS_KINDS)
