"""Claude (Haiku by default) through the official `anthropic` client: one Messages call whose answer is a
forced tool call, so the learnings come back as structured JSON rather than prose to be parsed.

The client reads ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) and ANTHROPIC_BASE_URL itself. Its own
retries are turned off: retries, backoff and the fallback to the next provider are decided in one place
(memory/learn/run.py), where the spend of every attempt is also recorded.
"""

from __future__ import annotations

import os
from typing import Any

from memory.base.config import env, env_int
from memory.learn import ProviderError, Unavailable
from memory.learn.prompt import SYSTEM, TOOL, TOOL_NAME, find_json

NAME = "anthropic"


def configured() -> bool:
    return bool(os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN"))


def _retry_after(exc: Any) -> float | None:
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return float(value) if value else None
    except ValueError:
        return None


class AnthropicProvider:
    name = NAME
    paid = True

    def __init__(self, model: str | None = None, timeout: float | None = None) -> None:
        if not configured():
            raise Unavailable("ANTHROPIC_API_KEY is not set")
        import anthropic  # lazily: importing it costs ~1.5 s, only the worker and the CLI pay it

        self._anthropic = anthropic
        self.model = model or env("MEMORY_ANTHROPIC_MODEL")
        self.max_output = env_int("MEMORY_EXTRACT_MAX_OUTPUT_TOKENS")
        self._client = anthropic.Anthropic(timeout=timeout or float(env_int("MEMORY_EXTRACT_TIMEOUT")),
                                           max_retries=0)

    def call(self, user_text: str) -> tuple[dict[str, Any], int, int]:
        """(structured answer, input tokens, output tokens). Raises ProviderError."""
        a = self._anthropic
        try:
            msg = self._client.messages.create(
                model=self.model,
                max_tokens=self.max_output,
                system=SYSTEM,
                tools=[TOOL],
                tool_choice={"type": "tool", "name": TOOL_NAME},
                messages=[{"role": "user", "content": user_text}],
            )
        except a.APITimeoutError as exc:
            raise ProviderError(f"anthropic timed out: {exc}", retryable=True) from exc
        except a.APIConnectionError as exc:
            raise ProviderError(f"anthropic unreachable: {exc}", retryable=True) from exc
        except a.RateLimitError as exc:
            raise ProviderError(f"anthropic rate limit (429): {exc}", retryable=True,
                                retry_after=_retry_after(exc)) from exc
        except a.APIStatusError as exc:
            status = getattr(exc, "status_code", 0) or 0
            # 5xx and 529 (overloaded) pass; 4xx (bad key, unknown model, bad request) will not.
            retryable = status >= 500 or status in (408, 409)
            raise ProviderError(f"anthropic HTTP {status}: {str(exc)[:300]}", retryable=retryable,
                                retry_after=_retry_after(exc)) from exc
        usage = getattr(msg, "usage", None)
        tin = int(getattr(usage, "input_tokens", 0) or 0)
        tout = int(getattr(usage, "output_tokens", 0) or 0)
        answer: dict[str, Any] | None = None
        texts: list[str] = []
        for block in msg.content or []:
            kind = getattr(block, "type", "")
            if kind == "tool_use" and getattr(block, "name", "") == TOOL_NAME and isinstance(block.input, dict):
                answer = block.input
                break
            if kind == "text":
                texts.append(getattr(block, "text", ""))
        if answer is None:  # a model or proxy that answered in text after all
            answer = find_json("\n".join(texts))
        if answer is None:
            raise ProviderError("anthropic answered without the structured learnings", retryable=False,
                                off_format=True, input_tokens=tin, output_tokens=tout)
        return answer, tin, tout
