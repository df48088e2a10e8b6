"""Outline a source file: its definitions as signatures with line ranges.

One tags-style query per language (parser/queries/<language>.scm) captures
``@definition.<kind>`` nodes with their ``@name`` and ``@import`` nodes; this
module turns the matches into nested symbols. It never raises: anything it
cannot outline becomes a ``parsed=False`` summary.
"""

from __future__ import annotations

import time

from parser import extract, walk
from parser.grammars import GrammarUnavailable, get_parser, get_query, ts
from parser.languages import language_for_path, refine_language

# parser.preprocess (C/C++'s macro masks and `#if` configurations, a repair's blanked lines) is imported where it
# is used: a file of another language that parses without a swallowing error never needs it (~0.13 ms of a cold
# Read).

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from collections.abc import Iterator
    from typing import Any

    from tree_sitter import Node

    from parser.walk import Spans

    # _collect's (definition, name, kind) triples, imports, and definitions' parents
    Collected = tuple[list[tuple[Node, Node, str]], list[Node], dict[Node, Node]]

# Average bytes per line above which a file is taken as minified/generated:
# tree-sitter would parse it, but line numbers would carry no information.
MINIFIED_BYTES_PER_LINE = 300
MINIFIED_MIN_BYTES = 1000

# parser/variables.py's LANGUAGES (a test checks): that module is imported only for them (a cold Read of any
# other language saved ~0.1 ms).
VARIABLE_LANGUAGES = frozenset({"python", "javascript", "typescript", "tsx", "php"})

# Kinds whose nested functions are methods.
_TYPE_KINDS = frozenset({"class", "struct", "interface", "trait", "impl", "enum",
                         "object", "protocol", "extension", "record"})
# Names captured from a keyword token, because the construct has no name.
_KEYWORD_NAMES = frozenset({"init", "deinit", "companion", "constructor", "operator", "enum"})

# Kinds whose node holds no definition (`int x, y;`, `a = b = 1`: one node for two names).
_HOLD_NOTHING = frozenset({"field", "variable"})

# When one name is captured by several patterns, the most specific kind wins:
# constant < class/function (generic patterns) < interface, enum, method...
_KIND_RANK = {"constant": 0, "variable": 0, "class": 1, "function": 1}


_SYMBOL_FIELDS = ("name", "kind", "start_line", "end_line", "signature", "parent", "doc", "depth", "recovered")
_OUTLINE_FIELDS = ("path", "language", "total_lines", "imports", "symbols", "parsed", "error_ratio",
                   "total_bytes", "reason", "import_count", "error_lines", "parsed_bytes", "unread_lines")


# Plain classes, not dataclasses: importing dataclasses (and the inspect module it pulls in) costs a
# hook that outlines a file ~8 ms.
class Symbol:
    __slots__ = ("name", "kind", "start_line", "end_line", "signature", "parent", "_doc", "depth", "recovered")

    def __init__(self, name: str, kind: str, start_line: int, end_line: int, signature: str,
                 parent: str | None = None, doc: str | None = None, depth: int = 0) -> None:
        self.name = name
        self.kind = kind
        self.start_line = start_line  # 1-based, inclusive
        self.end_line = end_line  # 1-based, inclusive
        self.signature = signature
        self.parent = parent  # qualified name of the enclosing symbol
        self._doc: str | tuple | None = doc  # or what doc_line takes, until first read (see doc)
        self.depth = depth
        self.recovered = False  # found by parsing the lines after a syntax error again (outline._recover)

    @property
    def doc(self) -> str | None:
        """The first line of the definition's doc, worked out on first read: a row shows it only for a long
        definition (render.DOC_MIN_LINES), and most are short (MemorySSA.h: 266 doc lines looked for, ~40
        shown; ~0.8 ms of a cold Read)."""
        doc = self._doc
        if type(doc) is tuple:
            node, body, parent, (language, text) = doc
            try:
                doc = extract.doc_line(node, body, language, text, parent)
            except Exception:  # never break the caller (see outline_source)
                doc = None
            self._doc = doc
        return doc

    @doc.setter
    def doc(self, value: str | None) -> None:
        self._doc = value

    @property
    def qualified_name(self) -> str:
        return f"{self.parent}.{self.name}" if self.parent else self.name

    def to_json(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in _SYMBOL_FIELDS}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Symbol) and self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dataclass it replaces

    def __repr__(self) -> str:
        return f"Symbol({self.kind} {self.qualified_name} L{self.start_line}-{self.end_line})"


class Outline:
    __slots__ = _OUTLINE_FIELDS

    def __init__(self, path: str, language: str | None, total_lines: int, imports: list[str] | None = None,
                 symbols: list[Symbol] | None = None, parsed: bool = False, error_ratio: float = 0.0,
                 total_bytes: int = 0, reason: str | None = None, import_count: int = 0,
                 error_lines: list[tuple[int, int]] | None = None, parsed_bytes: int | None = None,
                 unread_lines: list[tuple[int, int]] | None = None) -> None:
        self.path = path
        self.language = language
        self.total_lines = total_lines
        self.imports = imports if imports is not None else []  # "module" or "module (3)"
        self.symbols = symbols if symbols is not None else []
        self.parsed = parsed
        self.error_ratio = error_ratio  # share of lines that are broken (see error_lines)
        # Broken lines as (first, last) ranges, 1-based: where the parser met tokens it could not place.
        self.error_lines = error_lines if error_lines is not None else []
        self.total_bytes = total_bytes
        self.reason = reason  # why parsed is False
        self.import_count = import_count  # import statements/specs seen, before dedup
        # Set when parsing ran over its CPU budget (ParseBudget): the outline covers only the bytes before this
        # (whole lines); the caller scans the rest by keyword (memory/outline/partial.py) and says so.
        self.parsed_bytes = parsed_bytes
        # Lines swallowed by a syntax error that the recovery had no parse budget left to read (outline._recover).
        self.unread_lines = unread_lines if unread_lines is not None else []

    def render(self, max_chars: int | None = None) -> str:
        from parser.render import render

        return render(self, max_chars)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {f: getattr(self, f) for f in _OUTLINE_FIELDS}
        data["imports"] = list(self.imports)
        data["symbols"] = [s.to_json() for s in self.symbols]
        data["error_ratio"] = round(self.error_ratio, 4)
        data["error_lines"] = [list(r) for r in self.error_lines]
        data["unread_lines"] = [list(r) for r in self.unread_lines]
        return data

    def __repr__(self) -> str:
        return f"Outline({self.path!r}, {self.language}, {len(self.symbols)} symbols, parsed={self.parsed})"


def _line_count(source: bytes) -> int:
    if not source:
        return 0
    return source.count(b"\n") + (0 if source.endswith(b"\n") else 1)


def _fallback(path: str, language: str | None, source: bytes, reason: str) -> Outline:
    return Outline(path=path, language=language, total_lines=_line_count(source),
                   total_bytes=len(source), parsed=False, reason=reason)


def _error_rows(root: Node) -> set[int]:
    """Rows touched by ERROR nodes (whole span) and MISSING nodes: how much of the file a parse lost.

    Iterative: pathological nesting must not hit the recursion limit."""
    rows: set[int] = set()
    stack = [root]
    while stack:
        for child in stack.pop().children:
            if child.is_error:
                rows.update(range(child.start_point.row, child.end_point.row + 1))
            elif child.is_missing:
                rows.add(child.start_point.row)
            elif child.has_error:
                stack.append(child)
    return rows


def _broken_rows(root: Node, last: set[int] | None = None) -> set[int]:
    """The rows that are broken: those of the tokens an ERROR node holds outside any well-formed subtree
    (and of MISSING nodes). An ERROR that wraps a whole class around one bad line spans the class; its own
    tokens sit on a few lines, and those are the lines to name. `last` gets the row of each ERROR node's last
    token: where the parser gave up (its first tokens opened constructs it could not finish)."""
    rows: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        in_error = node.is_error
        own = -1
        for child in node.children:
            if child.is_missing:
                rows.add(child.start_point.row)
            elif child.is_error or child.has_error:
                stack.append(child)
            elif in_error and child.child_count == 0 and "comment" not in child.type:
                rows.add(child.start_point.row)
                own = child.start_point.row
        if in_error and own < 0 and not node.child_count:
            rows.add(own := node.start_point.row)
        if last is not None and own >= 0:
            last.add(own)
    return rows


def _ranges(rows: set[int]) -> list[tuple[int, int]]:
    """0-based rows -> 1-based (first, last) runs."""
    out: list[tuple[int, int]] = []
    for row in sorted(rows):
        if out and out[-1][1] == row:
            out[-1] = (out[-1][0], row + 1)
        else:
            out.append((row + 1, row + 1))
    return out


# Repair of a broken parse: C/C++ first try one configuration of the `#if`s; then each round tries blanking
# each run of broken lines (and each with the line before it), in order, and keeps the copy that loses the
# fewest lines to ERROR nodes. A file without errors pays nothing; a broken one at most REPAIR_PARSES more
# parses (measured: a C header whose root was an ERROR node, 4.0 -> 14.9 ms with 17 parses allowed).
REPAIR_PARSES = 5
REPAIR_BYTES = 320_000  # and at most this many bytes parsed again (3 parses of a 100 KB header, ~50 ms)
# Lines lost to ERROR nodes beyond the broken ones before a repair is tried, unless a definition's header is
# among them (below that, the repair's parses mostly buy back a line or two of a C++ header).
REPAIR_MIN_SWALLOWED = 3


_CLOSERS = frozenset({b"}", b"};", b"end", b")", b"});", b"})"})


def _error_headers(rows: set[int] | range, lines: list[bytes]) -> list[int]:
    """The rows lost to ERROR nodes (`rows`, from _parse) that look like a definition's header (`def g(self):`):
    if no definition was found starting there, the error swallowed one."""
    return [row for row in rows if row < len(lines) and b" " in lines[row]
            and _header_match(lines[row].decode("utf-8", "replace"))]


def _candidates(root: Node, lines: list[bytes]) -> list[tuple[int, int]]:
    """Rows (0-based, inclusive) to try blanking: each run of broken rows, those where an ERROR node ends
    first (the row where it ends alone first) and runs of definition headers last, each followed by the same
    run with the line before it (where an unclosed `{` or `(` usually is: the parser notices on the next
    line)."""
    last: set[int] = set()
    runs = _ranges(_broken_rows(root, last))

    def header(row: int) -> bool:  # `module Billing` opening an ERROR node: blanking it unnests the rest
        return row < len(lines) and _header_match(lines[row].decode("utf-8", "replace")) is not None

    runs.sort(key=lambda run: (all(header(r) for r in range(run[0] - 1, run[1])),
                               not any(run[0] - 1 <= row <= run[1] - 1 for row in last)))  # stable
    out: list[tuple[int, int]] = []
    for a, b in runs[:REPAIR_PARSES]:
        ends = [row for row in sorted(last) if a - 1 <= row <= b - 1]
        if a < b and ends:  # `fun add(...) {` then the bad line: the bad line alone first
            out.append((ends[-1], ends[-1]))
        out.append((a - 1, b - 1))
        if a > 1:
            out.append((a - 2, b - 1))
    return out


# Work a file's parses may do (the first, the repair's and the recovery's), counted in tree-sitter's progress
# callbacks, one per 100 of its parse operations: the same text takes the same count on every run whatever the
# machine's load, so a file gives the same outline every time (a CPU-time budget gave a repair different error
# ranges from run to run). From the first parse: PARSE_UNITS, or PARSE_UNITS_PER_KB per KB read so far when that
# is more. Code takes 1-22 units per KB (p50 6.8, 1,100 files of every language, 2026-12-07), so a file of any
# size parses whole; what is not code in the file's language takes more (vim's Czech tutor.cs: 30 per KB) and
# stops there.
PARSE_UNITS = 600
PARSE_UNITS_PER_KB = 32
# And a ceiling in CPU time, for text whose error recovery costs far more per unit (groff's hyphen.cs: ~430 us a
# unit against 10-40 for code, 6 ms per KB): PARSE_BUDGET_MS, or PARSE_MS_PER_KB per KB read when more, times
# CPU_CEILING. Code parses at 0.1-0.4 ms per KB (0.74 at most on 2,281 files of the corpus and /usr/include): only
# text that is not code gets there, and such a file has no outline (its lines are mostly broken) whatever the
# load. Where a budget ends a parse, the outline says which lines it did not read.
PARSE_BUDGET_MS = 25.0
PARSE_MS_PER_KB = 1.0
CPU_CEILING = 2.0
# The repair's and the recovery's parses, with the first, may take this many times as much, units and ceiling
# (its floor too: a 6 KB header's repair took 37% of a 50 ms ceiling idle, and ran over it on a loaded CI
# machine, so the same file gave other unread lines): repairs of real code cost up to 2.2 ms per KB (openssl's
# core_dispatch.h, 6 parses). With this, every fixture outlines the same on a clock 8 times slower, and 1,197
# of the 1,203 broken files of the machine's headers on one 4 times slower with a second run beside it (the
# other six: 107 KB ssl.h copies, 220-280 ms idle); before, a fixture differed at 4 times.
REPAIR_SCALE = 4.0
# Bytes handed to tree-sitter per read (the budget is checked between reads): ~6 ms of the worst text's parsing.
_READ_BYTES = 1024


class ParseBudget:
    """The allowance of one file's parses: each reads its text through a callback that ends the text where the
    allowance runs out (py-tree-sitter 0.26 has no timeout, and its progress callback can only abandon a parse,
    leaving no tree), so a parse that has read `n` bytes stops there; the progress callback counts the work."""

    __slots__ = ("start", "read", "cut", "scale", "units", "limit")

    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit  # units of the first parse instead of PARSE_UNITS and PARSE_UNITS_PER_KB
        self.start = time.process_time()
        self.read = 0  # furthest byte a parse has read
        self.cut: int | None = None  # where the first parse's text was ended, when it was
        self.scale = 1.0  # REPAIR_SCALE once the first parse is done
        self.units = 0  # progress callbacks so far

    def progress(self, _offset: int, _has_error: bool) -> bool:
        """tree-sitter's progress callback: counts a unit of work, never abandons the parse."""
        self.units += 1
        return False

    def spent(self) -> bool:
        """Whether the allowance is used up: the units, or the CPU ceiling."""
        kb = self.read / 1024
        allowance = max(PARSE_UNITS, kb * PARSE_UNITS_PER_KB) if self.limit is None else self.limit
        if self.units > allowance * self.scale:
            return True
        ms = (time.process_time() - self.start) * 1000
        return ms > CPU_CEILING * self.scale * max(PARSE_BUDGET_MS, kb * PARSE_MS_PER_KB)

    def reader(self, text: bytes, ends: list[int]) -> Any:
        """tree-sitter's read callback over `text`; `ends` gets [furthest byte read, end of the text]. Once
        ended, the text stays ended there for every later read (of the parse, or of a node's text): tree-sitter
        re-reads earlier offsets, and a text that changes under it can make it loop. The callback keeps its own
        ends, copied to `ends` as they change: the callers reuse that list for their next parse, and a tree whose
        text then ended under it looped for ever reading a node's text (a repair candidate's, on a fake clock 20
        times slower than this machine's; 4 times before the repair's ceiling scaled)."""
        size = len(text)
        own = [0, size]
        ends[:] = own

        def read(offset: int, _point: Any) -> bytes:
            if own[1] == size and own[0] < size and offset + _READ_BYTES > own[0]:
                if self.spent():
                    own[1] = max(offset, own[0])
                else:
                    own[0] = min(size, max(own[0], offset + _READ_BYTES))
                    self.read = max(self.read, own[0])
                ends[:] = own
            return text[offset:min(offset + _READ_BYTES, own[1])]

        return read


def _parse(parser: Any, text: bytes, old: Any = None, budget: ParseBudget | None = None,
           ends: list[int] | None = None) -> tuple[Any, set[int] | range]:
    """The tree and the rows it lost to ERROR nodes (_error_rows; all of them when the root is one). With `old`
    (an edited tree of a copy of `text`: see _edited), tree-sitter reuses its unchanged subtrees. With `budget`,
    the text of a fresh parse is read through its callback; `ends[1]` < len(text) then says where the budget ended
    it. Not an incremental one: it reads past where its text was ended, gets nothing there and never returns (an
    incremental parse re-reads only around the edits: cheap; the repair checks the budget before each)."""
    if ends is not None:
        ends[:] = [len(text), len(text)]
    if budget is None:
        tree = parser.parse(text) if old is None else parser.parse(text, old_tree=old)
    elif old is None:
        tree = parser.parse(budget.reader(text, ends if ends is not None else []), progress_callback=budget.progress)
    else:  # read whole (see above), its work counted
        tree = parser.parse(lambda at, _point: text[at:at + _READ_BYTES], old_tree=old,
                            progress_callback=budget.progress)
    root = tree.root_node
    if root.is_error:
        return tree, range(root.end_point.row + 1)
    return tree, (_error_rows(root) if root.has_error else range(0))


# Languages whose repairs re-parse incrementally. An incremental parse may recover from an error otherwise than
# a fresh one: in a Kotlin fixture (an unclosed `{`) one candidate lost 5 lines instead of 56, and the repair
# chose another copy. For these five it gave the fresh parse's outline on every file tried: 879 repaired
# files (the machine's C, C++, Python, JavaScript and PHP, each also with two bad lines dropped in).
_INCREMENTAL = frozenset({"c", "cpp", "python", "javascript", "php"})


def _edited(tree: Any, text: bytes, copy: bytes, language: str) -> Any:
    """A copy of `tree` (the tree of `text`) told which lines differ in `copy`, which has the same lines and
    offsets with some of them blanked: parsed with it, a repair re-parses only around the blanked lines
    (IRBuilder.h, 2,700 lines: a blanked run 11.5 -> 3.9 ms, one `#if` configuration 10.5 -> 1.4 ms). None
    (a fresh parse) outside _INCREMENTAL. A test checks that the outlines are those of fresh parses."""
    if language not in _INCREMENTAL:
        return None
    edited = tree.copy()
    size = len(text)
    row = counted = 0  # the row of offset `counted`
    at = _first_difference(text, copy, 0)
    while at < size:  # a run of lines that differ, from the line holding offset `at`
        first_byte = text.rfind(b"\n", 0, at) + 1
        row += text.count(b"\n", counted, first_byte)
        end = _line_end(text, at)
        while end < size:  # and the lines after it that differ too
            next_end = _line_end(text, end + 1)
            if text[end + 1:next_end] == copy[end + 1:next_end]:
                break
            end = next_end
        last = row + text.count(b"\n", first_byte, end)
        column = end - (text.rfind(b"\n", 0, end) + 1)
        edited.edit(first_byte, end, end, (row, 0), (last, column), (last, column))
        row, counted = last, end
        at = _first_difference(text, copy, end + 1)
    return edited


def _line_end(text: bytes, at: int) -> int:
    """The offset of the newline ending the line holding offset `at`, or the text's length."""
    end = text.find(b"\n", at)
    return len(text) if end < 0 else end


_SAME_BLOCK = 512


def _first_difference(a: bytes, b: bytes, at: int) -> int:
    """The first offset from `at` where `a` and `b` (of one length) differ, or their length: compared a block
    at a time, then by halves in the block that differs. Splitting both into lines and comparing each pair
    cost IRBuilder.h's repair 0.43 ms a candidate, this 0.10 (stl_vector.h's `#if` configuration, whose ~90
    runs of blanked lines are found one by one: 0.43 either way)."""
    size = len(a)
    while at < size and a[at:at + _SAME_BLOCK] == b[at:at + _SAME_BLOCK]:
        at += _SAME_BLOCK
    if at >= size:
        return size
    low, high = at, min(at + _SAME_BLOCK, size)  # a[low:high] != b[low:high]
    while high - low > 1:
        middle = (low + high) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle
    return low


# A first parse that leaves this share of the lines broken read text that is not code in its language (prose,
# troff: 93-100% of lines; the most of any code in 1,227 broken files of the machine's headers: 83%, libxml2's
# xmlunicode.h, then 71%): it is not repaired or recovered, whose parses cost such text 5-15 times code's.
MOSTLY_BROKEN = 0.9


def _mostly_broken(broken: set[int] | range, lines: int) -> bool:
    """Whether `broken` rows are MOSTLY_BROKEN of a text's `lines`."""
    return len(broken) >= MOSTLY_BROKEN * max(lines, 1)


class Parsed:
    """What _parse_repaired gives: the tree; the text it was parsed from (`text` or a repaired copy, same
    offsets: names are cut from it); the broken rows to report (the lines blanked by the repair and those
    still broken); the rows the repair blanked; and _collect's result on the tree when the repair needed it
    (a second _collect of a 3,000-line header costs ~2 ms), else None."""

    __slots__ = ("tree", "text", "broken", "blanked", "collected", "unconfigured")

    def __init__(self, tree: Any, text: bytes, broken: set[int], blanked: set[int] | None = None,
                 collected: Collected | None = None, unconfigured: bytes | None = None) -> None:
        self.tree, self.text, self.broken, self.collected = tree, text, broken, collected
        self.blanked = blanked if blanked is not None else set()
        self.unconfigured = unconfigured  # C/C++: the text before one configuration of its `#if`s was kept


def _distinct_names(entries: list[tuple[Node, Node, str]]) -> int:
    """How many distinct names a parse's definitions have."""
    return len({name.text for _node, name, _kind in entries})


def _parse_repaired(parser: Any, text: bytes, language: str, budget: ParseBudget) -> Parsed:
    """The tree of `text` or of a repaired copy (same offsets), and what the repair found (see Parsed).

    Only a parse whose ERROR nodes swallow more than the broken lines themselves is repaired (a line the
    parser skipped and resumed after costs nothing), a repair must not lose a definition the parse found (a
    line is not blanked if a definition starts on it; one configuration of the `#if`s must find as many),
    and it must lose fewer lines to ERROR nodes. Every parse spends `budget`: a first parse it ended is not
    repaired (`budget.cut` says where it ended), and the repair stops where it runs out."""
    ends: list[int] = []
    tree, lost_rows = _parse(parser, text, budget=budget, ends=ends)
    lost = len(lost_rows)
    if ends[1] < len(text):
        budget.cut = ends[1]
        return Parsed(tree, text, _broken_rows(tree.root_node))
    budget.scale = REPAIR_SCALE
    if not lost:
        return Parsed(tree, text, set())
    first_tree, original, original_text = tree, _broken_rows(tree.root_node), text
    lines = text.split(b"\n")
    if _mostly_broken(original, len(lines)):  # not code in this language: nothing to repair or recover
        return Parsed(tree, text, original)
    # Swallowed lines, or a broken line that only closes a block (`}`): something before it closed early.
    swallowed_lines = lost >= len(original) + REPAIR_MIN_SWALLOWED
    swallowed = swallowed_lines or any(row < len(lines) and lines[row].strip() in _CLOSERS for row in original)
    headers = [] if swallowed else _error_headers(lost_rows, lines)
    # C/C++: a broken line next to an `#if`/`#else`/`#endif` line: a conditional inside a declaration (`static
    # const bool config_debug =\n#ifdef X\n true\n#else\n false\n#endif\n;`: the declaration is lost to it).
    conditional = language in ("c", "cpp") and _near_directive(original, lines)
    if not swallowed and not headers and not conditional:  # the usual case: a line or two skipped, then resumed
        return Parsed(tree, text, original)
    collected = _collect(tree.root_node, language)
    found = {node.start_point.row for node, _name, _kind in collected[0]}
    if not swallowed and not conditional and all(row in found for row in headers):
        return Parsed(tree, text, original, collected=collected)
    starts: set[int] | None = None  # made when a blanking needs it (_kept_starts)
    parses = min(REPAIR_PARSES, max(1, REPAIR_BYTES // max(len(text), 1)))
    # `#if` inside a declaration: parse one configuration instead (only for real damage: it drops the other
    # branches' definitions, which ctags counts)
    if (swallowed_lines or conditional) and language in ("c", "cpp") and not budget.spent():
        from parser.preprocess import first_branches

        branch = first_branches(text)
        candidate, candidate_rows = _parse(parser, branch, _edited(tree, text, branch, language), budget, ends)
        candidate_lost = len(candidate_rows)
        parses -= 1
        if ends[1] < len(branch):  # ended by the budget: not a configuration to compare, and no time to repair
            parses = 0
        elif candidate_lost < lost:  # and as many names (the other branches often define the same ones again)
            candidate_collected = _collect(candidate.root_node, language)
            if _distinct_names(candidate_collected[0]) >= _distinct_names(collected[0]):
                text, tree, lost, collected = branch, candidate, candidate_lost, candidate_collected
    unconfigured = original_text if text is not original_text else None
    blanked: set[int] = set()
    before = (text, tree, collected)  # a repair that closes a class early is undone (_worse)
    while parses > 0 and lost:
        best = None
        for first, last in _candidates(tree.root_node, lines):
            if parses <= 0 or budget.spent():
                parses = 0
                break
            if starts is None:
                starts = _kept_starts(found, lines)
            if any(first <= row <= last for row in starts):
                continue
            # A line that only closes a block stays: blanking it would unbalance the rest (Lua's `end`).
            rows = [r for r in range(first, last + 1) if r >= len(lines) or lines[r].strip() not in _CLOSERS]
            if not rows:
                continue
            from parser.preprocess import blank_lines

            copy = text
            for first_row, last_row in _ranges(set(rows)):
                copy = blank_lines(copy, first_row - 1, last_row - 1)
            candidate, candidate_rows = _parse(parser, copy, _edited(tree, text, copy, language), budget, ends)
            candidate_lost = len(candidate_rows)
            parses -= 1
            if ends[1] < len(copy):
                parses = 0
                break
            if candidate_lost < (best[2] if best else lost):
                best = (copy, candidate, candidate_lost, rows)
                if candidate_lost * 2 < lost:  # most of what was lost is back: go on from there
                    break
        if best is None:
            break
        text, tree, lost = best[0], best[1], best[2]
        blanked.update(best[3])
    if blanked:
        collected = _collect(tree.root_node, language)
        if _worse(before, (text, tree, collected), blanked, lines):
            (text, tree, collected), blanked, lost = before, set(), 1  # undone: recovery reads past the error
    if tree is first_tree:
        return Parsed(tree, text, original, collected=collected)
    broken = blanked | (_broken_rows(tree.root_node) if lost else set())
    return Parsed(tree, text, broken, blanked, collected, unconfigured)


def _near_directive(rows: set[int], lines: list[bytes]) -> bool:
    """Whether a line next to one of `rows` is an `#if`/`#else`/`#endif` line."""
    from parser.preprocess import directive

    return any(0 <= near < len(lines) and directive(lines[near]) for row in rows for near in (row - 1, row + 1))


def _kept_starts(found: set[int], lines: list[bytes]) -> set[int]:
    """The rows (of `found`, where the first parse's definitions start) a repair must not blank: all but those
    where the lexical fallback would find the definition again (`def f(a`)."""
    return {row for row in found
            if _header_match(lines[row].decode("utf-8", "replace") if row < len(lines) else "") is None}


def _worse(before: tuple, after: tuple, blanked: set[int], lines: list[bytes]) -> bool:
    """Whether the lines a repair blanked made the outline worse than the parse before it: a line that only
    closes a block is broken now and was not (blanking a `when (x) { a ->` whose `}` is on the next line closed
    the class around it there: its other members went to the top, and 43 of a fixture's 104 names were lost),
    or definitions that parse found (off the blanked lines) are gone or less deep, more than it found anew.
    Each step may lose what a later one brings back, and a repair may lose one definition to find eleven
    (IRBuilder.h), so only the end counts."""
    text, tree, collected = before
    new_text, new_tree, new_collected = after
    old_broken = _broken_rows(tree.root_node)
    closers = [row for row in _broken_rows(new_tree.root_node) - old_broken
               if row < len(lines) and lines[row].strip() in _CLOSERS]
    if closers:
        return True
    found, kept = _definitions(collected, text), _definitions(new_collected, new_text)
    gone = sum(1 for key, depth in found.items() if key[0] not in blanked and kept.get(key, -1) < depth)
    return gone > 0 and len(kept) - len(found) <= gone  # a loss, unless it buys more than it costs


def _definitions(collected: Collected, text: bytes) -> dict[tuple[int, bytes], int]:
    """Each definition a parse found, (its first row, its name), with its depth: how many definitions it is in."""
    found: dict[tuple[int, bytes], int] = {}
    open_ends: list[int] = []  # end bytes of the definitions around the next one
    for node, name, kind in sorted(collected[0], key=lambda e: (e[0].start_byte, -e[0].end_byte)):
        while open_ends and open_ends[-1] <= node.start_byte:
            open_ends.pop()
        found[(node.start_point.row, text[name.start_byte:name.end_byte])] = len(open_ends)
        if kind not in _HOLD_NOTHING:
            open_ends.append(node.end_byte)
    return found


# Recovery: an ERROR node that still swallows lines after the repair (a brace the repair could not place, a
# construct the grammar does not know) may hold definitions that no subtree shows. From its first broken line
# on, the next line that starts a declaration at the indentation the error began at (or less) to the error's
# end is parsed again alone: every other line blanked (same offsets), inside a type's body when that line is
# indented (written into the blanked lines before it). What that parse finds on those lines and the first parse
# did not is added, marked as recovered. Its own errors are recovered the same way, up to RECOVER_PARSES parses.
RECOVER_PARSES = 6
RECOVER_MIN_ROWS = 3  # an ERROR node over fewer rows swallows nothing worth a parse
# What an indented declaration is parsed inside (its enclosing type's body), per language; none where a
# member may stand at the top (Go, C, Ruby, Python's indented `def` needs its `class` line: written).
_WRAPPERS = {"java": b"class _{", "csharp": b"class _{", "kotlin": b"class _{", "swift": b"class _{",
             "scala": b"class _{", "cpp": b"struct _{", "rust": b"mod _{", "php": b"<?php class _{",
             "javascript": b"class _{", "typescript": b"class _{", "tsx": b"class _{", "python": b"class _:"}
# What a PHP text must start with to be code at all.
_PREFIX = {"php": b"<?php"}
# JavaScript and TypeScript lines that are statements, not members: parsed at the top, without the class.
_TOP_WORDS = ("function", "async function", "const ", "let ", "var ", "export ", "import ", "class ", "if ",
              "for ", "while ", "return", "switch ")
_NOT_A_START = (b"//", b"/*", b"*", b"#", b"}", b")", b"]", b".", b"|", b"&", b"+", b"-", b"?", b":", b",", b"@")


# Words a declaration's line starts with (its keyword or a modifier), in any of the languages.
_DECLARATION_WORDS = frozenset(b"""val var const let type typedef static extern using namespace template public private
protected internal override open abstract final sealed data inner companion init inline export async pub unsafe impl
mod def class fun func fn function struct enum union interface trait object module protocol virtual explicit
constexpr suspend lateinit annotation actual expect operator infix tailrec readonly declare partial record
extension actor""".split())


def _starts_declaration(line: bytes) -> bool:
    """Whether `line` starts with a declaration's keyword or modifier (`private val`, `fun`, `static int`,
    `class`); C's `int f(void) {` has none: its errors are at the top, where _restart_row takes any line."""
    text = line.lstrip()
    if not text or text.startswith(_NOT_A_START):
        return False
    word = text.split(None, 1)[0].split(b"(", 1)[0].split(b"<", 1)[0]
    name = word.lstrip(b"_")  # `_rg_types() {`, `_private_helper(...)`: a name may start with underscores
    return word in _DECLARATION_WORDS or (not _indent(line) and name[:1].isalpha() and name.replace(b"_", b"").isalnum()
                                           and word not in _STATEMENTS)


_STATEMENTS = frozenset(b"if else for while do switch case default return break continue goto throw try".split())


def _indent(line: bytes) -> int:
    return len(line) - len(line.lstrip())


def _swallowing(root: Node, broken: set[int]) -> list[Node]:
    """The outermost ERROR nodes (the root if it is one) spanning RECOVER_MIN_ROWS rows or more beyond the
    `broken` ones."""
    def swallows(node: Node) -> bool:
        first, last = node.start_point.row, node.end_point.row
        return last - first + 1 - sum(1 for row in broken if first <= row <= last) >= RECOVER_MIN_ROWS

    if root.is_error:
        return [root] if swallows(root) else []
    found: list[Node] = []
    stack = [root]
    while stack:
        for child in stack.pop().children:
            if child.is_error:
                if swallows(child):
                    found.append(child)
            elif child.has_error:
                stack.append(child)
    return found


def _restart_row(error: Node, lines: list[bytes], broken: set[int], floor: int = 0) -> int | None:
    """The row to parse again from in `error`'s span (from row `floor`): after its first broken row, the first
    that starts a declaration (_starts_declaration) at the error's indentation or less, else (an error that
    wraps a class from its header on) the first at the shallowest indentation of those."""
    first, last = error.start_point.row, min(error.end_point.row, len(lines) - 1)
    after = next((row for row in range(max(first, floor), last + 1) if row in broken), max(first, floor))
    limit = _indent(lines[first]) if first < len(lines) else 0
    starts = [row for row in range(after + 1, last + 1) if row not in broken and _starts_declaration(lines[row])]
    least = min((_indent(lines[row]) for row in starts), default=0)
    return next((row for row in starts if _indent(lines[row]) <= max(limit, least)), None)


def _segment(text: bytes, lines: list[bytes], first: int, last: int, language: str) -> tuple[bytes, int]:
    """`text` with every row but `first`..`last` blanked (same offsets), the wrapper of an indented first row
    written at its start; and the byte where row `first` starts."""
    start = sum(len(line) + 1 for line in lines[:first])
    end = min(len(text), start + sum(len(line) + 1 for line in lines[first:last + 1]))
    head = bytearray(text[:start].translate(_BLANKED))
    line = lines[first].lstrip()
    wrapper = _WRAPPERS.get(language) if _indent(lines[first]) else None
    if wrapper and language in ("javascript", "typescript", "tsx") and line.decode("utf-8", "replace").startswith(
            _TOP_WORDS):
        wrapper = None
    lead = wrapper or _PREFIX.get(language, b"")
    if lead and len(lead) < start:  # on the first row(s), over blanks (newlines kept where it does not reach)
        head[:len(lead)] = lead
    return bytes(head) + text[start:end] + text[end:].translate(_BLANKED), start


# bytes.translate table: every byte a space but the newline (a byte loop in Python cost a 300 KB file's recovery
# ~3 ms a parse).
_BLANKED = bytes(10 if b == 10 else 32 for b in range(256))


def _recover(parser: Any, parsed: Parsed, language: str, budget: ParseBudget) -> tuple[list, set[int], set[int]]:
    """Definitions of `parsed`'s swallowed lines found by parsing them again (see RECOVER_PARSES): (entries as
    _collect's, the rows they start on, rows left unread because the budget ran out)."""
    text = parsed.text
    lines = text.split(b"\n")
    entries = parsed.collected[0] if parsed.collected else []
    known = set(_definitions((entries, [], {}), text))
    queue = _restarts(parsed.tree.root_node, lines, parsed.broken, 0, len(lines) - 1)
    found: list = []
    rows: set[int] = set()
    unread: set[int] = set()
    parses = RECOVER_PARSES
    while queue:
        first, last = queue.pop(0)
        if parses <= 0 or budget.spent():
            unread.update(range(first, last + 1))
            continue
        copy, start = _segment(text, lines, first, last, language)
        ends: list[int] = []
        tree, _lost = _parse(parser, copy, budget=budget, ends=ends)
        parses -= 1
        if ends[1] < len(copy):
            unread.update(range(first, last + 1))
            continue
        for node, name, kind in _collect(tree.root_node, language)[0]:
            row = node.start_point.row
            key = (row, copy[name.start_byte:name.end_byte])
            if first <= row <= last and node.start_byte >= start and key not in known:
                known.add(key)
                found.append((node, name, kind))
                rows.add(row)
        if tree.root_node.has_error:
            queue.extend(_restarts(tree.root_node, lines, _broken_rows(tree.root_node), first, last))
    return found, rows, unread


# Languages whose walk can pass over the subtrees that hold no row it is asked about (_collect's `within`).
_WITHIN = frozenset({"c", "cpp"})

# Configurations of a C/C++ file's `#if`s parsed, at most, for the definitions of the branches the repair's
# configuration dropped: each conditional's 2nd branch, then its 3rd... (bitmap.h's `#elif` chain has 5).
OTHER_BRANCH_PARSES = 4


def _other_branches(parser: Any, parsed: Parsed, language: str, budget: ParseBudget) -> tuple[list, set[int], set[int]]:
    """Definitions on the lines of the `#if` branches that the configuration kept by the repair dropped
    (`#elif`/`#else` code: prof.c's unwinder callbacks, a second `#define` of a name), found by parsing the
    configurations that keep the 2nd, 3rd... branch of each conditional: (entries as _collect's, the
    rows they start on, dropped rows left unread because the budget ran out). Their names are written into
    `parsed.text`, where _build_symbols reads names (the rows are blank there)."""
    from parser.preprocess import branches, directive

    source, text = parsed.unconfigured or b"", parsed.text
    # (same offsets, so the same lines; a line the configuration kept is the same bytes: compared first)
    pairs = zip(source.split(b"\n"), text.split(b"\n"), strict=False)
    dropped = {row for row, (line, kept) in enumerate(pairs) if line != kept and line.strip() and not kept.strip()
               and row not in parsed.blanked and directive(line) is None}
    entries = parsed.collected[0] if parsed.collected else []
    known = set(_definitions((entries, [], {}), text))
    found: list = []
    rows: set[int] = set()
    merged = bytearray(text)
    within = _row_spans(source, dropped) if dropped else None
    most = 2
    k = 2
    while dropped and k <= min(most, 1 + OTHER_BRANCH_PARSES):
        if budget.spent():
            return found, rows, dropped - rows
        copy, most = branches(source, k)
        ends: list[int] = []
        # From the kept configuration's tree, edited where this one differs: only the branches are parsed again
        # (libstdc++'s algorithmfwd.h: 2.8 -> ~0.5 ms)
        tree, _lost = _parse(parser, copy, _edited(parsed.tree, text, copy, language), budget, ends)
        k += 1
        if ends[1] < len(copy):
            return found, rows, dropped - rows
        for node, name, kind in _collect(tree.root_node, language, within)[0]:  # the dropped rows' subtrees
            row = node.start_point.row
            key = (row, copy[name.start_byte:name.end_byte])
            if row in dropped and key not in known:
                known.add(key)
                found.append((node, name, kind))
                rows.add(row)
                merged[name.start_byte:name.end_byte] = copy[name.start_byte:name.end_byte]
    parsed.text = bytes(merged)
    return found, rows, set()


def _row_spans(text: bytes, rows: set[int]) -> Spans:
    """The byte ranges of `rows` (0-based) of `text`, each run of rows one range (newlines included)."""
    spans: list[tuple[int, int]] = []
    at = row = 0
    for wanted in sorted(rows):
        while row < wanted and at >= 0:  # to the start of row `wanted`
            at = text.find(b"\n", at) + 1 or -1
            row += 1
        if at < 0:
            break
        end = text.find(b"\n", at) + 1 or len(text)
        if spans and spans[-1][1] == at:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((at, end))
        at, row = end, wanted + 1
    return walk.Spans(spans)


def _restarts(root: Node, lines: list[bytes], broken: set[int], first: int, last: int) -> list[tuple[int, int]]:
    """The spans (first and last row) to parse again for the swallowing errors of a parse of rows `first`..
    `last`: from each one's restart row to its end; and when the whole parse is one ERROR node (Kotlin makes
    one of a file for a bad line), the rows before its first broken one too."""
    spans = []
    for error in _swallowing(root, broken):
        restart = _restart_row(error, lines, broken, first)
        if restart is not None:
            spans.append((restart, min(error.end_point.row, last)))
    bad = [row for row in broken if first <= row <= last]
    if root.is_error and bad and first > 0 and min(bad) > first + 1:
        spans.append((first, min(bad) - 1))
    return spans


# A definition's header on a line the repair blanked (`def bad(:`), found by its keyword: the lexical
# fallback that keeps its name in the outline. Compiled on first use (only broken files get here).
_HEADER = (r"^(\s*)(?:(?:public|private|protected|internal|static|async|export|pub|override|open|final|"
           r"abstract|inline|suspend)\s+)*(def|class|fun|func|fn|function|struct|enum|interface|trait|object|"
           r"module|protocol|impl)\s+([A-Za-z_$][\w$]*)")
_TYPE_WORDS = {"class": "class", "struct": "struct", "enum": "enum", "interface": "interface", "trait": "trait",
               "object": "object", "module": "module", "protocol": "protocol", "impl": "impl"}
_header: list[Any] = []


def _header_match(line: str) -> Any:
    if not _header:
        from memory.fastpath import recode

        _header.append(recode.compile(_HEADER))
    return _header[0].match(line)


def _lexical(symbols: list[Symbol], blanked: set[int], source: bytes) -> list[Symbol]:
    """`symbols` and a symbol for each definition header on a blanked line, ranging to the line before the
    next one indented no deeper, nested under the symbol around it."""
    lines = source.decode("utf-8", errors="replace").split("\n")
    added = []
    for row in sorted(blanked):
        match = _header_match(lines[row]) if row < len(lines) else None
        if match is None:
            continue
        indent = len(match.group(1))
        end = row
        for k in range(row + 1, len(lines)):
            text = lines[k]
            if text.strip() and len(text) - len(text.lstrip()) <= indent:
                break
            if text.strip():
                end = k
        if end + 1 < len(lines) and lines[end + 1].strip() in ("}", "end", "};"):
            end += 1  # the closing brace at the header's indentation
        parents = [p for p in symbols if p.start_line - 1 < row and p.end_line - 1 >= end]
        parent = max(parents, key=lambda p: p.depth) if parents else None
        kind = _TYPE_WORDS.get(match.group(2), "function")
        if kind == "function" and parent is not None and parent.kind in _TYPE_KINDS:
            kind = "method"
        added.append(Symbol(match.group(3), kind, row + 1, end + 1, " ".join(lines[row].split())[:100],
                            parent.qualified_name if parent else None, None,
                            parent.depth + 1 if parent else 0))
    if not added:
        return symbols
    return sorted(symbols + added, key=lambda s: (s.start_line, s.depth))


def _lexical_defines(symbols: list[Symbol], source: bytes) -> list[Symbol]:
    """`symbols` and a row for each `#define` line of a broken C/C++ file that no symbol starts on: a `#define`
    is one line (and its continuations), so it is found exactly without the parse, which loses one inside an
    enum or an initializer (LLVM's X-macro tables: `enum InstrProfSectKind {` / `#define
    INSTR_PROF_SECT_ENTRY(Kind, ...) Kind,` / `#include "InstrProfData.inc"`). Not an include guard."""
    have: set[tuple[int, str]] | None = None  # made at the first `#define` that needs it
    parsed: dict[int, Symbol] = {}
    added = []
    # Only the lines holding `define` are looked at, found by a byte search from one to the next, lines and rows
    # by offset: a loop over every line cost IRBuilder.h ~0.8 ms a Read; its split and a test per line, 0.35.
    row = counted = 0
    at = source.find(b"define")
    while at >= 0:
        start = source.rfind(b"\n", 0, at) + 1
        end = _line_end(source, at)
        at = source.find(b"define", end)  # on a later line
        row += source.count(b"\n", counted, start)
        counted = start
        text = source[start:end].strip()
        if not text.startswith(b"#") or not text[1:].lstrip().startswith(b"define"):
            continue
        rest = text[1:].lstrip()[6:]
        spaced, rest = rest[:1] in (b" ", b"\t"), rest.lstrip()  # `#define X`, not `#defined`
        stop = 0
        while stop < len(rest) and (rest[stop:stop + 1].isalnum() or rest[stop:stop + 1] == b"_"):
            stop += 1
        name, after = rest[:stop].decode("ascii", "replace"), rest[stop:]
        if not name or not spaced or (not after.strip() and _guarded(source, start, rest[:stop])):
            continue
        if have is None:
            have = {(s.start_line, s.name) for s in symbols}
            # A `#define` row named otherwise than its line says (a broken parse took `atom` of its value for its
            # name): renamed from the line, not shown twice.
            parsed = {s.start_line: s for s in symbols
                      if s.kind in ("constant", "macro") and s.signature.startswith("#")}
        if (row + 1, name) in have:
            continue
        last_row, line, line_end = row, source[start:end], end
        while line_end < len(source) and line.rstrip().endswith(b"\\"):  # continued on the next line
            line = source[line_end + 1:_line_end(source, line_end + 1)]
            line_end += 1 + len(line)
            last_row += 1
        params = after[:after.find(b")") + 1] if after.startswith(b"(") else b""
        signature = f"#define {name}{params.decode('utf-8', 'replace')}" if params else (
            " ".join(text.decode("utf-8", "replace").rstrip("\\").split())[:100])
        wrong = parsed.get(row + 1)
        if wrong is not None:
            wrong.name, wrong.signature, wrong.doc = name, signature, None
            wrong.kind = "macro" if params else "constant"
            continue
        parents = [p for p in symbols if p.start_line - 1 <= row and p.end_line - 1 >= last_row]
        parent = max(parents, key=lambda p: p.depth) if parents else None
        added.append(Symbol(name, "macro" if params else "constant", row + 1, last_row + 1, signature,
                            parent.qualified_name if parent else None, None, parent.depth + 1 if parent else 0))
    if not added:
        return symbols
    return sorted(symbols + added, key=lambda s: (s.start_line, s.depth))


def _guarded(source: bytes, start: int, name: bytes) -> bool:
    """Whether the last line holding anything before offset `start` (a line's start) is an `#if...` ending with
    `name`: the `#define` of `name` there is an include guard."""
    end = start - 1
    while end >= 0:
        begin = source.rfind(b"\n", 0, end) + 1
        last = source[begin:end].strip()
        if last:
            return last.split()[-1:] == [name] and b"if" in last
        end = begin - 1
    return False


def _guard_row(symbol: Symbol, source: bytes) -> bool:
    """Whether `symbol` is a `#define` without a value right after an `#ifndef` of its name: the include guard,
    which extract.include_guard leaves out, but tells from the tree (a configuration of the `#if`s has none)."""
    if symbol.kind != "constant" or symbol.signature != f"#define {symbol.name}":
        return False
    lines = source.split(b"\n", symbol.start_line)[:symbol.start_line - 1]
    before = next((line.strip() for line in reversed(lines) if line.strip()), b"")
    return before[1:].lstrip().startswith(b"ifndef") and before.split()[-1] == symbol.name.encode()


def _blank_rows(data: bytes, rows: set[int]) -> bytes:
    from parser.preprocess import blank_lines

    for first, last in _ranges(rows):
        data = blank_lines(data, first - 1, last - 1)
    return data


def _clip(symbols: list[Symbol], blanked: set[int], source: bytes) -> None:
    """A symbol whose range runs over a blanked definition header (`def bad(:`) indented no deeper than its
    own first line ends before that line: in the repaired copy the broken definition's body joined the one
    before it. (Other blanked lines, a `#if` at column 0 inside a C function, say, end nothing.)"""
    lines = source.split(b"\n")

    def indent(row: int) -> int:
        line = lines[row] if row < len(lines) else b""
        return len(line) - len(line.lstrip()) if line.strip() else 1 << 30

    headers = sorted(r for r in blanked if r < len(lines) and _header_match(lines[r].decode("utf-8", "replace")))
    for symbol in symbols:
        own = indent(symbol.start_line - 1)
        cut = next((r for r in headers if symbol.start_line - 1 < r < symbol.end_line and indent(r) <= own), None)
        if cut is not None:
            end = cut - 1
            while end > symbol.start_line - 1 and not lines[end].strip():
                end -= 1
            symbol.end_line = end + 1


def _lines(node: Node) -> tuple[int, int]:
    """The node's first and last lines, 1-based (each point read once: a read makes a new Point)."""
    start, end = node.start_point.row, node.end_point
    # A node ending at column 0 ends with the previous line's newline.
    return start + 1, end.row if end.column == 0 and end.row > start else end.row + 1


def _node_text(node: Node, text: bytes) -> str:
    """The node's text in `text`, the bytes its tree was parsed from. Not node.text: a tree parsed through
    ParseBudget's read callback calls it again for each node.text (~1 us; 0.3-0.5 ms of a C++ header)."""
    return text[node.start_byte:node.end_byte].decode("utf-8", errors="replace")


def _preference(node: Node, kind: str) -> tuple[int, int]:
    # Same name captured twice: the more specific kind wins, then the larger
    # node (with its decorators / export keyword) over the bare one.
    return _KIND_RANK.get(kind, 2), node.end_byte - node.start_byte


def _clean_name(text: str, language: str) -> str:
    if text.isidentifier():  # most names: nothing below changes one (~0.5 us a name)
        return text
    name = " ".join(text.split()).strip("'\"`")
    if name.startswith("[") and name[1:2] in ("'", '"', "`"):
        name = name.strip("[]").strip("'\"`")  # JS get ['async'] () -> async
    if language == "cpp":
        # Foo<T>::bar -> bar, get<int> -> get, A::operator== -> operator== (ctags and readers use the
        # bare name); a conversion operator keeps its type: `operator B<T>() const &` -> operator B<T>.
        at = name.find("operator")
        if at >= 0 and (at == 0 or not (name[at - 1].isalnum() or name[at - 1] == "_")):
            name = name[at:]
            paren = name.find("(", len("operator") + (2 if name.startswith("operator()") else 0))
            return name[:paren].rstrip() if paren > len("operator") else name
        name = _strip_template_args(name).rsplit("::", 1)[-1]
    return name


def _strip_template_args(name: str) -> str:
    """`Foo<A<B>>::bar<int>` -> `Foo::bar`."""
    if "<" not in name:
        return name
    out, depth = [], 0
    for ch in name:
        if ch == "<":
            depth += 1
        elif ch == ">" and depth:
            depth -= 1
        elif not depth:
            out.append(ch)
    return "".join(out).strip()


def _captures(root: Node, language: str, within: Spans | None = None,
              ) -> Iterator[tuple[str, Node, Node | None, Node | None]]:
    """The query's @import and @definition.<kind> captures as (capture, node, its @name or None, its parent or
    None): the parent when the walk knows it (C++: walk.captures, which yields no @name). With `within` (C and
    C++), those of the subtrees overlapping its ranges: the same for the nodes that start in one."""
    if language in walk.NODE_TYPES:
        return walk.captures(root, language) if within is None else walk.captures_within(root, language, within)
    return _matched(root, language, within)


def _matched(root: Node, language: str, within: Spans | None = None) -> Iterator[tuple[str, Node, Node | None, None]]:
    """_captures from the query's matches. Most languages: the query's matches found by a walk (compiling the
    query costs a hook 2-17 ms)."""
    found = (walk.matches(root, language, within) if language in walk.WALKED
             else ts().QueryCursor(get_query(language)).matches(root))
    for _pattern, caps in found:
        for node in caps.get("import", ()):
            yield "import", node, None, None
        names = caps.get("name")
        for cap, nodes in caps.items():
            if cap.startswith("definition."):
                yield cap, nodes[0], names[0] if names else None, None


def _collect(root: Node, language: str, within: Spans | None = None) -> Collected:
    """Run the language's query: (definition, name, kind) triples, imports, and each definition's parent where
    the walk found it (extract's functions look up the others). With `within` (C and C++: _WITHIN), what it
    gives for the definitions starting in its ranges is that of the whole walk, and other nodes may be missing."""
    by_name: dict[tuple[int, int], tuple[Node, Node, str]] = {}
    imports: list[Node] = []
    parents: dict[Node, Node] = {}
    for capture, node, name, parent in _captures(root, language, within if language in _WITHIN else None):
        if capture == "import":
            imports.append(node)
            continue
        kind = capture[len("definition."):]
        if kind in extract.RESOLVED_KINDS:
            resolved = extract.resolve(node, kind)
            if resolved is None:
                continue
            node, name, kind = resolved
        elif kind == "constant" and language == "c" and node.type == "preproc_def" and extract.include_guard(node):
            continue  # (C++'s #defines come without @name: name_and_kind leaves their guards out)
        elif name is None:
            named = extract.name_and_kind(node, kind, parent)
            if named is None:
                continue
            name, kind = named
            if parent is not None:
                parents[node] = parent
        names = (extract.field_names(node) if kind == "field" else extract.variable_names(node)
                 if kind == "variable" and node.type == "declaration" else (name,))
        for each in names:  # `int x, y;`: both
            key = (each.start_byte, each.end_byte)
            seen = by_name.get(key)
            if seen is not None and _preference(seen[0], seen[2]) >= _preference(node, kind):
                continue
            by_name[key] = (node, each, kind)
    if language == "ruby":
        imports.extend(extract.ruby_requires(root))
    # One definition captured with nested names (Rust `impl Foo<T>` gives
    # both `Foo<T>` and `Foo`): keep the innermost name.
    by_def: dict[tuple[int, int, str], tuple[Node, Node, str]] = {}
    for entry in by_name.values():
        node, name, kind = entry
        key = (node.start_byte, node.end_byte, kind)
        seen = by_def.get(key)
        if seen is not None:
            s_name = seen[1]
            if s_name.start_byte <= name.start_byte and name.end_byte <= s_name.end_byte:
                by_def[key] = entry
                continue
            if name.start_byte <= s_name.start_byte and s_name.end_byte <= name.end_byte:
                continue
            by_def[(node.start_byte, node.end_byte, f"{kind}@{name.start_byte}")] = entry
            continue
        by_def[key] = entry
    return list(by_def.values()), imports, parents


def _summarise_imports(nodes: list[Node], text: bytes) -> list[str]:
    """Each import's name once, with its count; `text`: what the tree was parsed from (see _node_text)."""
    counts: dict[str, int] = {}  # in first-seen order, as collections.Counter (not imported: see parser/grammars.py)
    for node in nodes:
        name = extract.import_name(node, text)
        counts[name] = counts.get(name, 0) + 1
    return [name if count == 1 else f"{name} ({count})" for name, count in counts.items()]


def _build_symbols(entries: list[tuple[Node, Node, str]], source: bytes, text: bytes, language: str,
                   bare: frozenset[tuple[int, int]] = frozenset(), parents: dict[Node, Node] | None = None,
                   ) -> list[Symbol]:
    """Nested symbols of `entries`, signatures cut from `source`, names and comments from `text` (what was
    parsed: C/C++'s masked macros, a repaired copy); those whose name node is in `bare` (parser/variables.py)
    are shown by name only: their signature is their name (a constant's: `const NAME`), never their value.
    `parents`: definitions' parents already known (_collect)."""
    parents = parents or {}
    context = (language, text)  # what every doc line is looked for in (Symbol.doc)
    entries.sort(key=lambda e: (e[0].start_byte, -e[0].end_byte))
    symbols: list[Symbol] = []
    stack: list[tuple[int, Symbol, str]] = []  # (end_byte, symbol, its qualified name) of open ancestors
    for node, name_node, kind in entries:
        end_byte = node.end_byte
        start_byte = node.start_byte
        while stack and (stack[-1][0] <= start_byte or stack[-1][0] < end_byte):
            stack.pop()
        parent = stack[-1][1] if stack else None
        if kind == "function" and parent is not None and parent.kind in _TYPE_KINDS:
            kind = "method"
        name = _clean_name(_node_text(name_node, text), language)
        start_line, end_line = _lines(node)
        if (parent is not None and parent.name == name and parent.start_line == start_line
                and parent.end_line == end_line):
            continue  # `x.run = function run() {}`: one symbol, not two
        # A keyword standing in for the name (`init`, `companion`) may sit
        # anywhere before the body; only a real name bounds the search.
        if bare and (name_node.start_byte, name_node.end_byte) in bare:
            signature, doc = f"const {name}" if kind == "constant" else name, None
        elif kind == "variable" and node.type in ("declaration", "var_spec"):  # a C/C++/Go file's variable: its name
            signature, doc = name, None
        elif kind == "field":  # shown by name only: its declaration as written, no doc (signatures: C++ ~10% slower)
            signature = " ".join(extract.screened(_node_text(node, text)).split()).rstrip(";")[:extract.VALUE_CAP]
            doc = None
        else:
            after = name_node.end_byte if name_node.type not in _KEYWORD_NAMES else start_byte
            body = extract.find_body(node, after)
            signature = extract.signature(node, body, source, language, text)
            doc = (node, body, parents.get(node), context)  # looked for on first read: see Symbol.doc
        parent_name = stack[-1][2] if stack else None
        symbol = Symbol(name, kind, start_line, end_line, signature, parent_name, doc, len(stack))
        symbols.append(symbol)
        # A data member holds nothing (and `int x, y;` is one node for two), but for a TypeScript variable typed
        # with an object literal: its own declarator, holding its members (parser/variables.py).
        if kind not in _HOLD_NOTHING or node.type == "variable_declarator":
            stack.append((end_byte, symbol, f"{parent_name}.{name}" if parent_name else name))
    return symbols


def outline_source(source: bytes, path: str, language: str | None = None, units: list[int] | None = None,
                   max_units: int | None = None) -> Outline:
    """Outline ``source`` (the file's bytes); ``language`` overrides detection. ``units``, when given, gets the
    work its parses did (ParseBudget units: the same on every run, whatever the load); ``max_units`` replaces
    the first parse's allowance (a parse it ends sets the outline's parsed_bytes)."""
    try:
        if language is None:
            language = refine_language(language_for_path(path, head=source[:256]), path, source)
        if language is None:
            return _fallback(path, None, source, "no grammar for this file type")
        total_lines = _line_count(source)
        if (len(source) >= MINIFIED_MIN_BYTES
                and len(source) / max(total_lines, 1) > MINIFIED_BYTES_PER_LINE):
            return _fallback(path, language, source, "minified or generated (very long lines)")
        try:
            parser = get_parser(language)
            if language not in walk.WALKED:
                get_query(language)
        except GrammarUnavailable:
            return _fallback(path, language, source, f"grammar for {language} not installed")
        # C/C++: parse a copy with derailing macros blanked (same offsets).
        if language in ("c", "cpp"):
            from parser.preprocess import mask_macros

            text = mask_macros(source)
        else:
            text = source
        budget = ParseBudget(max_units)  # from here: masking a 400 KB header's macros alone can take 25 ms
        parsed = _parse_repaired(parser, text, language, budget)
        if units is not None:
            units.append(budget.units)
        root, broken, blanked = parsed.tree.root_node, parsed.broken, parsed.blanked
        parsed_bytes = None
        if budget.cut is not None:  # over the budget: the whole lines before the cut, or nothing if mostly broken
            parsed_bytes = source.rfind(b"\n", 0, budget.cut) + 1
            parsed_lines = source.count(b"\n", 0, parsed_bytes)
            broken = {row for row in broken if row < parsed_lines}
            if len(broken) * 2 >= parsed_lines:
                return _fallback(path, language, source, f"over the parse budget; syntax errors in {len(broken)} "
                                 f"of its first {parsed_lines} lines")
        entries, import_nodes, parents = parsed.collected = parsed.collected or _collect(root, language)
        if language in walk.NODE_TYPES:  # C++: a lambda's `using T = ...;`, in an expression the walk passes over
            entries.extend(walk.lambda_aliases(root, parsed.text, {e[0].start_byte for e in entries}))
        recovered: set[int] = set()
        unread: set[int] = set()
        if broken and parsed_bytes is None and not _mostly_broken(broken, total_lines):  # swallowed, parsed again
            extra, recovered, unread = _recover(parser, parsed, language, budget)
            entries.extend(extra)
        if parsed.unconfigured is not None and parsed_bytes is None:  # the `#if` branches the repair dropped
            extra, found, missed = _other_branches(parser, parsed, language, budget)
            entries.extend(extra)
            if broken:  # marked as found after an error; with none left, they are the file's other configurations
                recovered |= found
            unread |= missed
        if units is not None:
            units[-1] = budget.units
        bare: frozenset[tuple[int, int]] = frozenset()
        if language in VARIABLE_LANGUAGES and not path.endswith("_pb2.py"):
            from parser import variables

            extra = variables.names(root, language, {(e[1].start_byte, e[1].end_byte) for e in entries})
            bare = frozenset((e[1].start_byte, e[1].end_byte) for e in extra)
            entries.extend(extra)
        # Signatures are cut from the original bytes, but not from lines the repair blanked.
        symbols = _build_symbols(entries, _blank_rows(source, blanked) if blanked else source, parsed.text, language,
                                 bare, parents)
        if blanked:
            _clip(symbols, blanked, source)
            symbols = _lexical(symbols, blanked, source)
        if recovered:
            for symbol in symbols:
                symbol.recovered = symbol.start_line - 1 in recovered
            starts = {symbol.start_line - 1 for symbol in symbols}  # a broken header's definition, by its keyword
            symbols = _lexical(symbols, {row for row in broken if row not in starts}, source)
        if broken and language in ("c", "cpp"):
            symbols = _lexical_defines(symbols, source)
        if parsed.unconfigured is not None:  # the configuration blanked the `#ifndef`: the tree saw no guard
            symbols = [s for s in symbols if not _guard_row(s, source)]
        if parsed_bytes is not None:  # a definition the cut ran through ends there (the note says what follows)
            symbols = [s for s in symbols if s.start_line <= parsed_lines]
            for symbol in symbols:
                symbol.end_line = min(symbol.end_line, parsed_lines)
        if language == "python" and path.endswith("_pb2.py"):  # generated: its classes are made at run time
            from parser.generated import protobuf_symbols

            symbols = protobuf_symbols(source, symbols)
        return Outline(
            path=path,
            language=language,
            total_lines=total_lines,
            imports=_summarise_imports(import_nodes, parsed.text),
            symbols=symbols,
            parsed=True,
            error_ratio=min(1.0, len(broken) / max(total_lines if parsed_bytes is None else parsed_lines, 1)),
            error_lines=_ranges(broken),
            total_bytes=len(source),
            import_count=len(import_nodes),
            parsed_bytes=parsed_bytes,
            unread_lines=_ranges(unread),
        )
    except Exception as exc:  # never break the caller (a hook): summarise instead
        return _fallback(path, language, source, f"outline failed: {type(exc).__name__}: {exc}")


def outline_file(path: str) -> Outline:
    """Read ``path`` and outline it; unreadable files give a fallback summary."""
    try:
        with open(path, "rb") as fh:
            source = fh.read()
    except OSError as exc:
        return _fallback(path, None, b"", f"unreadable: {exc.strerror or exc}")
    return outline_source(source, path)
