"""Captures of a node-types-only tags query, found by walking the tree instead of compiling the query.

C++'s query is thirteen bare node types, yet compiling it against the C++ grammar costs 9-17 ms, paid by
every Read hook that outlines a C++ file it has not seen. For such a query (every pattern `(type) @capture`,
or `(type field: (_) @import)`) a walk of the tree finds the same nodes in ~1-2 ms: it reads the patterns
from the language's .scm file, so the query stays the one description of what is captured, and it skips
subtrees that hold no definition (expressions, argument and parameter lists, literals).
"""

from __future__ import annotations

import os

from parser.grammars import QUERY_DIR

TYPE_CHECKING = False  # importing typing costs a hook several ms
if TYPE_CHECKING:
    from collections.abc import Iterator

    from tree_sitter import Node

# Languages whose query is walked rather than compiled (their .scm holds only the two simple forms; C's
# query names fields, and compiles in ~3 ms).
WALKED = frozenset({"cpp"})

# Subtrees that never hold a captured node: leaves, literals, expressions and the lists inside a signature.
# (A lambda in a function body may declare a local `using _TL = ...` or class: the query lists it, the walk
# does not; in 400 libstdc++ and LLVM headers that is the only difference, two aliases in ranges_algo.h.)
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

_patterns: dict[str, tuple[dict[str, str], dict[str, str]]] = {}


def _read_patterns(language: str) -> tuple[dict[str, str], dict[str, str]]:
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


def matches(root: Node, language: str) -> Iterator[tuple[int, dict[str, list[Node]]]]:
    """What `QueryCursor(query).matches(root)` yields for the language's query, in document order."""
    captures, imports = _read_patterns(language)
    stack = [root]
    while stack:
        node = stack.pop()
        kind = node.type
        capture = captures.get(kind)
        if capture is not None:
            yield 0, {capture: [node]}
        field = imports.get(kind)
        if field is not None:
            target = node.child_by_field_name(field)
            if target is not None:
                yield 0, {"import": [target]}
        children = [c for c in node.named_children if c.type not in _SKIP]
        children.reverse()
        stack.extend(children)
