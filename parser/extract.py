"""Text extraction from one definition node: signature, doc line, import name.

Grammar-agnostic on purpose: the node types listed here are the union over
the supported grammars, so adding a language rarely needs code here.
"""

from __future__ import annotations

TYPE_CHECKING = False  # importing typing costs a hook several ms
if TYPE_CHECKING:
    import re
    from collections.abc import Callable

    from tree_sitter import Node

# Nodes that hold a definition's body (everything after the signature).
BODY_TYPES = frozenset({
    "block", "statement_block", "class_body", "field_declaration_list",
    "declaration_list", "compound_statement", "enum_body", "interface_body",
    "enum_variant_list", "body_statement", "function_body", "template_body",
    "protocol_body", "enum_class_body", "object_declaration_body",
    "enumerator_list", "annotation_type_body", "record_declaration_body",
    "constructor_body", "do_block", "block_body",
    # C++ `Foo(int a) : a_(a) {`: the member initializers belong to the body, not the signature.
    "field_initializer_list",
})

# Nodes whose children are searched for the body: wrappers around the real
# definition (decorators, export, declarations holding a function value...).
# Anything else (parameters, type annotations, default values) is skipped so
# that a `{` or block inside them is not taken for the body.
WRAPPERS = frozenset({
    "decorated_definition", "export_statement", "lexical_declaration",
    "variable_declaration", "variable_declarator", "expression_statement",
    "assignment_expression", "assignment", "pair", "arrow_function",
    "function_expression", "generator_function", "class", "type_spec",
    "struct_type", "interface_type", "type_declaration", "ambient_declaration",
    "template_declaration", "field_definition", "public_field_definition",
    "lambda", "function_definition", "class_definition", "declaration",
    "property_declaration", "local_variable_declaration", "field_declaration",
    "variable_assignment", "function_declaration", "local_function",
    "assignment_statement", "expression_list",
})

# Siblings that may sit between a doc comment and the definition.
ATTRIBUTES = frozenset({
    "attribute_item", "decorator", "annotation", "marker_annotation",
    "attribute_list", "attribute", "modifiers", "inner_attribute_item",
})

# Go's grouped declarations lose their keyword at the spec level.
_SPEC_PREFIX = {"const_spec": "const ", "var_spec": "var ", "type_spec": "type ",
                "type_alias": "type "}

SIGNATURE_CAP = 200
VALUE_CAP = 100  # constants and other body-less definitions
DOC_CAP = 80
_SCAN_CAP = 2000  # bytes of a body-less node looked at for its signature
# A filter for a definition's text as written, before it is joined onto one line and cut (the memory plugin
# sets the privacy filter: memory/outline/screen.py): a value flattened or cut first can hide a secret from it.
# None: text as it is (benchmarks, other callers).
SCREEN: Callable[[str], str] | None = None


def screened(text: str) -> str:
    return text if SCREEN is None else SCREEN(text)


def _function_name(decl: Node | None) -> Node | None:
    """C/C++: from a declarator, follow declarator fields (pointer, reference...) down to a
    function_declarator and return its name; None if it declares no function."""
    for _ in range(6):
        if decl is None:
            return None
        if decl.type == "function_declarator":
            return decl.child_by_field_name("declarator")
        if decl.type == "operator_cast":  # `operator bool() const`: the whole node names it
            return decl
        inner = decl.child_by_field_name("declarator")
        if inner is None:  # reference_declarator has no field name
            inner = next((c for c in decl.named_children if c.type.endswith("declarator")), None)
        decl = inner
    return None


_DECLARATOR_OWNERS = frozenset({"function_definition", "declaration", "field_declaration"})


def name_and_kind(node: Node, kind: str, parent: Node | None = None) -> tuple[Node, str] | None:
    """The name node and kind of a definition captured without @name (the query's `kind`, or one it refines),
    None if it names nothing worth a row; `parent` is the node's parent if the caller has it (None: looked
    up, at ~0.6 us: see _EXPORTING).

    Some patterns capture only the definition node: a query naming a child
    of those nodes (Swift's function_declaration, C++'s declarators) takes
    tens of milliseconds to compile, and a hook compiles its query each run.
    """
    node_type = node.type
    decl = node.child_by_field_name("declarator") if node_type in _DECLARATOR_OWNERS else None
    if decl is not None:  # C/C++ (Scala's function_definition, C#'s field_declaration have no declarator)
        return _declared(node, node_type, decl, kind, parent)
    name = _named(node, node_type)
    return (name, refine_kind(node, kind)) if name is not None else None


def _declared(node: Node, node_type: str, decl: Node, kind: str, parent: Node | None) -> tuple[Node, str] | None:
    """C/C++: the name of a function definition, of a prototype or member declaration of the file's interface
    (in a function body `Foo bar(baz);` is usually a variable), or of a data member, a field (`std::set<int>
    *held_ GUARDED_BY(mu_);` -> held_; a variable's row would be noise)."""
    parent_type = None
    if node_type != "function_definition":
        parent = node.parent if parent is None else parent
        parent_type = parent.type if parent is not None else None
        if parent_type == "compound_statement" and _at_top(node) and parent is not None and _headless_body(parent):
            parent_type = "translation_unit"
        elif parent_type not in _DECLARATION_PARENTS or (
                parent_type in _CONDITIONALS and parent is not None and _in_body(node, parent)):
            return None
    function = _function_name(decl)
    if function is not None:
        return function, kind
    if node_type == "declaration" and (parent_type in _FILE_SCOPE or (
            parent_type == "ERROR" and _at_top(node) and parent is not None and _top_error(parent))):
        # a file's variable: a names-only row (in an ERROR at the top too: a file tree-sitter could not parse whole)
        name = variable_names(node)
        return (name[0], "variable") if name else None
    if node_type != "field_declaration" or parent_type != "field_declaration_list":
        return None
    field = _field_identifier(decl)
    return (field, "field") if field is not None else None


_CONDITIONALS = frozenset({"preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef"})


def _in_body(node: Node, parent: Node | None) -> bool:
    """Whether an indented declaration in an `#if` is in a function's body (`{` / `#ifdef X` / `\tuint64_t
    cur = ...;`: a local), not the file's. (One at the first column is taken for the file's unlooked: the
    ancestors' lookup costs ~1 us a node.)"""
    if node.start_point.column == 0:
        return False
    while parent is not None and parent.type in _CONDITIONALS:
        parent = parent.parent
    return parent is not None and parent.type == "compound_statement"


def _at_top(node: Node) -> bool:
    """Whether a declaration that a parse error left without its context reads as the file's: written at the
    first column (a function's locals are indented) and whole but for its value (`rb_gen(static UNUSED, tree_,
    ...)`, a macro call the grammar took for a declaration, holds an ERROR of its own among its names)."""
    return node.start_point.column == 0 and not any(child.is_error for child in node.children)


def _headless_body(block: Node) -> bool:
    """Whether a `{ ... }` block is the body of a file's function definition without a function's declarator: a
    line the grammar could not read took the block after it for a body (jemalloc's ctl.c: `MUTEX_PROF_MUTEXES` /
    `#undef OP` / `{NAME("reset"), ...}` made a "function" of the next 1,200 lines). What it holds is the file's."""
    owner = block.parent
    if owner is None or owner.type != "function_definition" or not owner.has_error:
        return False
    if _function_name(owner.child_by_field_name("declarator")) is not None:
        return False
    top = owner.parent
    return top is None or top.type in _FILE_SCOPE


def _top_error(node: Node) -> bool:
    """Whether an ERROR node is the whole file (the root): one tree-sitter could not parse at all. (An ERROR
    inside the file may be a function's body whose header broke: its declarations are locals.)"""
    return node.parent is None


def _named(node: Node, node_type: str) -> Node | None:
    """The name of a definition without a declarator: its `name` field, none for a forward declaration or a
    bare #define, a typedef's new type name."""
    if node_type in _NEEDS_BODY and node.child_by_field_name("body") is None:
        return None  # `struct Foo;`, `class Foo;`: a forward declaration
    if node_type == "type_definition":  # typedef ... Name; typedef int (*Name)(void); typedef char Name[4];
        decl = node.child_by_field_name("declarator")
        for _ in range(6):
            # A declarator the grammar reads as a built-in type is a name too: C headers that predate C11 or
            # C23 define `typedef uint_least16_t char16_t;`, `typedef unsigned char bool;` themselves.
            if decl is None or decl.type in ("type_identifier", "primitive_type"):
                return decl
            decl = decl.child_by_field_name("declarator") or next(
                (c for c in decl.named_children if c.type.endswith("declarator") or c.type == "type_identifier"),
                None)
        return None
    if node_type == "preproc_def" and include_guard(node):
        return None
    name = node.child_by_field_name("name")
    if name is None and node_type == "enum_specifier":  # `enum { A, B };` of a file: named by its keyword
        return anonymous_enum(node)
    return name


def include_guard(node: Node) -> bool:
    """Whether a C/C++ `#define` is its file's include guard: no value, the first thing in an `#ifndef` of its
    name (a flag without a value, `#define HAVE_DECLSPEC_DLL`, is a constant a reader looks for)."""
    if node.child_by_field_name("value") is not None:
        return False
    parent = node.parent
    if parent is None or parent.type != "preproc_ifdef" or parent.children[0].type != "#ifndef":
        return False
    tested, name = parent.child_by_field_name("name"), node.child_by_field_name("name")
    first = next((c for c in parent.named_children if c != tested and c.type != "comment"), None)
    return tested is not None and name is not None and first == node and tested.text == name.text


def anonymous_enum(node: Node) -> Node | None:
    """The `enum` keyword of a C/C++ enum without a name that stands alone in a file (`enum { A = 1, B };`: its
    members are the file's constants) or types a declaration (`enum { A, B } state;`), None for one inside a
    typedef (whose row names them)."""
    parent = node.parent
    if parent is None or parent.type not in _ENUM_SCOPE or node.child_by_field_name("body") is None:
        return None
    return node.children[0] if node.children and node.children[0].type == "enum" else None


def field_names(node: Node) -> list[Node]:
    """Every name a C++ data member declaration declares (`double x, y;`)."""
    found = (_field_identifier(d) for d in node.children_by_field_name("declarator"))
    return [name for name in found if name is not None]


# Where a C/C++ declaration that declares no function declares a variable of the file (not a member, a local).
_FILE_SCOPE = frozenset({"translation_unit", "declaration_list", "preproc_if", "preproc_ifdef", "preproc_else",
                         "preproc_elif", "preproc_elifdef", "linkage_specification"})


# Where an enum without a name gets a row (c.scm's patterns for it name the same parents): the file's, and one
# a declaration types (`enum { STATE_START, STATE_END } state;`, in a function too: a type a reader looks for).
_ENUM_SCOPE = frozenset({"translation_unit", "declaration_list", "preproc_if", "preproc_ifdef", "preproc_else",
                         "preproc_elif", "declaration"})


def variable_names(node: Node) -> list[Node]:
    """The names a C/C++ variable declaration declares (`static int a = 1, *b;`), none for an `extern` one (a
    declaration of another file's variable) or a declaration that declares a function."""
    if any(c.type == "storage_class_specifier" and c.text == b"extern" for c in node.children):
        return []
    names = []
    for decl in node.children_by_field_name("declarator"):
        for _ in range(6):
            if decl is None or decl.type in ("identifier", "function_declarator"):
                break
            decl = decl.child_by_field_name("declarator") or next(
                (c for c in decl.named_children if c.type.endswith("declarator") or c.type == "identifier"), None)
        if decl is not None and decl.type == "identifier":
            names.append(decl)
    return names


def _field_identifier(decl: Node | None) -> Node | None:
    for _ in range(6):
        if decl is None or decl.type == "field_identifier":
            return decl
        decl = decl.child_by_field_name("declarator") or next(
            (c for c in decl.named_children if c.type.endswith("declarator") or c.type == "field_identifier"), None)
    return None


# Where a C/C++ declaration declares something of the file's interface.
_DECLARATION_PARENTS = frozenset({
    "translation_unit", "declaration_list", "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif",
    "preproc_elifdef", "template_declaration", "field_declaration_list", "linkage_specification",
    "ERROR",  # a header tree-sitter could not parse whole: its prototypes are still prototypes
})
_NEEDS_BODY = frozenset({"class_specifier", "struct_specifier", "union_specifier", "enum_specifier"})


# JavaScript/TypeScript: values that make a variable, property or assignment a function definition.
_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "generator_function"})
_CONST_NOT = ("require(",)  # `const fs = require('fs')` is an import, not a constant
# Captures whose kind and name the outliner works out from the node (see resolve): matching these shapes
# in the query (`(variable_declarator value: [(arrow_function) ...])`) made the TypeScript query take
# ~50 ms to compile, paid by every hook that outlines a file.
# Where a Kotlin or Swift property declaration declares a property (not a local variable).
_PROPERTY_PARENTS = frozenset({"source_file", "class_body", "enum_class_body", "protocol_body"})
RESOLVED_KINDS = frozenset({"declarator", "assignment", "pair", "field", "val", "const_property", "swift_property",
                            "const_field"})


def _function_value(value: Node | None, wrapped: bool = True) -> bool:
    """`() => x`, `function () {}`, and (when `wrapped`) `(function () {})` or `(function () {...}(Base))`."""
    if value is None:
        return False
    if value.type in _FUNCTION_VALUES:
        return True
    if not wrapped:
        return False
    if value.type == "parenthesized_expression":
        inner = value.named_children[0] if value.named_child_count else None
        if inner is not None and inner.type == "call_expression":
            inner = inner.child_by_field_name("function")
            return inner is not None and inner.type == "function_expression"
        return _function_value(inner, wrapped=False)
    if value.type == "call_expression":
        callee = value.child_by_field_name("function")
        if callee is not None and callee.type == "parenthesized_expression" and callee.named_child_count:
            return _function_value(callee.named_children[0], wrapped=False)
    return False


def _has_modifier(node: Node, word: bytes) -> bool:
    modifiers = next((c for c in node.named_children if c.type == "modifiers"), None)
    return modifiers is not None and any(
        word in (m.text or b"").split() for m in modifiers.named_children)


def _top_level_const(declaration: Node) -> bool:
    parent = declaration.parent
    if parent is not None and parent.type == "export_statement":
        parent = parent.parent
    return (declaration.type == "lexical_declaration" and parent is not None and parent.type == "program"
            and declaration.child(0) is not None and declaration.child(0).type == "const")


def resolve(node: Node, kind: str) -> tuple[Node, Node, str] | None:
    """(definition node, name node, kind) for a JS/TS capture in RESOLVED_KINDS, or None if it defines
    nothing worth listing."""
    if kind == "declarator":  # const f = () => ..., var C = class {...}, const LIMIT = 10 (top level)
        name, value, declaration = node.child_by_field_name("name"), node.child_by_field_name("value"), node.parent
        if name is None or name.type != "identifier" or value is None or declaration is None:
            return None
        if declaration.type not in ("lexical_declaration", "variable_declaration"):
            return None
        if value.type == "class":
            return declaration, name, "class"
        if _function_value(value, wrapped=declaration.type == "variable_declaration"):
            return declaration, name, "function"
        if _top_level_const(declaration) and not (value.text or b"").decode("utf-8", "replace").startswith(_CONST_NOT):
            return declaration, name, "constant"
        return None
    if kind == "assignment":  # exports.f = function () {}, Foo.prototype.bar = () => {}
        statement = node.parent
        if statement is None or statement.type != "expression_statement":
            return None
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is not None and left.type == "member_expression":
            left = left.child_by_field_name("property")
            if left is not None and left.type != "property_identifier":
                return None
        elif left is None or left.type != "identifier":
            return None
        return (statement, left, "function") if left is not None and _function_value(right) else None
    if kind == "pair":  # { key: function () {} }
        key, value = node.child_by_field_name("key"), node.child_by_field_name("value")
        if key is None or key.type not in ("property_identifier", "string", "number"):
            return None
        return (node, key, "function") if value is not None and value.type in _FUNCTION_VALUES else None
    if kind == "val":  # Scala: a `val` of a file or a class body is a constant
        name = node.child_by_field_name("pattern")
        parent = node.parent
        if name is None or name.type != "identifier" or parent is None:
            return None
        return (node, name, "constant") if parent.type in ("compilation_unit", "template_body") else None
    if kind == "const_property":  # Kotlin: top-level `const val X = ...`, or a property of a file or class
        parent = node.parent
        if parent is None or parent.type not in _PROPERTY_PARENTS:
            return None  # a local variable
        decl = next((c for c in node.named_children if c.type == "variable_declaration"), None)
        name = next((c for c in decl.named_children if c.type == "identifier"), None) if decl else None
        if name is None:
            return None
        const = parent.type == "source_file" and _has_modifier(node, b"const")
        return node, name, "constant" if const else "property"
    if kind == "swift_property":  # Swift: `let x = 1` of a file is a constant; a type's `var x: Int`, a property
        parent = node.parent
        pattern = node.child_by_field_name("name")
        name = pattern.child_by_field_name("bound_identifier") if pattern is not None else None
        if parent is None or parent.type not in _PROPERTY_PARENTS or name is None:
            return None
        top_let = parent.type == "source_file" and any(c.type == "value_binding_pattern" and c.text == b"let"
                                                       for c in node.children)
        return node, name, "constant" if top_let else "property"
    if kind == "const_field":  # C#: `const int X = ...` in a class
        if not any(c.type == "modifier" and c.text == b"const" for c in node.named_children):
            return None
        decl = next((c for c in node.named_children if c.type == "variable_declaration"), None)
        declarator = next((c for c in decl.named_children if c.type == "variable_declarator"), None) if decl else None
        name = declarator.child_by_field_name("name") if declarator is not None else None
        return (node, name, "constant") if name is not None else None
    if kind == "field":  # class fields holding functions: handle = () => {}
        name = node.child_by_field_name("name") or node.child_by_field_name("property")
        value = node.child_by_field_name("value")
        if name is None or value is None or value.type not in ("arrow_function", "function_expression"):
            return None
        return node, name, "method"
    return None


_SWIFT_KINDS = {"struct": "struct", "enum": "enum", "extension": "extension", "actor": "class",
                "class": "class"}


def refine_kind(node: Node, kind: str) -> str:
    """Kind of a node captured by a generic pattern (see name_and_kind; C++ data members: _declared)."""
    if node.type == "class_declaration" and node.grammar_name == "class_declaration":
        decl = node.child_by_field_name("declaration_kind")
        if decl is not None:
            return _SWIFT_KINDS.get(decl.type, kind)
        for child in node.children:  # Kotlin: `interface Foo`, `enum class Foo`
            if child.type == "interface":
                return "interface"
            if child.type == "modifiers" and any(
                    m.type == "class_modifier" and m.text == b"enum" for m in child.children):
                return "enum"
    return kind


def find_body(node: Node, after: int, depth: int = 0) -> Node | None:
    """First body-like descendant of ``node`` ending after byte ``after``
    (the end of the name: a body never comes before the name)."""
    for i, child in enumerate(node.children):
        if child.end_byte <= after:
            continue
        kind = child.type  # read once: each read makes a new str
        if kind == "{" or kind in BODY_TYPES:
            return child
        if node.field_name_for_child(i) == "body":
            return child
        if depth < 4 and kind in WRAPPERS:
            found = find_body(child, after, depth + 1)
            if found is not None:
                return found
    return None


# Parameter nodes whose default value is elided when long, and the field
# holding that value.
_DEFAULT_PARAMS = {
    "default_parameter": "value", "typed_default_parameter": "value",  # Python
    "assignment_pattern": "right",  # JavaScript
    "optional_parameter": "value", "required_parameter": "value",  # TypeScript
    "optional_parameter_declaration": "default_value",  # C++
    "simple_parameter": "default_value", "property_promotion_parameter": "default_value",
    "optional_parameter_with_default": "value",
    "keyword_parameter": "value",  # Ruby
}
DEFAULT_CAP = 16
_COMMENT_STARTS = (b"#", b"//", b"/*", b"--", b"(*")


def _elisions(node: Node, start: int, end: int, out: list[tuple[int, int, bytes]],
              marks: list[int] | None = None, by_marks: bool = True) -> None:
    """Byte ranges of the signature to drop (comments) or shorten (defaults). With `marks` (the offsets of
    each `=` and comment marker in the signature), a subtree holding none is not entered (C/C++: their
    defaults need an `=`), and one free of parse errors is searched from its marks (_marked_elisions; unless
    not `by_marks`: the walk a test compares it with)."""
    for child in node.children:
        if child.start_byte >= end:
            break
        if child.end_byte <= start:
            continue
        if "comment" in child.type:
            out.append((child.start_byte, child.end_byte, b" "))
            continue
        value_field = _DEFAULT_PARAMS.get(child.type)
        if value_field is not None:
            value = child.child_by_field_name(value_field)
            if value is not None and value.end_byte - value.start_byte > DEFAULT_CAP:
                _elisions(child, start, value.start_byte, out, marks, by_marks)
                out.append((value.start_byte, value.end_byte, b"..."))
                continue
        if child.child_count and (marks is None or _holds(child, marks)):
            if marks is None or child.has_error or not by_marks:
                _elisions(child, start, end, out, marks, by_marks)
            else:
                inside = marks[_bisect_left(marks, child.start_byte):_bisect_left(marks, child.end_byte)]
                _marked_elisions(child, inside, out)


def _marked_elisions(node: Node, marks: list[int], out: list[tuple[int, int, bytes]]) -> None:
    """C/C++, `node` free of parse errors: what _elisions finds in it, reached from the marks (_marks) in it
    instead of by walking its nodes: the comment a comment marker starts, the parameter an `=` belongs to (its
    own token). A class that a parse error made one 2,700-line function head (IRBuilder.h) took ~10 ms to walk;
    tests/parser/test_outline_cases.py checks both ways agree."""
    comment_end = skip_start = skip_end = -1  # the last comment cut; an elided value and the rest of its parameter
    for mark in marks:
        if mark < comment_end or skip_start <= mark < skip_end:
            continue  # _elisions enters neither a comment nor an elided value
        found = node.named_descendant_for_byte_range(mark, mark + 1)
        kind = found.type if found is not None else ""
        if "comment" in kind:
            out.append((found.start_byte, found.end_byte, b" "))
            comment_end = found.end_byte
            continue
        value_field = _DEFAULT_PARAMS.get(kind)
        value = found.child_by_field_name(value_field) if value_field is not None else None
        if value is not None and value.end_byte - value.start_byte > DEFAULT_CAP:
            out.append((value.start_byte, value.end_byte, b"..."))
            skip_start, skip_end = value.start_byte, found.end_byte
    out.sort()  # a value's cut comes before the comments between its `=` and itself


def _bisect_left(values: list[int], x: int) -> int:
    """bisect.bisect_left for the few searches of a signature's marks: loading the C `_bisect` module cost a
    cold Read ~0.13 ms, more than a cold C++ outline's searches."""
    low, high = 0, len(values)
    while low < high:
        middle = (low + high) // 2
        if values[middle] < x:
            low = middle + 1
        else:
            high = middle
    return low


def _holds(node: Node, marks: list[int]) -> bool:
    """Whether a mark (sorted) falls inside `node`: a binary search (a linear one made a 2,600-line header
    with long heads take 300 ms)."""
    first, last = node.start_byte, node.end_byte
    at = _bisect_left(marks, first)
    return at < len(marks) and marks[at] < last


def _marks(head: bytes, offset: int) -> list[int]:
    """Offsets (from `offset`) of each `=` and comment marker in `head`."""
    found = []
    for marker in (b"=", *_COMMENT_STARTS):
        at = head.find(marker)
        while at >= 0:
            found.append(offset + at)
            at = head.find(marker, at + 1)
    found.sort()
    return found


# Spaces left by joining lines of a multi-line parameter list: "( a, b, )".
TIGHTEN = r"(?<=[(\[])\s+|,?\s+(?=[)\]])|,(?=[)\]])"
_LOOSE = ("( ", "[ ", " )", " ]", ",)", ",]")  # what TIGHTEN can find once whitespace runs are single spaces
_compiled: dict[str, re.Pattern[str]] = {}


def _regex(source: str) -> re.Pattern[str]:
    """TIGHTEN or XML_DOC_TAG compiled, on first use: not at import, where it loaded the compiled table
    (memory/fastpath/recode.py) for every file, ~0.3 ms of a cold Read of one that needs neither."""
    pattern = _compiled.get(source)
    if pattern is None:
        from memory.fastpath import recode

        pattern = _compiled[source] = recode.compile(source)
    return pattern


def _cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


DECORATOR_CAP = 40  # a longer decorator keeps its name and shows its arguments as (…)
MAX_DECORATORS = 4


def _split_decorators(text: str) -> tuple[list[str], str]:
    """Leading decorators / annotations / attributes (`@x(...)`, `#[x(...)]`) and the rest."""
    decorators: list[str] = []
    pos = 0
    while pos < len(text) and (text[pos] == "@" or text.startswith("#[", pos)):
        depth, i = 0, pos
        while i < len(text):
            ch = text[i]
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
            elif ch == " " and depth <= 0:
                break
            i += 1
        decorators.append(text[pos:i])
        pos = i + 1
    return decorators, text[pos:]


def _compress_decorators(text: str, limit: int) -> str:
    """Decorators keep their names but not long arguments, so that the definition itself (name,
    parameters, return type) is never cut off by a chain of `@click.option(...)` lines."""
    if text[:1] != "@" and not text.startswith("#["):  # no decorator: most signatures (C++: all)
        return _cap(text, limit)
    decorators, rest = _split_decorators(text)
    if not decorators or not rest:
        return _cap(text, limit)
    shown = []
    for d in decorators[:MAX_DECORATORS]:
        if len(d) > DECORATOR_CAP:
            cut = min((d.find(c) for c in "([" if d.find(c) > 0), default=-1)
            d = d[:cut] + ("(…)" if d[cut] == "(" else "[…]") if cut > 0 else _cap(d, DECORATOR_CAP)
        shown.append(d)
    if len(decorators) > MAX_DECORATORS:
        shown.append(f"+{len(decorators) - MAX_DECORATORS} decorators")
    return " ".join(shown) + " " + _cap(rest, limit)


# An enum's body and its members: every member name goes on the enum's row (`enum Color {red, green}`),
# values left out. They are the names code uses; an elided body would hide them all.
ENUM_BODIES = frozenset({"enumerator_list", "enum_body", "enum_variant_list", "enum_member_declaration_list",
                         "enum_class_body", "enum_declaration_list"})
_ENUM_MEMBERS = frozenset({"enumerator", "enum_constant", "enum_variant", "enum_member_declaration",
                           "enum_entry", "enum_assignment", "enum_case"})
_ENUM_PLACEHOLDER = "\x00"


def enum_members(body: Node, text: bytes | None = None) -> list[str]:
    """Names of the members of an enum body, in order; `text`: what the tree was parsed from (see _text)."""
    names: list[str] = []
    for child in body.named_children:
        kind = child.type  # read once: each read makes a new str (LLVM's IntrinsicsMips.h: 1,343 children)
        if kind in ("property_identifier", "string"):  # TypeScript: a member without a value
            names.append(_text(child, text))
        elif kind in _ENUM_MEMBERS:
            found = child.children_by_field_name("name") or [
                c for c in child.named_children if c.type in ("identifier", "simple_identifier", "name")][:1]
            names.extend(_text(n, text) for n in found)
    return names


def _text(node: Node, text: bytes | None = None) -> str:
    """The node's text, from `text` (the bytes its tree was parsed from) when given: node.text of a tree parsed
    through ParseBudget's read callback calls it again (see parser/outline.py _node_text)."""
    raw = node.text if text is None else text[node.start_byte:node.end_byte]
    return (raw or b"").decode("utf-8", errors="replace").strip("'\"")


def _typedef_fields(node: Node) -> Node | None:
    """The field list of the struct or union a C/C++ typedef defines, if it defines one."""
    kind = node.child_by_field_name("type")
    if kind is None or kind.type not in ("struct_specifier", "union_specifier"):
        return None
    return kind.child_by_field_name("body")


# The grammars with an export_statement (a test checks the others have none): node.parent costs ~0.6 us a
# definition in a C++ header (tree-sitter finds a parent by walking down from the root), 0.3-0.5 ms a file.
_EXPORTING = frozenset({"javascript", "typescript", "tsx"})


def _has_comment(head: bytes) -> bool:
    """Whether a comment marker is in `head`. By bytes.find: `marker in head` first tries the marker as an int
    (`5 in b"..."`) and makes and drops a TypeError each time (CPython 3.11), ~0.5 us a test, ~1,300 tests in
    MemorySSA.h's signatures."""
    for marker in _COMMENT_STARTS:
        if head.find(marker) >= 0:
            return True
    return False


def _may_have_default(head: bytes, language: str) -> bool:
    """Whether a parameter of `head` may have a default value to shorten. C/C++: only an `=` inside the
    parameter list (not `= 0`, `= default`, `operator=`, `int x = 5`: a quarter of a C++ header's
    declarations, each of which would be walked for nothing)."""
    if language not in ("c", "cpp"):
        return head.find(b"=") >= 0  # not `in`: see _has_comment
    start = head.find(b"(")
    return start >= 0 and head.find(b"=", start, head.rfind(b")")) >= 0


def signature(node: Node, body: Node | None, source: bytes, language: str, parsed: bytes | None = None) -> str:
    """One-line signature: the node's text up to its body, comments removed, cut from `source`; an enum's member
    names from `parsed`, what the tree was parsed from (see _text; None: read from the tree)."""
    start = node.start_byte
    kind = node.type  # read once: each read makes a new str
    if language in _EXPORTING:
        parent = node.parent
        if parent is not None and parent.type == "export_statement":
            start = parent.start_byte  # keep `export` / `export default`
    end = body.start_byte if body is not None else min(node.end_byte, start + _SCAN_CAP)
    if kind == "type_definition":  # its name comes after the struct's body, which _head_text cuts to `{…}`
        end = node.end_byte
    if kind == "preproc_function_def":  # `#define MAX(a, b)`: its replacement text is its body
        value = node.child_by_field_name("value")
        end = value.start_byte if value is not None else end
    elif kind == "property_declaration":  # Kotlin/Swift: a getter's or a computed property's body is a body
        accessor = next((c for c in node.children if c.type in _ACCESSORS), None)
        end = min(end, accessor.start_byte) if accessor is not None else end
    if body is None and language == "python" and kind in _PYTHON_BLOCK_OWNERS:
        end = start + _python_header_end(source[start:end])  # a broken body: the header ends at its colon
    limit = SIGNATURE_CAP if body is not None else VALUE_CAP
    text = None
    if end - start > _LONG_HEAD and language in ("c", "cpp") and kind != "type_definition":
        text = _long_head(node, start, end, source, limit)
    if text is None:
        text = _head_text(node, kind, body, start, end, source, language, limit)
    members = None
    if kind == "type_definition":
        members = _typedef_members(node, parsed)
    elif body is not None and body.type in ENUM_BODIES:
        members = enum_members(body, parsed)
    if members is None:
        return text
    from parser.render import name_list

    listed = "{" + name_list(members) + "}"
    return text.replace(_ENUM_PLACEHOLDER, listed) if _ENUM_PLACEHOLDER in text else f"{text} {listed}"


def _head_text(node: Node, kind: str, body: Node | None, start: int, end: int, source: bytes, language: str,
               limit: int) -> str:
    """The text of `source[start:end]`, the head of `node` (a `kind`): comments dropped, long defaults
    shortened, a typedef's struct or enum body cut, on one line, at most `limit` characters."""
    cuts: list[tuple[int, int, bytes]] = []
    head = source[start:end]
    # Walking the nodes is the costly part; most signatures need no edit.
    if _may_have_default(head, language) or _has_comment(head):
        if language not in ("c", "cpp"):
            _elisions(node, start, end, cuts)
        elif node.has_error:
            _elisions(node, start, end, cuts, _marks(head, start))
        else:  # what _elisions would find below the node (a definition: never itself cut), without its loop
            _marked_elisions(node, _marks(head, start), cuts)
    if kind == "type_definition":  # `typedef struct _x {…} X`: the fields are the struct's body
        fields = _typedef_fields(node)
        if fields is not None:
            cuts.append((fields.start_byte, fields.end_byte, b"{\xe2\x80\xa6}"))
            cuts.sort()
        enum_body = _typedef_enum(node)
        if enum_body is not None:  # `typedef enum {…} State`: the members (see signature), then the name
            cuts.append((enum_body.start_byte, enum_body.end_byte, _ENUM_PLACEHOLDER.encode()))
            cuts.sort()
    text = _tightened(_joined(source, start, end, cuts))
    if not text.endswith("=>"):
        text = text.rstrip("{:=;,").rstrip()
    prefix = _SPEC_PREFIX.get(kind) if language == "go" else None
    if prefix and not text.startswith(prefix):
        text = prefix + text
    return _compress_decorators(text, limit)


def _joined(source: bytes, start: int, end: int, cuts: list[tuple[int, int, bytes]]) -> str:
    """`source[start:end]` with the cuts (sorted, disjoint) made, on one line: whitespace runs as one space."""
    if not cuts:  # most heads
        return " ".join(screened(source[start:end].decode("utf-8", errors="replace")).split())
    parts, pos = [], start
    for c_start, c_end, replacement in cuts:
        parts.append(source[pos:max(pos, c_start)])
        parts.append(replacement)
        pos = max(pos, c_end)
    parts.append(source[pos:end])
    return " ".join(screened(b"".join(parts).decode("utf-8", errors="replace")).split())


def _tightened(text: str) -> str:
    """A joined head (_joined) without a multi-line #define's backslash, nor spaces inside brackets."""
    if text.endswith("\\"):  # a multi-line #define's first line
        text = text.rstrip("\\ ")
    if any(map(text.__contains__, _LOOSE)):  # the regex costs ~15 us a signature; most have nothing to tighten
        text = _regex(TIGHTEN).sub("", text)
    return text


# A C/C++ head longer than this is first made from its first _LONG_HEAD bytes (see _long_head).
_LONG_HEAD = 4096
_END_STRIPPED = "{:=;,\\ "  # what the end of a head may lose (_tightened, _head_text)


def _long_head(node: Node, start: int, end: int, source: bytes, limit: int) -> str | None:
    """The signature of a long C/C++ head (a class a parse error made one function head: IRBuilder.h's runs
    2,700 lines, ~5 ms to cut, tighten and cap) made from its first _LONG_HEAD bytes, when those fill the
    `limit` with room to spare: what follows then changes nothing the cap keeps. None otherwise.

    The prefix's cuts are those of the whole head that start in it; its last word may go on past it, so it is
    dropped; tightening looks one character ahead, so the last few characters may differ: past the cap, a
    character the end's stripping keeps must remain (the whole head's text is longer than the cap too)."""
    head = source[start:end]
    prefix_end = start + _LONG_HEAD
    cuts: list[tuple[int, int, bytes]] = []
    if _may_have_default(head, "cpp") or _has_comment(head):
        _elisions(node, start, prefix_end, cuts, _marks(source[start:prefix_end], start))
    text = _joined(source, start, prefix_end, cuts)
    text = _tightened(text[:max(text.rfind(" "), 0)])
    if text[:1] == "@" or text.startswith("#[") or not text[limit:len(text) - 3].strip(_END_STRIPPED):
        return None  # decorators (Objective-C), or too little text: the whole head decides
    return _cap(text, limit)


def _typedef_enum(node: Node) -> Node | None:
    """The body of the enum a C/C++ typedef defines, if it defines one."""
    spec = node.child_by_field_name("type")
    return spec.child_by_field_name("body") if spec is not None and spec.type == "enum_specifier" else None


def _typedef_members(node: Node, text: bytes | None = None) -> list[str] | None:
    """The members of the enum a C/C++ typedef defines (`typedef enum {…} State`), if it defines one."""
    enum_body = _typedef_enum(node)
    return enum_members(enum_body, text) if enum_body is not None else None


_PYTHON_BLOCK_OWNERS = frozenset({"class_definition", "function_definition", "decorated_definition"})


_ACCESSORS = frozenset({"getter", "setter", "computed_property", "computed_getter", "computed_setter",
                        "computed_modify", "willset_didset_block"})


def _python_header_end(head: bytes) -> int:
    """Where a Python class or def header ends: its first `:` outside brackets and strings after the
    `def`/`class` keyword (decorators come before it); without one (an unclosed bracket), its first line."""
    keyword = max(head.find(b"def "), head.find(b"class "))
    depth, quote, i = 0, 0, max(keyword, 0)
    while i < len(head):
        ch = head[i]
        if quote:
            if ch == 92:  # backslash
                i += 1
            elif ch == quote:
                quote = 0
        elif ch in b"\"'":
            quote = ch
        elif ch in b"([{":
            depth += 1
        elif ch in b")]}":
            depth -= 1
        elif ch == 58 and depth <= 0:  # ":"
            return i + 1
        i += 1
    newline = head.find(b"\n", max(keyword, 0))
    return newline if newline > 0 else len(head)


def _python_docstring(body: Node, text: bytes) -> str | None:
    first = body.named_children[0] if body.named_child_count else None
    if first is None or first.type != "expression_statement" or not first.named_child_count:
        return None
    string = first.named_children[0]
    if string.type != "string":
        return None
    content = [c for c in string.named_children if c.type == "string_content"]
    raw = content[0] if content else string
    return text[raw.start_byte:raw.end_byte].decode("utf-8", errors="replace") or None


# Languages with a doc-comment syntax, where a plain comment above an item
# is usually a note (`// SAFETY: ...`), not its documentation.
_DOC_COMMENT_LANGUAGES = frozenset({"rust"})
_DOC_MARKERS = ("///", "//!", "/**", "/*!")
# Tool directives that sit where a doc comment would.
# "@": a JSDoc/PHPDoc/Javadoc tag line (`@returns`, `@type {...}`, `@var`) says nothing the signature does not.
_NOT_DOC = ("#[", "@", "noqa", "type:", "pragma", "eslint", "prettier-ignore",
            "istanbul", "nolint", "NOLINT", "go:", "clang-format", "-*-", "fmt:", "pylint:",
            "jshint", "jscs:", "SPDX-License", "Copyright")
XML_DOC_TAG = r"</?(?:summary|remarks|para|returns|value)\s*>"  # C# ///
_COMMENT_MARKERS = ("/**", "/*!", "/*", "*/", "///", "//!", "//", "#", "--[[", "---", "--", "*")
_MARKER_FIRSTS = frozenset(m[0] for m in _COMMENT_MARKERS)


def _first_line(text: str) -> str | None:
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("#!"):  # shebang
            continue
        if line[:1] in _MARKER_FIRSTS:  # most lines start with none of them: 14 startswith calls saved
            for marker in _COMMENT_MARKERS:
                if line.startswith(marker):
                    line = line[len(marker):].strip()
                    if line[:1] not in _MARKER_FIRSTS:
                        break  # no later marker can match either
        line = line.removesuffix("*/").removesuffix("]]")
        if "<" in line:  # what XML_DOC_TAG needs: the regex is not run on most lines
            line = _regex(XML_DOC_TAG).sub("", line)
        line = line.strip()
        if any(ch.isalnum() for ch in line) and not line.startswith(_NOT_DOC):
            # First sentence only: the outline is a map, not documentation.
            cut = line.find(". ")
            if cut >= 10:
                line = line[:cut]
            return _cap(line.rstrip("."), DOC_CAP)
    return None


def leading_comment(node: Node, text: bytes, doc_only: bool = False, parent: Node | None = None) -> str | None:
    """First line of the comment block right above ``node`` (or its wrapper); `text` is what the tree was
    parsed from (not comment.text: see parser/outline.py _node_text); `parent`: see name_and_kind."""
    row = node.start_point.row
    parent = node.parent if parent is None else parent
    # `export function f`, `pub(crate) fn` wrapped in a declaration: the
    # comment sits before the wrapper that starts on the same line.
    while parent is not None and parent.start_point.row == row and parent.type not in BODY_TYPES:
        grandparent = parent.parent  # read last and once: it costs what node.parent does (see _EXPORTING)
        if grandparent is None:
            break
        node, parent = parent, grandparent
    sibling, at = _previous_siblings(node, parent)
    prev = sibling(at)
    expect = node.start_point.row
    while prev is not None and prev.type in ATTRIBUTES and prev.end_point.row >= expect - 1:
        expect = prev.start_point.row
        at -= 1
        prev = sibling(at)
    block: list[Node] = []
    while prev is not None and "comment" in prev.type:
        end = prev.end_point
        if end.row - (1 if end.column == 0 else 0) < expect - 1:
            break
        block.append(prev)
        expect = prev.start_point.row
        at -= 1
        prev = sibling(at)
    for comment in reversed(block):
        lines = text[comment.start_byte:comment.end_byte].decode("utf-8", errors="replace")
        if doc_only and not lines.startswith(_DOC_MARKERS):
            continue
        line = _first_line(lines)
        if line:
            return line
    return None


def _previous_siblings(node: Node, parent: Node | None) -> tuple[Callable[[int], Node | None], int]:
    """A function giving `node`'s previous siblings by index (None before the first) and the index of the one
    right before it. Found among its parent's children by a binary search on their start bytes (parent.child(i),
    a few a definition): a doc line is looked for only when shown (parser/outline.py Symbol.doc), for a few
    definitions of a parent, and listing the parent's children cost a namespace's one ~7 us (MemorySSA.h's 23
    shown: 0.17 -> 0.05 ms). node.prev_sibling finds the parent by walking down from the root, ~1 us a call."""
    if parent is not None:
        count = parent.child_count
        start, low, high = node.start_byte, 0, count
        while low < high:
            middle = (low + high) // 2
            if parent.child(middle).start_byte < start:
                low = middle + 1
            else:
                high = middle
        while low < count and parent.child(low) != node:  # an empty (missing) node may start where it does
            low += 1
        if low < count:
            child = parent.child
            return (lambda i: child(i) if i >= 0 else None), low - 1
    before = []  # the root, or not among its parent's children (cannot happen): the siblings tree-sitter gives
    prev = node.prev_sibling if parent is not None else None
    while prev is not None:
        before.append(prev)
        prev = prev.prev_sibling
    return (lambda i: before[len(before) - 1 - i] if i >= 0 else None), len(before) - 1


def doc_line(node: Node, body: Node | None, language: str, text: bytes, parent: Node | None = None) -> str | None:
    """Docstring first line (Python) or first line of the leading comment (`text`, `parent`: see
    leading_comment)."""
    if language == "python" and body is not None and body.type == "block":
        doc = _python_docstring(body, text)
        if doc:
            line = _first_line(doc)
            if line:
                return line
    return leading_comment(node, text, language in _DOC_COMMENT_LANGUAGES, parent)


_RUBY_REQUIRES = (b"require", b"require_relative", b"load")


def ruby_requires(root: Node) -> list[Node]:
    """The string of each top-level `require 'x'` / `require_relative 'x'` / `load 'x'`.

    Walked here rather than matched by the query: `call` is Ruby's commonest node, and the pattern
    made the query ~2.5x slower to compile (a hook compiles it on every miss)."""
    found = []
    for call in root.children:
        method = call.child_by_field_name("method") if call.type == "call" else None
        args = call.child_by_field_name("arguments") if method is not None else None
        if method is None or method.text not in _RUBY_REQUIRES or args is None or not args.named_child_count:
            continue
        first = args.named_children[0]
        content = [c for c in first.named_children if c.type == "string_content"] if first.type == "string" else []
        if content:
            found.append(content[0])
    return found


def import_name(node: Node, source: bytes | None = None) -> str:
    """Short display name of an import capture (module path, header...); `source`: what the tree was parsed from
    (its slice, not node.text: see parser/outline.py _node_text; 31 #includes, ~0.05 ms)."""
    if node.type == "future_import_statement":
        return "__future__"
    raw = node.text if source is None else source[node.start_byte:node.end_byte]
    text = (raw or b"").decode("utf-8", errors="replace")
    text = " ".join(text.split()).removeprefix("import ").strip("'\"`<>;")
    return _cap(text, 60)
