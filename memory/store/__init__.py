"""One project's SQLite: the memories table (this module: save with privacy filter, dedup and low-value
filter; forget; fetch), the connection and migrations (db, migrations), the job queue, session state,
the workspace (project + data dir), size limits and eviction, the daily log and the token budget.

Hot side, standard library only: may import base. Must not import capture, hook, recall or any cold
package, nor lancedb, anthropic, ollama, mcp, psycopg, numpy, pyarrow or click."""

from __future__ import annotations

import os
import sqlite3
import time

from memory.base import clock
from memory.base.classify import TYPES, is_low_value
from memory.base.config import env_int
from memory.base.privacy import clean
from memory.fastpath.sha import sha256
from memory.store.db import Tx

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook several ms
    from collections.abc import Callable, Iterable


class NewMemory:
    # A plain class, not a dataclass: importing dataclasses costs a hook ~10 ms.
    def __init__(self, title: str, content: str, type: str = "observation", importance: float = 0.5,
                 confidence: float = 0.5, tags: list[str] | None = None, files: list[str] | None = None,
                 source: str = "hook", session_id: str | None = None, created_at: float | None = None,
                 expires_at: float | None = None, origin: str | None = None, origin_detail: str | None = None,
                 flags: str = "", updated_at: float | None = None, author: str | None = None,
                 machine: str | None = None) -> None:
        self.title = title
        self.content = content
        self.type = type
        self.importance = importance
        self.confidence = confidence
        self.tags = tags or []
        self.files = files or []
        self.source = source
        self.session_id = session_id
        self.created_at = created_at
        self.expires_at = expires_at
        # Provenance (memory/base/fence.py ORIGINS): who or what wrote the text; derived from source and tags
        # when a writer leaves it out. Flags are set at save from the text itself.
        self.origin = origin
        self.origin_detail = origin_detail
        self.flags = flags
        # What an import restores (`memory export` then `save --jsonl`): the last change, and the teammate
        # and machine of a memory pulled from a team server.
        self.updated_at = updated_at
        self.author = author
        self.machine = machine

    def __repr__(self) -> str:
        return f"NewMemory({self.type}: {self.title!r})"


class Saved:
    def __init__(self, id: int | None, action: str, stored: tuple[str, str, str] | None = None) -> None:
        self.id = id
        self.action = action  # inserted, updated (same title), duplicate (same content), dropped
        self.stored = stored  # (type, title, content) as written, for the daily log: inserted and updated

    def __repr__(self) -> str:
        return f"Saved({self.id}, {self.action})"


def normalise(text: str) -> str:
    return " ".join(text.split()).lower()  # = re.sub(r"\s+", " ", text).strip(): both split on str.isspace()


def content_hash(text: str) -> str:
    return sha256(normalise(text).encode("utf-8", "replace")).hexdigest()


def cap(text: str, limit: int | None = None) -> str:
    """Keep the head and the tail of a huge text: errors are usually at the end."""
    limit = limit or env_int("MEMORY_MAX_CAPTURE_CHARS")
    if len(text) <= limit:
        return text
    head = int(limit * 0.6)
    tail = limit - head - 40
    return f"{text[:head]}\n[... {len(text) - head - tail} characters cut ...]\n{text[-tail:]}"


class Screen:
    """The privacy filter and the trust flags, as every save applies them to a memory's texts. A single save
    uses the plain functions; a batch (save_many) the memoised ones (privacy.Cleaner, fence.Flagger), which
    return the same for every text and cost a chat turn of known words ~4 us instead of ~25."""

    def __init__(self, clean: Callable[[str], str] = clean, flags: Callable[..., str] | None = None) -> None:
        self.clean = clean
        self.flags = flags or _flags_for

    @classmethod
    def bulk(cls) -> Screen:
        from memory.base.fence import Flagger
        from memory.base.privacy import Cleaner

        return cls(Cleaner(), Flagger())


def _flags_for(*texts: str, own: bool = False) -> str:
    """fence.flags_for, imported when a memory is written: a save that finds its memory stored already (a file
    read again) never needs the trust flags, and importing fence cost it 1.6 M instructions (3% of a cached
    Read hook)."""
    from memory.base.fence import flags_for

    return flags_for(*texts, own=own)


SINGLE = Screen()


def _prepare(m: NewMemory, screen: Screen = SINGLE) -> tuple[str, str]:
    title = " ".join(screen.clean(m.title).split())[:200]
    content = cap(screen.clean(m.content).strip())
    return title, content


def save(db: sqlite3.Connection, project: str, m: NewMemory, *, filter_low_value: bool = True) -> Saved:
    with Tx(db):  # the memory and its embedding job commit together: a crash cannot keep one without the other
        saved = _save_row(db, project, m, filter_low_value=filter_low_value)
        if saved.id is not None and saved.action in ("inserted", "updated"):
            queue_vector_jobs(db, [saved.id])
    if saved.id is not None and saved.action in ("inserted", "updated"):
        mark_dirty(db, project)
        # The daily log line and the cheap size check run after the transaction (memory/store/aftersave.py).
        from memory.store.aftersave import after_save_many

        after_save_many(db, project, [(saved, m.source)], sampled=True)
    return saved


def save_many(db: sqlite3.Connection, project: str, memories: list[NewMemory], *,
              filter_low_value: bool = True, screen: Screen | None = None,
              rows: list[_Row | None] | None = None) -> list[Saved]:
    """Many memories in one transaction, each under the rules of save (privacy filter, dedup against the
    store and the batch before it, low-value filter, provenance, one vector job); the daily log lines are
    appended together and the size check runs once, after the commit (memory/store/aftersave.py). Pass one
    `Screen.bulk()` to every batch of an import: its memo then carries over. `rows`: these memories' rows
    as rows_of made them already (memory/store/bulk.py makes them in a second process)."""
    # Every per-memory rule first, before the write lock is taken: they read no database, and they are most
    # of a batch's time (a hook waiting for the lock waits for the writes alone).
    if rows is None:
        rows = rows_of(project, memories, filter_low_value, screen or Screen.bulk())
    with Tx(db):
        saved = _save_batch(db, project, rows)
        queue_vector_jobs(db, [s.id for s in saved if s.id is not None and s.action in ("inserted", "updated")])
    done = [(s, m.source) for s, m in zip(saved, memories, strict=True) if s.stored is not None]
    if done:
        mark_dirty(db, project)
        from memory.store.aftersave import after_save_many

        after_save_many(db, project, done)
    return saved


def rows_of(project: str, memories: list[NewMemory], filter_low_value: bool, screen: Screen) -> list[_Row | None]:
    """Every per-memory rule of save_many, no database touched: each memory's row, or None (dropped)."""
    now = clock.now()
    return [_row(project, m, filter_low_value, now, screen) for m in memories]


# The columns a new memory is written with, in the order of _Row.values().
_COLUMNS = ("project, session_id, type, title, title_key, content, content_hash, importance, confidence, tags, "
            "files, source, created_at, updated_at, expires_at, origin, origin_detail, flags, author, machine")
_MARKS = ",".join("?" * len(_COLUMNS.split(",")))


class _Row:
    """A memory as it will be stored: every per-memory rule applied (privacy filter, hashes, tags, files,
    provenance, trust flags), no database touched. With `lazy_flags` the trust flags wait until something
    reads them: a duplicate is only touched (_in_store), written with no flags."""

    def __init__(self, project: str, m: NewMemory, title: str, content: str, now: float,
                 screen: Screen = SINGLE, lazy_flags: bool = False) -> None:
        self.id: int | None = None
        self.project, self.session_id, self.type = project, m.session_id, m.type
        self.title, self.content = title, content
        # The title and the content are hashed apart (a NUL between them), so moving words across the
        # boundary makes a different memory.
        ntitle = normalise(title)
        self.tkey = title_key(ntitle, m.type, m.origin, m.session_id)
        # = content_hash(f"{ntitle}\x00{normalise(content)}"): both halves are normalised already (lower() is
        # idempotent, NUL is no whitespace), so normalising them joined again would change nothing.
        self.chash = sha256(f"{ntitle}\x00{normalise(content)}".encode("utf-8", "replace")).hexdigest()
        self.importance, self.confidence = float(m.importance), float(m.confidence)
        self.tags = ",".join(sorted({c for t in m.tags if (c := screen.clean(t).strip().lower())}))
        self.files = "\n".join(dict.fromkeys(screen.clean(f) for f in m.files if f))
        self.source, self.created, self.now, self.expires_at = m.source, m.created_at or now, now, m.expires_at
        self.updated = m.updated_at or now
        self.author, self.machine = m.author, m.machine
        if m.origin:
            origin, detail = m.origin, m.origin_detail
        else:
            from memory.base.fence import derive_origin

            origin, detail = derive_origin(m.source, m.type, self.tags, self.files)
        self.origin, self.detail = origin, screen.clean(detail)[:200] if detail else detail
        self._flags: str | None = None
        self._flagged = (m.flags, screen)
        if not lazy_flags:
            self._flags = self.flags

    @property
    def flags(self) -> str:
        if self._flags is None:
            own, screen = self._flagged
            # The user's own words may hold standing orders (fence.USER_MAY): their preferences, not orders.
            user = self.origin == "user" and not self.author
            found = screen.flags(self.title, self.content, own=user)
            self._flags = ",".join(sorted({f for f in (own, found) if f}))
        return self._flags

    @flags.setter
    def flags(self, value: str) -> None:
        self._flags = value

    def state(self) -> tuple[object, ...]:
        """The row as plain values, for pickle (memory/store/bulk.py): restored() makes it again."""
        return (*self.values(), self.now)

    @classmethod
    def restored(cls, state: tuple[object, ...]) -> _Row:
        r = cls.__new__(cls)
        r.id = None
        (r.project, r.session_id, r.type, r.title, r.tkey, r.content, r.chash, r.importance, r.confidence, r.tags,
         r.files, r.source, r.created, r.updated, r.expires_at, r.origin, r.detail, r.flags, r.author, r.machine,
         r.now) = state
        return r

    def values(self) -> tuple[object, ...]:
        return (self.project, self.session_id, self.type, self.title, self.tkey, self.content, self.chash,
                self.importance, self.confidence, self.tags, self.files, self.source, self.created, self.updated,
                self.expires_at, self.origin, self.detail, self.flags, self.author, self.machine)

    def merged(self, old: _Row | sqlite3.Row) -> tuple[str, str, float, str | None]:
        """What an update by title keeps of the older memory: its tags and files merged with these, the
        higher importance, its session when this one has none."""
        tags = ",".join(sorted(set(filter(None, (old["tags"] + "," + self.tags).split(",")))))
        files = "\n".join(dict.fromkeys(filter(None, (old["files"] + "\n" + self.files).split("\n"))))
        session = self.session_id if self.session_id is not None else old["session_id"]  # as COALESCE
        return tags, files, max(old["importance"], self.importance), session

    def __getitem__(self, name: str) -> object:  # an older _Row reads as a sqlite3.Row does in merged()
        return getattr(self, name)


# What a session did to the code, as the hooks record it (memory/capture/tools.py): a file changed, a
# failing command fixed. Another session's edit of the same file is another event, not a newer version.
SESSION_EVENTS = ("change", "bugfix")


def title_key(normalised_title: str, type_: str, origin: str | None, session_id: str | None) -> str:
    """What a memory is updated by when a newer one has its title: the title, and for a session's event
    (SESSION_EVENTS recorded from a tool) also the session, so that each session keeps its own record."""
    if origin == "tool" and type_ in SESSION_EVENTS and session_id:
        return f"{normalised_title}\x00session:{session_id}"
    return normalised_title


def _row(project: str, m: NewMemory, filter_low_value: bool, now: float, screen: Screen = SINGLE,
         lazy_flags: bool = False) -> _Row | None:
    """The memory to store, or None when nothing is left of it (all private) or it is low value."""
    if m.type not in TYPES:
        raise ValueError(f"unknown memory type {m.type!r}; use one of: {', '.join(TYPES)}")
    title, content = _prepare(m, screen)
    if not title and content:
        title = content.splitlines()[0][:120]
    if not title or not content or (filter_low_value and is_low_value(title, content)):
        return None
    return _Row(project, m, title, content, now, screen, lazy_flags)


def _save_row(db: sqlite3.Connection, project: str, m: NewMemory, *, filter_low_value: bool = True) -> Saved:
    r = _row(project, m, filter_low_value, clock.now(), lazy_flags=True)
    if r is None:
        return Saved(None, "dropped")
    with Tx(db):
        found = _in_store(db, r)
        if found is not None:
            return found
        cur = db.execute(f"INSERT INTO memories ({_COLUMNS}) VALUES ({_MARKS})", r.values())
        return Saved(cur.lastrowid, "inserted", (r.type, r.title, r.content))


def _in_store(db: sqlite3.Connection, r: _Row) -> Saved | None:
    """A stored memory with the same content (touched: a duplicate) or the same title key (updated with
    this one's content: title_key), or None: then the memory is new."""
    row = db.execute("SELECT id FROM memories WHERE project = ? AND content_hash = ?", (r.project, r.chash)).fetchone()
    if row:
        db.execute("UPDATE memories SET updated_at = ? WHERE id = ?", (r.now, row["id"]))
        return Saved(row["id"], "duplicate")
    row = db.execute("SELECT id, title, tags, files, importance, session_id FROM memories "
                     "WHERE project = ? AND title_key = ?", (r.project, r.tkey)).fetchone()
    if not row:
        return None
    tags, files, importance, session = r.merged(row)
    db.execute(
        """UPDATE memories SET content = ?, content_hash = ?, type = ?, importance = ?, tags = ?, files = ?,
           session_id = ?, updated_at = ?, expires_at = ?, origin = ?, origin_detail = ?, flags = ? WHERE id = ?""",
        (r.content, r.chash, r.type, importance, tags, files, session, r.now, r.expires_at, r.origin, r.detail,
         r.flags, row["id"]),
    )
    return Saved(row["id"], "updated", (r.type, row["title"], r.content))


def _any_stored(db: sqlite3.Connection, project: str, rows: list[_Row]) -> bool:
    """Whether a stored memory has the content or the title of one of these rows."""
    for start in range(0, len(rows), 400):  # under any build's limit of bound parameters
        chunk = rows[start:start + 400]
        marks = ",".join("?" * len(chunk))
        for column, values in (("content_hash", [r.chash for r in chunk]), ("title_key", [r.tkey for r in chunk])):
            if db.execute(f"SELECT 1 FROM memories WHERE project = ? AND {column} IN ({marks}) LIMIT 1",
                          (project, *values)).fetchone():
                return True
    return False


def _save_batch(db: sqlite3.Connection, project: str, rows: list[_Row | None]) -> list[Saved]:
    """save_many's writes, inside its transaction. Each memory is checked against the store and the batch
    before it, in order, so the outcome is that of one save after another; the new rows are then written
    by one INSERT: FTS5 flushes its pending terms at every statement that fires its trigger (~60 us a row
    one by one, ~10 us in one statement; SQLite 3.40). Their ids are the ones SQLite would give, taken
    under the write lock: max(id) + 1 onwards. `rows`: the memories as _row made them (None: dropped)."""
    out: list[Saved] = []
    new: list[_Row] = []
    by_hash: dict[str, _Row] = {}
    by_title: dict[str, _Row] = {}
    next_id = (db.execute("SELECT max(id) FROM memories").fetchone()[0] or 0) + 1
    # A batch none of whose contents or titles is stored yet (a first import) needs no lookup a row: the
    # store changes only through those lookups' updates, so each would find nothing.
    stored = _any_stored(db, project, [r for r in rows if r is not None])
    for r in rows:
        if r is None:
            out.append(Saved(None, "dropped"))
        elif (same := by_hash.get(r.chash)) is not None:
            out.append(Saved(same.id, "duplicate"))
        elif stored and (found := _in_store(db, r)) is not None:
            out.append(found)
        elif (older := by_title.get(r.tkey)) is not None:  # updated as _in_store updates a stored row
            del by_hash[older.chash]
            older.tags, older.files, older.importance, older.session_id = r.merged(older)
            older.content, older.chash, older.type, older.expires_at = r.content, r.chash, r.type, r.expires_at
            older.origin, older.detail, older.flags = r.origin, r.detail, r.flags
            by_hash[older.chash] = older
            out.append(Saved(older.id, "updated", (older.type, older.title, older.content)))
        else:
            r.id, next_id = next_id, next_id + 1
            new.append(r)
            by_hash[r.chash] = by_title[r.tkey] = r
            out.append(Saved(r.id, "inserted", (r.type, r.title, r.content)))
    if new:
        db.execute(f"CREATE TEMP TABLE IF NOT EXISTS bulk_memories (id INTEGER PRIMARY KEY, {_COLUMNS})")
        db.executemany(f"INSERT INTO temp.bulk_memories (id, {_COLUMNS}) VALUES (?,{_MARKS})",
                       [(r.id, *r.values()) for r in new])
        # uid and scope as the team trigger (migration m005) would set them: its two updates a row are then
        # no-ops (~8 us a row less).
        db.execute(f"""INSERT INTO memories (id, {_COLUMNS}, uid, scope)
                       SELECT id, {_COLUMNS}, lower(hex(randomblob(16))),
                              CASE WHEN type IN (SELECT type FROM team_types) THEN 'team' ELSE 'personal' END
                       FROM temp.bulk_memories ORDER BY id""")
        db.execute("DELETE FROM temp.bulk_memories")
    return out


def forget(db: sqlite3.Connection, ids: list[int]) -> list[int]:
    """Delete memories by id; returns the ids that existed."""
    gone = []
    with Tx(db):
        for mid in ids:
            if db.execute("DELETE FROM memories WHERE id = ?", (mid,)).rowcount:
                scrub_injections(db, mid)
                db.execute("DELETE FROM access_log WHERE memory_id = ?", (mid,))
                gone.append(mid)
        queue_vector_jobs(db, gone)
    if gone:
        mark_dirty(db, None)
    return gone


def scrub_injections(db: sqlite3.Connection, mid: int) -> None:
    """A deleted memory leaves no text behind: its line in the recorded injections that named it (memory/recall/
    inject.py ends each with `#<id>)`) becomes a placeholder."""
    for iid, text in db.execute("SELECT id, text FROM injections WHERE text IS NOT NULL AND id IN (SELECT "
                                "injection_id FROM access_log WHERE memory_id = ?)", (mid,)).fetchall():
        lines = [f"- (memory #{mid}, deleted since)" if line.endswith(f" #{mid})") else line
                 for line in text.split("\n")]
        db.execute("UPDATE injections SET text = ? WHERE id = ?", ("\n".join(lines), iid))


def queue_vector_jobs(db: sqlite3.Connection, ids: list[int]) -> None:
    """One `vector` job per memory id (dedup key vector:<id>, so repeated saves make one job). The worker
    looks the memory up when it runs the job: present, it is embedded; gone, its vector is deleted."""
    if not ids:
        return
    now = time.time()
    db.executemany(
        """INSERT INTO queue (kind, payload, dedup_key, run_after, created_at) VALUES ('vector', ?, ?, ?, ?)
           ON CONFLICT(dedup_key) DO UPDATE SET
             status = CASE WHEN queue.status = 'running' THEN 'running' ELSE 'pending' END,
             run_after = excluded.run_after""",
        [(f'{{"id": {int(i)}}}', f"vector:{int(i)}", now, now) for i in ids],
    )


def vector_coverage(db: sqlite3.Connection) -> tuple[int, int]:
    """(memories whose vectors are current, all memories), from the worker's ledger (memory_index): the
    worker's search answer and `memory worker status` report it. ~2 ms at 10,000 memories."""
    total = db.execute("SELECT count(*) FROM memories").fetchone()[0]
    current = db.execute("SELECT count(*) FROM memories m JOIN memory_index i ON i.memory_id = m.id "
                         "WHERE i.indexed_at >= m.updated_at").fetchone()[0]
    return int(current), int(total)


def mark_dirty(db: sqlite3.Connection, project: str | None) -> None:
    """Tell a running worker that this project has new work: an empty file <home>/dirty/<key>."""
    try:
        path = db.execute("PRAGMA database_list").fetchone()[2] or ""
        project_dir = os.path.dirname(path)
        if os.path.basename(os.path.dirname(project_dir)) != "projects":
            return
        folder = os.path.join(os.path.dirname(os.path.dirname(project_dir)), "dirty")
        os.makedirs(folder, mode=0o700, exist_ok=True)
        os.close(os.open(os.path.join(folder, os.path.basename(project_dir)), os.O_WRONLY | os.O_CREAT, 0o600))
    except OSError:
        pass  # only a hint: the worker also scans every project when it starts


def get_many(db: sqlite3.Connection, ids: list[int]) -> list[sqlite3.Row]:
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    rows = {r["id"]: r for r in db.execute(f"SELECT * FROM memories WHERE id IN ({marks})", ids)}
    return [rows[i] for i in ids if i in rows]


def provenance(db: sqlite3.Connection, ids: list[int]) -> dict[int, sqlite3.Row]:
    """Where each memory came from (origin, detail, author, machine, source) and its trust flags, by id: one
    query for the few hits a reader shows (a search Hit carries none of it)."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    try:
        rows = db.execute(f"SELECT id, origin, origin_detail, flags, checked, author, machine, source, tags, "
                          f"files FROM memories WHERE id IN ({marks})", ids).fetchall()
    except sqlite3.Error:  # a label is not worth failing a hook: unlabelled lines say "recorded"
        return {}
    return {r["id"]: r for r in rows}


def decide_flags(db: sqlite3.Connection, rows: Iterable[sqlite3.Row | None]) -> int:
    """Decide and mark the trust flags (fence.is_flagged) of these rows (with title, content, origin, author,
    flags and checked) not yet checked under the rules in force: the worker does it for each memory it
    indexes, so a hook that injects them later reads no text (building the rules' gates and reading a text
    cost a prompt ~2 ms CPU). Returns how many were decided."""
    from memory.base.fence import checked_now, is_flagged

    todo = [r for r in rows if r is not None and not checked_now(r)]
    mark_checked(db, todo, {r["id"]: is_flagged(r, r["title"], r["content"]) for r in todo})
    return len(todo)


def mark_checked(db: sqlite3.Connection, rows: Iterable[sqlite3.Row | None], verdicts: dict[int, bool]) -> None:
    """Record the flags a reader decided (fence.is_flagged: `verdicts`, by id) for the rows not yet checked
    under the rules in force, with the rules' mark, so the next injection of these rows reads no text.
    Bookkeeping: a busy or read-only database is left as it is."""
    from memory.base.fence import FLAG, checked_now, rules_mark

    mark = rules_mark()
    todo = [(mark, FLAG if verdicts[r["id"]] and not r["flags"] else r["flags"], r["id"])
            for r in rows if r is not None and r["id"] in verdicts and not checked_now(r)]
    if not (mark and todo):
        return
    try:
        with Tx(db):
            db.executemany("UPDATE memories SET checked = ?, flags = ? WHERE id = ?", todo)
    except sqlite3.OperationalError as exc:
        if not any(w in str(exc).lower() for w in ("locked", "busy", "readonly", "disk is full", "disk i/o error")):
            raise


def log_access(db: sqlite3.Connection, ids: list[int], kind: str, session_id: str | None = None,
               query: str | None = None, *, parts: dict[int, dict[str, float]] | None = None,
               text: str | None = None, mode: str | None = None) -> int | None:
    """Record that these memories were shown (kind: search, get, inject-start, inject-prompt, ...). With
    `parts` (an injection or a search: each memory's score parts, memory/recall/search.py PARTS) or `text`
    (what a hook gave the model), the showing is also one `injections` row, which the access_log rows name
    with their rank and score (`memory why`): one more row and a few bytes of JSON each, in the same
    transaction (a hook's text is recorded even when it names no memory). Returns that row's id."""
    if not ids and text is None:
        return None
    now = time.time()
    asked = stored_query(query) if query else None
    try:
        with Tx(db):
            injection = None
            if parts is not None or text is not None:
                injection = db.execute("INSERT INTO injections (session_id, kind, mode, query, text, at) VALUES "
                                       "(?, ?, ?, ?, ?, ?)", (session_id, kind, mode, asked, text, now)).lastrowid
            db.executemany(
                "INSERT INTO access_log (memory_id, session_id, kind, query, at, injection_id, rank, score, parts) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(i, session_id, kind, asked, now, injection, *_scored(rank, (parts or {}).get(i)))
                 for rank, i in enumerate(ids, start=1)],
            )
            # SessionStart's list is ranked on use (memory/recall/search.py useful_memories) and shown with no
            # query: counted as a use, being listed made a memory more likely to be listed again, and the
            # list, once capped, kept the same old lines for hundreds of sessions. Only a recall that a query
            # asked for (prompt, edit, search, get) counts.
            used = 0 if kind == "inject-start" else 1
            db.executemany(
                "UPDATE memories SET accessed_at = ?, access_count = access_count + ? WHERE id = ?",
                [(now, used, i) for i in ids],
            )
        return injection
    except sqlite3.OperationalError as exc:
        # Bookkeeping of a read: a search or a recall is not failed because other sessions hold the write
        # lock past the busy timeout (nothing was written: the lock is taken before the first statement),
        # nor because the data dir is full or read-only (the hook tells the user: memory/hook/spool.py).
        text = str(exc).lower()
        if not any(w in text for w in ("locked", "busy", "readonly", "disk is full", "disk i/o error")):
            raise
        return None


def stored_query(query: str) -> str:
    """A query as log_access stores it (privacy-filtered, cut): what a lookup of a logged query compares."""
    return clean(query)[:200]


def _scored(rank: int, parts: dict[str, float] | None) -> tuple[int | None, float | None, str | None]:
    """An access_log row's rank, score and parts (JSON, 4 decimals) from what the ranking filled."""
    if parts is None:
        return None, None, None
    from memory.fastpath import jsonlite

    kept = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in parts.items() if v is not None}
    score = kept.get("score")
    return rank, float(score) if isinstance(score, int | float) else None, jsonlite.dumps(kept)
