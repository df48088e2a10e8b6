"""`memory audit`: scan an existing data dir for secrets and, with --redact, remove them in place.

What is scanned: every text column of every project database (memories, handoffs, session state, the
worker's context index, outlines, queue payloads...), and the text files of the data dir (logs, daily log,
spool, session-state.json). Two detectors: our own filter (memory/base/privacy.py, the one every write goes
through) and detect-secrets (Yelp's library, its default plugins and filters). Findings are reported as
counts by kind and place, never the values. Redaction rewrites the rows and files, rebuilds the full-text
indexes and vacuums the databases, so no old page keeps the secret (in the file or its WAL).

detect-secrets' entropy plugins alone ("High Entropy String") are counted as possible secrets but not
redacted: on a data dir they mostly flag content hashes and ids.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from collections import Counter
from dataclasses import dataclass, field

from memory.base.privacy import clean, find_secrets

_TEXT_SUFFIXES = (".log", ".md", ".json", ".jsonl", ".txt")
_SKIP_DIRS = {"venv", ".venv", "models", "node_modules", "__pycache__", "vectors", "lancedb"}
_ENTROPY_ONLY = {"Base64 High Entropy String", "Hex High Entropy String"}
_MAX_FILE_BYTES = 64 << 20
# FTS5 tables that only index another table's text (rebuilt from it) and FTS5's own shadow tables.
_SHADOW_SUFFIXES = ("_data", "_idx", "_content", "_docsize", "_config")


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

        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as fh:
            os.chmod(fh.name, 0o600)
            for text in self.texts:
                fh.write(text.replace("\r", " ") + "\n")
            name = fh.name
        try:
            collection = SecretsCollection()
            with self._settings():
                collection.scan_file(name)
        finally:
            os.unlink(name)
        # A collection keeps each (type, value) once, at its first line: every text holding it is looked up.
        pairs = {(s.type, s.secret_value) for secrets in collection.data.values() for s in secrets if s.secret_value}
        found: dict[int, list[tuple[str, str]]] = {}
        for i, text in enumerate(self.texts):
            for kind, value in pairs:
                if value in text:
                    found.setdefault(i, []).append((kind, value))
        return found


def _redact_value(text: str, library: list[tuple[str, str]], report: Report, place: str) -> str:
    """The text with our filter's and the library's findings redacted; counts them."""
    ours = find_secrets(text)
    for kind in ours:
        report.kinds[kind] += 1
        report.places[place] += 1
    out = clean(text) if ours or "private" in text.lower() else text
    for kind, value in library:
        if kind in _ENTROPY_ONLY:
            if value in out:
                report.possible[kind] += 1
            continue
        if value in out:  # not already removed by our filter
            report.kinds[f"detect-secrets: {kind}"] += 1
            report.places[place] += 1
            out = out.replace(value, f"[REDACTED:{_slug(kind)}]")
    return out


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


def audit_database(path: str, redact: bool, report: Report) -> None:
    from memory.store import normalise

    db = sqlite3.connect(path, timeout=30, isolation_level=None)
    try:
        report.databases += 1
        project = os.path.basename(os.path.dirname(path))
        cells: list[tuple[str, int, str, str]] = []  # (table, rowid, column, text)
        for table in _tables(db):
            cur = db.execute(f'SELECT rowid, * FROM "{table}"')
            columns = [d[0] for d in cur.description][1:]
            for row in cur:
                for column, value in zip(columns, row[1:], strict=True):
                    if isinstance(value, str) and len(value) >= 8:
                        cells.append((table, row[0], column, value))
        detector = _Detector()
        for cell in cells:
            detector.add(cell[3])
        library = detector.scan()
        report.library = report.library and detector.available
        report.scanned_values += len(cells)
        changes = []
        for i, (table, rowid, column, text) in enumerate(cells):
            out = _redact_value(text, library.get(i, []), report, f"{project}/memory.db:{table}")
            if out != text:
                changes.append((table, rowid, column, out))
        if redact and changes:
            _apply(db, changes, normalise)
            report.redacted_values += len(changes)
    finally:
        db.close()


def _apply(db: sqlite3.Connection, changes: list[tuple[str, int, str, str]], normalise: object) -> None:
    db.execute("PRAGMA secure_delete = ON")  # freed pages are zeroed, not left holding the old text
    db.execute("BEGIN IMMEDIATE")
    try:
        for table, rowid, column, text in changes:
            db.execute(f'UPDATE "{table}" SET "{column}" = ? WHERE rowid = ?', (text, rowid))
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
            db.execute("INSERT INTO memories_ctx(memories_ctx) VALUES ('optimize')")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("VACUUM")  # the old pages, and the WAL after the checkpoint, no longer hold the text
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _text_files(home: str) -> list[str]:
    out = []
    for root, dirs, files in os.walk(home, followlinks=False):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not d.endswith(".lance")]
        for name in files:
            path = os.path.join(root, name)
            if name.endswith(_TEXT_SUFFIXES) and not os.path.islink(path):
                out.append(path)
    return sorted(out)


def audit_files(home: str, redact: bool, report: Report) -> None:
    detector = _Detector()
    texts: list[tuple[str, str]] = []
    for path in _text_files(home):
        try:
            if os.path.getsize(path) > _MAX_FILE_BYTES:
                continue
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
        place = os.path.relpath(path, home).split(os.sep)[0]
        out = _redact_value(text, library.get(i, []), report, place)
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
    projects = os.path.join(home, "projects")
    if os.path.isdir(projects):
        for name in sorted(os.listdir(projects)):
            path = os.path.join(projects, name, "memory.db")
            if os.path.isfile(path) and not os.path.islink(path):
                audit_database(path, redact, report)
    audit_files(home, redact, report)
    return report
