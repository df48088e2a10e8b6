"""Rust's query (rust.scm) matched by a walk of every subtree but leaves (parser/walk.py)."""

from __future__ import annotations

from parser.walkers import every_subtree, field_of

TYPE_CHECKING = False  # importing typing costs a hook several ms
if TYPE_CHECKING:
    from collections.abc import Iterator

    from tree_sitter import Node


# Rust: rust.scm's patterns (names by field, impl types, constants of a module, impl or trait body). Items may sit
# in any block (a function's, a const's), so every subtree is walked but leaves: terminals, and a macro's token
# trees (tokens, never items). Compiling rust.scm costs a cold hook ~7 ms; this walk ~1 ms on a 700-line file.
_RUST_NAMED = {"function_item": ("identifier", "definition.function"),
               "function_signature_item": ("identifier", "definition.function"),
               "struct_item": ("type_identifier", "definition.struct"),
               "union_item": ("type_identifier", "definition.struct"),
               "enum_item": ("type_identifier", "definition.enum"),
               "trait_item": ("type_identifier", "definition.trait"),
               "type_item": ("type_identifier", "definition.type"),
               "mod_item": ("identifier", "definition.module"),
               "macro_definition": ("identifier", "definition.macro")}
_RUST_CONSTANTS = frozenset({"const_item", "static_item"})
_RUST_LEAVES = frozenset({"identifier", "type_identifier", "field_identifier", "shorthand_field_identifier",
                          "primitive_type", "line_comment", "block_comment", "doc_comment", "string_literal",
                          "raw_string_literal", "char_literal", "integer_literal", "float_literal", "boolean_literal",
                          "negative_literal", "escape_sequence", "string_content", "self", "crate", "super",
                          "metavariable", "mutable_specifier", "shebang", "token_tree", "token_tree_pattern"})


def _rust_node(node: Node) -> Iterator[tuple[int, dict[str, list[Node]]]]:
    """The matches of rust.scm's patterns whose top node is `node`."""
    kind = node.type
    named = _RUST_NAMED.get(kind)
    if named is not None:
        name = field_of(node, "name", named[0])
        if name is not None:
            yield 0, {named[1]: [node], "name": [name]}
        if kind == "trait_item":  # its body's associated types
            body = field_of(node, "body", "declaration_list")
            for child in body.named_children if body is not None else ():
                if child.type == "associated_type":
                    name = field_of(child, "name", "type_identifier")
                    if name is not None:
                        yield 0, {"definition.type": [child], "name": [name]}
    elif kind == "impl_item":
        yield from _impl(node)
    elif kind == "source_file" or kind == "declaration_list":  # a module's, an impl's or a trait's constants
        for child in node.named_children:
            if child.type in _RUST_CONSTANTS:
                name = field_of(child, "name", "identifier")
                if name is not None:
                    yield 0, {"definition.constant": [child], "name": [name]}
    elif kind == "use_declaration":
        target = field_of(node, "argument")
        if target is not None:
            yield 0, {"import": [target]}
    elif kind == "extern_crate_declaration":
        target = field_of(node, "name", "identifier")
        if target is not None:
            yield 0, {"import": [target]}


def _impl(node: Node) -> Iterator[tuple[int, dict[str, list[Node]]]]:
    """An impl block's two patterns: named after its type's name (`Foo`, `Foo<T>`, `a::Foo`, `a::Foo<T>`), and
    after the whole type (any type: `&T`, `[T]`); a plain `Foo` matches both."""
    whole = field_of(node, "type")
    if whole is None:
        return
    inner: Node | None = whole
    if whole.type == "generic_type":
        inner = field_of(whole, "type")
    if inner is not None and inner.type == "scoped_type_identifier":
        inner = field_of(inner, "name", "type_identifier")
    if inner is not None and inner.type == "type_identifier":
        yield 0, {"definition.impl": [node], "name": [inner]}
    yield 0, {"definition.impl": [node], "name": [whole]}


# The node types _rust_node yields anything for.
_RUST_KINDS = frozenset({*_RUST_NAMED, "impl_item", "source_file", "declaration_list", "use_declaration",
                         "extern_crate_declaration"})
matches = every_subtree(_rust_node, _RUST_LEAVES, _RUST_KINDS)
