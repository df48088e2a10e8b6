"""An on-disk cache of embeddings for the benchmarks (never the plugin: the worker embeds every memory).

Re-running the recall benchmark with MiniLM re-embeds ~35,000 turns and windows (~50 CPU-minutes); the
vectors depend only on the provider, its model and the text, so they are kept under DIR/<provider key>/ as
numpy files: each embed() call that missed writes one `.npz` of the SHA-1s of its texts and their float32
vectors (written to a temporary name, then renamed, so runs sharing DIR see whole files only). Query
vectors are kept too, under their own hashes (a provider may embed a query differently).
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from typing import Any

from memory.recall import embed


class CachedEmbedder:
    """`inner` with its vectors looked up in, and added to, the cache; counts hits and misses."""

    def __init__(self, inner: Any, root: str) -> None:
        self.inner = inner
        self.name, self.model, self.dim = inner.name, inner.model, inner.dim
        self.dir = os.path.join(root, re.sub(r"[^A-Za-z0-9._-]+", "_", embed.key(inner)))
        os.makedirs(self.dir, exist_ok=True)
        self.hits = self.misses = 0
        self.vectors: dict[str, Any] = {}
        self._seen: set[str] = set()
        self.reload()

    def reload(self) -> None:
        """Read the files written since the last look (by this run or another)."""
        import numpy as np

        for f in sorted(os.listdir(self.dir)):
            if f.endswith(".npz") and f not in self._seen:
                self._seen.add(f)
                with np.load(os.path.join(self.dir, f)) as data:
                    for k, v in zip(data["keys"], data["vectors"], strict=True):
                        self.vectors[str(k)] = v

    def _lookup(self, keys: list[str], texts: list[str], compute: Any) -> list[list[float]]:
        import numpy as np

        missing = list(dict.fromkeys(i for i, k in enumerate(keys) if k not in self.vectors))
        self.hits += len(keys) - len(missing)
        self.misses += len(missing)
        if missing:
            new = np.asarray(compute([texts[i] for i in missing]), dtype=np.float32)
            for i, v in zip(missing, new, strict=True):
                self.vectors[keys[i]] = v
            self._write([keys[i] for i in missing], new)
        return [self.vectors[k].astype(float).tolist() for k in keys]

    def _write(self, keys: list[str], vectors: Any) -> None:
        import numpy as np

        fd, tmp = tempfile.mkstemp(dir=self.dir, suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, keys=np.array(keys, dtype="U40"), vectors=vectors)
        name = f"{hashlib.sha1(''.join(keys).encode()).hexdigest()[:16]}-{os.getpid()}.npz"
        os.replace(tmp, os.path.join(self.dir, name))
        self._seen.add(name)

    def embed(self, texts: list[str]) -> list[list[float]]:
        keys = [hashlib.sha1(t.encode()).hexdigest() for t in texts]
        return self._lookup(keys, texts, self.inner.embed)

    def embed_query(self, text: str) -> list[float]:
        key = hashlib.sha1(b"query\x00" + text.encode()).hexdigest()
        return self._lookup([key], [text], lambda ts: [self.inner.embed_query(ts[0])])[0]

    def __getattr__(self, attr: str) -> object:  # what a provider has beyond the protocol
        return getattr(self.inner, attr)
