"""The warm worker's in-memory copy of a project's two search lists: keyword postings and vectors.

Why: at 100,000 memories a query of common words makes FTS5 rank tens of thousands of rows (10-40 ms
here, so the SQL path ranks only the newest 1,000 matches) and a LanceDB IVF query costs 15-20 ms of
planning and partition reads on these machines; numpy arrays answer both in a few ms and rank every
match. SQLite and LanceDB stay the source of truth and the durable store: this copy is built from them in
a background thread when a project is first searched, kept current by the worker's own indexing (the
only writer of memories_ctx and of the vectors), and dropped with the worker. Until it is ready, or with
MEMORY_WARM_INDEX=off, searches use FTS5 and LanceDB as before.

Keyword scores are FTS5's bm25() over memories_ctx, computed the same way (k1 1.2, b 0.75, the column
weights, document length = tokens in all columns, idf floored at 1e-6), on tokens from SQLite's own
tokenizer (read through fts5vocab), so both paths rank alike; a query word that the tokenizer splits in
two ("foo_bar") is scored as two words rather than as a phrase. Vectors are stored transposed (one row per
dimension): a hashed TF-IDF query has a few dozen non-zero dimensions and reads only those rows, kept as
bfloat16 bits (half the memory); dense models' vectors stay float32.
"""

from __future__ import annotations

import math
import re
import sqlite3
import threading
from array import array
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from memory.recall.search import Filters, query_words
from memory.store import ctx_rows

K1, B = 1.2, 0.75
BLOCK = 8192  # vectors per block: growing the store never copies what is already there
# Rows of memories_ctx per step of the build, between two pauses (a search in the worker goes first).
LOAD_ROWS = 512
TOKENIZER = "porter unicode61 remove_diacritics 2"  # memories_ctx's (memory/store/migrations.py m003)


class Entry:
    """One memory as the worker indexes it: what memories_ctx holds, its filter fields and its vector."""

    __slots__ = ("id", "type", "session_id", "created_at", "importance", "columns", "vector")

    def __init__(self, id: int, type: str, session_id: str | None, created_at: float, importance: float | None,
                 columns: tuple[str, str, str, str], vector: list[float] | None) -> None:
        self.id, self.type, self.session_id, self.created_at = id, type, session_id, created_at
        self.importance = 0.5 if importance is None else importance
        self.columns, self.vector = columns, vector


class _Postings:
    """One term's (slot, weighted frequency, document length) triples, in growable arrays. The length
    rides along (a slot's length never changes: a re-indexed memory gets a new slot), which saves a
    gather per term at query time."""

    __slots__ = ("slots", "freq", "dl", "n")

    def __init__(self, slots: np.ndarray, freq: np.ndarray, dl: np.ndarray) -> None:
        self.slots, self.freq, self.dl, self.n = slots, freq, dl, len(slots)

    def add(self, slot: int, f: float, dl: float) -> None:
        if self.n == len(self.slots):
            cap = max(8, 2 * self.n)
            self.slots, self.freq, self.dl = (np.resize(a, cap) for a in (self.slots, self.freq, self.dl))
        self.slots[self.n] = slot
        self.freq[self.n] = f
        self.dl[self.n] = dl
        self.n += 1


def _grown(arr: np.ndarray, need: int) -> np.ndarray:
    if need <= len(arr):
        return arr
    out = np.zeros(max(need, 2 * len(arr), 1024), dtype=arr.dtype)
    out[:len(arr)] = arr
    return out


class Tokenizer:
    """SQLite's FTS5 tokenizer with memories_ctx's settings, on a private in-memory database."""

    def __init__(self, weights: tuple[float, ...]) -> None:
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self._create()
        self.weight = dict(zip(("title", "content", "tags", "ctx"), weights, strict=True))
        self.lock = threading.Lock()

    def _create(self) -> None:
        self.db.execute(f"CREATE VIRTUAL TABLE tok USING fts5(title, content, tags, ctx, tokenize='{TOKENIZER}')")
        self.db.execute("CREATE VIRTUAL TABLE tok_v USING fts5vocab(tok, instance)")

    def documents(self, docs: list[tuple[int, tuple[str, str, str, str]]]) -> dict[int, tuple[dict[str, float], int]]:
        """{key: ({term: weighted frequency}, tokens in all columns)} of each (key, columns)."""
        out: dict[int, tuple[dict[str, float], int]] = {key: ({}, 0) for key, _ in docs}
        with self.lock:
            self.db.execute("DELETE FROM tok")
            self.db.executemany("INSERT INTO tok (rowid, title, content, tags, ctx) VALUES (?, ?, ?, ?, ?)",
                                [(key, *cols) for key, cols in docs])
            lengths: dict[int, int] = {}
            for term, doc, col in self.db.execute("SELECT term, doc, col FROM tok_v"):
                freqs = out[doc][0]
                freqs[term] = freqs.get(term, 0.0) + self.weight[col]
                lengths[doc] = lengths.get(doc, 0) + 1
            if len(docs) > 64:  # deleted rows leave segments behind that slow every later call down
                self.db.execute("DROP TABLE tok_v")
                self.db.execute("DROP TABLE tok")
                self._create()
            else:
                self.db.execute("DELETE FROM tok")
        return {key: (freqs, lengths.get(key, 0)) for key, (freqs, _) in out.items()}

    def stems(self, words: list[str]) -> dict[str, str]:
        """{word: its token}, for single lower-case ASCII words (each is exactly one token)."""
        got = self.documents([(i, (w, "", "", "")) for i, w in enumerate(words, start=1)])
        return {w: next(iter(got[i][0])) for i, w in enumerate(words, start=1) if got[i][0]}

    def query_terms(self, query: str) -> list[tuple[list[str], bool]]:
        """The query's words (search.query_words, as fts_query uses them) as memories_ctx's tokens, each with
        whether it is a prefix."""
        words = query_words(query)
        got = self.documents([(i, (w, "", "", "")) for i, (w, _) in enumerate(words, start=1)])
        return [(sorted(got[i][0]), prefix) for i, (_, prefix) in enumerate(words, start=1) if got[i][0]]


class WarmIndex:
    def __init__(self, dim: int, sparse_vectors: bool, column_weights: tuple[float, ...]) -> None:
        self.dim = dim
        # Hashed TF-IDF queries read a few dozen dimensions: those vectors are kept as the top 16 bits of
        # their float32 (bfloat16: half the memory, widened by an integer shift, ~10x faster than float16;
        # similarities agree to ~0.5%). Dense models read every dimension: float32.
        self.sparse = sparse_vectors
        self.dtype = np.uint16 if sparse_vectors else np.float32
        self.tokenizer = Tokenizer(column_weights)
        self.lock = threading.Lock()
        self.n = 0  # slots used; a re-indexed memory gets a new slot and its old one dies
        self.ids = np.zeros(0, dtype=np.int64)
        self.alive = np.zeros(0, dtype=bool)
        self.has_vector = np.zeros(0, dtype=bool)
        self.created = np.zeros(0, dtype=np.float64)
        self.type_code = np.zeros(0, dtype=np.int16)
        self.session_code = np.zeros(0, dtype=np.int32)
        self.length = np.zeros(0, dtype=np.float32)
        self.importance = np.zeros(0, dtype=np.float32)
        self.slot_of: dict[int, int] = {}
        self.codes: dict[str | None, int] = {}  # types and sessions share one code book
        self.names: list[str | None] = []  # code -> value
        self.postings: dict[str, _Postings] = {}
        self.blocks: list[np.ndarray] = []
        self.live = 0
        self.total_length = 0.0
        self._sorted_terms: list[str] | None = None

    # -- building -----------------------------------------------------------------------------------

    def load(self, db: sqlite3.Connection, vectors: Iterable[tuple[np.ndarray, np.ndarray]] | None,
             pause: Callable[[], None] = lambda: None) -> None:
        """Everything memories_ctx holds, and the vectors (batches of ids and rows, as VectorStore.scan gives
        them) (call before the index is shared); `pause` is called between chunks of LOAD_ROWS rows (the
        worker's searches go first).

        An all-ASCII row is split here (unicode61's token characters in ASCII are exactly letters and
        digits) and each distinct word is stemmed once by SQLite's porter; other rows go through the
        SQLite tokenizer whole. Reading fts5vocab's token instances instead cost ~10x more."""
        meta = {int(r[0]): (r[1], r[2], float(r[3]), 0.5 if r[4] is None else float(r[4])) for r in db.execute(
            "SELECT id, type, session_id, created_at, importance FROM memories")}
        words = re.compile(r"[A-Za-z0-9]+").findall
        stems: dict[str, str] = {}
        weights = tuple(self.tokenizer.weight[c] for c in ("title", "content", "tags", "ctx"))
        lists: dict[str, tuple[array, array]] = {}

        def add(slot: int, freqs: dict[str, float]) -> None:
            for term, f in freqs.items():
                got = lists.get(term)
                if got is None:
                    got = lists[term] = (array("i"), array("f"))
                got[0].append(slot)
                got[1].append(f)

        # memories_ctx keeps no text: the ledger keeps what it indexed (memory/store/ctx_rows.py)
        cur = db.execute("SELECT memory_id, doc FROM memory_index WHERE doc IS NOT NULL")
        while chunk := cur.fetchmany(LOAD_ROWS):
            pause()
            split, whole, unknown = [], [], set()
            for mid, doc in chunk:
                m = meta.get(mid)
                if m is None:  # in memories_ctx but gone from memories: searches would drop it anyway
                    continue
                title, content, tags, ctx = ctx_rows.unpack(doc)
                texts = [title or "", content or "", tags or "", ctx or ""]
                if all(t.isascii() for t in texts):
                    toks = [words(t.lower()) for t in texts]
                    for ts in toks:
                        unknown.update(ts)
                    split.append((mid, m, toks))
                else:
                    whole.append((mid, m, (texts[0], texts[1], texts[2], texts[3])))
            unknown.difference_update(stems)
            if unknown:
                stems.update(self.tokenizer.stems(sorted(unknown)))
            for mid, m, toks in split:
                freqs: dict[str, float] = {}
                for ts, w in zip(toks, weights, strict=True):
                    for t in ts:
                        stem = stems[t]
                        freqs[stem] = freqs.get(stem, 0.0) + w
                slot = self._new_slot(mid, *m)
                self.length[slot] = sum(len(ts) for ts in toks)
                add(slot, freqs)
            if whole:
                tokens = self.tokenizer.documents([(mid, texts) for mid, _, texts in whole])
                for mid, m, _ in whole:
                    freqs, length = tokens[mid]
                    slot = self._new_slot(mid, *m)
                    self.length[slot] = length
                    add(slot, freqs)
        self.total_length = float(self.length[:self.n].sum())
        self._pack(lists)
        for ids, vecs in vectors or ():
            pause()
            slots = []
            rows = []
            for i, mid in enumerate(ids.tolist()):
                slot = self.slot_of.get(mid)
                if slot is None:
                    m = meta.get(mid)
                    if m is None:
                        continue
                    slot = self._new_slot(mid, *m)
                slots.append(slot)
                rows.append(i)
            if not slots:
                continue
            where, stored = np.array(slots), self._stored(vecs[rows])
            for block in range(int(where.min()) // BLOCK, int(where.max()) // BLOCK + 1):
                self._block_for(int(where[where < (block + 1) * BLOCK].max()))
                inside = (where >= block * BLOCK) & (where < (block + 1) * BLOCK)
                self.blocks[block][:, where[inside] - block * BLOCK] = stored[inside].T
            self.has_vector[where] = True

    def _pack(self, lists: dict[str, tuple[array, array]]) -> None:
        """Every term's postings as slices of three arrays: one allocation each rather than three per term,
        whose copies, interleaved with the build's freed lists, kept the heap from shrinking (10,000 memories:
        29 MiB of arrays held 81 MiB of RSS). A term that grows later gets arrays of its own (_Postings.add)."""
        total = sum(len(s_) for s_, _ in lists.values())
        slots, freq = np.empty(total, dtype=np.int32), np.empty(total, dtype=np.float32)
        spans = []
        at = 0
        for term in list(lists):
            slots_, freq_ = lists.pop(term)
            end = at + len(slots_)
            slots[at:end] = np.frombuffer(slots_, dtype=np.int32)
            freq[at:end] = np.frombuffer(freq_, dtype=np.float32)
            spans.append((term, at, end))
            at = end
        dl = self.length[slots]
        for term, start, end in spans:
            self.postings[term] = _Postings(slots[start:end], freq[start:end], dl[start:end])

    def _new_slot(self, mid: int, type: str, session_id: str | None, created_at: float, importance: float) -> int:
        old = self.slot_of.get(mid)
        if old is not None:
            self._kill(old)
        slot = self.n
        self.n += 1
        if slot >= len(self.ids):
            need = slot + 1
            self.ids, self.alive, self.has_vector = (_grown(a, need) for a in (self.ids, self.alive, self.has_vector))
            self.created, self.type_code = _grown(self.created, need), _grown(self.type_code, need)
            self.session_code, self.length = _grown(self.session_code, need), _grown(self.length, need)
            self.importance = _grown(self.importance, need)
        self.ids[slot] = mid
        self.importance[slot] = importance
        self.alive[slot] = True
        self.has_vector[slot] = False
        self.created[slot] = created_at
        self.type_code[slot] = self._code(type)
        self.session_code[slot] = self._code(session_id)
        self.length[slot] = 0
        self.slot_of[mid] = slot
        self.live += 1
        return slot

    def _code(self, value: str | None) -> int:
        code = self.codes.get(value)
        if code is None:
            code = self.codes[value] = len(self.codes)
            self.names.append(value)
        return code

    def _kill(self, slot: int) -> None:
        if self.alive[slot]:
            self.alive[slot] = False
            self.live -= 1
            self.total_length -= float(self.length[slot])

    def _stored(self, vecs: np.ndarray) -> np.ndarray:
        """float32 rows as stored: themselves, or their bfloat16 bits (rounded to nearest)."""
        vecs = np.ascontiguousarray(vecs, dtype=np.float32)
        if not self.sparse:
            return vecs
        return ((vecs.view(np.uint32) + 0x8000) >> 16).astype(np.uint16)

    def _widened(self, rows: np.ndarray) -> np.ndarray:
        if not self.sparse:
            return rows
        out = rows.astype(np.uint32)
        out <<= 16
        return out.view(np.float32)

    def _set_vector(self, slot: int, vec: Any) -> None:
        block, col = divmod(slot, BLOCK)
        self._block_for(slot)
        self.blocks[block][:, col] = self._stored(np.asarray(vec, dtype=np.float32)[None, :])[0]
        self.has_vector[slot] = True

    def _block_for(self, slot: int) -> None:
        """Room for `slot`: full blocks of BLOCK columns, the last one grown as it fills (a small project
        does not pay for 8,192 columns)."""
        block, col = divmod(slot, BLOCK)
        while len(self.blocks) <= block:
            if self.blocks and self.blocks[-1].shape[1] < BLOCK:  # the last block fills up before the next
                self._widen(len(self.blocks) - 1, BLOCK)
            self.blocks.append(np.zeros((self.dim, 0), dtype=self.dtype))
        if col >= self.blocks[block].shape[1]:
            self._widen(block, min(BLOCK, max(256, 2 * (col + 1))))

    def _widen(self, block: int, cols: int) -> None:
        old = self.blocks[block]
        new = np.zeros((self.dim, cols), dtype=self.dtype)
        new[:, :old.shape[1]] = old
        self.blocks[block] = new  # a new object: a search holding the old one reads it safely

    # -- keeping current ----------------------------------------------------------------------------

    def update(self, entries: list[Entry]) -> None:
        """Memories (re-)indexed by the worker: each gets a new slot, its old one is dropped."""
        if not entries:
            return
        tokens = self.tokenizer.documents([(e.id, e.columns) for e in entries])
        with self.lock:
            for e in entries:
                freqs, length = tokens[e.id]
                slot = self._new_slot(e.id, e.type, e.session_id, e.created_at, e.importance)
                self.length[slot] = length
                self.total_length += length
                for term, f in freqs.items():
                    p = self.postings.get(term)
                    if p is None:
                        self.postings[term] = _Postings(np.array([slot], dtype=np.int32),
                                                        np.array([f], dtype=np.float32),
                                                        np.array([length], dtype=np.float32))
                        self._sorted_terms = None
                    else:
                        p.add(slot, f, length)
                if e.vector is not None:
                    self._set_vector(slot, e.vector)

    def delete(self, ids: Iterable[int]) -> None:
        with self.lock:
            for mid in ids:
                slot = self.slot_of.pop(mid, None)
                if slot is not None:
                    self._kill(slot)

    @property
    def dead(self) -> int:
        return self.n - self.live

    def nbytes(self) -> int:
        arrays = (self.ids, self.alive, self.has_vector, self.created, self.type_code, self.session_code, self.length,
                  self.importance)
        return (sum(a.nbytes for a in arrays) + sum(b.nbytes for b in self.blocks)
                + sum(p.slots.nbytes + p.freq.nbytes + p.dl.nbytes for p in self.postings.values()))

    def info(self, ids: Iterable[int]) -> dict[int, tuple[str | None, float]]:
        """{id: (session_id, importance)} of the memories this index holds, as fusion needs them."""
        with self.lock:
            out = {}
            for mid in ids:
                slot = self.slot_of.get(mid)
                if slot is not None:
                    out[mid] = (self.names[self.session_code[slot]], float(self.importance[slot]))
            return out

    # -- searching ----------------------------------------------------------------------------------

    def _mask(self, n: int, filters: Filters) -> np.ndarray:
        """Live slots that pass the narrowing filters (expiry and the excluded session are checked on the
        final candidates, as the SQL path does)."""
        mask = self.alive[:n].copy()
        if filters.types:
            codes = [self.codes[t] for t in filters.types if t in self.codes]
            mask &= np.isin(self.type_code[:n], codes)
        if filters.since is not None:
            mask &= self.created[:n] >= filters.since
        if filters.until is not None:
            mask &= self.created[:n] < filters.until
        if filters.session_id:
            code = self.codes.get(filters.session_id)
            mask &= self.session_code[:n] == (code if code is not None else -1)
        return mask

    def _matching(self, token: str, prefix: bool) -> list[_Postings]:
        if not prefix:
            p = self.postings.get(token)
            return [p] if p is not None else []
        import bisect

        if self._sorted_terms is None:
            self._sorted_terms = sorted(self.postings)
        names = self._sorted_terms
        out = []
        for i in range(bisect.bisect_left(names, token), len(names)):
            if not names[i].startswith(token):
                break
            out.append(self.postings[names[i]])
        return out

    def keyword(self, query: str, filters: Filters, k: int) -> dict[int, float]:
        """The k best memories by BM25 over memory + neighbours: {id: score}, larger is better."""
        phrases = self.tokenizer.query_terms(query)
        if not phrases:
            return {}
        with self.lock:  # a consistent view: arrays grown later are new objects, this one stays valid
            n, live = self.n, self.live
            avgdl = self.total_length / live if live else 1.0
            lists = [[[(p.slots[:p.n], p.freq[:p.n], p.dl[:p.n]) for p in self._matching(tok, prefix)] for tok in toks]
                     for toks, prefix in phrases]
            alive = self.alive[:n]
            mask = self._mask(n, filters)
        if not live:
            return {}
        c1, c2 = K1 * (1 - B), K1 * B / avgdl
        scores = np.zeros(n, dtype=np.float64)
        for words in lists:
            got = [self._phrase_word(parts, n) for parts in words]
            if not got or any(g is None for g in got):
                continue  # a word of the phrase is nowhere: FTS5 matches no row either
            if len(got) == 1:
                slots, freq, dl = got[0]
            else:  # "foo_bar" is the phrase "foo bar": rows with every word, the rarest word's frequency
                # (positions are not kept, so "bar ... foo" counts too)
                slots = got[0][0]
                for other in got[1:]:
                    slots = np.intersect1d(slots, other[0], assume_unique=True)
                freq = np.minimum.reduce([f[np.searchsorted(s_, slots)] for s_, f, _ in got])
                dl = self.length[slots]
            if not len(slots):
                continue
            n_hit = int(np.count_nonzero(alive[slots]))  # dead slots score below, but must not count here
            idf = math.log((live - n_hit + 0.5) / (n_hit + 0.5))
            idf = idf if idf > 0 else 1e-6
            denom = dl * np.float32(c2)
            denom += np.float32(c1)
            denom += freq
            # bincount per term measured faster than one over all terms, or than a float32 scatter-add
            scores += np.bincount(slots, weights=freq * np.float32(idf * (K1 + 1)) / denom, minlength=n)
        scores *= mask
        return self._top(scores, k, floor=0.0)

    def _phrase_word(self, parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]], n: int
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """One word's (slots ascending, frequencies, lengths); a prefix's terms summed per document."""
        if not parts:
            return None
        if len(parts) == 1:  # slots ascend: loaded in id order, later ones appended with new slots
            return parts[0]
        summed = np.bincount(np.concatenate([s for s, _, _ in parts]),
                             weights=np.concatenate([f for _, f, _ in parts]), minlength=n)
        slots = np.flatnonzero(summed).astype(np.int32)
        return slots, summed[slots].astype(np.float32), self.length[slots]

    def vector(self, query: list[float], filters: Filters, k: int) -> dict[int, float]:
        """The k nearest memories by dot product: {id: similarity}."""
        q = np.asarray(query, dtype=np.float32)
        with self.lock:
            n = self.n
            blocks = list(self.blocks)
            mask = self._mask(n, filters) & self.has_vector[:n]
        if not n or not blocks:
            return {}
        nz = np.flatnonzero(q)
        sparse = len(nz) <= self.dim // 4
        parts = []
        for i, block in enumerate(blocks):
            used = min(block.shape[1], n - i * BLOCK)
            if used <= 0:
                break
            if sparse:
                parts.append(q[nz] @ self._widened(block[nz, :used]))
            else:
                parts.append(q @ self._widened(block[:, :used]))
        scores = np.concatenate(parts).astype(np.float64)
        scores[~mask[:len(scores)]] = -np.inf
        return self._top(scores, k, floor=-np.inf)

    def _top(self, scores: np.ndarray, k: int, floor: float) -> dict[int, float]:
        above = scores > floor
        count = int(np.count_nonzero(above))
        if count > max(k, len(scores) // 2):
            cand = np.argpartition(scores, len(scores) - k)[-k:]
            cand = cand[scores[cand] > floor]
        else:  # mostly at the floor (filters, rare words): argpartition slows down on ties, so compress first
            cand = np.flatnonzero(above)
            if count > k:
                cand = cand[np.argpartition(scores[cand], count - k)[-k:]]
        return {int(self.ids[s]): float(scores[s]) for s in cand}
