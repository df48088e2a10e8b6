"""PHP's query (php.scm) matched by a walk of every subtree but leaves (parser/walk.py)."""

from __future__ import annotations

from parser.walkers import every_subtree, named_of

TYPE_CHECKING = False  # importing typing costs a hook several ms
if TYPE_CHECKING:
    from collections.abc import Iterator

    from tree_sitter import Node


# PHP: functions, classes and `require` may sit inside expressions (closures, anonymous classes, `$x = require
# 'a.php'`), so every subtree is walked but leaves. Compiling php.scm costs a cold hook ~5.6 ms (2.9 ms of it
# for any query on this grammar); this walk 0.6-2.5 ms on most files. A test checks it against the query.
_PHP_NAMED = {"class_declaration": "definition.class", "interface_declaration": "definition.interface",
              "trait_declaration": "definition.trait", "enum_declaration": "definition.enum",
              "function_definition": "definition.function", "method_declaration": "definition.method"}
_PHP_INCLUDES = frozenset({"require_once_expression", "require_expression", "include_once_expression",
                           "include_expression"})
_PHP_LEAVES = frozenset({"name", "variable_name", "string", "encapsed_string", "integer", "float", "comment",
                         "text", "boolean", "null", "qualified_name", "namespace_name", "string_content",
                         "heredoc", "nowdoc", "primitive_type", "named_type", "visibility_modifier"})


def _php_node(node: Node) -> Iterator[tuple[int, dict[str, list[Node]]]]:
    """The matches of php.scm's patterns whose top node is `node`."""
    kind = node.type
    capture = _PHP_NAMED.get(kind)
    if capture is not None or kind == "namespace_definition":
        name = node.child_by_field_name("name")
        if name is not None and name.type == ("name" if capture else "namespace_name"):
            yield 0, {capture or "definition.module": [node], "name": [name]}
    elif kind == "const_declaration":
        for element in named_of(node, "const_element"):
            for name in named_of(element, "name"):
                yield 0, {"definition.constant": [node], "name": [name]}
    elif kind == "namespace_use_clause":
        for name in named_of(node, "qualified_name", "name"):
            yield 0, {"import": [name]}
    elif kind in _PHP_INCLUDES:
        for target in node.named_children:
            if target.type != "ERROR":  # the query's (_) does not match an error
                yield 0, {"import": [target]}



# The node types _php_node yields anything for.
_PHP_KINDS = frozenset({*_PHP_NAMED, "namespace_definition", "const_declaration", "namespace_use_clause",
                        *_PHP_INCLUDES})
matches = every_subtree(_php_node, _PHP_LEAVES, _PHP_KINDS)
