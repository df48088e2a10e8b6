"""Broken code and hidden names, one committed fixture per case (tests/parser/fixtures/cases/, written for
these tests): definitions after a syntax error, ranges that end where the code does, the broken lines named,
and every name the outline lists visible in the text the model reads."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from parser import outline_file, outline_source
from parser.outline import Outline
from parser.render import name_list
from tests.support.ctags_oracle import Tag, ctags_available, ctags_names, ctags_tags, missing, visible

CASES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "cases")


def _case(name: str) -> tuple[Outline, str]:
    outline = outline_file(os.path.join(CASES, name))
    return outline, outline.render()


def _rows(outline: Outline) -> dict[str, tuple[str, int, int]]:
    return {s.qualified_name: (s.kind, s.start_line, s.end_line) for s in outline.symbols}


# --- 3. Broken code -------------------------------------------------------------------------------------------

def test_kotlin_error_inside_a_class_keeps_the_class_and_everything_after_it() -> None:
    # A Java ternary on line 30 made tree-sitter wrap the whole class in one ERROR node: only `read` was left.
    outline, text = _case("stream_broken.kt")
    rows = _rows(outline)
    assert rows["FrameStream"] == ("class", 6, 51)
    assert rows["FrameStream.brokenWindow"] == ("method", 25, 31)
    for name in ("FrameStream.close", "FrameStream.reset", "FrameStream.Source.pull", "FrameStream.companion.create",
                 "topLevelHelper", "defaultTimeout"):
        assert name in rows, name
    assert outline.error_lines == [(30, 30)]
    assert text.splitlines()[1] == "syntax errors at line 30 (2% of lines); outline may be partial"


def test_an_unclosed_brace_is_repaired_and_named() -> None:
    with open(os.path.join(CASES, "stream_broken.kt"), encoding="utf-8") as fh:
        source = fh.read().replace("bytesRead += x > 0 ? x : 0", "bytesRead += x")
    source = source.replace("      0L -> return\n", "      0L -> {return\n")  # never closed
    outline = outline_source(source.encode(), "stream.kt")
    rows = _rows(outline)
    assert rows["FrameStream"] == ("class", 6, 51) and "topLevelHelper" in rows and "FrameStream.reset" in rows
    assert outline.error_lines == [(27, 28)] and outline.error_ratio < 0.05


def test_the_error_share_counts_broken_lines_not_the_span_of_the_error_node() -> None:
    # The same file, unrepaired, was "syntax errors in 100% of lines" (the root itself was an ERROR node).
    source = b"fun a() {\n  val x = (1 +\n}\n\n" + b"".join(b"fun f%d() = %d\n" % (i, i) for i in range(40))
    outline = outline_source(source, "many.kt")
    assert 0 < outline.error_ratio < 0.1
    assert all(f"f{i}" in _rows(outline) for i in range(40))
    assert re.match(r"syntax errors at lines? [\d, -]+ \(\d+% of lines\)", outline.render())


def test_cpp_conditional_in_a_constructor_does_not_swallow_the_file() -> None:
    # `#if` inside a member initializer list made one class span the whole file and drop what followed.
    outline, text = _case("lock_table.cc")
    rows = _rows(outline)
    assert rows["demo.Limiter"] == ("class", 8, 30)
    assert rows["demo.Limiter.Limiter"][1:] == (10, 16)
    assert rows["demo.LockTable"] == ("class", 32, 44) and rows["demo.Scheduler"] == ("class", 46, 55)
    assert "demo.OpenFile" in rows and "demo.CloseFile" in rows
    assert outline.error_ratio == 0 and "syntax errors" not in text


def test_a_repair_reparsing_only_the_blanked_lines_gives_the_outline_of_full_parses(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The repair's candidate copies are parsed incrementally (parser/outline.py _edited: the tree of the text
    told which lines were blanked); the outlines must be those full parses give, on the broken fixtures and on
    copies of the other fixtures with lines that derail a parse dropped in."""
    import random

    from parser import outline as outline_module

    fixtures = os.path.dirname(CASES)
    paths = sorted(os.path.join(CASES, f) for f in os.listdir(CASES))
    paths += sorted(os.path.join(fixtures, f) for f in os.listdir(fixtures) if f.startswith(("sample", "Sample")))
    sources = {path: open(path, "rb").read() for path in paths}
    rng = random.Random(5)
    bad = [b"{", b"}", b"(", b"#if X", b"#endif", b"def f(:", b"class {", b"int f(", b"x = [1,", b"fun g("]
    for path in paths:
        for k in range(3):  # broken copies: two bad lines each
            lines = sources[path].split(b"\n")
            for _ in range(2):
                lines.insert(rng.randrange(len(lines) + 1), rng.choice(bad))
            stem, ext = os.path.splitext(path)
            sources[f"{stem}.broken{k}{ext}"] = b"\n".join(lines)
    with open(os.path.join(CASES, "stream_broken.kt"), "rb") as fh:  # where a Kotlin repair would differ
        sources["unclosed.kt"] = fh.read().replace(b"bytesRead += x > 0 ? x : 0", b"bytesRead += x").replace(
            b"      0L -> return\n", b"      0L -> {return\n")
    calls: list[str] = []
    real = outline_module._edited

    def edited(*args: object) -> object:
        tree = real(*args)
        if tree is not None:
            calls.append(str(args[-1]))
        return tree

    # Only the deterministic work units bound a parse here: a full parse costs more CPU than an incremental one,
    # and the CPU ceiling (a backstop for text that is not code) could cut one and not the other on a busy machine.
    monkeypatch.setattr(outline_module, "CPU_CEILING", 1e9)
    monkeypatch.setattr(outline_module, "_edited", edited)
    incremental = {path: outline_source(data, path).to_json() for path, data in sources.items()}
    assert set(calls) == outline_module._INCREMENTAL and len(calls) > 50  # repairs parsed incrementally
    monkeypatch.setattr(outline_module, "_edited", lambda *args: None)  # every candidate parsed from scratch
    for path, data in sources.items():
        assert outline_source(data, path).to_json() == incremental[path], path


def test_attribute_macros_after_a_name_keep_the_field_names() -> None:
    outline, text = _case("lock_table.cc")
    names = {s.name for s in outline.symbols}
    assert not names & {"GUARDED_BY", "ABSL_GUARDED_BY", "LOCKS_EXCLUDED", "EXCLUSIVE_LOCKS_REQUIRED"}
    assert "    41-43 fields: mu_, held_, generation_" in text.splitlines()
    assert "    52-54 fields: mu_, started_, pending_" in text.splitlines()
    assert "    49 void RunLoop() EXCLUSIVE_LOCKS_REQUIRED(mu_)" in text.splitlines()  # signatures keep them


def test_expressions_that_look_like_attribute_macros_are_left_alone() -> None:
    from parser.preprocess import mask_macros

    source = b"int f() {\n  return ARRAY_SIZE(x);\n}\n#define N MAX_OF(1, 2)\nint g_ GUARDED_BY(mu);\n"
    masked = mask_macros(source)
    assert b"return ARRAY_SIZE(x);" in masked and b"MAX_OF(1, 2)" in masked and b"GUARDED_BY" not in masked


def test_python_broken_method_leaves_the_classes_whole_and_rows_clean() -> None:
    outline, text = _case("broken_docstring.py")
    rows = _rows(outline)
    assert rows["Store"] == ("class", 6, 22) and rows["Index"] == ("class", 25, 32)
    assert rows["Index.add"] == ("method", 31, 32) and "open_store" in rows
    lines = text.splitlines()
    assert "  15-18 get(key)" in lines  # not its broken body
    assert outline.error_lines == [(16, 17)]


def test_python_class_row_never_swallows_its_docstring() -> None:
    source = (b'class Broken:\n    """Doc of broken: not for the class row."""\n\n    def f(self, a\n'
              b"        return a +\n\n    def g(self):\n        return 2\n\n\nclass After:\n    pass\n")
    outline = outline_source(source, "b.py")
    rows = _rows(outline)
    assert [s.signature for s in outline.symbols if s.name == "Broken"] == ["class Broken"]
    assert rows["Broken.g"][0] == "method" and rows["After"] == ("class", 11, 12)
    assert rows["Broken"][2] <= 8  # ends where it does, not at the next class


def test_a_broken_definition_header_is_found_by_the_lexical_fallback() -> None:
    source = b"def good(a):\n    return a\n\ndef bad(:\n    return\n\nclass Fine:\n    def m(self):\n        pass\n"
    rows = _rows(outline_source(source, "broken.py"))
    assert rows["good"] == ("function", 1, 2)  # not stretched over the broken function's body
    assert rows["bad"] == ("function", 4, 5)


def test_a_file_without_errors_is_parsed_once() -> None:
    outline, text = _case("Config.kt")
    assert outline.error_ratio == 0 and outline.error_lines == [] and "syntax errors" not in text


# --- 4. Every name visible ------------------------------------------------------------------------------------

def test_typedef_enum_shows_its_name_and_every_member() -> None:
    outline, text = _case("connection.h")
    assert text.splitlines()[0] == ("5-12 typedef enum {CONN_STATE_{NONE, CONNECTING, ACCEPTING, CONNECTED, CLOSED, "
                                    "ERROR}} ConnectionState")
    assert "19-23 typedef struct {…} Connection" in text and "25 typedef union {…} NumberValue" in text


def test_grouped_constants_list_every_name() -> None:
    outline, text = _case("connection.h")
    row = next(line for line in text.splitlines() if "constants:" in line)
    assert row == ("27-50 24 constants: OBJ_{STRING, LIST, SET, ZSET, HASH, MODULE, STREAM, ENCODING_{RAW, INT, HT, "
                   "ZIPMAP, LINKEDLIST, ZIPLIST, INTSET, SKIPLIST, EMBSTR, QUICKLIST, STREAM, LISTPACK}}, "
                   "LRU_{BITS, CLOCK_MAX, CLOCK_RESOLUTION}, OBJ_SHARED_REFCOUNT, OBJ_STATIC_REFCOUNT")
    defined = [Tag(s.name, "macro", s.start_line, "macro") for s in outline.symbols if s.kind == "constant"]
    assert len(defined) == 24 and visible(row, defined) == defined  # every name, read through its prefix


@pytest.mark.parametrize(("names", "text"), [
    (["A_X", "A_Y"], "A_X, A_Y"),  # two share a prefix: not worth braces
    (["A_X", "A_Y", "A_Z", "B"], "A_{X, Y, Z}, B"),
    (["K_X", "K_A_1", "K_A_2", "K_A_3"], "K_{X, A_{1, 2, 3}}"),
    (["K_A_1", "K_A_2", "K_A_3", "K_B"], "K_A_{1, 2, 3}, K_B"),  # the prefix is the first name's
    (["_x", "_y", "_z", "m_", "n_", "o_"], "_x, _y, _z, m_, n_, o_"),  # no prefix before a lone `_`
])
def test_name_list(names: list[str], text: str) -> None:
    assert name_list(names) == text


def test_a_row_cut_before_its_name_still_shows_it() -> None:
    source = (b"typedef struct { int a; } __attribute__((aligned(64), packed, deprecated(\"use the other one, "
              b"it is faster and smaller\"))) Aligned;\n")
    assert outline_source(source, "a.h").render().endswith("… Aligned")


def test_function_pointer_typedefs_are_named() -> None:
    source = b"typedef int (*getbufferproc)(void *, int);\ntypedef char Name4[4];\ntypedef struct a *ptr_t;\n"
    assert [s.name for s in outline_source(source, "x.h").symbols] == ["getbufferproc", "Name4", "ptr_t"]


@pytest.mark.parametrize(("source", "path", "row"), [
    (b"enum E { A, B(2), C; int x; }", "E.java", "1 enum E {A, B, C}"),
    (b"enum E { A, B = 2 }", "e.ts", "1 enum E {A, B}"),
    (b"enum E { A, B(u8), C { x: u8 } }", "e.rs", "1 enum E {A, B, C}"),
    (b"enum E { A, B = 2 }", "E.cs", "1 enum E {A, B}"),
    (b"enum class E { A, B(2) }", "e.kt", "1 enum class E {A, B}"),
    (b"enum class E : int { a = 1, b };", "e.hpp", "1 enum class E : int {a, b}"),
])
def test_enums_list_their_members(source: bytes, path: str, row: str) -> None:
    assert outline_source(source, path).render() == row


def test_protobuf_module_lists_its_message_classes() -> None:
    outline, text = _case("search_pb2.py")
    assert [(s.qualified_name, s.kind) for s in outline.symbols] == [
        ("DESCRIPTOR", "constant"), ("SearchRequest", "class"), ("SearchRequest.Result", "class"),
        ("SearchRequest.Order", "enum"), ("SearchResponse", "class"), ("Corpus", "enum"), ("SearchService", "class")]
    assert "14 enum Corpus {CORPUS_UNSPECIFIED, CORPUS_WEB, CORPUS_NEWS}" in text
    assert "\\x" not in text  # the serialized bytes are not shown


def test_legacy_protobuf_module_lists_its_classes_not_its_descriptors() -> None:
    outline, text = _case("legacy_pb2.py")
    names = [s.name for s in outline.symbols]
    assert names == ["DESCRIPTOR", "Ping", "Pong"]


def test_kotlin_properties_of_files_and_classes() -> None:
    outline, text = _case("Config.kt")
    rows = _rows(outline)
    assert rows["MAX_RETRIES"][0] == "constant"
    for name in ("defaultName", "counter", "Config.url", "Config.enabled", "Config.owner", "Config.cache",
                 "Config.companion.empty", "Registry.items"):
        assert rows[name][0] == "property", name
    assert "Config.describe.local" not in rows and "local" not in text
    assert "  8-9 val url: String" in text.splitlines()  # the getter is its body


def test_swift_properties_and_one_typealias_row() -> None:
    outline, text = _case("Settings.swift")
    rows = _rows(outline)
    for name in ("SessionSettings.shared", "SessionSettings.timeout", "SessionSettings.retries",
                 "SessionSettings.userAgent", "SessionSettings.cache", "Endpoint.path", "Endpoint.headers"):
        assert rows[name][0] == "property", name
    assert rows["defaultEndpoint"][0] == "constant" and "local" not in text
    assert text.count("typealias Completion") == 1 and text.count("typealias Headers") == 1
    assert "  10-12 var userAgent: String" in text.splitlines()


_SECRET = "sk-live-0123456789abcdef"


def test_python_module_variables_and_class_attributes_by_name_only() -> None:
    outline, text = _case("settings_module.py")
    lines = text.splitlines()
    assert "5-7 vars: __all__, default_region, api_token" in lines
    assert "9-18 vars: host, port, first, second, tomllib, path_separator" in lines  # each name once
    assert "  26-29 fields: registry, timeout, retries, name" in lines
    assert "8 MAX_RETRIES = 5" in lines  # a constant keeps its row
    rows = _rows(outline)
    assert rows["api_token"] == ("variable", 7, 7) and rows["Settings.timeout"] == ("field", 27, 27)
    assert outline.symbols[[s.name for s in outline.symbols].index("api_token")].signature == "api_token"
    assert _SECRET not in text and _SECRET not in str(outline.to_json())
    for local in ("local_only", "loaded", "cache_key"):  # a function's locals and `self.x` stay out
        assert local not in text, local


def test_javascript_file_variables_and_class_fields_by_name_only() -> None:
    outline, text = _case("module_state.js")
    lines = text.splitlines()
    assert "4-8 vars: fs, join, resolvePath, major, minor, requestCount, sessionSecret" in lines
    assert "  12-14 fields: port, instances, #handlers" in lines
    assert "  15 onClose()" in lines  # a field holding a function stays a method row, shown as one
    assert _SECRET not in text and _SECRET not in str(outline.to_json())
    for local in ("startedAt", "attempts", "body", "parsed"):
        assert local not in text, local


def test_typescript_file_variables_class_fields_and_interface_properties_by_name_only() -> None:
    outline, text = _case("module_state.ts")
    lines = text.splitlines()
    assert "4-6 vars: requestCount, join, resolvePath, sessionSecret" in lines
    assert "  10-12 fields: port, instances, #handlers" in lines
    assert "  13 onClose()" in lines  # a field holding a function stays a method row
    assert "  27-28 fields: host, port" in lines and "  29 onError(error: Error): void" in lines
    assert "  33 vars: registry" in lines  # a namespace's
    assert _rows(outline)["ServerOptions.host"] == ("field", 27, 27)
    assert _SECRET not in text and _SECRET not in str(outline.to_json())
    for local in ("startedAt", "attempts", "body"):
        assert local not in text, local


def test_a_declaration_file_lists_declared_constants_and_the_members_of_their_object_types() -> None:
    """A .d.ts of `export declare const X: {...}` had no symbol and passed through whole; each constant is now
    named, its object type's members after its name (one names row: a row each cost the npm packages' outlines
    0.4-0.9 points of their reduction)."""
    outline, text = _case("animations.d.ts")
    assert text.splitlines()[0] == (
        "2-24 vars: FadeInData {Fade{In, InRight, InLeft}}, FadeIn {FadeIn}, animationsEnabled, "
        "__reanimatedLoggerConfig {level}")
    assert _rows(outline)["FadeInData.FadeInRight"] == ("field", 7, 10)
    assert "duration" not in text.replace("duration: number)", "")  # members' members stay a Read away


def test_php_properties_and_defined_constants_by_name_only() -> None:
    outline, text = _case("Store.php")
    lines = text.splitlines()
    assert "  17-20 fields: name, instances, items, driver, backend" in lines
    assert "9-11 const *: STORE_VERSION 9, STORE_API_KEY 11" in lines
    assert "  15 const MAX_ITEMS = 100" in lines
    assert _SECRET not in text and "2.1" not in text
    assert "local" not in text and "total" not in text


def test_types_declared_in_a_function_get_rows_in_test_files_too() -> None:
    """A reader looks for the types a function declares (a test's `struct Svc; impl Service for Svc`, a fixture
    class), test file or not (issue 29: they were dropped from test files)."""
    _, text = _case("local_types.py")
    assert "class Point" in text and "class Other(Point)" in text and "class Inner" in text
    _, kotlin = _case("LocalTypesTest.kt")
    assert "class Probe(val value: Int)" in kotlin and "Pair2" in kotlin and "class LocalTypesTest" in kotlin


def test_an_objective_c_header_is_not_outlined_as_c() -> None:
    """No grammar here parses Objective-C: as C, a 64 KB iOS header was 56% broken lines and cost the Read hook
    220 ms of repairs. An `.h` with `@interface` (or `@protocol`, `@implementation`) at a line start passes
    through whole; a C header that only mentions one in a comment does not."""
    outline, _ = _case("RNSViews.h")
    assert not outline.parsed and outline.language is None and "no grammar" in (outline.reason or "")
    assert outline_source(b"/* see @interface Foo in foo.m */\nint add(int a, int b);\n", "add.h").language == "c"
    assert outline_source(b"@interface Foo\n@end\n", "objc.h").language is None  # no newline before it
    assert outline_source(b"#import <x.h>\n@interface Foo\n@end\n", "objc.h").language is None


@pytest.mark.skipif(not ctags_available(), reason="Universal Ctags not installed")
@pytest.mark.parametrize(("name", "language"), [("connection.h", "c"), ("lock_table.cc", "cpp"),
                                                ("Config.kt", "kotlin"), ("stream_broken.kt", "kotlin"),
                                                ("broken_docstring.py", "python"),
                                                ("settings_module.py", "python"),
                                                ("module_state.js", "javascript"), ("Store.php", "php"),
                                                ("module_state.ts", "typescript"),
                                                ("animations.d.ts", "typescript"),
                                                ("zoom_keyframes.js", "javascript"), ("RootHelper.kt", "kotlin"),
                                                ("jemalloc_config.h", "c"), ("instr_prof.h", "cpp")])
def test_every_name_ctags_reports_is_visible(name: str, language: str) -> None:
    path = os.path.join(CASES, name)
    outline = outline_file(path)
    names = ctags_names(path, language)
    assert names
    missing = {t.name for t in names} - {t.name for t in visible(outline.render(), names)}
    # An include guard is a bare #define, which the outline leaves out on purpose; on the broken Kotlin file
    # ctags takes the local `val x` for a top-level constant; its TypeScript parser names the key of a renaming
    # destructure (`resolve` of `{ resolve: resolvePath }`).
    assert missing <= {"CONNECTION_H", "x", "resolve"}, missing


@pytest.mark.skipif(not ctags_available(), reason="Universal Ctags not installed")
def test_the_oracle_leaves_out_locals_of_kotlin_init_blocks_and_keys_of_nested_objects() -> None:
    """ctags 5.9 scopes an `init` block's `val`s to the class (or, past a lambda, to the file) and tags every key
    of nested JavaScript object literals (`style`, `0`, `transform`): locals and data, not definitions. A
    companion object is `Companion` to ctags, `companion object` in the outline: the same definition."""
    kotlin = os.path.join(CASES, "RootHelper.kt")
    names = {t.name for t in ctags_names(kotlin, "kotlin")}
    assert not names & {"registry", "wrappedViewTag", "module", "onJSResponderCancelListener", "time", "event"}
    assert {"orchestrator", "rootView", "Companion", "MIN_ALPHA_FOR_TOUCH"} <= names
    assert "Companion" in {t.name for t in visible("  68-70 companion object", ctags_names(kotlin, "kotlin"))}
    js = os.path.join(CASES, "zoom_keyframes.js")
    names = {t.name for t in ctags_names(js, "javascript")}
    assert not names & {"name", "style", "transform", "duration", "0", "100"}, names
    assert {"ZoomInData", "ZoomInRotate", "MATCHERS", "rgb", "hex8"} <= names


def test_the_first_level_keys_of_a_file_s_objects_are_listed_not_the_data_below() -> None:
    """`export const ZoomInData = {ZoomIn: {...}, ...}`, a colour table, a mock module's exports: the first
    level's keys are names code uses (`ZoomInData.ZoomInRotate`), written after the object's name, in place of
    its value (a run of constants keeps its one names row); the keys of the objects inside them are data, a
    Read away. The oracle reads `ZoomInData {Zoom{In, InRotate}}` as the keys ZoomIn and ZoomInRotate."""
    outline, text = _case("zoom_keyframes.js")
    lines = text.splitlines()
    assert ("4-74 5 constants: DEFAULT_ZOOM_TIME, ZoomInData {Zoom{In, InRotate, InRight}}, ZoomIn {as ZoomInData}, "
            "NUMBER, PERCENTAGE") in lines  # a shared camelCase prefix written once; the same keys named once
    assert "84-94 const MATCHERS {rgb, rgba, hsl, hsla, hwb, hex3, hex4, hex6, hex8}" in lines
    assert _rows(outline)["ZoomInData.ZoomInRotate"][0] == "field"
    assert "transform" not in text.replace("{ transform", "")  # the data below stays out of the rows


@pytest.mark.skipif(not ctags_available(), reason="Universal Ctags not installed")
def test_the_oracle_leaves_out_kotlin_lambda_and_loop_parameters() -> None:
    """ctags 5.9 tags `{ args -> }` and `for (index in ...)` as methods named `args` and `index`: counted, they
    made Kotlin's recall 73% on 91 real files; the outline lists every real function of the file."""
    path = os.path.join(CASES, "Handlers.kt")
    tags = {t.name for t in ctags_tags(path, "kotlin")}
    assert tags == {"Handlers", "register", "clear", "topLevel"}
    assert not missing(outline_file(path), ctags_tags(path, "kotlin"))
    names = {t.name for t in ctags_names(path, "kotlin")}
    assert not names & {"name", "code", "args", "index", "position", "total", "value"}, names


FIXTURES = os.path.dirname(CASES)


@pytest.mark.parametrize("name", sorted(f for f in os.listdir(FIXTURES) if f.lower().startswith("sample")))
def test_a_broken_line_in_a_function_loses_no_other_definition(name: str) -> None:
    """Every language: an unfinished expression inside the first multi-line function leaves every definition
    of the file in the outline, nested as before."""
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    good = outline_source("\n".join(lines).encode(), name)
    target = next((s for s in good.symbols if s.kind in ("function", "method") and s.end_line - s.start_line >= 2),
                  None)
    if target is None:
        pytest.skip("no multi-line function")
    last = lines[target.end_line - 1]
    indent = last[:len(last) - len(last.lstrip())] + ("    " if last.strip() in ("}", "end") else "")
    junk = "x = (1 +" if name.endswith(".py") else "x = ( 1 + ;"
    lines.insert(target.end_line - 1, indent + junk)
    broken = outline_source("\n".join(lines).encode(), name)
    assert {s.qualified_name for s in good.symbols} <= {s.qualified_name for s in broken.symbols}
    assert broken.error_lines and broken.error_lines[0][0] >= target.start_line


def test_cpp_signature_cuts_found_from_their_marks_are_those_a_walk_finds() -> None:
    """C/C++ signatures' comments and long defaults are found from the offsets of their `=` and comment markers
    in each subtree free of parse errors (extract._marked_elisions): the same cuts as walking every node, on
    the machine's C++ headers and on copies broken in their parameter lists."""
    from parser import extract
    from parser.grammars import get_parser
    from tests.support import outline_corpus as corpus

    fixtures = os.path.dirname(CASES)
    paths = [os.path.join(fixtures, "sample.hpp"), *corpus.find_files("cpp", 8)]
    texts = [open(path, "rb").read() for path in paths]
    texts.append(b"struct S {\n  void f(int a = kDefaultValueOfA /* why */, const char *b = \"a long default\",\n"
                 b"         // a comment\n         int c = 1, int d = 2 + 3 // inside\n + 40000000000000000);\n"
                 b"  int g(int x = (1 + 2 + 3 + 4 + 5 + 6), int\n};\n")
    texts += [text.replace(b", ", b", (", 3).replace(b"= ", b"= {", 5) for text in texts]  # parse errors
    compared = errors = 0
    for text in texts:
        stack = [get_parser("cpp").parse(text).root_node]
        while stack:
            node = stack.pop()
            stack.extend(node.named_children)
            if node.type not in ("function_definition", "declaration", "field_declaration"):
                continue
            start, end = node.start_byte, node.end_byte
            marks = extract._marks(text[start:end], start)
            walked: list = []
            found: list = []
            extract._elisions(node, start, end, walked, marks, by_marks=False)
            extract._elisions(node, start, end, found, marks)
            assert found == walked, text[start:end][:300]
            compared += bool(walked)
            errors += node.has_error
    assert compared > 50 and errors > 10


def test_a_long_cpp_head_gives_the_signature_its_whole_text_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    """A C/C++ head over extract._LONG_HEAD bytes (a class a parse error made one function head) is signed from
    its first bytes when they fill the cap: the same outlines as from whole heads, here with a small prefix so
    that many heads take that way, on the machine's C++ headers and on copies broken by a stray `(`."""
    from parser import extract
    from tests.support import outline_corpus as corpus

    fixtures = os.path.dirname(CASES)
    paths = [os.path.join(fixtures, "sample.hpp"), *corpus.find_files("cpp", 8)]
    sources = [open(path, "rb").read() for path in paths]
    sources += [source.replace(b"{\n", b"{ (\n", 2) for source in sources]
    params = b",\n".join(b"    int p%d /* the %dth */ = kDefaultValueNumber%d  // why\n" % (i, i, i) for i in range(40))
    sources.append(b"struct S {\n  void configure(\n" + params + b") {}\n  int f(" + params + b");\n};\n")
    whole = [outline_source(source, "x.hpp", "cpp").to_json() for source in sources]
    used = []
    real = extract._long_head
    monkeypatch.setattr(extract, "_long_head", lambda *args: used.append(real(*args)) or used[-1])
    for prefix in (150, 400):
        monkeypatch.setattr(extract, "_LONG_HEAD", prefix)
        assert [outline_source(source, "x.hpp", "cpp").to_json() for source in sources] == whole
    assert sum(text is not None for text in used) > 20


def test_a_repair_tells_the_tree_exactly_which_lines_differ() -> None:
    """parser/outline.py _edited finds the runs of lines a copy blanked by comparing blocks of bytes: each run
    as one edit, from its first line's start to its last line's end, as a line-by-line comparison gives."""
    import random

    from parser import outline as outline_module
    from parser.preprocess import blank_lines, first_branches

    class Recorder:
        def __init__(self) -> None:
            self.edits: list[tuple] = []

        def copy(self) -> Recorder:
            return self

        def edit(self, *args: object) -> None:
            self.edits.append(args)

    def by_lines(text: bytes, copy: bytes) -> list[tuple]:
        edits, start = [], 0
        old, new = text.split(b"\n"), copy.split(b"\n")
        for row, (line, other) in enumerate(zip(old, new, strict=True)):
            if line != other:
                if edits and edits[-1][4][0] == row - 1:  # the run goes on
                    first_byte, first = edits[-1][0], edits[-1][3]
                    edits.pop()
                else:
                    first_byte, first = start, (row, 0)
                end = start + len(line)
                edits.append((first_byte, end, end, first, (row, len(line)), (row, len(line))))
            start += len(line) + 1
        return edits

    rng = random.Random(7)
    fixtures = os.path.dirname(CASES)
    for name in ("sample.hpp", "sample.c", "sample.py"):
        text = open(os.path.join(fixtures, name), "rb").read()
        rows = text.count(b"\n")
        copies = [first_branches(text), blank_lines(text, 0, 0), blank_lines(text, rows, rows)]
        for _ in range(30):
            copy = text
            for _ in range(rng.randint(1, 5)):
                first = rng.randrange(rows + 1)
                copy = blank_lines(copy, first, first + rng.randint(0, 3))
            copies.append(copy)
        for copy in copies:
            assert outline_module._edited(Recorder(), text, copy, "cpp").edits == by_lines(text, copy)


def test_a_walk_within_rows_finds_for_them_what_the_whole_walk_finds() -> None:
    """parser/outline.py _other_branches walks only the subtrees over the rows a configuration of the `#if`s
    brings back (parser/walk.py Spans): for the definitions starting on those rows, _collect gives the same
    entries, in the same order, as the whole walk (C's walk and C++'s; rows picked at random, and each
    definition's own rows, whose first row a subtree's walk must take whole)."""
    import random

    from parser import outline as outline_module
    from parser.grammars import get_parser
    from parser.preprocess import mask_macros
    from tests.support import outline_corpus as corpus

    def entries(collected: tuple, rows: set[int]) -> list[tuple]:
        return [(node.start_byte, node.end_byte, name.start_byte, name.end_byte, kind)
                for node, name, kind in collected[0] if node.start_point.row in rows]

    rng = random.Random(29)
    fixtures = os.path.dirname(CASES)
    cases = [(os.path.join(fixtures, "sample.hpp"), "cpp"), (os.path.join(fixtures, "sample.c"), "c"),
             (os.path.join(CASES, "prof_unwind.c"), "c"),
             *((path, "cpp") for path in corpus.find_files("cpp", 4)),
             *((path, "c") for path in corpus.find_files("c", 4))]
    for path, language in cases:
        text = mask_macros(open(path, "rb").read())
        root = get_parser(language).parse(text).root_node
        whole = outline_module._collect(root, language)
        lines = text.count(b"\n") + 1
        starts = sorted({node.start_point.row for node, _name, _kind in whole[0]})
        picks = [{rng.randrange(lines) for _ in range(rng.randint(1, 12))} for _ in range(20)]
        picks += [set(range(row, row + rng.randint(1, 4))) for row in rng.sample(starts, min(20, len(starts)))]
        for rows in picks:
            within = outline_module._collect(root, language, outline_module._row_spans(text, rows))
            assert entries(within, rows) == entries(whole, rows), (path, sorted(rows))
        assert any(entries(whole, rows) for rows in picks), path


@pytest.mark.skipif(not ctags_available(), reason="Universal Ctags not installed")
def test_every_definition_after_a_kotlin_parse_error_is_in_the_outline() -> None:
    """Issue 29: real Kotlin (react-native-gesture-handler's GestureHandler.kt, cut) with a trailing comma in the
    constructor, a supertype list split over lines and a `when` guard tree-sitter-kotlin cannot parse: the
    whole file was one ERROR node, and the outline stopped at the error (43 of 104 definitions re-nested or
    lost). Every name ctags finds after the first broken line is in the outline, the recovered rows marked."""
    path = os.path.join(CASES, "GestureHandler.kt")
    outline, text = _case("GestureHandler.kt")
    first = outline.error_lines[0][0]
    after = [t for t in ctags_names(path, "kotlin") if t.line > first]
    assert len(after) > 90
    # in a symbol's name or signature (a long row's signature is cut when rendered); ctags' `Companion` is a
    # `companion object`
    words = set(re.findall(r"[\w$]+", " ".join(f"{s.name} {s.signature}" for s in outline.symbols).lower()))
    cut = [(s.start_line, s.end_line) for s in outline.symbols if s.signature.endswith("…")]  # a long header
    assert not [t for t in after if t.name.lower() not in words and not any(a <= t.line <= b for a, b in cut)]
    assert not [t for t in missing(outline, ctags_tags(path, "kotlin")) if t.line > first]
    assert len(visible(text, after)) >= len(after) - 2
    assert "~: found by parsing again after an error" in text and "\n~" in text
    assert outline.to_json() == outline_file(path).to_json()  # the same on every run


def _names_after_first_error(name: str, language: str) -> tuple[Outline, list[Tag], list[Tag]]:
    """The fixture's outline, the names ctags finds after its first broken line (not on a broken line), and
    those of them the model does not see."""
    path = os.path.join(CASES, name)
    outline, text = _case(name)
    first = outline.error_lines[0][0] if outline.error_lines else 0
    bad = {row for a, b in outline.error_lines for row in range(a, b + 1)}
    after = [t for t in ctags_names(path, language) if t.line > first and t.line not in bad]
    return outline, after, [t for t in after if t not in visible(text, after)]


@pytest.mark.skipif(not ctags_available(), reason="Universal Ctags not installed")
@pytest.mark.parametrize("name", ["jemalloc_data.c", "sc.h"])
def test_every_name_after_a_c_parse_error_is_visible(name: str) -> None:
    """Issue 29: macro-heavy C cut from jemalloc (variables whose initializers hold `#ifdef` branches, an
    attribute macro, an anonymous enum; size-class #defines whose continued lines hold comments): every name
    ctags finds after the first broken line, variables and the anonymous enum's members too (jemalloc_data.c
    showed 21 of its 42 symbols), is in the text the model reads; the include guard is not a name. (Since the
    repair tries one configuration of the `#if`s for broken lines next to a directive, jemalloc_data.c's errors
    are gone but for its last line: every name of the file is checked.)"""
    outline, after, hidden = _names_after_first_error(name, "c")
    assert outline.error_lines and (len(after) >= 14 or outline.error_lines[0][0] > 200)
    assert not hidden, hidden
    names = ctags_names(os.path.join(CASES, name), "c")
    assert len(names) >= 20 and not [t.name for t in names if t not in visible(outline.render(), names)]
    assert "JEMALLOC_INTERNAL_SC_H" not in {t.name for t in ctags_names(os.path.join(CASES, name), "c")}


@pytest.mark.skipif(not ctags_available(), reason="Universal Ctags not installed")
def test_definitions_in_the_other_branches_of_an_if_chain_are_found_after_an_error() -> None:
    """jemalloc's prof.c: red-black tree macros the grammar cannot read make the repair keep one configuration
    of the `#if`s (every first branch), which dropped the unwinder callbacks of the `#elif` branches and a
    `#define` inside one; the configurations of the 2nd and 3rd branches are parsed for them (marked `~`)."""
    path = os.path.join(CASES, "prof_unwind.c")
    outline, text = _case("prof_unwind.c")
    assert outline.error_lines
    names = ctags_names(path, "c")
    seen = {id(t) for t in visible(text, names)}
    first = outline.error_lines[0][0]
    bad = {row for a, b in outline.error_lines for row in range(a, b + 1)}
    after = [t.name for t in names if t.line > first and t.line not in bad and id(t) not in seen]
    assert not after, after
    recovered = {s.name for s in outline.symbols if s.recovered}
    assert {"prof_unwind_init_callback", "prof_unwind_callback", "BT_FRAME"} <= recovered
    assert "~374-388 #define BT_FRAME(i)" in [row.strip() for row in text.splitlines()]


def test_an_if_inside_an_initializer_and_an_elif_chain_of_defines_lose_nothing() -> None:
    """jemalloc: `static const bool config_debug =` then `#ifdef X true #else false #endif ;` broke each
    declaration (the broken lines sit next to the directives: the repair now tries one configuration of the
    `#if`s for that too), and `#define BITMAP_GROUPS(nbits) BITMAP_GROUPS_1_LEVEL(nbits)` had its value masked
    as a trailing attribute macro, so tree-sitter took the next line, `#define BITMAP_GROUPS_MAX ...`, for it.
    Every branch's #define has its row (the configurations of the 2nd to 5th branches)."""
    outline, text = _case("jemalloc_config.h")
    lines = text.splitlines()
    assert lines[0] == ("3-45 vars: config_debug, have_dss, have_madvise_huge, "
                        "config_{fill, lazy_lock, malloc_conf, prof}")
    maxes = [s.start_line for s in outline.symbols if s.name == "BITMAP_GROUPS_MAX"]
    assert maxes == [48, 51, 54, 57, 60], maxes


def test_a_define_the_parse_loses_inside_an_enum_is_found_by_its_line() -> None:
    """LLVM's X-macro tables: `enum InstrProfSectKind {` / `#define INSTR_PROF_SECT_ENTRY(Kind, ...) Kind,` /
    `#include "...inc"` / `};` is an error that swallows the #define. A `#define` is one line, so a broken C/C++
    file's `#define` lines that no symbol starts on get their rows from the text."""
    outline, text = _case("instr_prof.h")
    assert outline.error_lines
    rows = [row.strip() for row in text.splitlines()]
    assert "8 #define INSTR_PROF_SECT_ENTRY(Kind, SectNameCommon, SectNameCoff, Prefix)" in rows
    assert "24 #define VALUE_PROF_KIND(Enumerator, Value, Descr)" in rows
    guarded = b"#ifndef X_H\n#define X_H\nenum E {\n#define ENTRY(a) a,\n#include \"e.inc\"\n};\n#endif\n"
    names = [s.name for s in outline_source(guarded, "x.h", "cpp").symbols]
    assert "ENTRY" in names and "X_H" not in names  # the include guard stays out


@pytest.mark.skipif(not ctags_available(), reason="Universal Ctags not installed")
def test_the_oracle_leaves_out_shell_code_in_strings_here_document_markers_and_options() -> None:
    """autoconf's configure: `as_required="as_fn_success () {...}"` is a string until it is eval'd, `<<_ACEOF`
    a here-document's delimiter, `alias -g '${1+"$@"}'=...` an alias ctags names `-g`; the real function is
    the one name a reader looks for (on 7 shell files of npm and Debian packages ctags' extra tags made names
    visible 14.6%, 2026-12-07)."""
    path = os.path.join(CASES, "configure_cut.sh")
    names = ctags_names(path, "bash")
    assert [t.name for t in names] == ["as_fn_exit"]
    assert visible(outline_file(path).render(), names) == names


def test_go_package_variables_are_names_only_rows() -> None:
    """A `var ( ... )` block's variables were not listed (Go's names visible 97.6% on the machine's 60 files);
    like a C or Python file's, each is a name, never its value."""
    src = b'package x\n\nvar a = 1\n\nvar (\n\tb, c int\n\td = errors.New("secret")\n)\n\nfunc f() { var loc = 2 }\n'
    text = outline_source(src, "x.go").render()
    assert text.splitlines()[0] == "3-7 vars: a, b, c, d"
    assert "secret" not in text and "loc" not in text


def test_a_restart_after_an_error_may_start_with_an_underscore() -> None:
    """ripgrep's zsh completion outlined with the bash grammar: `(( $+functions[_rg_encodings] )) ||` before each
    function is an error that swallows the next; a line starting a name with `_` (`_rg_encodings() {`) is a
    place to parse again from, as one starting with a letter is. (`_rg_types`, whose own body holds zsh-only
    expansions, is still lost: its definition is an ERROR node in the recovery's parse too.)"""
    outline, text = _case("rg_complete.zsh")
    assert outline.error_lines
    recovered = {s.name for s in outline.symbols if s.recovered}
    assert {"_rg_encodings", "_rg_hyperlink_format_aliases"} <= recovered, text


def test_c_file_variables_and_an_anonymous_enum_get_names_only_rows() -> None:
    source = (b"int f(void) {\n  enum { STATE_START, STATE_END } state = STATE_START;\n"
              b"  int local = 1;\n  return state;\n}\n")
    outline = outline_source(source, "f.c")  # an enum a function declares is a type a reader looks for, locals not
    assert [(s.qualified_name, s.kind, s.depth) for s in outline.symbols] == [("f", "function", 0),
                                                                             ("f.enum", "enum", 1)]
    assert "  2 enum {STATE_START, STATE_END}" in outline.render()
    _, text = _case("jemalloc_data.c")
    assert "105-111 enum {flag_opt_junk_alloc, flag_opt_junk_free, flag_opt_{zero, utrace, xmalloc}}" in text
    # (the first three, whose initializers hold an `#ifdef`, were lost to it before the configuration repair)
    assert ("27-76 vars: je_malloc_conf, opt_{abort, abort_conf, junk, junk_alloc, junk_free, utrace, xmalloc, zero, "
            "narenas}, ncpus, arenas_lock") in text
    assert "88-91 vars: arenas, narenas_total, a0, narenas_auto" in text
    assert "SRWLOCK_INIT" not in text and "= NO_INITIALIZER" not in text  # names, never values


@pytest.mark.skipif(not ctags_available(), reason="Universal Ctags not installed")
def test_rust_items_in_a_test_function_and_associated_types_are_shown() -> None:
    """Issue 29: tower's FutureService with its test's service declared in the test function (a struct, its
    `impl Service` with `type Response/Error/Future`, a `type Boxed` alias), under tests/: every name ctags
    finds is in the outline, nested in the function."""
    outline, after, hidden = _names_after_first_error("future_service.rs", "rust")
    assert not outline.error_lines and len(after) > 20 and not hidden, hidden
    rows = _rows(outline)
    kinds = [s.kind for s in outline.symbols if s.qualified_name == "tests.pending_service_debug_impl.DebugService"]
    assert kinds == ["struct", "impl"]
    assert rows["tests.pending_service_debug_impl.DebugService.Error"][:2] == ("type", 191)
    assert rows["tests.pending_service_debug_impl.Boxed"][0] == "type"
    assert rows["FutureService.Response"][0] == "type"


def test_a_macro_call_continuing_a_define_is_not_masked() -> None:
    """jemalloc's bitmap.h: `#define BITMAP_GROUPS_L0(nbits) \\` with `BITMAP_BITS2GROUPS(nbits)` alone on the next
    line. Masked as a macro alone on its line, the #define ran into the next one and hid BITMAP_GROUPS_L1."""
    source = (b"#define BITMAP_GROUPS_L0(nbits)\t\t\t\t\\\n    BITMAP_BITS2GROUPS(nbits)\n"
              b"#define BITMAP_GROUPS_L1(nbits)\t\t\t\t\\\n    BITMAP_BITS2GROUPS(BITMAP_BITS2GROUPS(nbits))\n")
    rows = _rows(outline_source(source, "bitmap.h"))
    assert rows == {"BITMAP_GROUPS_L0": ("macro", 1, 2), "BITMAP_GROUPS_L1": ("macro", 3, 4)}


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_a_flag_define_gets_a_row_and_an_include_guard_does_not(language: str) -> None:
    """Issue 29: a #define without a value is a constant a reader looks for (CPython's `HAVE_DECLSPEC_DLL`), but
    the file's include guard is not."""
    source = (b"#ifndef PYPORT_H\n#define PYPORT_H\n#ifdef MS_WIN32\n#  define HAVE_DECLSPEC_DLL\n#endif\n"
              b"int x;\n#endif\n")
    text = outline_source(source, "pyport.h", language).render()
    assert "HAVE_DECLSPEC_DLL" in text and "PYPORT_H" not in text


@pytest.mark.skipif(not ctags_available(), reason="Universal Ctags not installed")
@pytest.mark.parametrize(("name", "language", "found"), [
    # A Swift-generated header's `typedef uint_least16_t char16_t;`: the C grammar reads the new name as its
    # built-in type (a primitive_type, no error), so the typedef had no name.
    ("swift_typedefs.h", "c", {"char8_t", "char16_t", "char32_t"}),
    # An Objective-C header (`@"baseline"` strings) tree-sitter made one ERROR of: its file-level array had no
    # row (a declaration in an ERROR was no file's).
    ("RNSVGTextProperties.h", "c", {"RNSVGAlignmentBaselineStrings"}),
    # jemalloc's ctl.c: `MUTEX_PROF_GLOBAL_MUTEXES` / `#undef OP` / `{NAME("reset"), ...}` made a "function" of
    # the rest of the file, whose tables were taken for its locals.
    ("ctl_tables.c", "c", {"stats_node", "root_node", "super_root_node"}),
    # CPython's unicodeobject.h: a 135-line `typedef struct {...} PyASCIIObject;` (an unnamed bit-field breaks
    # a line of it) lost its name to the signature's length cap.
    ("unicode_ascii.h", "c", {"PyASCIIObject"}),
    # react-native-reanimated: `using Start = std::decay_t<decltype(start)>;` in a lambda after an error.
    ("layout_proxy.cpp", "cpp", {"Start", "Operation"}),
    # LLVM's ISDOpcodes.h: `  VECREDUCE_UMIN,` / an X-macro `#include` / a doc comment / `  BUILTIN_OP_END` /
    # `};`: the enum's last member, an ALL_CAPS name alone on its line, was masked as a macro.
    ("isd_opcodes.h", "cpp", {"BUILTIN_OP_END", "FIRST_TARGET_STRICTFP_OPCODE", "isBitwiseLogicOp"}),
])
def test_every_definition_after_the_error_is_in_the_outline(name: str, language: str, found: set[str]) -> None:
    """Issue 29, cut from real code: every name ctags finds after the first broken line (not on a broken line)
    is in the text the model reads, those the outline lost before included."""
    outline, after, hidden = _names_after_first_error(name, language)
    assert outline.error_lines and len(after) >= len(found)
    assert not hidden, hidden
    assert found <= {t.name for t in visible(outline.render(), after)}
    assert outline.to_json() == outline_file(os.path.join(CASES, name)).to_json()  # the same on every run


def test_a_function_s_locals_under_an_if_stay_out_of_the_file_s_rows() -> None:
    """ctl.c's `#ifdef JEMALLOC_ATOMIC_U64` inside a function body holds `uint64_t cur_dst = ...;`: a local
    (indented, in a compound statement), not one of the file's variables as the `#if` made it look."""
    outline, text = _case("ctl_tables.c")
    assert "cur_dst" not in text and "stats_background_thread_node" in text
    assert _rows(outline)["ctl_accum_arena_stats_u64"][0] == "function"


def test_a_define_the_parse_misnamed_is_named_by_its_line() -> None:
    """jemalloc's test/unit/atomic.c: a broken parse read `#define DO_TESTS(t, ta, ...) do { ... atomic_##ta##_t
    atom; ...` as a constant named `atom`, and the `#define` line's own row came on top of it: one row, named
    as its line says."""
    outline, text = _case("atomic_tests.c")
    assert outline.error_lines
    lines = text.splitlines()
    assert "18-83 #define DO_TESTS(t, ta, val1, val2, val3)" in lines
    assert "85-133 #define DO_INTEGER_TESTS(t, ta, val1, val2)" in lines
    assert not {"atom", "atomic_store_"} & {s.name for s in outline.symbols}


@pytest.mark.skipif(not ctags_available(), reason="Universal Ctags not installed")
def test_the_oracle_leaves_out_attribute_macros_after_a_class_body(tmp_path: Path) -> None:
    """libstdc++'s stl_function.h closes deprecated adaptors with `} _GLIBCXX11_DEPRECATED;` (an attribute
    macro): ctags, without its definition, tags a variable named after it (10 of the C++ names "lost after an
    error" on the machine's headers, 2026-12-07). A real variable after a body is still a name."""
    path = tmp_path / "adaptors.h"
    path.write_text(
        "namespace std {\n"
        "  template<typename _Arg, typename _Result>\n"
        "    struct unary_function\n"
        "    {\n"
        "      typedef _Arg argument_type;\n"
        "    } _GLIBCXX11_DEPRECATED;\n"
        "  class pointer_to_unary_function\n"
        "    {\n"
        "    public:\n"
        "      pointer_to_unary_function() { }\n"
        "    } _GLIBCXX11_DEPRECATED_SUGGEST(\"std::function\");\n"
        "}\n"
        "static struct ForceLinking {\n"
        "  ForceLinking() { }\n"
        "} ForcePassLinking;\n")
    names = {t.name for t in ctags_names(str(path), "cpp")}
    assert {"unary_function", "pointer_to_unary_function", "ForcePassLinking"} <= names
    assert not names & {"_GLIBCXX11_DEPRECATED", "_GLIBCXX11_DEPRECATED_SUGGEST"}


def test_an_object_s_members_are_not_repeated_in_its_signature() -> None:
    """react-native-svg's SvgTouchableMixin: `const SvgTouchableMixin = { componentWillUnmount() {...}, ...}`
    showed the first 100 characters of its value, the first method's body, above the methods' own rows."""
    source = (b"const touchableGetInitialState = () => {\n  return { responderID: null };\n};\n"
              b"const SvgTouchableMixin = {\n  componentWillUnmount() {\n"
              b"    this.touchableDelayTimeout && clearTimeout(this.touchableDelayTimeout);\n  },\n"
              b"  touchableGetInitialState,\n  touchableHandleStartShouldSetResponder() {\n"
              b"    return !this.props.disabled;\n  },\n};\n")
    lines = outline_source(source, "SvgTouchableMixin.js").render().splitlines()
    assert "4-12 const SvgTouchableMixin = {\u2026}" in lines, lines
    assert "clearTimeout" not in "\n".join(lines)
    assert any("componentWillUnmount()" in row for row in lines)


def test_an_include_guard_stays_out_of_a_configuration_s_outline() -> None:
    """LLVM's StringRef.h: an `#if` between a constructor's declarator and its initializer list makes the repair
    parse one configuration of the `#if`s, where the `#ifndef` line is blanked: the tree saw no guard, and the
    guard's `#define` got a row. Everything after the broken line is still there."""
    outline, text = _case("string_literal.h")
    assert outline.error_lines
    names = {s.name for s in outline.symbols}
    assert "LLVM_ADT_STRINGREF_H" not in names and "LLVM_ADT_STRINGREF_H" not in text
    assert {"StringLiteral", "withInnerNUL", "operator+=", "hash_value", "getTombstoneKey", "isEqual"} <= names
    flag = (b"#ifndef X_H\n#define X_H\n#define HAVE_X\nint f(int a,\n#if A\n  int b);\n#else\n  long b);\n"
            b"#endif\n#endif\n")
    assert [s.name for s in outline_source(flag, "x.h", "cpp").symbols if s.kind == "constant"] == ["HAVE_X"]


def test_a_function_bound_to_a_name_is_shown_as_a_declared_one() -> None:
    """react-native-svg's `const isMeasurable = node => ...` and reanimated's class field `build = () => {...}`:
    the row's parameter list says it is a function, so `const`, `=` and `=>` go (`isMeasurable(node)`, as
    `function isMeasurable(node)` is shown); every name stays, `export` and `static` too."""
    outline, text = _case("bound_functions.js")
    rows = [row.strip() for row in text.splitlines()]
    for row in ("6-12 extractSingleTouch(nativeEvent)", "13 isMeasurable(node)", "14-19 touchableGetInitialState()",
                "20-79 export class LightSpeedInRight extends ComplexAnimationBuilder", "21 fields: presetName",
                "22-24 static createInstance()", "25-78 build()"):
        assert row in rows, row
    assert "=>" not in text
    typed = outline_source(b"export const f = async <T,>(x: T): Promise<T> => x;\nlet h = function (a) {};\n"
                           b"class A {\n  static make = (a: number): void => {};\n}\n", "x.ts", "typescript").render()
    assert typed.splitlines() == ["1 export async f<T,>(x: T): Promise<T>", "2 h(a)", "3-5 class A",
                                  "  4 static make(a: number): void"]


def test_a_typed_value_cut_at_the_cap_is_left_out() -> None:
    """react-native-gesture-handler's `const gestureStateManagers: Map<number, GestureStateManagerType> = new Map<
    number, GestureStateManagerType>();` showed its value cut at the row's cap (`new Map< number, GestureStateMan…`):
    the type says what it holds. A value that fits stays (`= []`)."""
    outline, text = _case("event_receiver.ts")
    rows = [row.strip() for row in text.splitlines()]
    assert "23-26 const gestureStateManagers: Map<number, GestureStateManagerType>" in rows
    assert "28 const lastUpdateEvent: (GestureUpdateEvent | undefined)[] = []" in rows
    assert "67-83 setNativeProps(component: JSReanimatedComponent | ReanimatedHTMLElement, newProps: StyleProps, " \
           "isAnimatedProps?: boolean): void" in rows
    names = {s.name for s in outline.symbols}
    assert {"gestureHandlerEventSubscription", "gestureHandlerStateChangeEventSubscription", "gestureStateManagers",
            "lastUpdateEvent", "isStateChangeEvent", "isTouchEvent", "startListening", "stopListening",
            "setNativeProps"} <= names
    assert all(name in text for name in names)
