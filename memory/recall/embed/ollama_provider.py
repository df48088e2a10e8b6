"""Embeddings from a local Ollama server through the official `ollama` client.

The model is MEMORY_OLLAMA_EMBED_MODEL (nomic-embed-text by default; bge-m3 for multilingual text), the
server OLLAMA_HOST. Only the worker and the CLI import this: `ollama` costs a hook 0.24-0.43 s.
"""

from __future__ import annotations

import math
import os

from memory.base.config import env

NAME = "ollama"
# nomic-embed-text was trained with task prefixes; other models ignore them harmlessly only if we do not
# add them, so they are applied for the nomic family alone.
_PREFIXED = ("nomic-embed-text",)


class OllamaUnavailable(RuntimeError):
    """The server is not reachable, or it does not have the model."""


def _host() -> str:
    return os.environ.get("OLLAMA_HOST") or "http://127.0.0.1:11434"


class OllamaEmbedder:
    name = NAME

    def __init__(self, model: str | None = None, host: str | None = None, timeout: float = 30.0) -> None:
        import ollama  # lazily: see the module docstring

        self.model = model or env("MEMORY_OLLAMA_EMBED_MODEL")
        self.host = host or _host()
        self._ollama = ollama
        self._client = ollama.Client(host=self.host, timeout=timeout)
        self.dim = 0
        self._prefixed = self.model.split(":")[0] in _PREFIXED

    def check(self) -> None:
        """Raise OllamaUnavailable unless the server answers and has the model; learn the dimension."""
        try:
            names = {m.model for m in self._client.list().models if m.model}
        except (ConnectionError, self._ollama.ResponseError, OSError) as exc:
            raise OllamaUnavailable(f"Ollama at {self.host}: {exc}") from exc
        wanted = self.model if ":" in self.model else f"{self.model}:latest"
        if self.model not in names and wanted not in names:
            raise OllamaUnavailable(f"Ollama at {self.host} has no model {self.model!r} "
                                    f"(run `ollama pull {self.model}`)")
        self.dim = len(self._embed(["dimension probe"])[0])

    def _embed(self, texts: list[str]) -> list[list[float]]:
        try:
            resp = self._client.embed(model=self.model, input=texts, truncate=True)
        except (ConnectionError, OSError) as exc:
            raise OllamaUnavailable(f"Ollama at {self.host}: {exc}") from exc
        except self._ollama.ResponseError as exc:
            raise OllamaUnavailable(f"Ollama at {self.host} refused to embed with {self.model!r}: {exc}") from exc
        vectors = [list(v) for v in resp.embeddings]
        if len(vectors) != len(texts):
            raise OllamaUnavailable(f"Ollama returned {len(vectors)} embeddings for {len(texts)} texts")
        return [_normalise(v) for v in vectors]

    def embed(self, texts: list[str]) -> list[list[float]]:
        if self._prefixed:
            texts = [f"search_document: {t}" for t in texts]
        return self._embed(texts)

    def embed_query(self, text: str) -> list[float]:
        return self._embed([f"search_query: {text}" if self._prefixed else text])[0]


def _normalise(v: list[float]) -> list[float]:
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v] if n else v
