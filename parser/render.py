"""Render an Outline as the compact text the model reads instead of the file.

One line for imports, then one line per symbol: its first-last file line,
its signature and, for long bodies, the first line of its doc; two spaces
of indentation per nesting level::

    imports (4): os, re, typing (2), .utils
    12-40 class Cache(Base) # LRU cache of outlines
      15-20 def get(key: str) -> bytes | None
      22-30 def *(): clear, close, flush

Every symbol stays named. Two kinds of runs share a line: siblings whose
signatures differ only by their name (`def *(): clear, close, flush`: the
signature is printed once, `*` standing for each name), and runs of
constants (their values are what makes such files long). ``read_text``
is what a full Read returns (the header of parser/header.py above it), so that
the benchmark measures exactly what the model receives.
"""

from __future__ import annotations

from parser.header import MAX_SHOWN_SHARE, has_groups, read_header

TYPE_CHECKING = False  # importing typing costs a hook several ms
if TYPE_CHECKING:
    from collections.abc import Callable

    from parser.outline import Outline, Symbol

    # A symbol's (shown signature, doc, shape) as a render uses them (_parts).
    Parts = tuple[str, str, str | None]

MAX_IMPORTS_SHOWN = 20
IMPORT_NAME_CHARS = 40
# Docs are shown for symbols of at least this many lines: a short body is
# cheaper to read than to summarise. (to_json keeps every doc.)
DOC_MIN_LINES = 10
DOC_MAX_CHARS = 50
# A run of this many constants/variables in a row (a Go const block, a wall of
# #defines, a table of settings) becomes one line of names: their values are
# what makes such files long, and the model can read the range if it needs them.
GROUP_MIN = 4
GROUP_MAX_GAP = 10  # lines between two constants of one run
_GROUPED_KINDS = frozenset({"constant", "variable"})
# Siblings with the same signature but for the name (getters, `fn test_x()`,
# overloads of one shape) share a line once there are this many in a row; a member whose doc is shown
# keeps its own line (and doc).
SAME_SHAPE_MIN = 2
SAME_SHAPE_MAX_GAP = 30  # lines between two members of one run (their doc comments); constants: GROUP_MAX_GAP
# A member's end goes without saying when the next one starts within this many lines of it.
IMPLIED_END_GAP = 3
# Types (classes, structs...) are landmarks: each keeps its line.
_SHAPE_KINDS = frozenset({"function", "method", "constant", "variable", "field", "property", "macro"})
# The keyword that introduces a function: the row's parameter list already says it is one.
_FUNCTION_KEYWORD = {"python": "def", "go": "func", "rust": "fn", "php": "function", "javascript": "function",
                     "typescript": "function", "tsx": "function", "kotlin": "fun", "swift": "func",
                     "ruby": "def", "scala": "def", "lua": "function", "bash": "function"}
_CALLABLE_KINDS = frozenset({"function", "method"})
# Languages where members are public unless they say otherwise: `public` says nothing.
_PUBLIC_BY_DEFAULT = frozenset({"php", "typescript", "tsx", "kotlin"})
# Languages whose methods take an explicit receiver that the nesting implies.
_IMPLIED_RECEIVER = frozenset({"python"})


def read_text(outline: Outline, original_tokens: int) -> tuple[str, int] | None:
    """What a full Read returns for this outline, header included, and its estimated tokens; None when
    the Read passes through (no outline, or one not worth withholding the body for)."""
    from parser.tokens import estimate_tokens

    if not outline.parsed or not outline.symbols:
        return None
    body = render(outline)
    shown = estimate_tokens(body)
    if shown > original_tokens * MAX_SHOWN_SHARE:
        return None
    grouped = has_groups(body)
    # As the Read hook does: the header's own tokens count as shown.
    shown += estimate_tokens(read_header(outline.total_lines, original_tokens, shown, grouped))
    return read_header(outline.total_lines, original_tokens, shown, grouped) + body, shown


def _grouped_imports(names: list[str]) -> list[str]:
    """`llvm/ADT/{StringRef.h, Triple.h}`, `core::{fmt, mem}`: a shared folder or path is written once."""
    groups: dict[str, list[str]] = {}
    for name in names:
        cut = max(name.rfind("/"), name.rfind("::") + 1 if "::" in name else -1)
        if "{" in name or cut <= 0 or cut >= len(name) - 1:
            groups.setdefault(name, [])
        else:
            groups.setdefault(name[: cut + 1], []).append(name[cut + 1:])
    out = []
    for head, tails in groups.items():
        if len(tails) > 1:
            out.append(f"{head}{{{', '.join(tails)}}}")
        else:
            out.append(head + (tails[0] if tails else ""))
    return out


def _imports_line(outline: Outline) -> str | None:
    if not outline.imports:
        return None
    names = _grouped_imports([name if len(name) <= IMPORT_NAME_CHARS else name[: IMPORT_NAME_CHARS - 1] + "…"
                              for name in outline.imports])
    shown = names[:MAX_IMPORTS_SHOWN]
    more = len(names) - len(shown)
    tail = f", +{more} more" if more > 0 else ""
    return f"imports: {', '.join(shown)}{tail}"  # a count would repeat what the list (or its +N) says


def _compact_signature(signature: str, language: str | None = None) -> str:
    if language not in _IMPLIED_RECEIVER:
        return signature
    # A Python method's self/cls is implied by its nesting under the class: ~2 tokens per method.
    for receiver in ("self", "cls"):
        signature = signature.replace(f"({receiver}, ", "(").replace(f"({receiver},", "(").replace(
            f"({receiver})", "()")
    return signature


# C/C++ export and attribute macros that say nothing to a reader of the outline (-> ""), or that stand for a
# keyword the reader knows (-> it). `static`, `inline`, `const`, `virtual`, `noexcept`, `template<...>` stay.
_C_MACROS = {
    "_GLIBCXX_NOEXCEPT": "noexcept", "_GLIBCXX_USE_NOEXCEPT": "noexcept", "_GLIBCXX_NOTHROW": "noexcept",
    "_GLIBCXX_NOEXCEPT_IF": "noexcept", "_GLIBCXX_CONSTEXPR": "constexpr", "_GLIBCXX_USE_CONSTEXPR": "constexpr",
    "_GLIBCXX_ALWAYS_INLINE": "inline", "LLVM_LVALUE_FUNCTION": "&",
    "_GLIBCXX_NODISCARD": "", "_GLIBCXX14_CONSTEXPR": "", "_GLIBCXX17_CONSTEXPR": "",
    "_GLIBCXX20_CONSTEXPR": "", "_GLIBCXX23_CONSTEXPR": "", "_GLIBCXX_VISIBILITY": "", "_GLIBCXX_PURE": "",
    "_GLIBCXX_CONST": "", "_GLIBCXX_TXN_SAFE": "", "_GLIBCXX_TXN_SAFE_DYN": "", "_GLIBCXX_THROW": "",
    "_GLIBCXX_THROW_OR_ABORT": "", "LLVM_ABI": "", "LLVM_NODISCARD": "", "LLVM_READONLY": "",
    "LLVM_READNONE": "", "LLVM_LIBRARY_VISIBILITY": "", "LLVM_EXTERNAL_VISIBILITY": "", "LLVM_DUMP_METHOD": "",
    "LLVM_ATTRIBUTE_ALWAYS_INLINE": "inline", "LLVM_ATTRIBUTE_NOINLINE": "", "LLVM_ATTRIBUTE_UNUSED": "",
    "LLVM_ATTRIBUTE_USED": "", "LLVM_ATTRIBUTE_RETURNS_NONNULL": "", "LLVM_ATTRIBUTE_RETURNS_NOALIAS": "",
    "LLVM_ATTRIBUTE_DEPRECATED": "", "LLVM_GSL_OWNER": "", "LLVM_GSL_POINTER": "",
    "__wur": "", "__THROW": "",
}
# `PyAPI_FUNC(PyObject *) f(...)`: the macro's argument is the return type.
_C_TYPE_MACROS = ("PyAPI_FUNC(", "PyAPI_DATA(")
_C_MACRO_PREFIXES = ("_GLIBCXX", "LLVM_", "__wur", "__THROW")  # every key of _C_MACROS starts with one


def _c_signature(signature: str) -> str:
    """A C/C++ signature without the export/attribute macros of _C_MACROS, `PyAPI_FUNC(T) f` as `T f`.
    String search, not a regex: compiling an alternation of the macros cost a cold hook ~5 ms."""
    if "_" not in signature or signature.startswith("#"):  # a #define of the macro itself is what it says
        return signature
    for macro in _C_TYPE_MACROS if "PyAPI_" in signature else ():
        at = signature.find(macro)
        if at >= 0 and (at == 0 or signature[at - 1] == " "):
            close = signature.find(")", at)
            if close > 0:
                kind = signature[at + len(macro):close]
                base = kind.rstrip("*& ")  # `PyObject *` / `PyObject*` -> `PyObject *name`
                pointer = kind[len(base):].replace(" ", "")
                signature = f"{signature[:at]}{base.strip()} {pointer}{signature[close + 1:].lstrip()}"
    if not _holds_any(signature, _C_MACRO_PREFIXES):
        return signature
    changed = False
    for macro, keyword in _C_MACROS.items():
        at = signature.find(macro)
        while at >= 0:
            end = at + len(macro)
            if (at and _word_char(signature[at - 1])) or (end < len(signature) and _word_char(signature[end])):
                at = signature.find(macro, end)  # part of a longer name
                continue
            # A macro that becomes a keyword keeps its arguments (`_GLIBCXX_NOEXCEPT_IF(x)` -> `noexcept(x)`);
            # one that becomes nothing loses them (`_GLIBCXX_VISIBILITY(default)`).
            signature = signature[:at] + keyword + signature[end if keyword else _after_args(signature, end):]
            changed = True
            at = signature.find(macro, at + len(keyword))
    return " ".join(signature.split()) if changed else signature


def _holds_any(text: str, needles: tuple[str, ...]) -> bool:
    """any(n in text for n in needles) without a generator: MemorySSA.h's render 0.96 -> 0.90 ms."""
    for needle in needles:
        if needle in text:
            return True
    return False


def _word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _after_args(text: str, at: int) -> int:
    """Where the parenthesised argument list starting at `at` (after spaces) ends; `at` if there is none."""
    i = at
    while i < len(text) and text[i] == " ":
        i += 1
    if i >= len(text) or text[i] != "(":
        return at
    depth = 0
    for j in range(i, len(text)):
        depth += text[j] == "("
        depth -= text[j] == ")"
        if depth == 0:
            return j + 1
    return at


def _shown_signature(symbol: Symbol, language: str | None) -> str:
    """The signature as a row shows it: compacted, without export macros and keywords the row implies."""
    signature = symbol.signature
    if language in _IMPLIED_RECEIVER:
        signature = _compact_signature(signature, language)
    elif language in ("c", "cpp"):
        signature = _c_signature(signature)
    if language in _PUBLIC_BY_DEFAULT:
        signature = _drop_word(signature, "public", symbol.name)
    keyword = _FUNCTION_KEYWORD.get(language or "")
    if keyword and symbol.kind in _CALLABLE_KINDS:
        signature = _drop_word(signature, keyword, symbol.name)
        if language in _OBJECT_LANGUAGES:
            signature = _bound_function(signature, symbol.name)
    elif symbol.kind in _GROUPED_KINDS and language in _OBJECT_LANGUAGES and signature.endswith("\u2026"):
        signature = _typed_head(signature, symbol.name)
    return signature


def _typed_head(signature: str, name: str) -> str:
    """`const managers: Map<number, Manager>` for `const managers: Map<number, Manager> = new Map< number,
    Mana…`: a value cut at the row's cap after a declared type is left out (the type says what it holds; a
    value's first 100 characters rarely do)."""
    at = signature.find(name + ": ")
    if at < 0 or (at and signature[at - 1] != " "):
        return signature
    value = signature.find(" = ", at + len(name) + 2)
    return signature[:value] if value > 0 else signature


def _bound_function(signature: str, name: str) -> str:
    """`isMeasurable(node)` for `const isMeasurable = node =>`, `build()` for a class's `build = () =>`, `h(a)`
    for `let h = function (a)`: a function bound to a name is shown as a declared one is (the row's parameter
    list says it is a function; `const`/`let`/`var`, `=` and `=>` say nothing more). What comes before the
    binding (`export`, `static`, a decorator) and after the parameters (a return type) stays."""
    at = signature.find(name + " = ")
    if at < 0 or (at and signature[at - 1] != " "):
        return signature
    head, rest = signature[:at], signature[at + len(name) + 3:]
    if rest.endswith("=>"):
        rest = rest[:-2].rstrip()
    elif not rest.startswith(("(", "<", "async (", "async <")):  # not a function expression (nor cut short)
        return signature
    asynchronous = rest.startswith("async ")
    rest = rest[6:] if asynchronous else rest
    if not rest.startswith(("(", "<")):
        if not rest.replace("_", "a").replace("$", "a").isalnum():  # `node =>`: one parameter, no parentheses
            return signature
        rest = f"({rest})"
    for word in ("const ", "let ", "var "):
        if head.endswith(word) and (len(head) == len(word) or head[-len(word) - 1] == " "):
            head = head[:-len(word)]
            break
    return f"{head}{'async ' if asynchronous else ''}{name}{rest}"


def _drop_word(signature: str, word: str, name: str) -> str:
    """`signature` without the keyword `word` that introduces `name` (`def f`, `func (r *T) f`,
    `public static function f`); decorators before it may mention the name (`@f.setter def f`)."""
    at = signature.find(word + " ")
    while at >= 0:
        rest = signature[at + len(word) + 1:]
        if (at == 0 or signature[at - 1] == " ") and (
                word == "public" or rest.startswith(name) or rest.startswith("(")):
            return signature[:at] + rest
        at = signature.find(word + " ", at + 1)
    return signature


def _span(start: int, end: int) -> str:
    return f"{start}" if start == end else f"{start}-{end}"


def _doc(symbol: Symbol) -> str:
    if symbol.end_line - symbol.start_line + 1 < DOC_MIN_LINES or not symbol.doc:  # doc: on first read
        return ""
    text = symbol.doc
    if len(text) > DOC_MAX_CHARS:  # cut at a word: the first words carry the meaning
        cut = text.rfind(" ", 0, DOC_MAX_CHARS)
        text = text[: cut if cut > DOC_MAX_CHARS // 2 else DOC_MAX_CHARS].rstrip(",;:(- ") + "…"
    for lead in (symbol.name + " ", symbol.name + ": "):  # Go's `// Foo reports...`: the row names Foo
        if text.startswith(lead) and len(text) > len(lead) + 10:
            text = text[len(lead):]
            break
    if "`" in text:  # Markdown code and intra-doc links (Rust's [`None`]): the words are what is read
        text = text.replace("[`", "").replace("`]", "").replace("`", "")
    return f" # {text}"


def symbol_line(symbol: Symbol, language: str | None = None) -> str:
    return _row(symbol, _shown_signature(symbol, language), _doc(symbol))


def _row(symbol: Symbol, signature: str, doc: str) -> str:
    """symbol_line given the symbol's shown signature and doc (_parts)."""
    if signature.endswith("…") and symbol.name not in signature:  # cut before its name (a long typedef)
        signature = f"{signature} {symbol.name}"
    return f"{'  ' * symbol.depth}{_span(symbol.start_line, symbol.end_line)} {signature}{doc}"


def _constants_line(run: list[Symbol], keys: dict[int, list[str]]) -> str:
    """Every name of the run: a name the model cannot see is one it cannot ask for."""
    first, last = run[0], run[-1]
    return (f"{'  ' * first.depth}{_span(first.start_line, last.end_line)} "
            f"{len(run)} constants: {_names(run, keys)}")


def _names(run: list[Symbol], keys: dict[int, list[str]]) -> str:
    """The run's names (name_list), each object's keys after its name: `colors {aqua, black}, MATCHERS {rgb}`."""
    if not keys:  # (most runs)
        return name_list([s.name for s in run])
    out: list[str] = []
    plain: list[str] = []  # names without keys since the last object's: written as name_list writes them
    owners: dict[tuple[str, ...], str] = {}  # a list of keys -> the first object of the row that has it
    for k, symbol in enumerate(run):
        if k not in keys:
            plain.append(symbol.name)
            continue
        if plain:
            out.append(name_list(plain))
            plain = []
        # An object with the same keys as one before it (`FadeIn = {FadeIn: ..., FadeInRight: ...}` built from
        # `FadeInData`, a state table and its transitions) names that one, its keys already on the row.
        same = owners.setdefault(tuple(keys[k]), symbol.name)
        shown = f"{{as {same}}}" if same != symbol.name else _key_list(keys[k])
        out.append(f"{symbol.name} {shown}")  # not `name{`: that is a shared prefix (name_list)
    if plain:
        out.append(name_list(plain))
    return ", ".join(out)


KEYS_SHOWN = 100_000


def _key_list(keys: list[str]) -> str:
    """`{aqua, black, +130 more}`: an object's first KEYS_SHOWN keys (a colour table's, a config's 180 style
    properties: the names a reader looks for are among the first, the rest a Read of its lines away)."""
    more = len(keys) - KEYS_SHOWN
    return "{" + name_list(keys[:KEYS_SHOWN] if more > 0 else keys, camel=True) + (
        f", +{more} more}}" if more > 0 else "}")


_OBJECT_LANGUAGES = frozenset({"javascript", "typescript", "tsx"})


def _object_head(signature: str) -> str:
    """`const SvgTouchableMixin = {…}`: a constant's object literal whose members are the rows below it is not
    shown again in its signature (100 characters of its first method's body, say)."""
    at = signature.find("= {")
    return signature[:at + 3] + "\u2026}" if at >= 0 else signature


def _keyed_row(symbol: Symbol, language: str | None, keys: list[str]) -> str:
    """`5-90 export const FadeInData {FadeIn, FadeInRight}`: the signature to the name, then the object's keys
    (its value, a wall of nested data, is a Read away)."""
    signature = _shown_signature(symbol, language)
    at = signature.find(symbol.name)
    head = signature[:at + len(symbol.name)] if at >= 0 else symbol.name
    return f"{'  ' * symbol.depth}{_span(symbol.start_line, symbol.end_line)} {head} {_key_list(keys)}"


def _keys_end(symbols: list[Symbol], i: int) -> int | None:
    """Where symbols[i]'s children end when they are only its own keys (fields one level below it: a JavaScript
    object's, a TypeScript object type's, parser/variables.py), None when it holds anything else."""
    j = i + 1
    depth = symbols[i].depth + 1
    while j < len(symbols) and symbols[j].depth > symbols[i].depth:
        if symbols[j].depth != depth or symbols[j].kind != "field":
            return None
        j += 1
    return j


PREFIX_MIN_RUN = 3  # names in a row sharing a prefix before it is written once


def name_list(names: list[str], camel: bool = False) -> str:
    """`A, B, OBJ_{LIST, SET, ENCODING_{RAW, INT, HT}}`: each name in order, a prefix up to an `_` shared by
    a run of PREFIX_MIN_RUN or more written once, and so on within it (a wall of `#define`s or enumerators is
    mostly its prefixes); with `camel`, a prefix may end where a camelCase word does (`margin{Top, Left}`)."""
    out: list[str] = []
    i = 0
    while i < len(names):
        prefix, j = _camel_run(names, i) if camel else (_prefix(names[i]), i + 1)
        while prefix and j < len(names) and names[j].startswith(prefix) and len(names[j]) > len(prefix):
            j += 1
        if prefix and j - i >= PREFIX_MIN_RUN:
            out.append(f"{prefix}{{{name_list([n[len(prefix):] for n in names[i:j]], camel)}}}")  # OBJ_{RAW}
            i = j
        else:
            out.append(names[i])
            i += 1
    return ", ".join(out)


def _camel_run(names: list[str], i: int) -> tuple[str, int]:
    """The prefix of names[i] (up to an `_` or a camelCase word's end) that saves the most characters written
    once for the run of names from i that share it, and the run's end ("" and i + 1 when none is shared)."""
    name = names[i]
    best, best_end, saved = "", i + 1, 0
    for cut in range(2, len(name)):
        if not (name[cut - 1] == "_" or name[cut].isupper() and (
                not name[cut - 1].isupper() or cut + 1 < len(name) and name[cut + 1].islower())):
            continue
        prefix = name[:cut]
        j = i + 1
        while j < len(names) and names[j].startswith(prefix) and len(names[j]) > cut:
            j += 1
        if j - i >= PREFIX_MIN_RUN and (j - i - 1) * cut > saved:
            best, best_end, saved = prefix, j, (j - i - 1) * cut
    return best, best_end


def _prefix(name: str) -> str:
    """`OBJ_ENCODING_` of `OBJ_ENCODING_RAW`: up to the last inner `_` (none for `_x` or `x_`)."""
    cut = name.rstrip("_").rfind("_")
    return name[:cut + 1] if cut > 0 and name[:cut].strip("_") else ""


def _parts(symbols: list[Symbol], k: int, language: str | None, parts: list[Parts | None]) -> Parts:
    """symbols[k]'s parts, kept in `parts`: each is worked out once a render (a symbol is looked at as a run's
    member, then for its own row or as the next run's start)."""
    found = parts[k]
    if found is None:
        symbol = symbols[k]
        signature, doc = _shown_signature(symbol, language), _doc(symbol)
        found = parts[k] = signature, doc, _shape(symbol, signature) if not doc else None
    return found


def _shape(symbol: Symbol, signature: str) -> str | None:
    """The signature (as shown) with the name replaced by `*`, or None when the symbol keeps its own line
    (or has a doc shown: see _parts)."""
    if symbol.kind not in _SHAPE_KINDS:
        return None
    name = symbol.name
    at = signature.find(name)
    while at >= 0:  # the name as a whole word
        before = signature[at - 1] if at else " "
        after = signature[at + len(name)] if at + len(name) < len(signature) else " "
        if not (before.isalnum() or before in "_$") and not (after.isalnum() or after in "_$"):
            return f"{symbol.kind}\0{signature[:at]}*{signature[at + len(name):]}"
        at = signature.find(name, at + 1)
    return None


def _member(symbol: Symbol, following: Symbol | None) -> str:
    """`add 10` when add's end goes without saying (the next member starts right after it, or it is the row's
    last: the row's range ends with it), else `add 10-24`."""
    implied = following is None or following.start_line - symbol.end_line <= IMPLIED_END_GAP
    return f"{symbol.name} {symbol.start_line if implied else _span(symbol.start_line, symbol.end_line)}"


def _shape_line(run: list[Symbol], shape: str) -> str:
    """`10-30 def *(a, b): add 10, sub 14, mul 18`: each name with its first line (and its last where the
    next does not follow right after), unless the members are one-liners on consecutive lines (a block of
    declarations), where the position goes without saying."""
    first, last = run[0], run[-1]
    dense = all(s.start_line == s.end_line for s in run) and all(
        b.start_line == a.start_line + 1 for a, b in zip(run, run[1:], strict=False))
    names = ", ".join(s.name if dense else _member(s, run[k + 1] if k + 1 < len(run) else None)
                      for k, s in enumerate(run))
    return f"{'  ' * first.depth}{_span(first.start_line, last.end_line)} {shape.split(chr(0), 1)[1]}: {names}"


def _has_children(symbols: list[Symbol], i: int) -> bool:
    return i + 1 < len(symbols) and symbols[i + 1].depth > symbols[i].depth


def _sibling(symbols: list[Symbol], i: int, j: int) -> bool:
    """Whether symbols[j] follows symbols[j - 1] as a sibling of symbols[i], with no child and no big gap."""
    a, b = symbols[i], symbols[j]
    return (b.depth == a.depth and b.parent == a.parent and not _has_children(symbols, j)
            and b.start_line - symbols[j - 1].end_line <= (
                GROUP_MAX_GAP if b.kind in _GROUPED_KINDS else SAME_SHAPE_MAX_GAP))


def _shape_run(symbols: list[Symbol], i: int, language: str | None, parts: list[Parts | None]) -> int:
    """Where the run of same-shape siblings starting at i ends (i when there is no run)."""
    shape = _parts(symbols, i, language, parts)[2]
    if shape is None or _has_children(symbols, i):
        return i
    j = i + 1
    while j < len(symbols) and _sibling(symbols, i, j) and _parts(symbols, j, language, parts)[2] == shape:
        j += 1
    return j if j - i >= SAME_SHAPE_MIN else i


def _same_names_only(kind: str) -> Callable[[Symbol], bool]:
    """Whether a symbol is a names-only `kind` (a run's member): fields with fields, variables with variables."""
    return lambda symbol: symbol.kind == kind and _names_only(symbol)


def _valued(symbol: Symbol) -> bool:
    """A constant or variable shown with its value (not _names_only): runs of them share a names row."""
    return symbol.kind in _GROUPED_KINDS and not _names_only(symbol)


def _names_only(symbol: Symbol) -> bool:
    """A data member (C++ `fields:`), or a variable whose signature is its name (parser/variables.py: a
    Python, JavaScript, TypeScript or PHP variable, shown without its value), written on a names-only row."""
    return symbol.kind == "field" or (symbol.kind == "variable" and symbol.signature == symbol.name)


def _run(symbols: list[Symbol], i: int,
         member: Callable[[Symbol], bool]) -> tuple[list[Symbol], dict[int, list[str]], int]:
    """The run of siblings from i that `member` accepts, with no big gap between them: (its symbols, the keys
    of those that hold only their own keys, by position in the run: written after their names, not on rows of
    their own, see _keys_end), and where it ends in `symbols`. A symbol that holds anything else ends it."""
    run: list[Symbol] = []
    keys: dict[int, list[str]] = {}
    j, size, depth, parent = i, len(symbols), symbols[i].depth, symbols[i].parent
    while j < size:
        symbol = symbols[j]
        if not (member(symbol) and symbol.depth == depth and symbol.parent == parent
                and (not run or symbol.start_line - run[-1].end_line <= GROUP_MAX_GAP)):
            break
        run.append(symbol)
        if j + 1 == size or symbols[j + 1].depth <= depth:  # holds nothing (most): _keys_end would say j + 1
            j += 1
            continue
        end = _keys_end(symbols, j)
        if end is None:  # holds more than keys: the run's last, its members' rows follow it
            j += 1
            break
        if end > j + 1:
            keys[len(run) - 1] = [s.name for s in symbols[j + 1:end]]
        j = end
    return run, keys, j


# The kinds a run of names starts with (_valued's and _names_only's).
_RUN_KINDS = _GROUPED_KINDS | {"field"}


def _names_row(symbols: list[Symbol], i: int, language: str | None, lines: list[str]) -> int:
    """The row of the run of names (constants and variables with values, or names only) or of the object's keys
    starting at symbols[i], appended to `lines`; where it ends in `symbols` (i when there is none)."""
    run, keys, j = _run(symbols, i, _valued)
    if len(run) >= GROUP_MIN:
        lines.append(_recovered(_constants_line(run, keys), symbols[i:j]))
        return j
    if 0 in keys:  # a constant holding an object: its keys stand for its value (a row, not two)
        j = i + 1 + len(keys[0])
        lines.append(_recovered(_keyed_row(symbols[i], language, keys[0]), symbols[i:j]))
        return j
    kind = symbols[i].kind
    run, keys, j = _run(symbols, i, _same_names_only(kind)) if _names_only(symbols[i]) else ([], {}, i)
    if run:  # data members, variables: their names, one row per run (types and values a Read away)
        label = "fields" if kind == "field" else "vars"
        lines.append(_recovered(f"{'  ' * symbols[i].depth}{_span(symbols[i].start_line, run[-1].end_line)} "
                                f"{label}: {_names(run, keys)}", symbols[i:j]))
        return j
    return i


def symbol_lines(symbols: list[Symbol], language: str | None = None) -> list[str]:
    """One line per symbol; runs of constants and of same-shape siblings share a line."""
    lines: list[str] = []
    parts: list[Parts | None] = [None] * len(symbols)
    i = 0
    while i < len(symbols):
        if symbols[i].kind in _RUN_KINDS:  # (not a function or a class, most rows: no run starts there)
            j = _names_row(symbols, i, language, lines)
            if j > i:
                i = j
                continue
        j = _shape_run(symbols, i, language, parts)
        signature, doc, shape = _parts(symbols, i, language, parts)
        if j > i:
            lines.append(_recovered(_shape_line(symbols[i:j], shape or ""), symbols[i:j]))
            i = j
            continue
        if symbols[i].kind in _GROUPED_KINDS and language in _OBJECT_LANGUAGES and _has_children(symbols, i):
            signature = _object_head(signature)
        lines.append(_recovered(_row(symbols[i], signature, doc), symbols[i:i + 1]))
        i += 1
    return lines


RECOVERED_MARK = "~"


def _recovered(line: str, symbols: list[Symbol]) -> str:
    """`line` with RECOVERED_MARK before its line range when one of its symbols was found by parsing the lines
    after a syntax error again (parser/outline.py _recover): `  ~907-1004 abstract class Factory`."""
    if not any(s.recovered for s in symbols):
        return line
    text = line.lstrip(" ")
    return line[:len(line) - len(text)] + RECOVERED_MARK + text


MAX_ERROR_RANGES = 8


def _errors_line(outline: Outline) -> str:
    """`syntax errors at lines 30, 41-43 (2% of lines); outline may be partial`: where the code is broken,
    so that the model can read those lines."""
    ranges = [_span(a, b) for a, b in outline.error_lines]
    shown = ", ".join(ranges[:MAX_ERROR_RANGES]) + (f" and {len(ranges) - MAX_ERROR_RANGES} more places"
                                                     if len(ranges) > MAX_ERROR_RANGES else "")
    share = max(outline.error_ratio, 0.01)  # never print "0%" for a broken file
    where = f"at line{'s' if len(ranges) > 1 or '-' in shown else ''} {shown} " if ranges else ""
    line = f"syntax errors {where}({share:.0%} of lines); outline may be partial"
    if any(s.recovered for s in outline.symbols):
        line += f"; {RECOVERED_MARK}: found by parsing again after an error"
    if outline.unread_lines:
        unread = [_span(a, b) for a, b in outline.unread_lines]
        line += f"; lines {', '.join(unread[:MAX_ERROR_RANGES])} not read (over the parse budget): Read offset+limit"
    return line


def fallback_text(outline: Outline) -> str:
    reason = f" ({outline.reason})" if outline.reason else ""
    return f"{outline.total_lines} lines, {outline.total_bytes} bytes, no outline available{reason}"


def _fit(outline: Outline, head: list[str], max_chars: int) -> list[str]:
    """Drop the deepest symbols first, then the tail, to fit ``max_chars``."""
    symbols = outline.symbols
    max_depth = max((s.depth for s in symbols), default=0)
    while max_depth > 0:
        max_depth -= 1
        kept = [s for s in symbols if s.depth <= max_depth]
        body = symbol_lines(kept, outline.language)
        note = f"… {len(symbols) - len(kept)} nested symbols omitted"
        if sum(len(x) + 1 for x in head + body) + len(note) <= max_chars:
            return head + body + [note]
    body = symbol_lines([s for s in symbols if s.depth == 0], outline.language)
    kept_lines: list[str] = []
    used = sum(len(x) + 1 for x in head) + 40  # room for the closing note
    for line in body:
        if used + len(line) + 1 > max_chars:
            break
        kept_lines.append(line)
        used += len(line) + 1
    return head + kept_lines + [f"… {len(body) - len(kept_lines)} more top-level lines omitted"]


def render(outline: Outline, max_chars: int | None = None) -> str:
    """The outline as text; ``max_chars`` trims it to fit a budget."""
    if not outline.parsed:
        return fallback_text(outline)
    lines: list[str] = []
    imports = _imports_line(outline)
    if imports:
        lines.append(imports)
    if outline.error_ratio > 0:
        lines.append(_errors_line(outline))
    if not outline.symbols:
        lines.append(f"no symbols found ({outline.total_lines} lines)")
        return "\n".join(lines)
    head_count = len(lines)
    lines.extend(symbol_lines(outline.symbols, outline.language))
    text = "\n".join(lines)
    if max_chars is not None and len(text) > max_chars:
        text = "\n".join(_fit(outline, lines[:head_count], max_chars))[:max_chars]
    return text
