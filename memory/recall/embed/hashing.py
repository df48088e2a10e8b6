"""The built-in embedder: hashed TF-IDF that needs nothing but the standard library and always works.

Features are the content words of a text (stop words dropped, English and Russian), a short stem of each
long word and, lighter, the character trigrams of each word, so inflected forms (Russian cases, English
plurals) and identifier parts still meet. Each feature goes to one of `dim` buckets by its FNV-1a hash,
with a sign from another hash bit so that collisions cancel out rather than pile up. Term frequencies are
sublinear (1 + log tf), and the vector is L2-normalised, so a dot product is a cosine.

There is no corpus-wide IDF: a vector must not change when other memories arrive (each is embedded once).
Stop words are dropped instead, and in hybrid search the BM25 list, which has IDF, carries most weight.
"""

from __future__ import annotations

import math
import re

from memory.recall.search import STOPWORDS

DIM = 1024
NAME = "hashing"
MODEL = f"fnv1a-tfidf-{DIM}-v1"

_WORD = re.compile(r"\w+", re.UNICODE)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193


def fnv1a(data: bytes) -> int:
    h = _FNV_OFFSET
    for byte in data:
        h ^= byte
        h = (h * _FNV_PRIME) & 0xFFFFFFFF
    return h


def features(text: str) -> dict[str, float]:
    """Weighted features of a text: words 1.0, stems 0.5, character trigrams 0.25 (spread over the word)."""
    out: dict[str, float] = {}
    for raw in _WORD.findall(_CAMEL.sub(" ", text)):
        for w in raw.lower().split("_"):
            if len(w) < 2 or w in STOPWORDS or (w.isdigit() and len(w) < 3):
                continue
            out[w] = out.get(w, 0.0) + 1.0
            if len(w) > 5:
                stem = "~" + w[:5]
                out[stem] = out.get(stem, 0.0) + 0.5
            padded = f"<{w}>"
            grams = [padded[i:i + 3] for i in range(len(padded) - 2)]
            share = 0.25 * 3 / max(3, len(grams))  # long words do not drown short ones in trigrams
            for g in grams:
                key = "#" + g
                out[key] = out.get(key, 0.0) + share
    return out


# One cache per dimension: a feature's bucket at 1,024 dimensions is out of range at 384 (a process that
# embeds at two dimensions, as a benchmark's stand-in beside the real store does, raised IndexError).
_bucket_cache: dict[int, dict[str, tuple[int, float]]] = {}


def _bucket(feature: str, dim: int) -> tuple[int, float]:
    cache = _bucket_cache.setdefault(dim, {})
    hit = cache.get(feature)
    if hit is None:
        h = fnv1a(feature.encode("utf-8"))
        hit = ((h >> 1) % dim, 1.0 if h & 1 else -1.0)
        if len(cache) < 500_000:
            cache[feature] = hit
    return hit


def embed_one(text: str, dim: int = DIM) -> list[float]:
    vec = [0.0] * dim
    for feat, tf in features(text).items():
        idx, sign = _bucket(feat, dim)
        vec[idx] += sign * (1.0 + math.log(tf)) if tf >= 1 else sign * tf
    norm = math.sqrt(sum(v * v for v in vec))
    return [v / norm for v in vec] if norm else vec


class HashingEmbedder:
    name = NAME
    model = MODEL
    dim = DIM

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [embed_one(t, self.dim) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return embed_one(text, self.dim)
