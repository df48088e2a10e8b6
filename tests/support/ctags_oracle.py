"""Compare outlines with Universal Ctags, for the outline tests and benchmark.

ctags is the reference for "which definitions
exist"; an outline should contain every function, method, class, struct,
interface and enum that ctags reports, at the same place.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass

from parser.outline import Outline

CTAGS = shutil.which("ctags") or "/usr/bin/ctags"

# Our language -> ctags --language-force name (ctags 5.9 has no Swift/Scala).
CTAGS_LANGUAGE = {
    "python": "Python", "javascript": "JavaScript", "typescript": "TypeScript",
    "go": "Go", "rust": "Rust", "java": "Java", "c": "C", "cpp": "C++", "ruby": "Ruby",
    "csharp": "C#", "php": "PHP", "kotlin": "Kotlin", "bash": "Sh", "lua": "Lua",
}

CALLABLE, TYPE = "callable", "type"

# ctags kind -> category, per language where a kind name means different
# things (Python's "member" is a method, C's is a struct field).
_CTAGS_KINDS: dict[str, dict[str, str]] = {
    "default": {"function": CALLABLE, "func": CALLABLE, "method": CALLABLE,
                "class": TYPE, "struct": TYPE, "interface": TYPE, "enum": TYPE},
    "python": {"member": CALLABLE},
    "javascript": {"generator": CALLABLE, "getter": CALLABLE, "setter": CALLABLE},
    "go": {"methodSpec": CALLABLE},
    "ruby": {"singletonMethod": CALLABLE, "module": TYPE},
    "php": {"trait": TYPE},
    "kotlin": {"object": TYPE},
}

_OUR_KINDS = {
    "function": CALLABLE, "method": CALLABLE,
    "class": TYPE, "struct": TYPE, "interface": TYPE, "enum": TYPE, "trait": TYPE,
    "record": TYPE, "object": TYPE, "protocol": TYPE, "module": TYPE, "type": TYPE,
}


# ctags' placeholder names for anonymous functions and classes.
# (Kotlin's lambdas are `<lambda>` methods: counted, they made Kotlin's recall 66% instead of 98.8%.)
_ANONYMOUS = ("AnonymousFunction", "AnonymousClass", "anonymousFunction", "__anon", "<lambda>")


def _kotlin_non_function(tag: dict) -> bool:
    """Whether a Kotlin tag is one of the ctags 5.9 `method`s that are not functions: a lambda's parameters
    (`{ args ->`) and a `for` loop's variable, tagged as methods named after themselves. On 91 Kotlin files of
    npm packages (2026-12-06) they were 933 of 3,474 "methods" and made recall 73%. A real function's line
    has `fun`, then its name before a `(` (`fun <T> List<T>.first(`)."""
    if tag.get("kind") != "method":
        return False
    own = rf"\bfun\b[^=({{]*(?<![\w$]){re.escape(tag.get('name', ''))}\s*\("
    return re.search(own, tag.get("pattern", "")) is None


_JS = frozenset({"javascript", "typescript", "tsx"})
ANY = "any"  # JS: ctags calls constructor functions classes


_C_FAMILY = frozenset({"c", "cpp"})
# A macro call's arguments: single tokens (`TEST_BEGIN(test_junk)`, `rb_gen(static, tree_, ...)` has a space: no),
# never a parameter declaration (`int x`, `void`).
_CALL_ARGS = re.compile(r"\(\s*(?:[\w.*&]+\s*(?:,\s*[\w.*&]+\s*)*)?\)")


def _macro_call(tag: dict, language: str) -> bool:
    """Whether a C/C++ `function` or `prototype` tag is a macro call ctags mistook for a function (or an
    `enumerator` one called with arguments, which no enumerator is): an ALL_CAPS
    name at the start of its line, called with single-token arguments (`TEST_BEGIN(test_junk) {`, which a
    test framework's macro expands to a function). A function's line has its return type before the name (or
    a parameter declaration in its parentheses)."""
    if language not in _C_FAMILY or tag.get("kind") not in ("function", "prototype", "enumerator"):
        return False
    name = tag.get("name", "")
    if tag.get("kind") == "enumerator":  # `NAME` or `NAME = value`, never `NAME(...)`: LLVM_MARK_AS_BITMASK_ENUM(x)
        line = tag.get("pattern", "")[2:]
        at = line.find(name)
        return at >= 0 and line[at + len(name):].lstrip().startswith("(")
    if not re.fullmatch(r"[A-Z][A-Z0-9_]*", name):
        return False
    line = tag.get("pattern", "")[2:]  # `/^NAME(...) {$/`
    return line.startswith(name) and _CALL_ARGS.match(line[len(name):].lstrip()) is not None \
        and "void" not in line[len(name):].split(")", 1)[0]


# `} NAME;` or `} NAME(args);` closing a class or struct body, NAME in ALL_CAPS: an attribute macro.
_AFTER_BODY = re.compile(r"\s*\}\s*([A-Z_][A-Z0-9_]*)\s*(?:\(.*\))?\s*;")


def _attribute_macro(tag: dict, language: str) -> bool:
    """Whether a C/C++ `variable` tag is an attribute macro after a class or struct body that ctags, without the
    macro's definition, reads as a variable of the class's type: `} _GLIBCXX11_DEPRECATED;` (libstdc++'s
    `#define _GLIBCXX11_DEPRECATED _GLIBCXX_DEPRECATED`, `[[__deprecated__]]`), `} __EPOLL_PACKED;`,
    `} _GCRY_ATTR_INTERNAL;`. Of the variables ctags reports on such a line in this machine's headers and the
    npm packages' C/C++ (2026-12-07), the 29 in ALL_CAPS are all attribute macros; the real ones are not in
    capitals (LLVM's `} ForcePassLinking;`)."""
    if language not in _C_FAMILY or tag.get("kind") != "variable":
        return False
    match = _AFTER_BODY.fullmatch(tag.get("pattern", "")[2:].rstrip("$/"))
    return match is not None and match.group(1) == tag.get("name")


def _include_guards(path: str, language: str) -> set[str]:
    """A C/C++ file's include guards: each `#define NAME` without a value whose line follows `#ifndef NAME`
    (or `#if !defined(NAME)`), blank lines and comments aside."""
    if language not in _C_FAMILY:
        return set()
    with open(path, "rb") as fh:
        lines = fh.read().decode("utf-8", "replace").split("\n")
    guards, last = set(), ""
    for line in lines:
        text = line.strip()
        if not text or text.startswith(("//", "/*", "*")):
            continue
        define = re.fullmatch(r"#\s*define\s+(\w+)", text)
        tested = re.fullmatch(r"#\s*(?:ifndef\s+(\w+)|if\s+!\s*defined\s*\(?\s*(\w+)\s*\)?)", last)
        if define and tested and define.group(1) in tested.groups():
            guards.add(define.group(1))
        last = text
    return guards


def _js_defines(name: str, pattern: str, category: str) -> bool:
    """Whether a ctags JavaScript tag's line really defines ``name``.

    ctags' JavaScript parser also tags object literals as classes
    (`const o = {...}`), `X.prototype = ...` and `X.prototype.m.call(...)`
    lines, parameters and alias assignments (`a.b = c`). Keep the tags whose
    line holds a definition form for that name.
    """
    n = re.escape(name)
    forms = [rf"\bclass\s+{n}\b", rf"\bfunction\b\s*\*?\s*{n}\s*\(",
             rf"(^|[^\w$]){n}\s*=\s*(/\*.*?\*/\s*)?\(?\s*(async\s+)?(function|class)\b"]
    if category == CALLABLE:
        forms += [
            rf"(^|[^\w$.]){n}['\"\]]?\s*[:=]\s*(async\s+)?(function\b|\(|[\w$]+\s*=>)",
            rf"(^|[.]){n}\s*=\s*(async\s+)?(function\b|\([^)]*\)\s*=>|[\w$]+\s*=>)",
            rf"^/\^\s*(static\s+|async\s+|get\s+|set\s+|\*\s*)*['\"\[]?#?{n}['\"\]]?\s*\(",
        ]
    return any(re.search(f, pattern) for f in forms)


@dataclass(frozen=True)
class Tag:
    name: str
    category: str
    line: int
    kind: str


def ctags_available() -> bool:
    try:
        out = subprocess.run([CTAGS, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return "Universal Ctags" in out.stdout


def _run(path: str, ctags_lang: str) -> list[dict]:
    """ctags' JSON tags for ``path`` (line numbers, long kind names, signatures, ends)."""
    out = subprocess.run(
        [CTAGS, "--output-format=json", "--fields=+nKSe", f"--language-force={ctags_lang}", "-f", "-", path],
        capture_output=True, text=True, timeout=120, errors="replace",
    )
    tags = []
    for line in out.stdout.splitlines():
        try:
            tags.append(json.loads(line))
        except ValueError:
            continue
    return tags


def ctags_tags(path: str, language: str) -> list[Tag]:
    """The definitions ctags finds in ``path`` that an outline must list."""
    ctags_lang = CTAGS_LANGUAGE.get(language)
    if ctags_lang is None:
        return []
    kinds = {**_CTAGS_KINDS["default"], **_CTAGS_KINDS.get(language, {})}
    tags = []
    for tag in _run(path, ctags_lang):
        category = kinds.get(tag.get("kind", ""))
        name = tag.get("name", "")
        if not category or not name or "line" not in tag or name.startswith(_ANONYMOUS):
            continue
        if (language == "kotlin" and _kotlin_non_function(tag)) or _macro_call(tag, language):
            continue
        if language in _JS:
            if not _js_defines(name, tag.get("pattern", ""), category):
                continue
            category = ANY if category == TYPE else category
        tags.append(Tag(name, category, int(tag["line"]), tag["kind"]))
    return tags


# Data members of structs and classes: the outline lists a type's callables and nested types, not its data
# fields (Kotlin and Swift properties are listed: ctags calls them variables).
_DATA_MEMBERS = {"c": {"member"}, "cpp": {"member"}, "go": {"member"}, "rust": {"field"}, "java": {"field"},
                 "csharp": {"field"}, "php": set(), "javascript": {"field"}, "typescript": {"property"}}
# Kinds ctags only reports as references (imports), and C's prototypes-only extern variables.
_NOT_NAMES = frozenset({"header", "module", "namespace", "unknown", "local", "parameter", "label",
                        "macroparam", "package", "heredoc"})  # a shell here-document's delimiter (`<<_ACEOF`)


def ctags_names(path: str, language: str) -> list[Tag]:
    """Every name ctags reports with its default kinds that an outline should let the model see: all but
    references, locals (Kotlin's are reported: variables scoped in a function), lambdas, data members (see
    _DATA_MEMBERS), and in C and C++ include guards, macro calls ctags takes for functions (_macro_call) and
    attribute macros after a class body it takes for variables (_attribute_macro)."""
    ctags_lang = CTAGS_LANGUAGE.get(language)
    if ctags_lang is None:
        return []
    skip = _NOT_NAMES | _DATA_MEMBERS.get(language, set())
    tags = []
    in_function = _local_or_data(path, language) if language in _LOCAL_KINDS else None
    guards = _include_guards(path, language)
    for tag in _run(path, ctags_lang):
        if _macro_call(tag, language) or _attribute_macro(tag, language) or (
                tag.get("kind") == "macro" and tag.get("name") in guards):
            continue
        name, kind = tag.get("name", ""), tag.get("kind", "")
        local = tag.get("scopeKind") in ("method", "function") and kind in ("variable", "constant")  # Kotlin's
        local = local or (language == "kotlin" and _kotlin_non_function(tag))
        local = local or name.startswith("-")  # ctags' `alias -g` of autoconf's `alias -g '${1+"$@"}'=...`: an option
        if name and kind not in skip and "line" in tag and not name.startswith(_ANONYMOUS) and not local:
            if in_function is not None and kind in _LOCAL_KINDS[language] and in_function(int(tag["line"]), name):
                continue
            tags.append(Tag(name, kind, int(tag["line"]), kind))
    return tags


_JS_LOCAL_KINDS = frozenset({"constant", "variable", "property", "class"})  # ctags' `class`: an object literal
# Kinds of the names a language's ctags parser reports as a type's or a file's that can be a function's locals.
_LOCAL_KINDS = {**{lang: _JS_LOCAL_KINDS for lang in _JS}, "kotlin": frozenset({"constant", "variable"}),
                "bash": frozenset({"function"})}
# Shell code in a string is data until something evals it (autoconf's `as_required="as_fn_success () {...}"`):
# ctags' shell parser tags its functions.
_SH_STRINGS = frozenset({"string", "raw_string"})
# Kotlin's bodies of code: ctags 5.9 scopes a function's `val` to it (left out above) but an `init` block's, a
# getter's or a lambda's to the class (58 of the 94 Kotlin names of npm packages' sources the outline "missed",
# 2026-12-07): locals all the same, which the outline never lists.
_KOTLIN_BODIES = frozenset({"function_body", "anonymous_initializer", "getter", "setter", "lambda_literal"})
_JS_FUNCTIONS = frozenset({"function_declaration", "function_expression", "arrow_function", "method_definition",
                           "generator_function", "generator_function_declaration", "class_static_block"})


# JavaScript and TypeScript object literals (and object types, a .d.ts's): a key of one held by another's key.
_JS_OBJECTS = frozenset({"object", "object_type"})


def _local_or_data(path: str, language: str):  # noqa: ANN202 (a closure)
    """A test of whether a name on a line is a local or data, not a definition: in JavaScript and TypeScript a
    key of an object literal inside another (`ZoomInData = {ZoomIn: {style: {0: {transform: ...}}}}`: ctags
    tags `style`, `0` and `transform` as properties and classes; the outline lists the first level's keys,
    `ZoomIn`, names code uses, but not the data below: 1,223 of the 2,556 JavaScript and TypeScript names of npm
    packages' sources it did not show, 2026-12-07); or a name inside a function body, by the tree-sitter parse
    (of the file's
    own language: TypeScript parsed as JavaScript is one ERROR node): after a `#private` method ctags'
    JavaScript parser loses its scope and reports the method's `const`s, `let`s and object keys as the file's
    (393 of the 640 JavaScript names the outline did not show, 2026-11-24); its TypeScript parser reports a
    function's locals as constants and variables of the file; Kotlin: _KOTLIN_BODIES."""
    from parser.grammars import get_parser

    with open(path, "rb") as fh:
        source = fh.read()
    root = get_parser(language).parse(source).root_node
    lines = source.split(b"\n")

    def inside(line: int, name: str) -> bool:
        text = lines[line - 1] if 0 < line <= len(lines) else b""
        col = text.find(name.encode())
        if col < 0 and line < len(lines) and name.encode() in lines[line]:  # ctags put it a line early (express'
            line, text = line + 1, lines[line]                               # tests: `app.locals.user = {...}`)
            col = text.find(name.encode())
        if col < 0:
            return False
        node = root.descendant_for_point_range((line - 1, col), (line - 1, col + len(name)))
        objects = 0
        while node is not None and node.parent is not None:
            if node.type in (_KOTLIN_BODIES if language == "kotlin" else _SH_STRINGS if language == "bash" else ()):
                return True
            objects += node.type in _JS_OBJECTS
            if objects >= 2:
                return True
            body = node.parent.child_by_field_name("body") if node.parent.type in _JS_FUNCTIONS else None
            if body is not None and body.start_byte == node.start_byte and body.end_byte == node.end_byte:
                return True
            node = node.parent
        return False

    return inside


def visible(text: str, tags: list[Tag]) -> list[Tag]:
    """The tags whose name appears in ``text`` as a whole word (what the model can see, whatever the row); a
    shared prefix written once counts for each name (`OBJ_{STRING, LIST}` shows OBJ_STRING and OBJ_LIST)."""
    words = set(re.findall(r"[\w$]+", text))
    if "companion" in words:  # Kotlin names an unnamed companion object `Companion` (ctags too): see _norm
        words.add("Companion")
    inner = re.compile(r"([\w$]+)\{([^{}]*)\}")
    while True:  # innermost groups first: OBJ_{A, ENCODING_{RAW, INT}} -> OBJ_{A, ENCODING_RAW, ENCODING_INT}
        expanded = inner.sub(lambda m: ", ".join(m.group(1) + n.strip() for n in m.group(2).split(",")), text)
        if expanded == text:
            break
        text = expanded
        words.update(re.findall(r"[\w$]+", text))
    return [t for t in tags if t.name in words or all(part in words for part in re.findall(r"[\w$]+", t.name))]


def _norm(name: str) -> str:
    # JS private members: ctags drops the `#`; C++: "operator ==" vs "operator=="; Kotlin: ctags names a
    # companion object by its implicit name `Companion`, the outline by its keyword.
    return "".join(name.lstrip("#").split()).replace("Companion", "companion")


def missing(outline: Outline, tags: list[Tag]) -> list[Tag]:
    """Tags with no outline symbol of that name and category spanning its line."""
    index: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for s in outline.symbols:
        category = _OUR_KINDS.get(s.kind)
        if category:
            name = _norm(s.name)
            index.setdefault((name, category), []).append((s.start_line, s.end_line))
    def found(t: Tag) -> bool:
        cats = (CALLABLE, TYPE) if t.category == ANY else (t.category,)
        return any(a <= t.line <= b for c in cats for a, b in index.get((_norm(t.name), c), ()))

    return [t for t in tags if not found(t)]
