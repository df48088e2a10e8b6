"""A local model through the official `ollama` client: POST /api/chat with the answer constrained to the
learnings' JSON schema (`format`), so that even a small model returns parseable output.

The server is OLLAMA_HOST (the client's own variable, default http://127.0.0.1:11434). The model is
MEMORY_OLLAMA_MODEL; empty means the first installed chat model from a short preference list, else the
first installed model that is not an embedding model. Local calls cost no money, so they are recorded
but not counted against the daily token budget.
"""

from __future__ import annotations

import json
import os
from typing import Any

from memory.base.config import env, env_int
from memory.learn import ProviderError, Unavailable
from memory.learn.prompt import SCHEMA, SYSTEM, find_json

NAME = "ollama"
PREFERRED = ("qwen2.5:7b", "qwen2.5:3b", "llama3.1:8b", "llama3.2:3b", "llama3.2", "gemma2:9b", "mistral",
             "qwen3:4b", "qwen3:8b", "phi3")
_EMBEDDING_HINTS = ("embed", "bge", "minilm", "nomic", "e5-", "gte-")


def host() -> str:
    return os.environ.get("OLLAMA_HOST") or "http://127.0.0.1:11434"


class OllamaProvider:
    name = NAME
    paid = False

    def __init__(self, model: str | None = None, timeout: float | None = None, probe_timeout: float = 3.0) -> None:
        import httpx  # the ollama client's transport: its timeouts surface as httpx exceptions
        import ollama  # lazily: ~0.3 s to import

        self._ollama = ollama
        self._httpx = httpx
        self.host = host()
        timeout = timeout or float(env_int("MEMORY_EXTRACT_TIMEOUT"))
        self._client = ollama.Client(host=self.host, timeout=timeout)
        self.model = model or env("MEMORY_OLLAMA_MODEL") or self._pick_model(probe_timeout)

    def _pick_model(self, probe_timeout: float) -> str:
        """The model to use when none is configured; raises Unavailable when the server is not there."""
        probe = self._ollama.Client(host=self.host, timeout=probe_timeout)
        try:
            names = [m.model for m in probe.list().models if m.model]
        except (ConnectionError, OSError, self._httpx.HTTPError, self._ollama.ResponseError) as exc:
            raise Unavailable(f"no Ollama server at {self.host}: {exc}") from exc
        chat = [n for n in names if not any(h in n.lower() for h in _EMBEDDING_HINTS)]
        for wanted in PREFERRED:
            for n in chat:
                if n == wanted or n == f"{wanted}:latest" or (":" not in wanted and n.startswith(wanted + ":")):
                    return n
        if not chat:
            raise Unavailable(f"Ollama at {self.host} has no chat model (run `ollama pull qwen2.5:3b`)")
        return chat[0]

    def call(self, user_text: str) -> tuple[dict[str, Any], int, int]:
        o = self._ollama
        try:
            resp = self._client.chat(
                model=self.model,
                messages=[{"role": "system", "content": SYSTEM + "\nAnswer with one JSON object only."},
                          {"role": "user", "content": user_text}],
                format=SCHEMA,
                options={"temperature": 0.2, "num_predict": env_int("MEMORY_EXTRACT_MAX_OUTPUT_TOKENS"),
                         "num_ctx": 16384},
                stream=False,
            )
        except self._httpx.TimeoutException as exc:
            raise ProviderError(f"ollama timed out: {exc}", retryable=True) from exc
        except (ConnectionError, self._httpx.TransportError) as exc:
            raise ProviderError(f"ollama unreachable at {self.host}: {exc}", retryable=True) from exc
        except o.ResponseError as exc:
            status = int(getattr(exc, "status_code", -1) or -1)
            # 404: the model is not pulled; other 4xx: the request is wrong. Neither passes on a retry.
            retryable = status >= 500 or status in (-1, 408, 429)
            raise ProviderError(f"ollama HTTP {status}: {str(exc)[:300]}", retryable=retryable) from exc
        tin = int(getattr(resp, "prompt_eval_count", 0) or 0)
        tout = int(getattr(resp, "eval_count", 0) or 0)
        content = getattr(getattr(resp, "message", None), "content", "") or ""
        try:
            answer = json.loads(content)
        except ValueError:
            answer = find_json(content)
        if not isinstance(answer, dict):
            raise ProviderError("ollama answered without the structured learnings", retryable=False, off_format=True,
                                input_tokens=tin, output_tokens=tout)
        return answer, tin, tout
