"""Captures of a node-types-only tags query, found by walking the tree instead of compiling the query.

C++'s query is thirteen bare node types, yet compiling it against the C++ grammar costs 9-17 ms, paid by
every Read hook that outlines a C++ file it has not seen. For such a query (every pattern `(type) @capture`,
or `(type field: (_) @import)`) a walk of the tree finds the same nodes in ~1-2 ms: it reads the patterns
from the language's .scm file, so the query stays the one description of what is captured, and it skips
subtrees that hold no definition (expressions, argument and parameter lists, literals). Python's, PHP's and
JavaScript's queries have fields, nested patterns and predicates: their patterns are written out below
(_python, _php, _javascript, _c, _typescript, _ruby, _csharp, _scala, _java), and a test checks each walk
against the compiled query.
"""

from __future__ import annotations

import os

from parser.grammars import QUERY_DIR

TYPE_CHECKING = False  # importing typing costs a hook several ms
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from tree_sitter import Node

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

# Subtrees that hold no captured node unless they hold a parse error: a declarator's parts, type names, base
# classes (their parameter lists, template arguments and expressions are in _SKIP). MemorySSA.h: 1,094 nodes
# entered -> ~700.
_DECLARATORS = frozenset({
    "function_declarator", "pointer_declarator", "reference_declarator", "parenthesized_declarator",
    "array_declarator", "operator_name", "destructor_name", "template_type", "base_class_clause",
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
    written = _WRITTEN.get(language)
    if written is not None:
        yield from written(root)
        return
    for capture, node, _parent in captures(root, language):
        yield 0, {capture: [node]}


def captures(root: Node, language: str) -> Iterator[tuple[str, Node, Node | None]]:
    """(capture name, node, the node's parent) for each capture of a node-type query (C++'s), in document order.
    The parent comes free with the walk, where node.parent costs ~0.6 us (tree-sitter walks down from the root
    to find it). A TreeCursor moves through the tree without a list of new Node objects per node: MemorySSA.h's
    walk 1.4 -> 0.93 ms (with _DECLARATORS)."""
    captured, imports = _read_patterns(language)
    cursor = root.walk()
    parents: list[Node | None] = [None]  # the ancestors of the cursor's node
    while True:
        node = cursor.node
        enter = False  # a token: neither captured nor entered
        if node.is_named:
            kind = node.type
            capture = captured.get(kind)
            if capture is not None:
                yield capture, node, parents[-1]
            field = imports.get(kind)
            if field is not None:
                target = node.child_by_field_name(field)
                if target is not None:
                    yield "import", target, node
            enter = kind not in _SKIP and (kind not in _DECLARATORS or node.has_error)
        if enter and cursor.goto_first_child():
            parents.append(node)
            continue
        # on to the node after this one's subtree, in this loop: a function call a node cost the walk ~10%
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return
            parents.pop()


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


def _python(root: Node) -> Iterator[tuple[int, dict[str, list[Node]]]]:
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
        for element in _named_of(node, "const_element"):
            for name in _named_of(element, "name"):
                yield 0, {"definition.constant": [node], "name": [name]}
    elif kind == "namespace_use_clause":
        for name in _named_of(node, "qualified_name", "name"):
            yield 0, {"import": [name]}
    elif kind in _PHP_INCLUDES:
        for target in node.named_children:
            if target.type != "ERROR":  # the query's (_) does not match an error
                yield 0, {"import": [target]}


def _every_subtree(visit: Callable[[Node], Iterator[tuple[int, dict[str, list[Node]]]]],
                   leaves: frozenset[str]) -> Callable[[Node], Iterator[tuple[int, dict[str, list[Node]]]]]:
    """A walk that visits every named node but `leaves`, in document order (the order the query's matches
    come in)."""
    def walk(root: Node) -> Iterator[tuple[int, dict[str, list[Node]]]]:
        stack = [root]
        while stack:
            node = stack.pop()
            yield from visit(node)
            children = [c for c in node.named_children if c.type not in leaves]
            children.reverse()
            stack.extend(children)
    return walk


_php = _every_subtree(_php_node, _PHP_LEAVES)


# JavaScript (not TypeScript, whose query differs): functions are values anywhere, so every subtree is walked
# but leaves. Compiling its query costs a cold hook ~3.1-3.8 ms; this walk ~1-2 ms on a 1,000-line file.
_JS_CAPTURES = {
    "function_declaration": "definition.function", "generator_function_declaration": "definition.function",
    "function_expression": "definition.function", "generator_function": "definition.function",
    "class_declaration": "definition.class", "class": "definition.class", "method_definition": "definition.method",
    "variable_declarator": "definition.declarator", "assignment_expression": "definition.assignment",
    "pair": "definition.pair", "field_definition": "definition.field",
}
_JS_LEAVES = frozenset({"identifier", "property_identifier", "shorthand_property_identifier", "string", "number",
                        "comment", "regex", "true", "false", "null", "undefined", "this", "super",
                        "statement_identifier", "private_property_identifier", "string_fragment", "escape_sequence",
                        "hash_bang_line", "jsx_text"})


def _string_fragment(string: Node | None) -> Node | None:
    if string is None or string.type != "string":
        return None
    return next((c for c in string.named_children if c.type == "string_fragment"), None)


def _ecmascript_node(captures: dict[str, str]) -> Callable[[Node], Iterator[tuple[int, dict[str, list[Node]]]]]:
    """A visitor yielding the matches of ecmascript.scm's patterns (imports, `require`) and of `captures`, the
    bare node types of the language's own query, whose top node is the node visited."""
    def visit(node: Node) -> Iterator[tuple[int, dict[str, list[Node]]]]:
        capture = captures.get(node.type)
        if capture is not None:
            yield 0, {capture: [node]}
        else:
            yield from _ecmascript_imports(node)
    return visit


def _ecmascript_imports(node: Node) -> Iterator[tuple[int, dict[str, list[Node]]]]:
    kind = node.type
    if kind == "import_statement":
        fragment = _string_fragment(node.child_by_field_name("source"))
        if fragment is not None:
            yield 0, {"import": [fragment]}
    elif kind == "call_expression":  # require('x'): the query's (#eq? @_require "require")
        function, arguments = node.child_by_field_name("function"), node.child_by_field_name("arguments")
        if (function is not None and function.type == "identifier" and function.text == b"require"
                and arguments is not None and arguments.type == "arguments" and arguments.named_child_count):
            fragment = _string_fragment(arguments.named_children[0])
            if fragment is not None:
                yield 0, {"_require": [function], "import": [fragment]}


_javascript = _every_subtree(_ecmascript_node(_JS_CAPTURES), _JS_LEAVES)


def _typescript(root: Node) -> Iterator[tuple[int, dict[str, list[Node]]]]:
    """TypeScript's and TSX's query: ecmascript.scm's patterns but JavaScript's class field, and typescript.scm's
    bare node types (read from the file, like C++'s). Compiling it costs a cold hook ~4-5 ms (5.41x a bare
    interpreter, docs/benchmarks.md)."""
    if not _ts_walk:
        own = {k: v for k, v in _JS_CAPTURES.items() if k != "field_definition"}
        _ts_walk.append(_every_subtree(_ecmascript_node({**own, **_read_patterns("typescript")[0]}), _JS_LEAVES))
    yield from _ts_walk[0](root)


_ts_walk: list[Callable[[Node], Iterator[tuple[int, dict[str, list[Node]]]]]] = []


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


_ruby = _every_subtree(_ruby_node, _RB_LEAVES)


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


def _field(node: Node, name: str, node_type: str | None = None) -> Node | None:
    """The child in field `name`, if it is of `node_type` or (None) any named node but an error: what the
    query's `name: (node_type)` or `name: (_)` matches."""
    child = node.child_by_field_name(name)
    if child is None or (child.type != node_type if node_type else not child.is_named or child.type == "ERROR"):
        return None
    return child


def _tokens(node: Node, keyword: str) -> list[Node]:
    """The anonymous `keyword` tokens among `node`'s children: what a query's `(type "keyword" @name)` captures."""
    return [child for child in node.children if child.type == keyword and not child.is_named]


def _named_of(node: Node, *node_types: str) -> list[Node]:
    """`node`'s named children of these types: what a query's `(type (child_type) @capture)` captures."""
    return [child for child in node.named_children if child.type in node_types]


def _c_node(node: Node) -> Iterator[tuple[int, dict[str, list[Node]]]]:
    """The matches of c.scm's patterns whose top node is `node`."""
    kind = node.type
    capture = _C_BARE.get(kind)
    if capture is not None:
        yield 0, {capture: [node]}
        return
    capture = _C_NAMED.get(kind)
    if capture is not None:
        name = _field(node, "name", "type_identifier")
        if name is not None and _field(node, "body") is not None:
            yield 0, {capture: [node], "name": [name]}
    elif kind == "preproc_def" or kind == "preproc_function_def":
        name = _field(node, "name", "identifier")
        if name is not None and (kind == "preproc_function_def" or _field(node, "value") is not None):
            yield 0, {"definition.constant" if kind == "preproc_def" else "definition.macro": [node], "name": [name]}
    elif kind == "preproc_include":
        target = _field(node, "path")
        if target is not None:
            yield 0, {"import": [target]}


_c = _every_subtree(_c_node, _C_LEAVES)


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
        for token in _tokens(node, "operator"):
            yield 0, {"definition.method": [node], "name": [token]}
    elif kind == "using_directive":  # (using_directive (_) @import): any named child but an error
        for target in node.named_children:
            if target.type != "ERROR":
                yield 0, {"import": [target]}


_csharp = _every_subtree(_csharp_node, _CS_LEAVES)


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


_scala = _every_subtree(_scala_node, _SCALA_LEAVES)


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
        name = _field(node, "name", "identifier")
        if name is not None:
            yield 0, {capture: [node], "name": [name]}
    elif kind == "field_declaration":
        if any(c.type == "modifiers" and _java_static_final(c) for c in node.named_children):
            for declarator in node.children_by_field_name("declarator"):
                name = _field(declarator, "name", "identifier") if declarator.type == "variable_declarator" else None
                if name is not None:
                    yield 0, {"definition.constant": [node], "name": [name]}
    elif kind == "import_declaration":
        for target in _named_of(node, "scoped_identifier"):
            yield 0, {"import": [target]}


_java = _every_subtree(_java_node, _JAVA_LEAVES)


# Kotlin: kotlin.scm's bare node types, the `companion` and `constructor` keywords (anonymous children, the
# query's "companion" @name), a type alias's name and the imported path. Classes and functions may sit in
# any expression (`object : Runnable { ... }`, a lambda), so every subtree is walked but terminals. Compiling
# kotlin.scm costs a cold hook ~9.8 ms (more than a bare interpreter's 7.6 ms).
_KT_CAPTURES = {"class_declaration": "definition.class", "object_declaration": "definition.object",
                "function_declaration": "definition.function", "property_declaration": "definition.const_property"}
_KT_KEYWORDS = {"companion_object": ("companion", "definition.object"),
                "secondary_constructor": ("constructor", "definition.method")}
_KT_LEAVES = frozenset({"identifier", "line_comment", "block_comment", "number_literal", "float_literal",
                        "string_content", "escape_sequence", "label"})


def _kotlin_node(node: Node) -> Iterator[tuple[int, dict[str, list[Node]]]]:
    """The matches of kotlin.scm's patterns whose top node is `node`."""
    kind = node.type
    capture = _KT_CAPTURES.get(kind)
    if capture is not None:
        yield 0, {capture: [node]}
    elif kind in _KT_KEYWORDS:
        keyword, capture = _KT_KEYWORDS[kind]
        for token in _tokens(node, keyword):
            yield 0, {capture: [node], "name": [token]}
    elif kind == "type_alias":
        for name in node.children_by_field_name("type"):
            if name.type == "identifier":
                yield 0, {"definition.type": [node], "name": [name]}
    elif kind == "import":
        for path in _named_of(node, "qualified_identifier"):
            yield 0, {"import": [path]}


_kotlin = _every_subtree(_kotlin_node, _KT_LEAVES)


# Swift: swift.scm's bare node types, names by field, the `init` and `deinit` keywords (anonymous children)
# and the imported module. Types and functions may sit in closures and expressions, so every subtree is walked
# but terminals (an identifier that is a contextual keyword, `async`, holds that keyword: no named child).
# Compiling swift.scm costs a cold hook ~15.8 ms (twice a bare interpreter's 7.6 ms).
_SW_CAPTURES = {"class_declaration": "definition.class", "function_declaration": "definition.function",
                "property_declaration": "definition.swift_property"}
_SW_KEYWORDS = {"init_declaration": "init", "deinit_declaration": "deinit"}
_SW_NAMED = {"protocol_declaration": (None, "definition.protocol"),
             "protocol_function_declaration": ("simple_identifier", "definition.method"),
             "typealias_declaration": ("type_identifier", "definition.type")}
_SW_LEAVES = frozenset({"simple_identifier", "type_identifier", "comment", "multiline_comment", "integer_literal",
                        "real_literal", "hex_literal", "oct_literal", "bin_literal", "line_str_text",
                        "str_escaped_char", "nil_literal", "raw_str_end_part", "raw_str_part"})


def _swift_node(node: Node) -> Iterator[tuple[int, dict[str, list[Node]]]]:
    """The matches of swift.scm's patterns whose top node is `node`."""
    kind = node.type
    capture = _SW_CAPTURES.get(kind)
    if capture is not None:
        yield 0, {capture: [node]}
    elif kind in _SW_NAMED:
        node_type, capture = _SW_NAMED[kind]
        for name in node.children_by_field_name("name"):
            if name.type == node_type if node_type else name.is_named and name.type != "ERROR":
                yield 0, {capture: [node], "name": [name]}
    elif kind in _SW_KEYWORDS:
        for token in _tokens(node, _SW_KEYWORDS[kind]):
            yield 0, {"definition.method": [node], "name": [token]}
    elif kind == "import_declaration":
        for module in _named_of(node, "identifier"):
            yield 0, {"import": [module]}


_swift = _every_subtree(_swift_node, _SW_LEAVES)

# Each language's walk, its query's patterns written out rather than read (C++'s are read: see captures).
_WRITTEN = {"python": _python, "php": _php, "javascript": _javascript, "c": _c, "typescript": _typescript,
            "tsx": _typescript, "ruby": _ruby, "csharp": _csharp, "scala": _scala, "java": _java,
            "kotlin": _kotlin, "swift": _swift}
# Languages whose query is walked rather than compiled: C++ (its .scm holds only the two simple forms, read
# by _read_patterns) and those above. Lua's and Bash's are still compiled.
NODE_TYPES = frozenset({"cpp"})  # the languages of captures()
WALKED = frozenset({*NODE_TYPES, *_WRITTEN})
