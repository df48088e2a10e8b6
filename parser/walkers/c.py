"""C's query (c.scm) matched by a walk of every subtree but leaves (parser/walk.py)."""

from __future__ import annotations

from parser.extract import anonymous_enum
from parser.walkers import every_subtree, field_of

TYPE_CHECKING = False  # importing typing costs a hook several ms
if TYPE_CHECKING:
    from collections.abc import Iterator

    from tree_sitter import Node


# C: c.scm's patterns (bare node types, names and bodies by field, `#define` with a value). Struct, union and
# enum definitions may sit anywhere (a function body, a cast, a parameter), so every subtree is walked but
# leaves. Compiling c.scm costs a cold hook ~2.1 ms; this walk 0.6-1.2 ms on the machine's C headers.
_C_BARE = {"function_definition": "definition.function", "declaration": "definition.function",
           "type_definition": "definition.type"}
_C_NAMED = {"struct_specifier": "definition.struct", "union_specifier": "definition.struct",
            "enum_specifier": "definition.enum"}
_C_LEAVES = frozenset({"identifier", "type_identifier", "field_identifier", "statement_identifier", "primitive_type",
                       "sized_type_specifier", "type_qualifier", "storage_class_specifier", "number_literal",
                       "string_literal", "char_literal", "concatenated_string", "system_lib_string", "comment",
                       "preproc_arg", "escape_sequence", "string_content", "true", "false", "null"})


def _c_node(node: Node) -> Iterator[tuple[int, dict[str, list[Node]]]]:
    """The matches of c.scm's patterns whose top node is `node`."""
    kind = node.type
    capture = _C_BARE.get(kind)
    if capture is not None:
        yield 0, {capture: [node]}
        return
    capture = _C_NAMED.get(kind)
    if capture is not None:
        name = field_of(node, "name", "type_identifier")
        if name is not None and field_of(node, "body") is not None:
            yield 0, {capture: [node], "name": [name]}
        elif kind == "enum_specifier" and node.child_by_field_name("name") is None and anonymous_enum(node):
            yield 0, {capture: [node]}  # `enum { A, B };` of the file: named by its keyword (extract._named)
    elif kind == "preproc_def" or kind == "preproc_function_def":
        name = field_of(node, "name", "identifier")
        if name is not None:
            yield 0, {"definition.constant" if kind == "preproc_def" else "definition.macro": [node], "name": [name]}
    elif kind == "preproc_include":
        target = field_of(node, "path")
        if target is not None:
            yield 0, {"import": [target]}


# The node types _c_node yields anything for.
_C_KINDS = frozenset({*_C_BARE, *_C_NAMED, "preproc_def", "preproc_function_def", "preproc_include"})
matches = every_subtree(_c_node, _C_LEAVES, _C_KINDS)
