"""Staleness of what a memory is about (memory/store/symbols.py, memory/base/definitions.py): a method is told
from a same-named one of another class, decorators are part of a header, comments are not, a long parameter
list is compared whole, and functions assigned to names (JavaScript) are definitions too."""

from __future__ import annotations

import json
from pathlib import Path

from memory.base.definitions import headers, scopes
from tests.support.helpers import HookRunner
from tests.test_point_of_action import _change_id, _edit, _memory

CARTS = """\
class Cart:
    def total(self, items):
        return sum(items)


class Invoice:
    def total(self, items):  # the invoice's own sum
        return sum(items) * 2
"""


def _stale(project: Path, memory_id: int) -> str | None:
    got = json.loads(_memory(project, "get", str(memory_id), "--json"))[0]["stale"]
    return str(got) if got else None


def test_a_method_is_not_stale_when_a_same_named_one_of_another_class_changes(hooks: HookRunner,
                                                                              project: Path) -> None:
    path = project / "carts.py"
    path.write_text(CARTS)
    hooks.session = "s-one"
    _edit(hooks, path, "        return sum(items)\n\n", "        return sum(items, 0)\n\n")  # Cart.total
    first = _change_id(project, "s-one", "sum")
    hooks.session = "s-two"  # Invoice.total's signature changes; its comment, in Cart's header, is not code
    _edit(hooks, path, "def total(self, items):  # the invoice's own sum",
          "def total(self, items, rate):  # the invoice's sum")
    assert _stale(project, first) is None
    hooks.session = "s-three"  # a decorator changes how Cart.total is called: its signature changed
    _edit(hooks, path, "class Cart:\n    def total", "class Cart:\n    @property\n    def total")
    assert _stale(project, first) == "Cart.total: signature changed"


def test_headers_by_qualified_name_with_decorators_and_without_comments() -> None:
    text = ("import typing as t\n\nclass A:\n    @t.overload\n    def get(self, k: int) -> int: ...\n"
            "    @t.overload\n    def get(self, k: str) -> str: ...\n    def get(self, k):  # any key\n"
            "        def inner(a, b=2):\n            return a\n        return k\n\n\ndef get(k): return k\n")
    found = headers(text)
    assert found["A.get"] == ("@t.overload def get(self, k: int) -> int: | @t.overload def get(self, k: str) -> str: "
                              "| def get(self, k):")
    assert found["get"] == "def get(k):" and found["A.get.inner"] == "def inner(a, b=2):"
    assert scopes(text.encode(), 10) == ["A.get.inner", "A.get", "A"]
    assert scopes(text.encode(), 14) == ["get"]


def test_a_long_parameter_list_is_compared_to_its_end() -> None:
    params = "".join(f"    p{i}: int = {i},\n" for i in range(12))
    before = headers(f"def run(\n{params}) -> None:\n    pass\n")["run"]
    after = headers(f"def run(\n{params.replace('p11: int', 'p11: str')}) -> None:\n    pass\n")["run"]
    assert before != after and before.endswith(") -> None:")


def test_javascript_functions_assigned_to_names_and_methods_without_a_keyword() -> None:
    text = ("res.send = function send(body) {\n  return this;\n};\n\nexports.parse = function (req) {\n};\n"
            "const pick = async (a, b) => {\n};\n\nclass Router {\n  route(path) {\n    if (path) {\n"
            "      describe('x', function () {});\n    }\n  }\n}\n")
    found = headers(text)
    assert found == {"send": "res.send = function send(body) {", "parse": "exports.parse = function (req) {",
                     "pick": "const pick = async (a, b) => {", "Router": "class Router {",
                     "Router.route": "route(path) {"}
    assert scopes(text.encode(), 13) == ["Router.route", "Router"]


def test_code_changed_between_sessions_is_stale_at_the_next_session_start(hooks: HookRunner, project: Path) -> None:
    """A pull or a merge changes a file no hook saw: the next SessionStart compares it again (the memory's
    definitions were compared before the file was written)."""
    path = project / "carts.py"
    path.write_text(CARTS)
    hooks.session = "s-one"
    _edit(hooks, path, "        return sum(items)\n\n", "        return sum(items, 0)\n\n")
    first = _change_id(project, "s-one", "sum")
    hooks.end()
    path.write_text(path.read_text().replace("class Cart:\n    def total(self, items):",
                                             "class Cart:\n    def total(self, items, tax):"))
    assert _stale(project, first) is None  # nothing has looked at the file since
    hooks.session = "s-two"
    hooks.start()
    assert _stale(project, first) == "Cart.total: signature changed"


def test_rust_impl_blocks_name_their_type_and_a_keyword_may_name_a_method() -> None:
    text = ("impl<T: Clone> fmt::Display for Wrapper<T> {\n    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {\n"
            "        Ok(())\n    }\n}\nimpl Default for Config {\n    fn default() -> Config {\n        Config {}\n"
            "    }\n}\npub(crate) fn helper(\n    x: &str,\n) -> usize {\n    0\n}\n")
    found = headers(text)
    assert found["Wrapper.fmt"] == "fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {"
    assert found["Config.default"] == "fn default() -> Config {"
    assert found["helper"] == "pub(crate) fn helper( x: &str, ) -> usize {"
    assert scopes(text.encode(), 3) == ["Wrapper.fmt", "Wrapper"]


def test_a_sessions_own_later_edit_does_not_make_its_memory_stale(hooks: HookRunner, project: Path) -> None:
    """One session edits Cart.total's body, then its signature: its first memory describes the code as the
    session leaves it, not stale; another session's later change of the signature makes it stale."""
    path = project / "carts.py"
    path.write_text(CARTS)
    hooks.session = "s-one"
    _edit(hooks, path, "        return sum(items)\n\n", "        return sum(items, 0)\n\n")
    first = _change_id(project, "s-one", "sum")
    _edit(hooks, path, "class Cart:\n    def total(self, items):", "class Cart:\n    def total(self, items, tax):")
    hooks.end()
    assert _stale(project, first) is None
    hooks.session = "s-two"
    _edit(hooks, path, "def total(self, items, tax):", "def total(self, items, tax, rate):")
    assert _stale(project, first) == "Cart.total: signature changed"
