"""Outlines of code files cached in SQLite (`file_signatures`), and the tokens they saved (`token_savings`).

A hit (same path, size and mtime, confirmed by the content hash) costs no parse and does not even import
tree-sitter. A file that has no outline (no symbols, minified, unparseable) is cached too, as a row with no
symbols, so reading it again does not parse it again. A changed file's entry is replaced; a cleanup
(memory/store/evict.py's purge_outlines) drops the entries of deleted files and of files not read for 90 days."""

from __future__ import annotations

import os
import sqlite3
import sys
import time

from memory.fastpath.sha import sha256
from memory.store.db import Tx

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from collections.abc import Callable

# Above this size hashlib's OpenSSL SHA-256 (several times faster, but ~4 ms to import) pays for itself.
_OPENSSL_HASH_ABOVE = 1 << 20
# The rendered outline's format, stored with the content hash: bumped when parser/render.py changes what it
# prints, so that a row cached by an older version is a miss (rendered again), not served as it was.
OUTLINE_FORMAT = "16"  # 3: the outline passes the privacy filter; 4: broken code repaired, every name shown;
# 5: Python/JavaScript/PHP variables, class attributes and properties on names-only rows; 6: TypeScript's too,
# with interface properties and a declared object type's members; 7: definitions after a syntax error recovered,
# C/C++ file variables, Rust associated types, a function's local types in test files too
# 8: each definition's text filtered as written, before it is flattened and cut (memory/outline/screen.py);
# 9: a JavaScript/TypeScript file's object's own keys; 10: C/C++ `#elif` branches' definitions after an error;
# 11: a broken C/C++ file's #defines the parse lost; 12: Go package variables by name;
# 13: recovery restarts at `_name`; 14: objects' keys on their names rows, definitions after an error kept;
# 15: an object whose members have rows shows no value; 16: an enum's last member after a directive, no include
# guard in a configuration's outline, a JavaScript/TypeScript function bound to a name shown as declared


class Cached:
    __slots__ = ("language", "total_lines", "symbols", "outline", "original_tokens", "outline_tokens", "hit")

    def __init__(self, language: str | None, total_lines: int, symbols: int, outline: str, original_tokens: int,
                 outline_tokens: int, hit: bool) -> None:
        self.language, self.total_lines, self.symbols, self.outline = language, total_lines, symbols, outline
        self.original_tokens, self.outline_tokens, self.hit = original_tokens, outline_tokens, hit


def _ensure_site_packages() -> None:
    """Hooks run with `python -S`: put the venv's site-packages on sys.path when tree-sitter is needed.

    Under -S, sys.prefix is the base interpreter's, so the venv is found two folders above the interpreter.
    A plain sys.path entry, not site.addsitedir: processing the .pth files costs ~7 ms and tree-sitter's
    packages need none. scripts/setup's venvs are overlays on a shared one (scripts/venv_store.py), which
    `.memory-shared` names: the packages are in its site-packages."""
    venv = os.path.dirname(os.path.dirname(os.path.abspath(sys.executable)))
    if not os.path.exists(os.path.join(venv, "pyvenv.cfg")):
        venv = sys.prefix
    venvs = [venv]
    try:
        with open(os.path.join(venv, ".memory-shared"), encoding="utf-8") as fh:
            venvs.append(fh.read().strip())
    except OSError:
        pass
    for folder in venvs:
        lib = os.path.join(folder, "lib")
        for name in os.listdir(lib) if os.path.isdir(lib) else []:
            candidate = os.path.join(lib, name, "site-packages")
            if name.startswith("python") and os.path.isdir(candidate) and candidate not in sys.path:
                sys.path.append(candidate)


def content_hash(data: bytes) -> str:
    if len(data) > _OPENSSL_HASH_ABOVE:
        import hashlib

        return hashlib.sha256(data).hexdigest()
    return sha256(data).hexdigest()


def _write(db: sqlite3.Connection, writes: list[Callable[[sqlite3.Connection], object]] | None,
           fn: Callable[[sqlite3.Connection], object]) -> None:
    """Run `fn(db)` now in its own transaction, or queue it on `writes` (the caller's transaction)."""
    if writes is None:
        with Tx(db):
            fn(db)
    else:
        writes.append(fn)


def get_outline(db: sqlite3.Connection, path: str, data: bytes, stat: os.stat_result,
                writes: list[Callable[[sqlite3.Connection], object]] | None = None,
                partial: bool = False) -> Cached | None:
    """The outline of a file whose bytes are `data`; None when it has none (unknown language, minified,
    unparseable, no symbols, tree-sitter missing). With `writes`, the cache update is queued there to join
    the caller's transaction instead of committing on its own. With `partial`, a large file is outlined only
    as far as the hook's parse budget goes and the rest scanned for keywords (memory/outline/partial.py); such
    a row is kept under its own key, so a full outline is never served from it. The row's key is the path
    privacy-filtered (a directory named like a token stays off the disk); the file is parsed by its path."""
    from memory.base.privacy import clean

    key = clean(path)
    digest = f"{content_hash(data)}/{OUTLINE_FORMAT}"
    row = db.execute(
        """SELECT language, content_hash, size, mtime, total_lines, symbols, outline, original_tokens,
           outline_tokens FROM file_signatures WHERE path = ?""", (key,)).fetchone()
    now = time.time()
    if row and row["size"] == stat.st_size and row["mtime"] == stat.st_mtime and (
            row["content_hash"] == digest or partial and row["content_hash"].startswith(digest + "/p")):
        _write(db, writes, lambda d: d.execute("UPDATE file_signatures SET accessed_at = ? WHERE path = ?",
                                               (now, key)))
        if not row["symbols"]:
            return None  # known to have no outline
        return Cached(row["language"], row["total_lines"], row["symbols"], row["outline"], row["original_tokens"],
                      row["outline_tokens"], True)
    _ensure_site_packages()
    try:
        from parser import estimate_tokens, outline_source
        from parser.grammars import GrammarUnavailable, get_language
    except ImportError:  # stdlib-only fallback interpreter: no outline, the Read passes through
        return None
    from memory.outline.screen import install

    install()  # the privacy filter on each definition's text as written, before the parser flattens and cuts it
    if partial:
        from memory.outline.partial import outline_within

        outline, cut = outline_within(data, path)
    else:
        outline, cut = outline_source(data, path), len(data)
    if outline.parsed_bytes is not None:  # the parse ran over its CPU budget (not code?): the rest is scanned
        cut = min(cut, outline.parsed_bytes)
    if cut < len(data):
        digest += f"/p{cut}"
    if outline.language and not outline.parsed:
        try:
            get_language(outline.language)
        except GrammarUnavailable:
            return None  # tree-sitter or the grammar is missing here: nothing to remember about the file
    original = estimate_tokens(data)
    if outline.parsed and outline.symbols:
        # Module constants are shown with their values (`AWS_SECRET = "..."`): the privacy filter before the
        # cache row, like every other text written (only on a miss: a hit reads back the filtered text).
        from memory.base.privacy import clean

        text = clean(outline.render())
        total_lines = outline.total_lines
        if cut < len(data):
            from memory.outline.partial import scanned_tail

            total_lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
            text += "\n" + clean(scanned_tail(data, cut, total_lines))
        cached: Cached | None = Cached(outline.language, total_lines, len(outline.symbols), text, original,
                                       estimate_tokens(text), False)
    else:
        cached, text = None, ""
    values = (key, outline.language, digest, stat.st_size, stat.st_mtime,
              cached.total_lines if cached else outline.total_lines, cached.symbols if cached else 0, text,
              original, cached.outline_tokens if cached else 0, now, now)
    _write(db, writes, lambda d: d.execute(
        """INSERT OR REPLACE INTO file_signatures (path, language, content_hash, size, mtime, total_lines,
           symbols, outline, original_tokens, outline_tokens, created_at, accessed_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""", values))
    return cached


def record_saving(db: sqlite3.Connection, session_id: str, path: str, original: int, shown: int) -> None:
    from memory.base.privacy import clean

    with Tx(db):
        db.execute(
            "INSERT INTO token_savings (session_id, path, original_tokens, outline_tokens, at) VALUES (?, ?, ?, ?, ?)",
            (session_id, clean(path), original, shown, time.time()),
        )


def savings(db: sqlite3.Connection, session_id: str | None = None) -> dict[str, int]:
    where, args = ("WHERE session_id = ?", (session_id,)) if session_id else ("", ())
    row = db.execute(
        f"""SELECT count(*) AS reads, coalesce(sum(original_tokens), 0) AS original,
            coalesce(sum(outline_tokens), 0) AS shown FROM token_savings {where}""", args).fetchone()
    return {"outlined_reads": row["reads"], "original_tokens": row["original"], "outline_tokens": row["shown"],
            "tokens_saved": row["original"] - row["shown"]}
