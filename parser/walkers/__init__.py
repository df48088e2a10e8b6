"""Each language's query matched by a walk of its tree, its patterns written out (parser/walk.py says why):
one module per grammar, so a Read hook loads only its file's language's walk. Here: what they share."""

from __future__ import annotations

TYPE_CHECKING = False  # importing typing costs a hook several ms
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from tree_sitter import Node

    from parser.walk import Spans


def every_subtree(visit: Callable[[Node], Iterator[tuple[int, dict[str, list[Node]]]]],
                  leaves: frozenset[str], kinds: frozenset[str] | None = None,
                  ) -> Callable[[Node], Iterator[tuple[int, dict[str, list[Node]]]]]:
    """A walk that visits every named node but `leaves`, in document order (the order the query's matches
    come in). With `kinds`, the only node types `visit` yields anything for, it is called for those alone: a
    generator made and run for each of the other nodes, most of them, cost a walk ~25% (a 1,000-line JavaScript
    file: 1.6 -> 1.2 ms)."""
    def walk(root: Node, within: Spans | None = None) -> Iterator[tuple[int, dict[str, list[Node]]]]:
        if within is not None:  # (see parser/walk.py Spans)
            yield from walk_within(root, within)
            return
        stack = [root]
        while stack:
            node = stack.pop()
            if kinds is None or node.type in kinds:
                yield from visit(node)
            children = [c for c in node.named_children if c.type not in leaves]
            children.reverse()
            stack.extend(children)

    def walk_within(root: Node, within: Spans) -> Iterator[tuple[int, dict[str, list[Node]]]]:
        stack = [root]
        while stack:
            node = stack.pop()
            if within.holds_start(node):
                yield from walk(node)
                continue
            if kinds is None or node.type in kinds:
                yield from visit(node)
            children = [c for c in within.children(node) if c.is_named and c.type not in leaves]
            children.reverse()
            stack.extend(children)
    return walk


def field_of(node: Node, name: str, node_type: str | None = None) -> Node | None:
    """The child in field `name`, if it is of `node_type` or (None) any named node but an error: what the
    query's `name: (node_type)` or `name: (_)` matches."""
    child = node.child_by_field_name(name)
    if child is None or (child.type != node_type if node_type else not child.is_named or child.type == "ERROR"):
        return None
    return child


def tokens_of(node: Node, keyword: str) -> list[Node]:
    """The anonymous `keyword` tokens among `node`'s children: what a query's `(type "keyword" @name)` captures."""
    return [child for child in node.children if child.type == keyword and not child.is_named]


def named_of(node: Node, *node_types: str) -> list[Node]:
    """`node`'s named children of these types: what a query's `(type (child_type) @capture)` captures."""
    return [child for child in node.named_children if child.type in node_types]
