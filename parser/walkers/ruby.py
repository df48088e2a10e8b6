"""Ruby's query (ruby.scm) matched by a walk of every subtree but terminals (parser/walk.py)."""

from __future__ import annotations

from parser.walkers import every_subtree

TYPE_CHECKING = False  # importing typing costs a hook several ms
if TYPE_CHECKING:
    from collections.abc import Iterator

    from tree_sitter import Node


# Ruby: ruby.scm's bare node types and constants assigned anywhere (`FOO = ...` in a class, a block, a method),
# so every subtree is walked but terminals. Compiling ruby.scm costs a cold hook ~4 ms (5.60x a bare
# interpreter, docs/benchmarks.md).
_RB_CAPTURES = {"class": "definition.class", "module": "definition.module", "method": "definition.method",
                "singleton_method": "definition.method", "alias": "definition.method"}
_RB_LEAVES = frozenset({"identifier", "constant", "comment", "integer", "float", "complex", "rational",
                        "string_content", "escape_sequence", "simple_symbol", "hash_key_symbol", "instance_variable",
                        "class_variable", "global_variable", "self", "nil", "true", "false", "character",
                        "heredoc_beginning", "heredoc_content", "heredoc_end"})


def _ruby_node(node: Node) -> Iterator[tuple[int, dict[str, list[Node]]]]:
    """The matches of ruby.scm's patterns whose top node is `node`."""
    capture = _RB_CAPTURES.get(node.type)
    if capture is not None:
        yield 0, {capture: [node]}
    elif node.type == "assignment":
        left = node.child_by_field_name("left")
        if left is not None and left.type == "constant":
            yield 0, {"definition.constant": [node], "name": [left]}


# The node types _ruby_node yields anything for.
_RB_KINDS = frozenset({*_RB_CAPTURES, "assignment"})
matches = every_subtree(_ruby_node, _RB_LEAVES, _RB_KINDS)
