"""Inputs a Read hook meets in practice: none of them may raise."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from parser import estimate_tokens, language_for_path, outline_file, outline_source
from parser.languages import EXTENSIONS
from parser.preprocess import mask_macros

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_package_name_does_not_shadow_stdlib() -> None:
    # The stdlib `parser` module was removed in Python 3.10.
    assert "parser" not in sys.stdlib_module_names
    import parser

    assert os.path.dirname(parser.__file__) == os.path.join(REPO, "parser")


def test_empty_file() -> None:
    result = outline_source(b"", "empty.py")
    assert result.parsed and result.symbols == [] and result.total_lines == 0
    assert result.render() == "no symbols found (0 lines)"


def test_syntax_errors_keep_what_parses() -> None:
    source = b"def good(a):\n    return a\n\ndef bad(:\n    return\n\nclass Fine:\n    def m(self):\n        pass\n"
    result = outline_source(source, "broken.py")
    assert result.parsed
    assert 0 < result.error_ratio < 0.5
    names = [s.qualified_name for s in result.symbols]
    assert "good" in names and "Fine" in names and "Fine.m" in names
    assert "bad" in names  # its header is broken: found by the lexical fallback
    assert result.render().startswith("syntax errors at line 4 (11% of lines); outline may be partial")


def test_garbage_is_all_errors() -> None:
    result = outline_source(b")))) ((( }}}\n" * 20, "junk.go")
    assert result.parsed and result.error_ratio > 0.5 and result.symbols == []


def test_non_utf8_bytes() -> None:
    source = b"def caf\xe9():\n    return '\xff\xfe'\n\ndef ok(x):\n    return x\n"
    result = outline_source(source, "latin1.py")
    assert result.parsed
    assert [s.name for s in result.symbols][-1] == "ok"
    json.dumps(result.to_json())  # replacement characters, not bytes
    result.render()


def test_crlf_line_endings() -> None:
    source = (b"class A:\r\n    def f(self, a,\r\n          b):\r\n        return 1\r\n\r\n"
              b'def g(x):\r\n    """Doc g.\r\n    More."""\r\n    return x\r\n')
    result = outline_source(source, "crlf.py")
    got = [(s.qualified_name, s.start_line, s.end_line) for s in result.symbols]
    assert got == [("A", 1, 4), ("A.f", 2, 4), ("g", 6, 9)]
    assert result.symbols[1].signature == "def f(self, a, b)"
    assert result.symbols[2].doc == "Doc g"
    assert "\r" not in result.render()


def test_unknown_extension_falls_back() -> None:
    result = outline_source(b"some: yaml\nother: 1\n", "config.unknownext")
    assert not result.parsed and result.language is None
    assert result.render() == "2 lines, 20 bytes, no outline available (no grammar for this file type)"


def test_minified_javascript_falls_back() -> None:
    source = b"var a=1;" + b"function f(a,b){return a+b};" * 300
    result = outline_source(source, "bundle.min.js")
    assert not result.parsed and result.language == "javascript"
    assert "minified" in (result.reason or "")
    assert result.render().startswith("1 lines, ")


def test_missing_file_falls_back() -> None:
    result = outline_file("/nonexistent/dir/file.py")
    assert not result.parsed and "unreadable" in (result.reason or "")


def test_directory_falls_back(tmp_path) -> None:
    assert not outline_file(str(tmp_path)).parsed


def test_huge_file_is_outlined_quickly() -> None:
    chunks = []
    for i in range(5000):
        chunks.append(
            f"class C{i}(Base):\n    '''Doc {i}.'''\n\n    def m{i}(self, a: int) -> int:\n"
            f"        if a:\n            return a + {i}\n        return 0\n\n\n"
        )
    source = "".join(chunks).encode()
    assert source.count(b"\n") == 45000
    start = time.process_time()
    result = outline_source(source, "huge.py")
    elapsed = time.process_time() - start
    assert result.parsed and len(result.symbols) == 10000
    assert result.symbols[-1].qualified_name == "C4999.m4999"
    assert result.symbols[-1].start_line == 44995
    assert elapsed < 10, elapsed  # CPU seconds, whatever the load: ~0.6 s here
    text = result.render(max_chars=9000)
    assert len(text) <= 9000 and "omitted" in text.splitlines()[-1]


def test_render_budget_drops_nested_symbols_first() -> None:
    source = b"".join(
        b"class K%d:\n    def a(self):\n        pass\n    def b(self):\n        pass\n" % i for i in range(40))
    result = outline_source(source, "k.py")
    full = result.render()
    budget = result.render(max_chars=len(full) // 2)
    assert len(budget) <= len(full) // 2
    assert "def a" not in budget and "class K39" in budget
    assert budget.splitlines()[-1] == "… 80 nested symbols omitted"


def test_constant_runs_collapse_in_render() -> None:
    source = b"".join(b"SETTING_%d = %d\n" % (i, i) for i in range(30)) + b"\ndef f():\n    pass\n"
    result = outline_source(source, "settings.py")
    assert len(result.symbols) == 31  # every constant is still a symbol
    lines = result.render().splitlines()
    # Every name, their shared prefix written once.
    assert lines[0] == "1-30 30 constants: SETTING_{" + ", ".join(str(i) for i in range(30)) + "}"
    assert lines[1] == "32-33 f()"


def test_c_macros_do_not_derail_parsing() -> None:
    source = (b"namespace std _GLIBCXX_VISIBILITY(default)\n{\n_GLIBCXX_BEGIN_NAMESPACE_VERSION\n"
              b"class LLVM_GSL_POINTER Ref {\npublic:\n  LLVM_NODISCARD bool empty() const _GLIBCXX_NOEXCEPT\n"
              b"  { return true; }\n};\n_GLIBCXX_END_NAMESPACE_VERSION\n}\n")
    masked = mask_macros(source)
    assert len(masked) == len(source) and masked.count(b"\n") == source.count(b"\n")
    result = outline_source(source, "ref.hpp")
    got = [(s.qualified_name, s.kind) for s in result.symbols]
    assert got == [("std", "module"), ("std.Ref", "class"), ("std.Ref.empty", "method")]
    assert result.error_ratio == 0
    # Signatures come from the original bytes: a macro inside the node stays.
    assert result.symbols[2].signature == "bool empty() const _GLIBCXX_NOEXCEPT"


def test_line_macros_are_masked_on_the_first_line_and_after_crlf() -> None:
    """The `alone` and leading-attribute masks find a line's start by its newline (mask_macros puts one before
    the text): the first line, CRLF lines, indented lines and a list's last member are masked as with `^`."""
    cases = [
        (b"_GLIBCXX_BEGIN_NAMESPACE_VERSION\nint x;\n", b" " * 32 + b"\nint x;\n"),
        (b"LLVM_NODISCARD bool f();\n", b" " * 15 + b"bool f();\n"),
        # `\r` stands before `$`: not alone on its line, as before
        (b"int a;\r\n  EXTERN_C_BEGIN  \r\nint b;\r\n", b"int a;\r\n  EXTERN_C_BEGIN  \r\nint b;\r\n"),
        (b"int a;\r\nLLVM_NODISCARD bool f();\r\n", b"int a;\r\n" + b" " * 15 + b"bool f();\r\n"),
        (b"enum E {\n  A,\n  STATE_ERROR\n};\n", b"enum E {\n  A,\n  STATE_ERROR\n};\n"),  # a list's last member
        (b"\n\n  __host__ __device__ int f();\n", b"\n\n  " + b" " * 20 + b"int f();\n"),
        # a list's last member after comments and directives (the code's line before it ends with a comma)
        (b"enum E {\n  A, // first\n  STATE_ERROR\n};\n", b"enum E {\n  A, // first\n  STATE_ERROR\n};\n"),
        (b"enum E {\n  A,\n#include \"e.def\"\n  /* the end */\n  OP_END\n};\n",
         b"enum E {\n  A,\n#include \"e.def\"\n  /* the end */\n  OP_END\n};\n"),
        # a macro call there is no member's name; after a brace a macro alone is a namespace's opener
        (b"enum E {\n  A, // a\n  MARK_AS_ENUM(A)\n};\n", b"enum E {\n  A, // a\n" + b" " * 17 + b"\n};\n"),
        (b"namespace std {\n// x\n_GLIBCXX_BEGIN_NAMESPACE_VERSION\n", b"namespace std {\n// x\n" + b" " * 32 + b"\n"),
    ]
    for source, masked in cases:
        assert mask_macros(source) == masked, source


def test_macros_masked_line_by_line_as_over_the_whole_text() -> None:
    """Where few lines hold a macro's `_` pairs, the masks search only those (parser/preprocess.py
    _probed_lines): the result is what the patterns give over the whole text, at the first and last lines,
    after CRLF, and where a check looks at the lines before (a list's last member)."""
    from parser import preprocess

    mask_macros(b"")  # compiles preprocess._PATTERNS (this test alone: nothing has yet)
    pieces = [b"_GLIBCXX_BEGIN_NAMESPACE_VERSION\n", b"int a;\r\nLLVM_NODISCARD bool f();\r\n",
              b"enum E {\n  A,\n  STATE_ERROR\n};\n", b"  __host__ __device__ int f();\n",
              b"class LLVM_GSL_POINTER Ref {\n", b"std::mutex* mu_ GUARDED_BY(lock_);\n", b"return MAX_OF(a, b);\n",
              b"int f() const _GLIBCXX_NOEXCEPT {\n", b"namespace std _GLIBCXX_VISIBILITY(default)\n", b"X_1\n",
              b"  END_NS", b"int value = other;\n" * 200, b"Camel Case 64 bits_\n", b"size_t n; // x_\n", b"ENDS_"]
    for first in range(len(pieces)):
        source = b"".join(pieces[first:] + pieces[:first])
        assert preprocess._probed_lines(b"\n" + source) is not None
        whole = b"\n" + source
        for pattern, blank in preprocess._PATTERNS:
            whole = pattern.sub(blank, whole)
        assert mask_macros(source) == whole[1:], source


@pytest.mark.parametrize(("path", "language"), [
    ("a.py", "python"), ("a.pyi", "python"), ("a.js", "javascript"), ("a.jsx", "javascript"),
    ("a.mjs", "javascript"), ("a.cjs", "javascript"), ("a.ts", "typescript"), ("a.tsx", "tsx"),
    ("a.go", "go"), ("a.rs", "rust"), ("A.java", "java"), ("a.c", "c"), ("a.h", "c"),
    ("a.hpp", "cpp"), ("a.hh", "cpp"), ("a.hxx", "cpp"), ("a.cc", "cpp"), ("a.rb", "ruby"),
    ("a.cs", "csharp"), ("a.php", "php"), ("a.kt", "kotlin"), ("a.swift", "swift"), ("a.sh", "bash"),
    ("a.lua", "lua"), ("a.scala", "scala"), ("dir/Rakefile", "ruby"), ("A.PY", "python"),
    ("a.json", None), ("a.md", None), ("Makefile", None), (".bashrc", "bash"),
])
def test_language_for_path(path: str, language: str | None) -> None:
    assert language_for_path(path) == language


def test_language_from_shebang(tmp_path) -> None:
    script = tmp_path / "tool"
    script.write_bytes(b"#!/usr/bin/env python3.11\nprint(1)\n")
    assert language_for_path(str(script)) == "python"
    assert language_for_path("deploy", head=b"#!/bin/bash\nset -e\n") == "bash"
    assert language_for_path("serve", head=b"#!/usr/bin/env -S node --experimental\n") == "javascript"
    assert language_for_path("notes", head=b"hello\n") is None
    # An extension always wins over the content.
    assert language_for_path("x.txt", head=b"#!/bin/sh\n") is None
    result = outline_file(str(script))
    assert result.parsed and result.language == "python"


def test_every_grammar_loads_and_every_query_compiles() -> None:
    from parser.grammars import GRAMMARS, get_query

    for language in set(EXTENSIONS.values()) | set(GRAMMARS):
        assert get_query(language).pattern_count > 0, language


def test_estimate_tokens() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens(b"def f(x):\n    return x\n") == estimate_tokens("def f(x):\n    return x\n")
    short, long = "x = 1\n", "x = 1\n" * 100
    assert estimate_tokens(long) > 50 * estimate_tokens(short)
    # Roughly len/4 on ordinary code.
    code = open(os.path.join(REPO, "parser", "outline.py"), encoding="utf-8").read()
    assert 0.6 < estimate_tokens(code) / (len(code) / 4) < 1.4
    # Big texts are sampled: same order of magnitude as counting all of it.
    from parser import tokens

    big = code * (tokens.SAMPLE_ABOVE // len(code) + 2)
    exact = len(tokens.token_re().findall(big))
    assert abs(estimate_tokens(big) - exact) / exact < 0.05


@pytest.mark.fastpath  # importlib.resources: the grammar packages import it, the fast path loads their files
def test_imports_stay_lazy() -> None:
    """Importing the package loads no tree-sitter; outlining loads one grammar."""
    code = (
        "import sys\n"
        "import parser\n"
        "assert not [m for m in sys.modules if m.startswith('tree_sitter')], sorted(sys.modules)\n"
        "parser.outline_source(b'def f():\\n    pass\\n', 'x.py')\n"
        "grammars = sorted({m.split('.')[0] for m in sys.modules if m.startswith('tree_sitter_')})\n"
        "assert grammars == ['tree_sitter_python'], grammars\n"
        "heavy = {'numpy', 'pyarrow', 'lancedb', 'anthropic', 'torch', 'importlib.resources'}\n"
        "assert not heavy & set(sys.modules), heavy & set(sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": REPO}  # this repository's `parser`, whatever the venv installed
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60, env=env)


@pytest.mark.fastpath
def test_a_cold_outline_imports_neither_re_nor_enum_nor_collections() -> None:
    """A cold Read hook's outline, cleaned and counted, runs on patterns from memory/fastpath/_regex_table.py and lends
    tree_sitter._binding stand-ins for `re` and `enum` while it loads (memory/fastpath/grammars.py): none of them,
    nor the functools and collections they import (~5-7 ms of a hook), is imported. What the binding took from them
    still works: Point, LogType, and a query's `#match?` (which imports the real `re` then). On a Python the table
    was not made for, the patterns are compiled by `re`: the test then checks only the outlines."""
    code = (
        "import sys, _sre\n"
        "from parser import outline_source, estimate_tokens\n"
        "from memory.fastpath import _regex_table\n"
        "from memory.base.privacy import clean\n"
        "texts = [outline_source(open(p, 'rb').read(), p).render() for p in sys.argv[1:]]\n"
        "assert all(clean(t) == t and estimate_tokens(t) > 10 for t in texts)\n"
        "loaded = {'re', 'enum', 'functools', 'collections'} & set(sys.modules)\n"
        "table = _regex_table.VERSION == (tuple(sys.version_info[:2]), _sre.MAGIC, _sre.CODESIZE)\n"
        "assert not (table and loaded), loaded\n"
        "from parser.grammars import get_language, get_parser, get_query, ts\n"
        "binding = ts()\n"
        "assert (binding.LogType.PARSE, binding.LogType.LEX) == (0, 1) and binding.Point(1, 2).column == 2\n"
        "root = get_parser('python').parse(b'MAX = 1\\nlow = 2\\n').root_node\n"
        "caps = [sorted(c) for _, c in binding.QueryCursor(get_query('python')).matches(root)]\n"
        "assert caps == [['definition.constant', 'name']], caps\n"
        "assert type(sys.modules['re']).__name__ == 'module'\n"
    )
    fixtures = os.path.join(REPO, "tests", "parser", "fixtures")
    samples = [os.path.join(fixtures, name) for name in ("sample.c", "sample.hpp", "sample.py", "sample.js",
                                                          "sample.php")]
    env = {**os.environ, "PYTHONPATH": REPO}
    subprocess.run([sys.executable, "-S", "-c", f"import sys; sys.path[:0] = {sys.path!r}\n" + code, *samples],
                   check=True, timeout=60, env=env)


def test_long_texts_are_counted_by_chunks_as_the_token_pattern_counts_them() -> None:
    """Counted a chunk at a time (parser/tokens.py _CHUNK, cut after a newline), their non-ASCII characters
    replaced on the bytes: the pattern's count over the decoded text, across chunks, with runs longer than a
    token, digits and spaces outside ASCII, and bytes that are not UTF-8 (decoded with replacements)."""
    import random

    from parser import tokens

    rng = random.Random(11)
    pieces = ["abcdefghijklmnop", "x", "_y", "12345", "\n", "\n    ", " ", "->", "(", "…", "é", "—", "📊", "٣",
              "\u00a0", "\u2028", "Ω"]
    for k in range(12):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(15000, 30000)))
        data = text.encode()
        if k % 3 == 0:
            data = data.replace(b"x", b"\xe9", 5)  # latin-1: not UTF-8
        expected = len(tokens.token_re().findall(data.decode("utf-8", errors="replace")))
        assert len(data) > 2 * tokens._CHUNK
        assert tokens.estimate_tokens(data) == expected
        assert tokens.estimate_tokens(data.decode("utf-8", errors="replace")) == expected


def test_the_ascii_counter_agrees_with_the_token_pattern() -> None:
    """ASCII texts (the Read header on the cached path, most files and outlines on a miss) are counted without
    `re` (bytes.translate and count); same count, also for runs longer than a token and at the text's ends."""
    import random

    from parser import tokens
    from parser.render import read_header

    rng = random.Random(7)
    alphabet = "".join(map(chr, range(128)))
    pieces = ["_", "__", "a", "Z", "abcdefghijk", "9", "12345", "\n", "\n  \t", " ", "\t", "\r", "\x1c", "->",
              "(", ")", "==", "{", "~", "\x00", "\x7f", "_1", "x_y", "abcdefgh", "abcdefghi", "a" * 17, "123",
              "1234567", "+-*", "////", "\x1f"]
    samples = [read_header(1234, 56789, 4321, grouped) for grouped in (False, True)]
    samples += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80))) for _ in range(4000)]
    samples += ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 40))) for _ in range(4000)]
    for text in samples:
        assert tokens._count_ascii(text.encode()) == len(tokens.token_re().findall(text)), repr(text)
        assert tokens.estimate_tokens(text) == tokens.estimate_tokens(text.encode()) == len(
            tokens.token_re().findall(text))


def test_a_few_non_ascii_characters_keep_the_count_exact() -> None:
    """A text with a few distinct non-ASCII characters (an outline's `…`) is counted through ASCII stand-ins:
    digits (Arabic-Indic), punctuation (which pairs with ASCII punctuation), letters and spaces (a token each)."""
    import random

    from parser import tokens

    rng = random.Random(11)
    pieces = ["…", "é", "\u00a0", "\u0663", "\u00b2", "—", "\ufffd", "→", "\u2028", "\u0085", "日本", "ab", "12",
              "(", "->", " ", "\n  ", "_", "abcdefghij", "x_y", "..."]
    samples = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 40))) for _ in range(4000)]
    samples.append("".join(map(chr, range(0x400, 0x420))) + " x")  # more than 16 distinct: the regex counts
    for text in samples:
        assert tokens.estimate_tokens(text) == len(tokens.token_re().findall(text)), repr(text)
        assert tokens.estimate_tokens(text.encode()) == len(tokens.token_re().findall(text)), repr(text)
    assert tokens.estimate_tokens("\udc80 x") == 2  # a lone surrogate: the regex counts


def test_the_cpp_walk_finds_what_the_cpp_query_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    """C++ captures come from a tree walk (parser/walk.py), not the compiled query: the same outlines, aliases
    a lambda declares in a function body (libstdc++'s ranges_algo.h) included (the walk passes over expressions:
    walk.lambda_aliases finds them by their text)."""
    from parser import walk
    from tests.support import outline_corpus as corpus

    assert "cpp" in walk.WALKED
    paths = [os.path.join(REPO, "tests", "parser", "fixtures", "sample.hpp"), *corpus.find_files("cpp", 12)]
    sources = {path: open(path, "rb").read() for path in paths}
    walked = {path: outline_source(data, path, "cpp").to_json() for path, data in sources.items()}
    monkeypatch.setattr(walk, "WALKED", frozenset())
    for path, data in sources.items():
        queried = outline_source(data, path, "cpp").to_json()
        assert queried["symbols"], path
        assert queried == walked[path], path


def _match_keys(found: object) -> list[tuple]:
    return sorted(tuple(sorted((cap, tuple((n.start_byte, n.end_byte) for n in nodes)) for cap, nodes in caps.items()))
                  for _, caps in found)


_BROKEN_LINES = {
    "python": [b"def (:", b"class X(", b"    ]]] = ", b"x = [1,", b"@", b'"""open', b"f(a, def g(): pass", b"if x"],
    "php": [b"function (", b"class {", b"]]] = ;", b"if ($x", b"require 'a.php'", b"$f = function() { class Q {}",
            b"}", b"const A = "],
    "javascript": [b"function (", b"class {", b"]]] = ;", b"if (x", b"require('a')", b"const f = function() {",
                   b"}", b"x = { a: function("],
    "c": [b"struct s {", b"}", b"#define X", b"#include", b"typedef struct {", b"int f(", b"enum e { A,",
          b"#if X", b"#endif", b"union u { int a; } x = ("],
    "ruby": [b"class (", b"def (", b"end", b"module", b"X = ", b"do |x|", b"alias", b"require 'a'"],
    "typescript": [b"interface {", b"function (", b"class {", b"=>", b"type T = ", b"}", b"enum {", b"require('a')"],
}
_BROKEN_LINES.update({  # h-walk2's block: C#, Scala, Java
    "csharp": [b"class {", b"public static X operator +(", b"using ;", b"void F(", b"}", b"namespace", b"int P { get;",
               b"const int A = "],
    "scala": [b"class (", b"def f(", b"}", b"object {", b"import", b"val x = ", b"given", b"trait T {"],
    "java": [b"class {", b"void m(", b"}", b"static final int A = ", b"import a.;", b"final static B", b"@interface",
             b"record R("],
})
_INLINE = {
    "python": ("inline.py", b"from __future__ import annotations\nimport a.b, c as d\nfrom .e import f\nMAX = 1\n"
               b"_Private_X = 2\nlower = 3\nA_1: int = 4\nsq = lambda x: x\ntype T = int\nif X:\n    Y = 5\n"
               b"    g = lambda: 0\n@dec\nclass C:\n    Z = 6\n    h = lambda s: s\n"),
    "php": ("inline.php", b"<?php\nnamespace App\\Models;\nuse A\\B, C;\nrequire_once __DIR__ . '/x.php';\n"
            b"const A = 1, B = 2;\ninterface I {}\ntrait T {}\nenum E {}\nfunction f() { return include 'y.php'; }\n"
            b"$g = function () { class Inner { function m() {} } };\n$o = new class { public function n() {} };\n"),
    "javascript": ("inline.js", b"import a from './a.js';\nconst b = require('b'), c = req('c');\n"
                   b"module.exports = { f: function () {}, g: () => 1 };\nconst h = `${(function () {})()}`;\n"
                   b"class K { field = () => 0; m() { function inner() {} } }\nexports.x = function () {};\n"),
    "c": ("inline.c", b"#include <a.h>\n#include \"b.h\"\n#include MACRO_H\n#define FLAG\n#define MAX 10\n"
          b"#define SQ(x) ((x) * (x))\ntypedef int (*handler)(void);\ntypedef struct { int a; } anon_t;\n"
          b"struct fwd;\nstruct s { int a; union u { int b; } c; };\nenum e { A, B };\nint proto(int);\n"
          b"static int f(void) { struct local { int x; } l; return sizeof(struct in_expr { int y; }); }\n"
          b"void g(struct param { int z; } p) {}\n"),
    "ruby": ("inline.rb", b"require 'a'\nMAX = 1\nmodule M\n  LIMIT = 2\n  class C < B\n    def m(x) = x\n"
             b"    def self.s; end\n    alias n m\n    items.each { |i| Inner = i; def dyn; end }\n  end\nend\n"
             b"class << self\n  def meta; end\nend\nx = \"#{Class.new { def in_string; end }}\"\n"),
    "typescript": ("inline.ts", b"import a from './a';\nconst b = require('b');\ninterface I { m(): void }\n"
                   b"type T = { f: () => void };\nenum E { A }\nabstract class K { abstract m(): void; x = () => 1 }\n"
                   b"namespace N { export function f(): void {} }\ndeclare module 'm' { function g(): void; }\n"
                   b"export const h = function () {}, o = { p: () => 0 };\n"),
}
_INLINE.update({  # h-walk2's block: C#, Scala, Java
    "csharp": ("inline.cs", b"using System;\nusing static System.Math;\nusing IO = System.IO;\nnamespace N;\n"
               b"public delegate void D(int a);\nrecord R(int A);\n"
               b"struct S { public static S operator +(S a, S b) => a;\n"
               b"  public static implicit operator int(S s) => 0; event D Ev { add {} remove {} } }\n"
               b"interface I { event D E; int P { get; } }\n"
               b"enum En { A }\nclass C { const int K = 1; int f; C() {} ~C() {} void M() { int L() => 0; "
               b"var o = new { X = 1 }; Func<int> g = () => { int In() => 1; return In(); }; } }\n"),
    "scala": ("inline.scala", b"import a.b.{c, d}\npackage p\nclass C(x: Int) { val y = 1; def f(a: Int): Int = a }\n"
              b"object O { type T = Int; given g: Int = 1 }\ntrait Tr { def abs(x: Int): Int }\nenum E { case A }\n"
              b"val top = { def inner = 1; inner }\nval anon = new Tr { def abs(x: Int) = x }\n"),
    "java": ("inline.java", b"import a.b.C;\nimport static a.b.D.*;\nimport e.*;\n@interface Ann {}\n"
             b"record R(int a) {}\n"
             b"enum E { A; void m() {} }\ninterface I { static final int K = 1; void n(); }\nclass C {\n"
             b"  static final int A = 1, B = 2;\n  final static int NOT = 3;\n"
             b"  @Deprecated public static final int D = 4;\n"
             b"  static int E;\n  C() {}\n"
             b"  void f() { class Local {} Runnable r = new Runnable() { public void run() {} }; }\n}\n"),
})


# Kotlin's walk (parser/walk.py): every pattern of kotlin.scm, the anonymous `companion` and `constructor` included.
_BROKEN_LINES["kotlin"] = [b"class (", b"fun (", b"companion object {", b"constructor(", b"typealias = ", b"import",
                           b"}", b"val x = object : {"]
_INLINE["kotlin"] = ("inline.kt", b"package a.b\nimport a.b.C\nimport d.*\nimport e.F as G\ntypealias T = List<Int>\n"
                     b"const val MAX = 1\ninterface I {\n    fun m(): Int\n}\nenum class E { A, B }\n"
                     b"class K(val v: Int) {\n    companion object {\n        val x = 1\n    }\n"
                     b"    constructor(a: String) : this(a.length) {\n        val local = 2\n    }\n"
                     b"    fun f() = object : Runnable {\n        override fun run() {\n            class L\n"
                     b"            typealias Inner = Int\n        }\n    }\n}\nobject O {\n"
                     b"    private companion object Named\n}\nval lambda = { x: Int -> fun g() {}; x }\n")


# Swift's walk (parser/walk.py): every pattern of swift.scm, the anonymous `init` and `deinit` included.
_BROKEN_LINES["swift"] = [b"class (", b"func (", b"init(", b"deinit {", b"typealias = ", b"import", b"}",
                          b"protocol P { func"]
_INLINE["swift"] = ("inline.swift", b'import Foundation\nimport struct UIKit.CGRect\n@testable import Module\n'
                      b'typealias Handler = () -> Void\nlet limit = 10\nprotocol P {\n    func m(_ x: Int) -> Int\n'
                      b'    init(a: Int)\n}\nstruct S: P {\n    var v = 1\n    init(a: Int) { v = a }\n'
                      b'    func m(_ x: Int) -> Int { x }\n}\nfinal class C {\n    deinit { print(1) }\n'
                      b'    typealias Inner = Int\n    lazy var f: () -> Int = {\n        func local() -> Int { 1 }\n'
                      b'        return local()\n    }\n}\nenum E { case a }\n'
                      b'extension C { convenience init?(x: Int) { nil } }\nactor A {}\n')


# Rust's walk (parser/walk.py): every pattern of rust.scm, impl types, a trait's associated types and the
# constants of a module, impl or trait body (not a function's) included.
_BROKEN_LINES["rust"] = [b"fn (", b"struct {", b"impl", b"}", b"const X: u8 = ", b"use", b"trait T { type",
                         b"macro_rules! m {"]
_INLINE["rust"] = ("inline.rs", b"extern crate alloc;\nuse std::io::{self, Read};\nuse a::b as c;\nconst A: u8 = 1;\n"
                   b"static B: &str = \"b\";\nmod m {\n    pub const C: u8 = 2;\n"
                   b"    fn f() { const LOCAL: u8 = 3; }\n}\n"
                   b"pub struct S<T> { v: T }\nunion U { a: u8 }\nenum E { A, B }\ntype R = Result<(), ()>;\n"
                   b"trait Tr {\n    type Item;\n    const K: u8;\n    fn sig(&self);\n    fn body(&self) {}\n}\n"
                   b"impl<T> S<T> { const D: u8 = 4; fn new() -> Self { todo!() } }\nimpl Tr for a::b::S2 {\n"
                   b"    type Item = u8;\n    const K: u8 = 5;\n    fn sig(&self) {}\n}\nimpl<T> Tr for a::G<T> {}\n"
                   b"impl Tr for &[u8] {}\nimpl Tr for (u8, u16) {}\n"
                   b"macro_rules! mac { ($x:expr) => { fn inside() {} }; }\n"
                   b"fn outer() {\n    struct Local;\n    impl Local { fn m(&self) {} }\n"
                   b"    mac!(fn not_an_item() {});\n}\n")

@pytest.mark.parametrize("language", ["python", "php", "javascript", "c", "ruby", "typescript",
                                      "csharp", "scala", "java",
                                      "kotlin", "swift", "rust"])
def test_a_walked_query_finds_what_the_query_finds(language: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every walked language but C++ (walk.WALKED) gets its captures from a walk (parser/walk.py), not the
    compiled query: the same
    matches (Python's constant `#match?` and JavaScript's `require` `#eq?` included) on committed fixtures, real
    files, and the same files broken (a parse error may leave a definition anywhere), and the same outlines."""
    import random

    from parser import walk
    from parser.grammars import get_parser, get_query, ts
    from tests.support import outline_corpus as corpus

    assert language in walk.WALKED
    fixtures = os.path.join(REPO, "tests", "parser", "fixtures")
    cases = sorted(os.path.join(fixtures, "cases", f) for f in os.listdir(os.path.join(fixtures, "cases")))
    found = corpus.find_files(language, 12) if language in corpus.languages() else []  # no Ruby/TS corpus
    paths = [p for p in (*(os.path.join(fixtures, f) for f in sorted(os.listdir(fixtures))), *cases, *found)
             if language_for_path(p) == language]
    sources = {path: open(path, "rb").read() for path in paths}
    rng = random.Random(7)
    for path in found or paths:  # broken copies: a bad line dropped in three places
        lines = sources[path].split(b"\n")
        for _ in range(3):
            lines.insert(rng.randrange(len(lines)), rng.choice(_BROKEN_LINES[language]))
        sources[path + ".broken" + os.path.splitext(path)[1]] = b"\n".join(lines)
    name, data = _INLINE[language]
    sources[name] = data
    for path, data in sources.items():
        root = get_parser(language).parse(data).root_node
        assert _match_keys(walk.matches(root, language)) == _match_keys(
            ts().QueryCursor(get_query(language)).matches(root)), path
    walked = {path: outline_source(data, path, language).to_json() for path, data in sources.items()}
    monkeypatch.setattr(walk, "WALKED", walk.WALKED - {language})
    for path, data in sources.items():
        assert outline_source(data, path, language).to_json() == walked[path], path


def test_the_walk_refuses_a_query_it_cannot_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from parser import walk

    (tmp_path / "odd.scm").write_text("(function_definition name: (identifier) @name) @definition.function\n")
    monkeypatch.setattr(walk, "QUERY_DIR", str(tmp_path))
    with pytest.raises(ValueError, match="not a node-type pattern"):
        walk.read_patterns("odd")


def test_the_regex_table_holds_every_cold_pattern_compiled_as_re_compiles_it() -> None:
    """memory/fastpath/recode.py serves the cold Read hook's patterns from its _regex_table.py: the table must
    list every one of them (a changed pattern would silently be compiled again) and, on the Python it was made
    for, give the Pattern `re.compile` gives; anything else is compiled by `re`."""
    import _sre
    import re
    import sys

    from memory.fastpath import _regex_table, recode
    from scripts.gen_regex_table import TABLE_PATH, patterns, render

    assert set(_regex_table.TABLE) == set(patterns())  # run scripts/gen_regex_table.py after changing a pattern
    for source, flags in [*patterns(), ("not (in the) table", 0), (rb"\d+", int(re.I))]:
        # the table's own program whatever MEMORY_FASTPATH says (off, recode.compile is re.compile)
        got, expected = recode.from_table(source, flags) or recode.compile(source, flags), re.compile(source, flags)
        assert (got, got.flags, got.groups, got.groupindex) == (
            expected, expected.flags, expected.groups, expected.groupindex), source
    if _regex_table.VERSION != (tuple(sys.version_info[:2]), _sre.MAGIC, _sre.CODESIZE):
        pytest.skip("the table was made for another Python: unused here")
    assert recode._table() is _regex_table.TABLE
    with open(TABLE_PATH, encoding="utf-8") as fh:
        assert fh.read() == render()


def test_only_the_exporting_grammars_have_an_export_statement() -> None:
    """extract.signature reads a definition's parent (costly: see extract._EXPORTING) only where `export` may wrap
    it: every other grammar must have no export_statement node."""
    from parser import extract
    from parser.grammars import GRAMMARS, GrammarUnavailable, get_language

    for language in GRAMMARS:
        try:
            grammar = get_language(language)
        except GrammarUnavailable:
            continue
        has = grammar.id_for_node_kind("export_statement", True) is not None
        assert has == (language in extract._EXPORTING), language


def test_the_outline_knows_the_languages_with_variables_without_importing_them() -> None:
    """parser/outline.py imports parser/variables.py only for the languages it outlines variables of."""
    from parser import outline, variables

    assert outline.VARIABLE_LANGUAGES == variables.LANGUAGES
