"""Names of a file's and its classes' variables (Python, JavaScript, TypeScript, PHP), listed by name only.

Module variables, class attributes and properties are names code uses (`__all__`, `DEFAULT_TIMEOUT`, a
class's `_registry`, `$this->cache`), but a row for each, with its value, would cost what a grouped constant
row saves, and a value may be a secret. So each becomes a names-only symbol (its signature is its name), and
render.py writes a run of them on one row: `12-30 vars: a, b, c`, `41-43 fields: x, y`. Locals are never
listed: the walk enters a file's statements, its top-level `if`/`try`/`with` blocks and class bodies, never
a function body. TypeScript's interface properties are listed the same way (`fields: title, onPress`): an
interface is often nothing but them.

Walked here rather than matched by the query: an assignment pattern matches every local assignment of a
file and grows the query a hook compiles on every miss.
"""

from __future__ import annotations

TYPE_CHECKING = False  # importing typing costs a hook several ms
if TYPE_CHECKING:
    from tree_sitter import Node

LANGUAGES = frozenset({"python", "javascript", "typescript", "tsx", "php"})

Entry = tuple["Node", "Node", str]

# Python statements whose blocks run at module or class level (`try: import x` / `except: x = None`).
_PY_COMPOUND = frozenset({"if_statement", "try_statement", "with_statement", "elif_clause", "else_clause",
                          "except_clause", "finally_clause", "block"})
# Python assignment targets that bind names: `a, b = ...`, `(a, b) = ...`, `[a, b] = ...`.
_PY_TARGETS = frozenset({"pattern_list", "tuple_pattern", "list_pattern"})
# JS declarations of a file (`export const x`, `var y`); field values the query lists as methods.
_JS_DECLARATIONS = frozenset({"lexical_declaration", "variable_declaration"})
_JS_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "generator_function"})
# What may wrap a declarator's object literal: `{...} as const`, `({...})`, TypeScript's `satisfies`.
_JS_VALUE_WRAPPERS = frozenset({"as_expression", "satisfies_expression", "parenthesized_expression"})
# What holds a declaration of the file: `export ...`, TypeScript's `declare ...` and a `namespace N {...}`
# statement; and the declarations whose body's statements are the file's too (a namespace's; `declare global
# {...}` is a wrapped statement block).
_JS_WRAPPERS = frozenset({"export_statement", "ambient_declaration", "expression_statement"})
_JS_BLOCKS = frozenset({"internal_module", "module"})
_JS_CLASSES = frozenset({"class_declaration", "abstract_class_declaration"})
# PHP nodes whose children may declare a class, a property or a define() (`if (!defined('X')) define(...)`):
# never a function body.
_PHP_CONTAINERS = frozenset({"program", "namespace_definition", "compound_statement", "declaration_list",
                             "class_declaration", "trait_declaration", "interface_declaration",
                             "enum_declaration", "expression_statement", "property_declaration", "if_statement",
                             "else_clause", "else_if_clause", "colon_block"})


def names(root: Node, language: str, taken: set[tuple[int, int]]) -> list[Entry]:
    """(definition node, name node, kind) of each variable of `root` whose name node is not in `taken` (the
    query's definitions: constants, functions held in variables): kind "variable" at file level, "field" in a
    class."""
    found: list[Entry] = []
    if language == "python":
        _python_block(root, "variable", found)
    elif language in ("javascript", "typescript", "tsx"):
        _javascript(root, found)
    elif language == "php":
        _php(root, found)
    out, seen = [], set()
    for entry in found:
        node, name, kind = entry
        # Once per scope: `if ...: sep = "/"` / `else: sep = "\\"` is one name.
        key = (name.text, kind, node.parent.start_byte if kind == "field" and node.parent is not None else 0)
        if (name.start_byte, name.end_byte) not in taken and key not in seen:
            seen.add(key)
            out.append(entry)
    return out


def _python_block(block: Node, kind: str, out: list[Entry]) -> None:
    for stmt in block.named_children:
        t = stmt.type
        if t == "expression_statement":
            for assign in stmt.named_children:
                while assign is not None and assign.type == "assignment":  # a = b = 1: both
                    for name in _python_targets(assign.child_by_field_name("left")):
                        out.append((stmt, name, kind))
                    assign = assign.child_by_field_name("right")
        elif t in _PY_COMPOUND:
            _python_block(stmt, kind, out)
        elif t in ("class_definition", "decorated_definition"):
            cls = stmt if t == "class_definition" else stmt.child_by_field_name("definition")
            body = cls.child_by_field_name("body") if cls is not None and cls.type == "class_definition" else None
            if body is not None:
                _python_block(body, "field", out)


def _python_targets(left: Node | None) -> list[Node]:
    if left is None:
        return []
    if left.type == "identifier":
        return [left]
    if left.type in _PY_TARGETS:
        return [n for c in left.named_children for n in _python_targets(c)]
    return []  # x.attr = ..., x[i] = ...: not a definition


def _javascript(block: Node, out: list[Entry]) -> None:
    for stmt in block.named_children:
        decl = _js_declaration(stmt)
        if decl is None:
            continue
        if decl.type in _JS_CLASSES:
            _javascript_fields(decl.child_by_field_name("body"), out)
        elif decl.type == "interface_declaration":  # TypeScript: `title: string;`
            _ts_properties(decl.child_by_field_name("body"), out)
        elif decl.type in _JS_BLOCKS or (decl.type == "statement_block" and decl is not stmt):  # not a bare `{}`
            body = decl if decl.type == "statement_block" else decl.child_by_field_name("body")
            if body is not None:
                _javascript(body, out)
        elif decl.type in _JS_DECLARATIONS:
            for declarator in decl.named_children:
                if declarator.type == "variable_declarator":
                    _js_declarator(decl, declarator, out)


def _js_declarator(decl: Node, declarator: Node, out: list[Entry]) -> None:
    """The names a declarator binds; a variable typed with an object literal (`declare const Data: {BounceIn:
    {...}; ...}`, a whole .d.ts) or holding one (`export const colors = {aqua: ..., ...}`, a mock module's
    exports) is its own entry, holding its members' names as fields: the first level only (`colors.aqua` is
    a name code uses; the keys of the objects inside are data)."""
    names = _js_pattern(declarator.child_by_field_name("name"))
    annotation = declarator.child_by_field_name("type")
    shape = annotation.named_children[0] if annotation is not None and annotation.named_child_count else None
    value = declarator.child_by_field_name("value")
    while value is not None and value.type in _JS_VALUE_WRAPPERS and value.named_child_count:
        value = value.named_children[0]  # `{...} as const`, `({...})`, `{...} satisfies T`
    if shape is not None and shape.type == "object_type" and len(names) == 1:
        out.append((declarator, names[0], "variable"))
        _ts_properties(shape, out)
    elif value is not None and value.type == "object" and len(names) == 1:
        out.append((declarator, names[0], "variable"))
        _js_keys(value, out)
    else:
        out.extend((decl, n, "variable") for n in names)


def _js_keys(obj: Node, out: list[Entry]) -> None:
    """An object literal's own keys (`a: 1`, `'b-c': 2`, `[KEY]: 3`, `d`), not a spread's; its methods (`f()
    {}`, `g: () => ...`) are the query's."""
    for member in obj.named_children:
        if member.type == "shorthand_property_identifier":
            out.append((member, member, "field"))
            continue
        key = member.child_by_field_name("key") if member.type == "pair" else None
        if key is not None and key.type == "computed_property_name" and key.named_child_count:
            key = key.named_children[0]
        if key is not None and key.type == "string" and key.named_child_count:
            key = key.named_children[0]  # its string_fragment: the name without quotes
        if key is not None and key.type != "string":
            out.append((member, key, "field"))


def _ts_properties(body: Node | None, out: list[Entry]) -> None:
    """An interface's or object type's properties (`title: string;`); its methods are the query's."""
    for member in body.named_children if body is not None else ():
        name = member.child_by_field_name("name") if member.type == "property_signature" else None
        if name is not None:
            out.append((member, name, "field"))


def _js_declaration(stmt: Node) -> Node | None:
    """What a statement of the file declares, out of its `export`, `declare` or statement wrapper."""
    while stmt.type in _JS_WRAPPERS:
        if stmt.type == "export_statement":
            inner = stmt.child_by_field_name("declaration")
        else:
            inner = stmt.named_children[0] if stmt.named_child_count else None
        if inner is None:
            return None
        stmt = inner
    return stmt


def _javascript_fields(body: Node | None, out: list[Entry]) -> None:
    """A file's class's fields (`count = 0`, `#cache`, TypeScript's `private count: number`), but those holding
    a function (the query's methods)."""
    for member in body.named_children if body is not None else ():
        if member.type == "field_definition":  # JavaScript
            name, value = member.child_by_field_name("property"), member.child_by_field_name("value")
        elif member.type == "public_field_definition":  # TypeScript
            name, value = member.child_by_field_name("name"), member.child_by_field_name("value")
        else:
            continue
        if name is not None and (value is None or value.type not in _JS_FUNCTION_VALUES):
            out.append((member, name, "field"))


def _js_pattern(node: Node | None) -> list[Node]:
    """Names a binding pattern binds: `x`, `{a, b: c, ...d}` (a, c, d), `[e, f = 1]`."""
    if node is None:
        return []
    if node.type in ("identifier", "shorthand_property_identifier_pattern"):
        return [node]
    if node.type == "pair_pattern":
        return _js_pattern(node.child_by_field_name("value"))
    if node.type in ("object_pattern", "array_pattern", "rest_pattern", "assignment_pattern",
                     "object_assignment_pattern"):
        left = node.child_by_field_name("left")
        children = [left] if left is not None else node.named_children
        return [n for c in children for n in _js_pattern(c)]
    return []


def _php(node: Node, out: list[Entry]) -> None:
    for child in node.named_children:
        t = child.type
        if t == "property_declaration":  # public $a = 1, $b;
            for element in child.named_children:
                if element.type == "property_element":
                    var = next((c for c in element.named_children if c.type == "variable_name"), None)
                    name = var.named_children[0] if var is not None and var.named_child_count else None
                    if name is not None:
                        out.append((child, name, "field"))
        elif t == "function_call_expression":  # define('NAME', value)
            name = _php_define(child)
            if name is not None:
                out.append((node if node.type == "expression_statement" else child, name, "constant"))
        elif t in _PHP_CONTAINERS:
            _php(child, out)


def _php_define(call: Node) -> Node | None:
    function = call.child_by_field_name("function")
    args = call.child_by_field_name("arguments")
    if function is None or function.text != b"define" or args is None or not args.named_child_count:
        return None
    first = args.named_children[0]
    string = first.named_children[0] if first.named_child_count else None
    if string is None or string.type not in ("string", "encapsed_string"):
        return None
    content = next((c for c in string.named_children if c.type in ("string_content", "string_value")), None)
    return content
