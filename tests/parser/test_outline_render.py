"""The rendered outline: compact rows that still name every symbol, the Read header, C/C++ names."""

from __future__ import annotations

from parser import estimate_tokens, outline_source
from parser.render import MAX_SHOWN_SHARE, has_groups, read_text


def test_same_shape_siblings_share_a_row_with_each_name_and_line() -> None:
    source = b"".join(b"def op_%d(a, b):\n    x = a\n    return x + b\n\n" % i for i in range(6))
    source += b"def other(a, b, c):\n    return a\n"
    result = outline_source(source, "ops.py")
    assert len(result.symbols) == 7  # every function is still a symbol
    lines = result.render().splitlines()
    assert lines[0] == "1-23 *(a, b): op_0 1, op_1 5, op_2 9, op_3 13, op_4 17, op_5 21"
    assert lines[1] == "25-26 other(a, b, c)"
    assert has_groups(result.render())


def test_one_line_declarations_in_a_block_share_a_row_without_positions() -> None:
    source = b"class Ref {\npublic:\n" + b"".join(b"  bool is%d() const;\n" % i for i in range(5)) + b"};\n"
    text = outline_source(source, "ref.hpp").render()
    assert "  3-7 bool *() const: is0, is1, is2, is3, is4" in text.splitlines()


def test_types_and_bodies_whose_doc_is_shown_keep_their_own_rows() -> None:
    classes = b"".join(b"class K%d:\n    pass\n\n" % i for i in range(5))
    long_fn = b"".join(b'def long_%d():\n    """Doc %d."""\n' % (i, i) + b"    x = 1\n" * 12 for i in range(3))
    text = outline_source(classes + long_fn, "k.py").render()
    assert all(f"class K{i}" in text for i in range(5))
    assert "long_0() # Doc 0" in text and "long_2() # Doc 2" in text and "*" not in text


def test_long_bodies_share_a_row_and_show_an_end_that_does_not_go_without_saying() -> None:
    # Contiguous: each member ends where the next starts, the last where the row ends.
    long_fn = b"".join(b"def long_%d():\n" % i + b"    x = 1\n" * 12 for i in range(3))
    assert outline_source(long_fn, "k.py").render() == "1-39 *(): long_0 1, long_1 14, long_2 27"
    # Doc comments between members (Rust): each member's last line is shown but the last member's.
    rust = b"".join(b"/// Doc of f%d.\n///\n/// More.\n/// More.\n/// More.\npub fn f%d() -> u8 {\n    0\n}\n" % (i, i)
                    for i in range(3))
    assert outline_source(rust, "f.rs").render() == "6-24 pub *() -> u8: f0 6-8, f1 14-16, f2 22"


def test_rust_keeps_self_and_python_drops_it() -> None:
    rust = b"struct S;\nimpl S {\n    pub fn get(&self, i: usize) -> u8 {\n        0\n    }\n}\n"
    assert "pub get(&self, i: usize) -> u8" in outline_source(rust, "s.rs").render()
    py = b"class S:\n    def get(self, i: int) -> int:\n        return i\n    def put(self,i):\n        pass\n"
    assert "  2-3 get(i: int) -> int" in outline_source(py, "s.py").render()
    assert "  4-5 put(i)" in outline_source(py, "s.py").render()


def test_c_and_cpp_signatures_lose_export_and_attribute_macros() -> None:
    c = (b"PyAPI_FUNC(PyObject *) PyErr_Occurred(void);\nPyAPI_FUNC(int)   PyErr_Check(PyObject*);\n"
         b"PyAPI_FUNC(PyObject*) PyErr_New(const char *name);\n")
    text = outline_source(c, "pyerrors.h").render()
    assert "1 PyObject *PyErr_Occurred(void)" in text and "2 int PyErr_Check(PyObject*)" in text
    assert "3 PyObject *PyErr_New(const char *name)" in text and "PyAPI" not in text
    # The macro's own #define keeps its name (pyport.h's was `# define RTYPE`, PyAPI_FUNC nowhere).
    define = b"#if defined(Py_BUILD_CORE)\n#  define PyAPI_FUNC(RTYPE) Py_EXPORTED_SYMBOL RTYPE\n#endif\n"
    assert "PyAPI_FUNC(RTYPE)" in outline_source(define, "pyport.h").render()
    cpp = (b"namespace std _GLIBCXX_VISIBILITY(default)\n{\ntemplate<typename _Tp>\nclass vector\n{\npublic:\n"
           b"  _GLIBCXX20_CONSTEXPR iterator begin() _GLIBCXX_NOEXCEPT { return it; }\n"
           b"  _GLIBCXX_NODISCARD bool empty() const _GLIBCXX_NOEXCEPT { return true; }\n"
           b"  void swap(vector& __x) _GLIBCXX_NOEXCEPT_IF(is_nothrow<_Tp>::value);\n"
           b"  static inline const _Tp& front() const;\n"
           b"  virtual ~vector();\n};\n}\n")
    text = outline_source(cpp, "vector.h", "cpp").render()
    assert "1-13 namespace std\n" in text
    assert "iterator begin() noexcept" in text and "bool empty() const noexcept" in text
    assert "void swap(vector& __x) noexcept(is_nothrow<_Tp>::value)" in text
    assert "static inline const _Tp& front() const" in text and "virtual ~vector()" in text
    assert "_GLIBCXX" not in text


def test_long_docs_are_cut_at_a_word() -> None:
    doc = "Return the estimated number of widgets that the factory can produce in a single working day"
    source = f'def f():\n    """{doc}."""\n' + "    x = 1\n" * 12
    line = outline_source(source.encode(), "f.py").render().splitlines()[0]
    shown = line.split(" # ", 1)[1]
    assert shown.endswith("…") and len(shown) <= 52 and doc.startswith(shown[:-1])


def test_a_function_like_macro_shows_its_parameters_not_its_replacement() -> None:
    source = b"#define CHECK_ERR(err, msg) { \\\n    if (err != 0) { \\\n        abort(); \\\n    } \\\n}\n"
    source += b"#define LIMIT 32768\n#define INIT(type) \\\n    { 1, type }\n"
    assert outline_source(source, "m.c").render() == (
        "1-5 #define CHECK_ERR(err, msg)\n6 #define LIMIT 32768\n7-8 #define INIT(type)")


def test_a_typedef_struct_shows_its_names_not_its_fields() -> None:
    source = b"typedef struct _item {\n    int value;\n    struct _item *next;\n} Item;\n"
    source += b"typedef enum { RED = 1, GREEN = 2 } Color;\n"
    lines = outline_source(source, "t.h").render().splitlines()
    assert lines[0] == "1-4 typedef struct _item {…} Item" and "5 typedef enum {RED, GREEN} Color" in lines


def test_a_doc_that_starts_with_the_name_drops_it() -> None:
    source = b"package p\n\n// renameTop renames all references to the top-level name old.\n"
    source += b"func renameTop(old string) bool {\n"
    source += b"\tx := 1\n" * 12 + b"\treturn true\n}\n"
    assert outline_source(source, "p.go").render() == (
        "4-18 renameTop(old string) bool # renames all references to the top-level…")


def test_a_doc_loses_markdown_code_marks() -> None:
    source = b"/// Returns [`None`] if the option is `None`.\npub fn and(self) -> u8 {\n" + b"    x;\n" * 12 + b"}\n"
    assert outline_source(source, "o.rs").render() == "2-15 pub and(self) -> u8 # Returns None if the option is None"


def test_read_text_counts_the_header_it_adds() -> None:
    source = b"".join(b"def f%d(a: int) -> int:\n" % i + b"    a += 1\n" * 20 + b"    return a\n\n"
                      for i in range(20))
    result = outline_source(source, "m.py")
    original = estimate_tokens(source)
    text, shown = read_text(result, original)
    assert text.startswith(f"[memory plugin] Outline: {result.total_lines} lines, ~")
    assert "Read offset+limit" in text and "Read again" in text
    assert shown == estimate_tokens(text)
    assert f"~{original - shown} tokens withheld" in text


def test_read_text_passes_through_when_the_outline_is_not_worth_it() -> None:
    # Prototypes of different shapes only: the outline is the file.
    source = b"".join(b"int function_number_%d(int a%d, int b);\n" % (i, i) for i in range(300))
    result = outline_source(source, "protos.h")
    assert result.symbols
    assert estimate_tokens(result.render()) > estimate_tokens(source) * MAX_SHOWN_SHARE
    assert read_text(result, estimate_tokens(source)) is None


def test_cpp_out_of_line_members_take_the_member_name() -> None:
    source = (b"template <typename T> void Info<T>::clear() {\n  x = 0;\n}\n"
              b"template <typename T> bool Info<T>::operator==(const Info &o) const {\n  return true;\n}\n"
              b"auto Outer<A<B>>::Inner<C>::get() const -> int {\n  return 1;\n}\n")
    names = [s.name for s in outline_source(source, "info.hpp").symbols]
    assert names == ["clear", "operator==", "get"]


def test_cpp_conversion_operators_are_named_by_their_type() -> None:
    source = (b"struct R {\n  template<typename I2>\n    constexpr operator in_result<I2>() const &\n"
              b"    { return {in}; }\n  explicit operator bool() const;\n};\n")
    names = {s.name for s in outline_source(source, "r.hpp").symbols}
    assert {"operator in_result<I2>", "operator bool"} <= names


def test_libstdcxx_double_underscore_functions_are_not_taken_for_macros() -> None:
    source = (b"namespace std {\n  inline void\n  __thread_yield() noexcept\n  {\n  }\n"
              b"  __host__ __device__ int kernel(int a);\n}\n")
    names = {s.name for s in outline_source(source, "w.hpp").symbols}
    assert {"__thread_yield", "kernel"} <= names


def test_imports_sharing_a_folder_are_written_once() -> None:
    source = (b'#include "llvm/ADT/StringRef.h"\n#include "llvm/ADT/Triple.h"\n#include "llvm/IR/Type.h"\n'
              b"#include <cassert>\nint f(int a);\n")
    first = outline_source(source, "x.cpp").render().splitlines()[0]
    assert first == "imports: llvm/ADT/{StringRef.h, Triple.h}, llvm/IR/Type.h, cassert"


def _fixture_outlines() -> list:
    import os

    fixtures = os.path.join(os.path.dirname(__file__), "fixtures")
    return [outline_source(open(os.path.join(fixtures, name), "rb").read(), name) for name in sorted(
        os.listdir(fixtures)) if name.startswith(("sample.", "Sample."))]


def test_doc_lines_are_looked_for_when_read_and_are_the_same_in_any_order() -> None:
    """A symbol's doc line is found when first read (Symbol.doc): a render reads those of long definitions only,
    and the docs read afterwards, in any order, are those read first."""
    rendered, fresh = _fixture_outlines(), _fixture_outlines()
    for outline in rendered:
        outline.render()
    left = [s for o in rendered for s in o.symbols if type(s._doc) is tuple]
    assert left and all(s.end_line - s.start_line + 1 < 10 for s in left)  # render.DOC_MIN_LINES
    backwards = [s.doc for o in fresh for s in reversed(o.symbols)]
    docs = [s.doc for o in rendered for s in reversed(o.symbols)]
    assert docs == backwards and sum(1 for d in docs if d) > 20
    assert [o.to_json() for o in rendered] == [o.to_json() for o in fresh]


def test_a_nodes_previous_siblings_are_its_parents_children_before_it() -> None:
    """extract._previous_siblings (a binary search by start byte) gives what the parent's children list gives,
    for every node of the fixtures' trees, empty (missing) nodes included."""
    import os

    from parser import extract
    from parser.grammars import get_parser
    from parser.languages import language_for_path

    fixtures = os.path.join(os.path.dirname(__file__), "fixtures")
    checked = 0
    for name in sorted(os.listdir(fixtures)):
        language = language_for_path(name) if name.startswith(("sample.", "Sample.")) else None
        if language is None:
            continue
        data = open(os.path.join(fixtures, name), "rb").read()
        for source in (data, data.replace(b")", b"", 3)):  # and broken: ERROR and MISSING nodes
            stack = [get_parser(language).parse(source).root_node]
            while stack:
                parent = stack.pop()
                children = parent.children
                for k, child in enumerate(children):
                    sibling, at = extract._previous_siblings(child, parent)
                    assert at == k - 1 or (child.start_byte == child.end_byte and children[at + 1] == child)
                    assert [sibling(i) for i in range(at, -1, -1)] == children[:at + 1][::-1]
                    assert sibling(-1) is None
                    checked += 1
                stack.extend(children)
    assert checked > 5000
