"""Python's query (python.scm) matched by a walk of statement containers (parser/walk.py)."""

from __future__ import annotations

TYPE_CHECKING = False  # importing typing costs a hook several ms
if TYPE_CHECKING:
    from collections.abc import Iterator

    from tree_sitter import Node


# Python: definitions are statements, so only statement containers are walked (and any subtree holding a
# parse error, where tree-sitter may have put a statement anywhere). Compiling python.scm costs a cold hook
# ~5 ms (a cold hook's CPU: 45.3 -> 40.4 ms, docs/benchmarks.md); tests/parser/test_outline_edge_cases.py
# checks the walk against the query.
_PY_CONTAINERS = frozenset({
    "module", "block", "decorated_definition", "class_definition", "function_definition", "if_statement",
    "elif_clause", "else_clause", "for_statement", "while_statement", "try_statement", "except_clause",
    "except_group_clause", "finally_clause", "with_statement", "match_statement", "case_clause", "ERROR",
})
_PY_DEFINITIONS = {"class_definition": "definition.class", "function_definition": "definition.function"}
_UPPER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_CONSTANT_TAIL = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _python_constant(name: bytes) -> bool:
    """The query's `#match? @name "^_*[A-Z][A-Z0-9_]*$"`, by string methods."""
    text = name.decode("utf-8", "replace").lstrip("_")
    return bool(text) and text[0] in _UPPER and all(c in _CONSTANT_TAIL for c in text)


def _python_named(node: Node, capture: str) -> Iterator[tuple[int, dict[str, list[Node]]]]:
    name = node.child_by_field_name("name")
    if name is not None and name.type == "identifier":
        yield 0, {capture: [node], "name": [name]}


def _python_statement(node: Node) -> Iterator[tuple[int, dict[str, list[Node]]]]:
    """The matches of python.scm's patterns whose top node is `node`."""
    kind = node.type
    capture = _PY_DEFINITIONS.get(kind)
    if capture is not None:
        yield from _python_named(node, capture)
    elif kind == "decorated_definition":
        inner = node.child_by_field_name("definition")
        capture = _PY_DEFINITIONS.get(inner.type) if inner is not None else None
        if capture is not None:
            for _, caps in _python_named(inner, capture):
                yield 0, {capture: [node], "name": caps["name"]}
    elif kind == "expression_statement":
        top = node.parent is not None and node.parent.type == "module"
        for assignment in node.named_children:
            left = assignment.child_by_field_name("left") if assignment.type == "assignment" else None
            if left is None or left.type != "identifier":
                continue
            if top and _python_constant(left.text or b""):
                yield 0, {"definition.constant": [assignment], "name": [left]}
            right = assignment.child_by_field_name("right")
            if right is not None and right.type == "lambda":
                yield 0, {"definition.function": [assignment], "name": [left]}
    elif kind == "type_alias_statement":
        left = node.child_by_field_name("left")
        for name in left.named_children if left is not None and left.type == "type" else ():
            if name.type == "identifier":
                yield 0, {"definition.type": [node], "name": [name]}
    elif kind == "import_statement":
        for name in node.children_by_field_name("name"):
            if name.type == "aliased_import":
                name = name.child_by_field_name("name")
                if name is None or name.type != "dotted_name":
                    continue
            if name.type == "dotted_name":
                yield 0, {"import": [name]}
    elif kind == "import_from_statement":
        module = node.child_by_field_name("module_name")
        if module is not None:
            yield 0, {"import": [module]}
    elif kind == "future_import_statement":
        yield 0, {"import": [node]}


def matches(root: Node) -> Iterator[tuple[int, dict[str, list[Node]]]]:
    """Every statement of every container is matched; only containers are opened."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type not in _PY_CONTAINERS and not node.has_error:
            yield from _python_statement(node)
            continue
        yield from _python_statement(node)
        children = node.named_children
        children.reverse()
        stack.extend(children)
