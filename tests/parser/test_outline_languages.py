"""Per-language fixtures: the expected symbols, kinds, parents and lines."""

from __future__ import annotations

import os

import pytest

from parser import Symbol, outline_file

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")

# (qualified name, kind, start line, end line) for every symbol, in order.
EXPECTED: dict[str, list[tuple[str, str, int, int]]] = {
    "sample.py": [
        ("MAX_RESERVATION", "constant", 10, 10), ("DEFAULT_WAREHOUSE", "constant", 11, 11),
        ("_log", "variable", 12, 12), ("Item", "class", 15, 26), ("Item.sku", "field", 19, 19),
        ("Item.quantity", "field", 20, 20), ("Item.tags", "field", 21, 21), ("Item.available", "method", 23, 26),
        ("Inventory", "class", 29, 63), ("Inventory.__init__", "method", 35, 36),
        ("Inventory.reserve", "method", 38, 55), ("Inventory.reserve.clamp", "function", 50, 51),
        ("Inventory.parse_line", "method", 57, 60), ("Inventory.__iter__", "method", 62, 63),
        ("load", "function", 66, 69), ("normalize", "function", 72, 72),
    ],
    "sample.js": [
        ("fs", "variable", 3, 3), ("path", "variable", 4, 4), ("DEFAULT_TIMEOUT", "constant", 7, 7),
        ("counter", "variable", 8, 8), ("JobQueue", "class", 14, 42), ("JobQueue.#pending", "field", 15, 15),
        ("JobQueue.onDone", "method", 16, 16), ("JobQueue.constructor", "method", 18, 21),
        ("JobQueue.push", "method", 24, 27), ("JobQueue.drain", "method", 29, 33),
        ("JobQueue.size", "method", 35, 37), ("JobQueue.create", "method", 39, 41),
        ("readJson", "function", 45, 47), ("sum", "function", 49, 49), ("legacy", "function", 51, 53),
        ("run", "function", 55, 57), ("helper", "function", 61, 63), ("shorthand", "method", 64, 66),
    ],
    "sample.ts": [
        ("VERSION", "constant", 4, 4), ("User", "interface", 7, 11), ("User.id", "field", 8, 8),
        ("User.name", "field", 9, 9), ("User.greet", "method", 10, 10),
        ("UserId", "type", 13, 13), ("Role", "enum", 15, 18), ("Util", "module", 20, 24),
        ("Util.clamp", "function", 21, 23), ("Repository", "class", 26, 40), ("Repository.items", "field", 27, 27),
        ("Repository.validate", "method", 29, 29), ("Repository.save", "method", 32, 37),
        ("Repository.find", "method", 39, 39), ("UserRepository", "class", 42, 46),
        ("UserRepository.validate", "method", 43, 45), ("loadUsers", "function", 48, 51),
        ("legacyLookup", "function", 53, 53), ("format", "function", 55, 55),
    ],
    "sample.tsx": [
        ("Props", "type", 3, 3), ("Counter", "function", 5, 14), ("Counter.increment", "function", 7, 7),
        ("Panel", "class", 16, 20), ("Panel.render", "method", 17, 19),
    ],
    "sample.go": [
        ("DefaultTTL", "constant", 11, 11), ("maxKeys", "constant", 14, 14), ("minShard", "constant", 15, 15),
        ("ErrNotFound", "variable", 18, 18), ("Entry", "struct", 21, 24), ("Getter", "interface", 27, 30),
        ("Getter.Get", "method", 28, 28), ("Getter.Len", "method", 29, 29), ("Key", "type", 32, 32),
        ("Handler", "type", 34, 34), ("Store", "struct", 37, 40), ("New", "function", 43, 45),
        ("Get", "method", 48, 56), ("Len", "method", 58, 58), ("Map", "function", 60, 66),
    ],
    "sample.rs": [
        ("DEFAULT_CAPACITY", "constant", 7, 7), ("GREETING", "constant", 9, 9), ("Lru", "struct", 13, 17),
        ("InsertError", "enum", 20, 23), ("Cache", "trait", 25, 32), ("Cache.get", "method", 27, 27),
        ("Cache.len", "method", 28, 28), ("Cache.is_empty", "method", 29, 31), ("Shared", "type", 34, 34),
        ("Lru", "impl", 36, 50), ("Lru.new", "method", 38, 40), ("Lru.insert", "method", 42, 49),
        ("Lru", "impl", 52, 60), ("Lru.get", "method", 53, 55), ("Lru.len", "method", 57, 59),
        ("lru", "macro", 62, 66), ("tests", "module", 68, 74), ("tests.helper", "function", 71, 73),
    ],
    "Sample.java": [
        ("Cart", "class", 9, 39), ("Cart.MAX_LINES", "constant", 10, 10), ("Cart.Line", "record", 15, 15),
        ("Cart.Status", "enum", 17, 17), ("Cart.Listener", "interface", 19, 21),
        ("Cart.Listener.onChange", "method", 20, 20), ("Cart.Cart", "method", 23, 24),
        ("Cart.add", "method", 27, 29), ("Cart.iterator", "method", 31, 34), ("Cart.max", "method", 36, 38),
    ],
    "sample.c": [
        ("BUF_MAX", "constant", 4, 4), ("buffer", "struct", 7, 10), ("buffer_t", "type", 12, 12),
        ("mode", "enum", 14, 14), ("counter", "variable", 16, 16), ("buffer_append", "function", 18, 18),
        ("buffer_append", "function", 21, 27), ("usage", "function", 29, 31), ("main", "function", 33, 39),
    ],
    "sample.hpp": [
        ("geo", "module", 5, 42), ("geo.Point", "struct", 8, 10), ("geo.Point.x", "field", 9, 9),
        ("geo.Point.y", "field", 9, 9), ("geo.Shape", "class", 12, 20),
        ("geo.Shape.~Shape", "method", 14, 14), ("geo.Shape.area", "method", 15, 15),
        ("geo.Shape.name", "method", 16, 16), ("geo.Shape.name_", "field", 19, 19), ("geo.Circle", "class", 22, 29),
        ("geo.Circle.Circle", "method", 24, 24), ("geo.Circle.area", "method", 25, 25),
        ("geo.Circle.r_", "field", 28, 28),
        ("geo.clamp", "function", 32, 34), ("geo.Color", "enum", 36, 36), ("geo.area", "function", 38, 40),
    ],
    "sample.rb": [
        ("Billing", "module", 5, 33), ("Billing.TAX_RATE", "constant", 6, 6),
        ("Billing.Invoice", "class", 9, 32), ("Billing.Invoice.initialize", "method", 12, 15),
        ("Billing.Invoice.total", "method", 18, 21), ("Billing.Invoice.from_json", "method", 23, 25),
        ("Billing.Invoice.empty", "method", 28, 30),
    ],
    "Sample.cs": [
        ("Shop.Orders", "module", 4, 37), ("Shop.Orders.Order", "class", 7, 22),
        ("Shop.Orders.Order.MaxItems", "constant", 9, 9), ("Shop.Orders.Order.Id", "property", 11, 11),
        ("Shop.Orders.Order.Add", "method", 14, 17), ("Shop.Orders.Order.Order", "method", 21, 21),
        ("Shop.Orders.IRepository", "interface", 24, 27), ("Shop.Orders.IRepository.Find", "method", 26, 26),
        ("Shop.Orders.Money", "struct", 29, 32), ("Shop.Orders.State", "enum", 34, 34),
        ("Shop.Orders.Receipt", "record", 36, 36),
    ],
    "sample.php": [
        ("App\\Models", "module", 3, 3), ("VERSION", "constant", 8, 8), ("Post", "class", 13, 27),
        ("Post.STATUS_DRAFT", "constant", 15, 15), ("Post.slug", "method", 18, 21),
        ("Post.make", "method", 23, 26), ("Publishable", "interface", 29, 32),
        ("Publishable.publish", "method", 31, 31), ("Timestamps", "trait", 34, 40),
        ("Timestamps.touch", "method", 36, 39), ("Suit", "enum", 42, 45), ("helper", "function", 47, 50),
    ],
    "sample.kt": [
        ("MAX_NOTES", "constant", 6, 6), ("Note", "class", 9, 9), ("NoteRepository", "interface", 11, 14),
        ("NoteRepository.all", "method", 12, 12), ("NoteRepository.save", "method", 13, 13),
        ("Priority", "enum", 16, 16), ("Notes", "object", 18, 20), ("Notes.empty", "method", 19, 19),
        ("NoteService", "class", 22, 33), ("NoteService.add", "method", 24, 28),
        ("NoteService.companion", "object", 30, 32), ("NoteService.companion.create", "method", 31, 31),
        ("NoteId", "type", 35, 35), ("toNote", "function", 37, 37),
    ],
    "sample.swift": [
        ("maxItems", "constant", 3, 3), ("Todo", "struct", 6, 13), ("Todo.title", "property", 7, 7),
        ("Todo.done", "property", 8, 8), ("Todo.toggle", "method", 10, 12),
        ("TodoStore", "protocol", 15, 17), ("TodoStore.load", "method", 16, 16), ("Filter", "enum", 19, 21),
        ("MemoryStore", "class", 24, 34), ("MemoryStore.items", "property", 25, 25),
        ("MemoryStore.init", "method", 27, 29), ("MemoryStore.load", "method", 31, 33),
        ("Todo", "extension", 36, 38), ("Todo.summary", "property", 37, 37), ("makeStore", "function", 40, 42),
    ],
    "sample.sh": [("usage", "function", 5, 7), ("log", "function", 9, 11), ("main", "function", 13, 16)],
    "sample.lua": [
        ("greet", "function", 9, 11), ("method", "method", 13, 15), ("helper", "function", 17, 19),
        ("global_fn", "function", 21, 23), ("callback", "function", 25, 27),
    ],
    "sample.scala": [
        ("Shape", "trait", 6, 9), ("Shape.area", "method", 7, 7), ("Shape.scale", "method", 8, 8),
        ("Circle", "class", 11, 14), ("Circle.area", "method", 12, 12), ("Circle.scale", "method", 13, 13),
        ("Shapes", "object", 16, 21), ("Shapes.Unit", "constant", 17, 17), ("Shapes.total", "method", 19, 20),
        ("Color", "enum", 23, 25),
    ],
}

LANGUAGE = {
    "sample.py": "python", "sample.js": "javascript", "sample.ts": "typescript", "sample.tsx": "tsx",
    "sample.go": "go", "sample.rs": "rust", "Sample.java": "java", "sample.c": "c", "sample.hpp": "cpp",
    "sample.rb": "ruby", "Sample.cs": "csharp", "sample.php": "php", "sample.kt": "kotlin",
    "sample.swift": "swift", "sample.sh": "bash", "sample.lua": "lua", "sample.scala": "scala",
}

IMPORTS = {
    "sample.py": ["__future__", "logging", "os.path", "dataclasses", "typing"],
    "sample.js": ["fs", "path", "events"],
    "sample.ts": ["node:fs/promises", "node:fs"],
    "sample.go": ["errors", "sync", "time"],
    "sample.rs": ["std::collections::HashMap", "std::hash::Hash", "super::*"],
    "Sample.java": ["java.util.ArrayList", "java.util.List"],
    "sample.c": ["stdio.h", "buffer.h"],
    "sample.rb": ["json", "helpers"],
}


def outline(name: str):
    return outline_file(os.path.join(FIXTURES, name))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_symbols(name: str) -> None:
    result = outline(name)
    assert result.parsed, result.reason
    assert result.language == LANGUAGE[name]
    assert result.error_ratio == 0.0
    got = [(s.qualified_name, s.kind, s.start_line, s.end_line) for s in result.symbols]
    assert got == EXPECTED[name]
    depth_of: dict[str, int] = {}
    for s in result.symbols:
        assert s.depth == (depth_of[s.parent] + 1 if s.parent else 0)
        depth_of[s.qualified_name] = s.depth
        assert "\n" not in s.signature and s.signature
        assert s.start_line <= s.end_line <= result.total_lines


@pytest.mark.parametrize("name", sorted(IMPORTS))
def test_imports(name: str) -> None:
    assert outline(name).imports == IMPORTS[name]


def _by_name(name: str) -> dict[str, Symbol]:
    # First symbol of each name (a Rust struct before its impl blocks).
    found: dict[str, Symbol] = {}
    for s in outline(name).symbols:
        found.setdefault(s.qualified_name, s)
    return found


def test_python_signatures_and_docs() -> None:
    syms = _by_name("sample.py")
    # Decorators belong to the signature; the body does not.
    assert syms["Item"].signature == "@dataclass(frozen=True) class Item"
    assert syms["Item"].doc == "A stock-keeping unit"
    assert syms["Item.available"].signature == "@property def available(self) -> bool"
    # Multi-line parameters: one line, comments dropped, trailing comma gone,
    # a short default kept.
    assert syms["Inventory.reserve"].signature == (
        "def reserve(self, sku: str, count: int = 1, *, warehouse: str = ...) -> int")
    assert syms["Inventory.reserve"].doc == "Reserve ``count`` units; returns the units left"
    # A long default value is elided.
    assert syms["Inventory.parse_line"].signature == (
        "@staticmethod def parse_line(line: str, separators: tuple[str, ...] = ...) -> Item")
    # First line of a multi-line docstring only.
    assert syms["Inventory"].doc == "In-memory inventory keyed by SKU"
    assert syms["load"].signature == "async def load(path: str) -> Inventory"
    assert syms["MAX_RESERVATION"].signature == "MAX_RESERVATION = 500"
    assert syms["Inventory.reserve.clamp"].parent == "Inventory.reserve"


def test_doc_comments_across_languages() -> None:
    assert _by_name("sample.go")["Get"].doc == "Get returns the value for key"
    assert _by_name("sample.go")["Get"].signature == "func (s *Store) Get(key string) ([]byte, error)"
    assert _by_name("sample.rs")["Lru"].doc == "An LRU cache"  # `///` above #[derive]
    assert _by_name("sample.rs")["Lru.new"].doc == "Creates an empty cache"
    assert _by_name("sample.js")["JobQueue"].doc == "A tiny job queue"  # /** */
    assert _by_name("sample.js")["readJson"].doc == "Reads a JSON file"  # //
    assert _by_name("sample.ts")["User"].doc == "Shape of a user record"  # before `export`
    assert _by_name("Sample.cs")["Shop.Orders.Order"].doc == "An order"  # <summary> stripped
    assert _by_name("sample.rb")["Billing.Invoice.total"].doc == "Total including tax"
    assert _by_name("sample.lua")["greet"].doc == "Greets someone"
    assert _by_name("Sample.java")["Cart"].doc == "A shopping cart"


def test_signatures_stop_at_the_body() -> None:
    assert _by_name("sample.rs")["Lru.insert"].signature == (
        "pub fn insert(&mut self, key: K, value: V) -> Result<(), InsertError>")
    assert _by_name("sample.rs")["Cache.get"].signature == "fn get(&mut self, key: &K) -> Option<&V>"
    assert _by_name("sample.ts")["User"].signature == "export interface User"
    assert _by_name("sample.ts")["format"].signature == "export const format = (user: User): string =>"
    assert _by_name("sample.js")["run"].signature == (
        "Worker.prototype.run = function run(task)")
    assert _by_name("sample.go")["Getter"].signature == "type Getter interface"
    assert _by_name("sample.go")["maxKeys"].signature == "const maxKeys = 1 << 16"
    assert _by_name("sample.c")["main"].signature == "int main(int argc, char **argv)"
    assert _by_name("Sample.java")["Cart.iterator"].signature == (
        "@Override public java.util.Iterator<Line> iterator()")


def test_render_is_compact_and_indented() -> None:
    text = outline("sample.py").render()
    lines = text.splitlines()
    assert lines[0] == "imports: __future__, logging, os.path, dataclasses, typing"
    # self is implied by the nesting, `def` by the parameter list; docs are cut at a word near 50 characters
    assert ("  38-55 reserve(sku: str, count: int = 1, *, warehouse: str = ...) -> int"
            " # Reserve count units; returns the units left") in lines
    assert "    50-51 clamp(value: int) -> int" in lines
    assert "66-69 async load(path: str) -> Inventory" in lines
    assert "72 normalize = lambda sku" in lines
    source = open(os.path.join(FIXTURES, "sample.py"), encoding="utf-8").read()
    assert len(text) < len(source) / 2
    assert "raise" not in text and "self._items" not in text  # no bodies


def test_to_json_is_structured() -> None:
    import json

    data = outline("sample.go").to_json()
    json.dumps(data)
    assert data["language"] == "go" and data["parsed"] is True
    first = data["symbols"][0]
    assert set(first) >= {"name", "kind", "start_line", "end_line", "signature", "parent", "doc", "depth"}
    assert first["name"] == "DefaultTTL" and first["doc"] == "DefaultTTL is used when no TTL is given"
