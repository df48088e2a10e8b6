"""The privacy filter runs in time linear in its input: every pattern, and `clean` as a whole, fed adversarial
texts of 10 KB (runs of one or two characters after each rule's triggers, and the same piece repeated) stays
within a CPU bound, and its cost grows like the input (4x the text: well under 16x, what a quadratic pays).

A catastrophic pattern once cost `clean("token=abcdefghijklmnopqrstuvwxy1")` 2.2 CPU-s, doubling per letter.
"""

from __future__ import annotations

import gc
import re
import time
from collections.abc import Callable, Iterator

import pytest

from memory.base import privacy

SIZE = 10_000
# Characters and pairs that many patterns take in runs (letters, digits, separators, quotes, blanks, base64).
PUMPS = ("a", "A", "1", "_", "-", ".", "/", ":", "=", " ", "\t", "\n", '"', "'", "\\", "@", "+", "aB", "a_", "a-",
         "a.", "a ", "a1", "1a", "A_", "\\n", "a=", "aA1")
PER_TEXT_CPU = 0.25  # seconds for one 10 KB text: a linear pattern takes ~1-30 ms here, an exponential one forever
GROWTH = 10.0  # cost(4n) / cost(n): ~4 for a linear pattern, ~16 for a quadratic one


def _triggers() -> dict[str, list[str]]:
    by_source: dict[str, set[str]] = {}
    for _kind, triggers, source, *_ in privacy._SECRETS:
        by_source.setdefault(source, set()).update(triggers)
    return {s: sorted(t)[:4] for s, t in by_source.items()}


def adversarial(trigger: str, size: int) -> Iterator[str]:
    """Texts of about `size` characters: the trigger, then a run of one piece ending in a character that fails
    (the shape of exponential backtracking), and trigger-and-piece repeated (many starts, each scanning on)."""
    for pump in PUMPS:
        run = pump * (size // len(pump))
        yield trigger + "=" + run + "!"
        yield trigger + run + "\x00"
        yield trigger + " " + run
        unit = trigger + pump * 3 + " "
        yield unit * (size // len(unit))


def _cost(work: Callable[[str], object], texts: list[str]) -> tuple[float, float, str]:
    """(total CPU, the worst text's CPU, the worst text's start)."""
    total, worst, which = 0.0, 0.0, ""
    gc.collect()  # a collection of an earlier test's garbage is not this pattern's cost
    gc.disable()
    try:
        for text in texts:
            start = time.process_time()
            work(text)
            spent = time.process_time() - start
            total += spent
            if spent > worst:
                worst, which = spent, text[:40]
    finally:
        gc.enable()
    return total, worst, which


def _check(work: Callable[[str], object], triggers: list[str], name: str) -> None:
    # short texts first: an exponential pattern fails on them in about a second instead of never finishing
    for size in (16, 20, 24):
        _, worst, which = _cost(work, [t for trig in triggers for t in adversarial(trig, size)])
        assert worst <= PER_TEXT_CPU, f"{name}: {worst:.3f} CPU-s on {which!r}..."
    small = [t for trig in triggers for t in adversarial(trig, SIZE // 4)]
    large = [t for trig in triggers for t in adversarial(trig, SIZE)]
    _cost(work, small[:8])  # warm up (compiling)
    small_total, _, _ = _cost(work, small)
    large_total, worst, which = _cost(work, large)
    assert worst <= PER_TEXT_CPU, f"{name}: {worst:.3f} CPU-s on {which!r}..."
    # the absolute slack keeps a pattern too cheap to measure from failing on noise
    assert large_total <= GROWTH * small_total + 0.05, f"{name}: {small_total:.3f} -> {large_total:.3f} CPU-s"


def _finditer(pattern: re.Pattern[str]) -> Callable[[str], object]:
    def work(text: str) -> object:
        # as _sub uses it (every match), and as the value checks use it (fullmatch, match at the start)
        return list(pattern.finditer(text)), pattern.fullmatch(text), pattern.match(text)

    return work


@pytest.mark.parametrize(("source", "flags"), privacy.patterns(), ids=lambda x: str(x)[:40] if isinstance(x, str)
                         else str(x))
def test_every_pattern_runs_in_linear_time_on_adversarial_input(source: str, flags: int) -> None:
    pattern = re.compile(source, flags)
    _check(_finditer(pattern), [*_triggers().get(source, []), ""], source[:60])


def test_the_whole_filter_runs_in_linear_time_on_adversarial_input() -> None:
    triggers = list(privacy._ALL_TRIGGERS)
    # every trigger before a run (a stride keeps the number of texts small), and all of them mixed in one text
    sample = triggers[::7] + ["token", "key", "password", "auth", "secret", "private"]
    _check(privacy.clean, sample, "clean")
    for pump in PUMPS:
        mixed = "".join(f"{t}={pump * 8} " for t in triggers)
        text = (mixed * (SIZE // len(mixed) + 1))[:SIZE]
        start = time.process_time()
        privacy.clean(text)
        assert time.process_time() - start <= PER_TEXT_CPU * 4, pump


@pytest.mark.parametrize("letters", [20, 25, 28])
def test_the_joined_words_check_that_backtracked_exponentially_is_linear(letters: int) -> None:
    value = "abcdefghijklmnopqrstuvwxyz" * (letters // 26 + 1)
    text = f"token={value[:letters]}1"
    start = time.process_time()
    out = privacy.clean(text)
    assert time.process_time() - start <= PER_TEXT_CPU
    assert out.startswith("token=")
