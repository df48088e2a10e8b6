"""`memory audit`: scan an existing data dir for secrets and, with --redact, remove them in place.

What is scanned: every text column of every project database (memories, handoffs, session state, the
worker's context index, outlines, queue payloads...) and the copies of a corrupt one moved aside, every
text file of the data dir (logs and rotated logs, daily log, spool and spooled events set aside,
session-state.json, notices, exports written there), and this data dir's spool and notices in the temp
dir. Two detectors: our own filter (memory/base/privacy.py, the one every write goes through) and
detect-secrets (Yelp's library, its default plugins and filters). Findings are reported as counts by kind
and place, never the values. Redaction rewrites the rows and files, rebuilds the full-text indexes and
vacuums the databases, so no old page keeps the secret (in the file or its WAL).

The filter reads each value once (what it redacts is counted from its markers), a JSON file's strings
decoded (an escaped `\\n` or `\\"` would hide a secret's start), so are the escaped string literals of
other texts (a `repr()` an older version stored), and a long text file in pieces of at most
64 KB cut at line ends, so the audit's cost stays linear in the data dir's size.

detect-secrets' entropy plugins alone ("High Entropy String") are counted as possible secrets but not
redacted: on a data dir they mostly flag content hashes and ids.
"""

from __future__ import annotations

import bisect
import json
import os
import re
import sqlite3
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from memory.base.literals import escaped_literals
from memory.base.privacy import clean
from memory.store import ctx_rows

_SKIP_DIRS = {"venv", ".venv", "models", "node_modules", "__pycache__", "vectors", "lancedb"}
_ENTROPY_ONLY = {"Base64 High Entropy String", "Hex High Entropy String"}
_MAX_FILE_BYTES = 64 << 20
_PIECE_CHARS = 64 << 10  # a text file is filtered in pieces of at most this, cut at line ends
# FTS5 tables that only index another table's text (rebuilt from it) and FTS5's own shadow tables.
_SHADOW_SUFFIXES = ("_data", "_idx", "_content", "_docsize", "_config")
_MARKER = re.compile(r"\[REDACTED:([A-Za-z0-9_\-]+)\]")
_SQLITE = b"SQLite format 3\x00"


@dataclass
class Report:
    kinds: Counter[str] = field(default_factory=Counter)
    possible: Counter[str] = field(default_factory=Counter)
    places: Counter[str] = field(default_factory=Counter)
    library: bool = True  # detect-secrets was there
    redacted_values: int = 0
    scanned_values: int = 0
    scanned_files: int = 0
    databases: int = 0

    def as_dict(self) -> dict[str, object]:
        return {"secrets": sum(self.kinds.values()), "by_kind": dict(self.kinds.most_common()),
                "by_place": dict(self.places.most_common()),
                "possible_entropy_only": dict(self.possible.most_common()),
                "redacted_values": self.redacted_values, "scanned_values": self.scanned_values,
                "scanned_files": self.scanned_files, "databases": self.databases,
                "detect_secrets": self.library}


def _slug(kind: str) -> str:
    return "-".join(kind.lower().replace("(", "").replace(")", "").split())


class _Detector:
    """detect-secrets over many texts at once: one temporary file, one scan, findings mapped back."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        try:
            from detect_secrets.settings import default_settings
        except ImportError:  # an interpreter without it: our filter alone, and the report says so
            self.available = False
            return
        self.available = True
        self._settings = default_settings

    def add(self, text: str) -> int:
        self.texts.append(text)
        return len(self.texts) - 1

    def scan(self) -> dict[int, list[tuple[str, str]]]:
        """Per text index, the (type, value) pairs detect-secrets found in it."""
        if not self.texts or not self.available:
            return {}
        from detect_secrets import SecretsCollection

        starts = []  # the file's line number where each text begins
        line = 1
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as fh:
            os.chmod(fh.name, 0o600)
            for text in self.texts:
                starts.append(line)
                flat = text.replace("\r", " ")
                fh.write(flat + "\n")
                line += flat.count("\n") + 1
            name = fh.name
        try:
            collection = SecretsCollection()
            with self._settings():
                collection.scan_file(name)
        finally:
            os.unlink(name)
        # A collection keeps each (type, value) once, at its first line: that line's text holds it. Another text
        # holding the same value is looked for only for what is redacted (few), never for the entropy-only
        # findings (a data dir's hashes and ids: one each, thousands, and every text searched for each was
        # quadratic).
        found: dict[int, list[tuple[str, str]]] = {}
        for secrets in collection.data.values():
            for s in secrets:
                if not s.secret_value:
                    continue
                first = bisect.bisect_right(starts, s.line_number) - 1
                where = [first] if s.type in _ENTROPY_ONLY else \
                    [i for i, text in enumerate(self.texts) if s.secret_value in text]
                for i in where:
                    found.setdefault(i, []).append((s.type, s.secret_value))
        return found


def _markers(text: str) -> Counter[str]:
    return Counter(_MARKER.findall(text)) if "[REDACTED:" in text else Counter()


def _redact_value(text: str, library: list[tuple[str, str]], report: Report, place: str) -> str:
    """The text with our filter's and the library's findings redacted; counts them. The filter reads it
    once (and an escaped literal's content again, decoded: an older version stored `repr()`s); what it
    found is counted from the markers it added."""
    out = _counted(text, clean(escaped_literals(text) if "\\" in text else text), report, place)
    for kind, value in library:
        if kind in _ENTROPY_ONLY:
            if value in out:
                report.possible[kind] += 1
            continue
        if value in out:  # not already removed by our filter
            report.kinds[f"detect-secrets: {kind}"] += 1
            report.places[place] += 1
            out = out.replace(value, f"[REDACTED:{_slug(kind)}]")
    for _ in range(2 if out != text else 0):
        # What was redacted is read again until nothing more is found, so that the next audit finds nothing
        # either: a marker's name may read as a secret's (`[REDACTED:private-key]: ssh-rsa`).
        again = _counted(out, clean(out), report, place)
        if again == out:
            break
        out = again
    return out


def _counted(before: str, after: str, report: Report, place: str) -> str:
    """`after`, once the markers the filter added to `before` are counted by kind."""
    if after != before:
        for kind, n in (_markers(after) - _markers(before)).items():
            report.kinds[kind] += n
            report.places[place] += n
    return after


def _tables(db: sqlite3.Connection) -> list[str]:
    rows = db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
    virtual = {name for name, sql in rows if sql and sql.upper().startswith("CREATE VIRTUAL TABLE")}
    out = []
    for name, sql in rows:
        if name.startswith("sqlite_") or any(name == v + s for v in virtual for s in _SHADOW_SUFFIXES):
            continue
        if name in virtual and "content=" in (sql or "").replace(" ", "").lower():
            continue  # an external-content index: rebuilt from its table below
        out.append(name)
    return out


Key = tuple[tuple[str, ...], tuple[object, ...]]  # a row's key columns and their values


def _key(db: sqlite3.Connection, table: str) -> tuple[str, ...]:
    """The columns naming a row: its rowid, or a WITHOUT ROWID table's primary key."""
    try:
        db.execute(f'SELECT rowid FROM "{table}" LIMIT 0')
        return ("rowid",)
    except sqlite3.OperationalError:
        pk = sorted((r[5], r[1]) for r in db.execute(f'PRAGMA table_info("{table}")') if r[5])
        return tuple(f'"{name}"' for _n, name in pk)


def audit_database(path: str, redact: bool, report: Report) -> None:
    from memory.store import normalise

    db = sqlite3.connect(path, timeout=30, isolation_level=None)
    try:
        report.databases += 1
        place = f"{os.path.basename(os.path.dirname(path))}/{os.path.basename(path)}"
        cells: list[tuple[str, Key, str, str]] = []  # (table, the row's key, column, text)
        for table in _tables(db):
            key = _key(db, table)
            cur = db.execute(f'SELECT {", ".join(key)}, * FROM "{table}"')
            columns = [d[0] for d in cur.description][len(key):]
            for row in cur:
                where = (key, tuple(row[:len(key)]))
                for column, value in zip(columns, row[len(key):], strict=True):
                    if isinstance(value, str) and len(value) >= 8:
                        cells.append((table, where, column, value))
        cells += _ctx_cells(db)
        detector = _Detector()
        for cell in cells:
            detector.add(cell[3])
        library = detector.scan()
        report.library = report.library and detector.available
        report.scanned_values += len(cells)
        changes = []
        for i, (table, rowid, column, text) in enumerate(cells):
            out = _audited(text, library.get(i, []), report, f"{place}:{table}")
            if out != text:
                changes.append((table, rowid, column, out))
        if redact and changes:
            _apply(db, changes, normalise)
            report.redacted_values += len(changes)
    finally:
        db.close()


def _ctx_cells(db: sqlite3.Connection) -> list[tuple[str, Key, str, str]]:
    """The neighbour index's text: memories_ctx keeps none, the ledger keeps it compressed (ctx_rows)."""
    if not ctx_rows.has_table(db) or "doc" not in {r[1] for r in db.execute("PRAGMA table_info(memory_index)")}:
        return []
    return [("memories_ctx", (("rowid",), (mid,)), column, value)
            for mid, doc in db.execute("SELECT memory_id, doc FROM memory_index WHERE doc IS NOT NULL")
            for column, value in zip(ctx_rows.COLUMNS, ctx_rows.unpack(doc), strict=True)
            if isinstance(value, str) and len(value) >= 8]


def _apply_ctx(db: sqlite3.Connection, changes: dict[int, dict[str, str]]) -> None:
    """Index these memories' neighbour rows again with their redacted text (the old row removed with the
    values it was indexed with), and keep that text in the ledger."""
    for mid, columns in changes.items():
        old = ctx_rows.get(db, mid)
        if old is None:
            continue
        ctx_rows.drop(db, [mid])
        title, content, tags, text = (columns.get(c, v) for c, v in zip(ctx_rows.COLUMNS, old, strict=True))
        doc = ctx_rows.insert(db, mid, (title, content, tags, text))
        db.execute("UPDATE memory_index SET doc = ? WHERE memory_id = ?", (doc, mid))


def _apply(db: sqlite3.Connection, changes: list[tuple[str, Key, str, str]], normalise: object) -> None:
    db.execute("PRAGMA secure_delete = ON")  # freed pages are zeroed, not left holding the old text
    db.execute("BEGIN IMMEDIATE")
    try:
        ctx: dict[int, dict[str, str]] = {}
        for table, (key, values), column, text in changes:
            if table == "memories_ctx" and isinstance(values[0], int):
                ctx.setdefault(values[0], {})[column] = text
                continue
            where = " AND ".join(f"{k} = ?" for k in key)
            try:
                db.execute(f'UPDATE "{table}" SET "{column}" = ? WHERE {where}', (text, *values))
            except sqlite3.IntegrityError:
                if key == ("rowid",):
                    raise
                # A WITHOUT ROWID row whose key is another's once redacted: an index row (memory_files), dropped.
                db.execute(f'DELETE FROM "{table}" WHERE {where}', values)
                continue
            rowid = values[0]
            if table == "memories" and column == "title":
                key = normalise(text)  # type: ignore[operator]
                try:
                    db.execute("UPDATE memories SET title_key = ? WHERE rowid = ?", (key, rowid))
                except sqlite3.IntegrityError:  # two titles the same once redacted
                    db.execute("UPDATE memories SET title_key = ? WHERE rowid = ?", (f"{key} #{rowid}", rowid))
        names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "memories_fts" in names:
            db.execute("INSERT INTO memories_fts(memories_fts) VALUES ('rebuild')")
        if "memories_ctx" in names:
            _apply_ctx(db, ctx)
            db.execute("INSERT INTO memories_ctx(memories_ctx) VALUES ('optimize')")
        if ctx_rows.OLD in names:  # rows not converted yet, redacted in place: their old tokens merged away
            db.execute(f"INSERT INTO {ctx_rows.OLD}({ctx_rows.OLD}) VALUES ('optimize')")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("VACUUM")  # the old pages, and the WAL after the checkpoint, no longer hold the text
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _files(folder: str) -> list[str]:
    """Every regular file under the folder (no symlink followed), but the venv's, models' and vectors'."""
    out = []
    for root, dirs, files in os.walk(folder, followlinks=False):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not d.endswith(".lance")]
        out += [p for name in files if not os.path.islink(p := os.path.join(root, name))]
    return sorted(out)


def _head(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read(8192)
    except OSError:
        return b""


def _places(home: str) -> tuple[list[str], list[str]]:
    """(databases, text files) to audit: the data dir's and this data dir's spool and notices in the temp dir.
    A database is any SQLite file (a project's memory.db, a corrupt copy moved aside); a text file is any other
    file without a NUL in its first 8 KB (logs rotated as `.1`, spooled events set aside as `.bad`)."""
    from memory.base import notices
    from memory.base.config import fallback_dir

    databases, texts = [], []
    for path in _files(home):
        name = os.path.basename(path)
        if name.endswith(("-wal", "-shm", "-journal")):
            continue  # a database's own: cleaned with it (VACUUM, checkpoint)
        head = _head(path)
        if head.startswith(_SQLITE):
            databases.append(path)
        elif b"\0" not in head and os.path.getsize(path) <= _MAX_FILE_BYTES:
            texts.append(path)
    elsewhere = fallback_dir()
    spool = os.path.join(elsewhere, notices.fallback_spool_name())
    texts += [p for p in _files(spool) if b"\0" not in _head(p)] if os.path.isdir(spool) else []
    shared = os.path.join(elsewhere, notices.NAME)
    if os.path.isfile(shared) and not os.path.islink(shared):
        texts.append(shared)
    return databases, texts


def _pieces(text: str, most: int = _PIECE_CHARS) -> list[str]:
    """The text in pieces of at most `most` characters (a longer line whole), cut after a blank line where one
    is near, else before a line that starts a new entry (not indented: a log's continuation lines are), else at
    a line end: the filter's cost per call stays bounded, and a multi-line secret stays in one piece."""
    out, start = [], 0
    while len(text) - start > most:
        end = start + most
        cut = text.rfind("\n\n", start, end)
        if cut <= start:
            cut = max((text.rfind(f"\n{c}", start, end) for c in "0123456789-#[{"), default=-1)
        if cut <= start:
            cut = text.rfind("\n", start, end)
        if cut <= start:
            cut = text.find("\n", end)
            if cut < 0:
                break
        out.append(text[start:cut + 1])
        start = cut + 1
    out.append(text[start:])
    return out


def _strings(value: object, fn: Callable[[str], str]) -> object:
    """`fn` applied to every string inside a JSON value."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        return [_strings(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: _strings(v, fn) for k, v in value.items()}
    return value


def _json_out(text: str, fn: Callable[[str], str]) -> str | None:
    """A JSON document (or JSON lines) with `fn` applied to each of its strings, decoded: an escaped `\\n`
    or `\\"` would hide where a secret starts. None when the text is not JSON."""
    try:
        if text.lstrip().startswith(("{", "[")) and "\n{" not in text.strip():
            value = json.loads(text)
            out = _strings(value, fn)
            return text if out == value else json.dumps(out, ensure_ascii=False, indent=2 if "\n" in text.strip()
                                                         else None) + ("\n" if text.endswith("\n") else "")
        lines = text.split("\n")
        values = [json.loads(ln) if ln.strip() else None for ln in lines]
    except ValueError:
        return None
    kept = [_strings(v, fn) for v in values]
    return "\n".join(ln if v is None or k == v else json.dumps(k, ensure_ascii=False)
                     for ln, v, k in zip(lines, values, kept, strict=True))


def _audited(text: str, pairs: list[tuple[str, str]], report: Report, place: str) -> str:
    """A value or a file's text with what is found redacted: a JSON document's (or JSON lines') strings one by
    one, decoded; another text in pieces (_pieces)."""
    def redact(piece: str) -> str:
        return _redact_value(piece, [p for p in pairs if p[1] in piece], report, place)

    out = _json_out(text, redact) if text.lstrip()[:1] in ("{", "[") else None
    return out if out is not None else "".join(redact(p) for p in _pieces(text))


def audit_files(home: str, redact: bool, report: Report, paths: list[str] | None = None) -> None:
    detector = _Detector()
    texts: list[tuple[str, str]] = []
    for path in _places(home)[1] if paths is None else paths:
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, "rb") as fh:
                text = fh.read().decode("utf-8", "replace")
        except OSError:
            continue
        texts.append((path, text))
        detector.add(text)
    library = detector.scan()
    report.library = report.library and detector.available
    report.scanned_files += len(texts)
    for i, (path, text) in enumerate(texts):
        rel = os.path.relpath(path, home)
        place = rel.split(os.sep)[0] if not rel.startswith("..") else "temp dir"
        out = _audited(text, library.get(i, []), report, place)
        if redact and out != text:
            _rewrite(path, out)
            report.redacted_values += 1


def _rewrite(path: str, text: str) -> None:
    """Replace a file's content atomically, owner-only."""
    folder = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".audit-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def audit(home: str, redact: bool = False) -> Report:
    report = Report()
    databases, texts = _places(home)
    broken = []
    for path in databases:
        try:
            audit_database(path, redact, report)
        except sqlite3.DatabaseError:  # a corrupt copy that does not open: read as text, counted, never rewritten
            broken.append(path)
    audit_files(home, redact, report, texts)
    audit_files(home, False, report, broken)
    return report
