"""memory/fastpath/jsonlite.py gives the json package's answers (it replaces it on the hook hot path), with the
fast path on or off: its own functions are tested whatever MEMORY_FASTPATH says."""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from memory.fastpath import jsonlite


def _value(rng: random.Random, depth: int = 0) -> object:
    kinds = ["str", "int", "float", "bool", "none"] + (["list", "dict", "tuple"] * 2 if depth < 4 else [])
    kind = rng.choice(kinds)
    if kind == "str":
        return "".join(rng.choice(["a", "é", "\n", '"', "\\", "\x00", "\u2028", "😀", "<", " ", "\ud800"])
                       for _ in range(rng.randint(0, 8)))
    if kind == "int":
        return rng.choice([0, -1, 7, 2**70, -(2**64)])
    if kind == "float":
        return rng.choice([0.0, -0.0, 1.5, 1e300, 1e-300, 0.1, math.inf, -math.inf, math.nan, 12345678.9])
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "none":
        return None
    if kind in ("list", "tuple"):
        items = [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
        return items if kind == "list" else tuple(items)
    return {str(_value(rng, 4)): _value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def test_dumps_matches_json_for_random_values() -> None:
    rng = random.Random(11)
    for _ in range(5000):
        value = _value(rng)
        for ensure_ascii in (True, False):
            assert jsonlite.fast_dumps(value, ensure_ascii=ensure_ascii) == json.dumps(value, ensure_ascii=ensure_ascii)
            assert jsonlite.fast_dumps(value, ensure_ascii=ensure_ascii, indent=2) == \
                json.dumps(value, ensure_ascii=ensure_ascii, indent=2)


def test_loads_matches_json_for_random_documents() -> None:
    rng = random.Random(12)
    for _ in range(5000):
        text = json.dumps(_value(rng), indent=rng.choice([None, 1]))
        text = rng.choice(["", " ", "\n\t"]) + text + rng.choice(["", " ", "\r\n"])
        got, want = jsonlite.fast_loads(text), json.loads(text)
        assert json.dumps(got) == json.dumps(want)  # NaN != NaN: compare the re-encoded form


@pytest.mark.parametrize("text", ["", " ", "{", "[1,]", "{} x", "\ufeff{}", "nul", '"\x01"', "{'a': 1}",
                                  "[1] [2]", "01", "1.", "NaN x"])
def test_bad_documents_fail_as_json_fails(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as want:
        json.loads(text)
    with pytest.raises(json.JSONDecodeError) as got:
        jsonlite.fast_loads(text)
    assert str(got.value) == str(want.value)


def test_what_json_rejects_or_converts_goes_through_json() -> None:
    assert jsonlite.fast_dumps({1: "a", None: 2, 1.5: True}) == json.dumps({1: "a", None: 2, 1.5: True})
    assert jsonlite.fast_dumps({1: [1]}, indent=2) == json.dumps({1: [1]}, indent=2)
    for bad in ({"a": {1, 2}}, {"a": object()}, {b"k": 1}):
        with pytest.raises(TypeError) as want:
            json.dumps(bad)
        with pytest.raises(TypeError) as got:
            jsonlite.fast_dumps(bad)
        assert str(got.value) == str(want.value)
    loop: list[object] = []
    loop.append(loop)
    for indent in (None, 2):
        with pytest.raises(ValueError, match="Circular"):
            jsonlite.fast_dumps(loop, indent=indent)


def test_bad_documents_fail_as_json_fails_in_a_process_without_json() -> None:
    # The hook process has not imported the json package when it decodes: the error path must work there.
    root = Path(__file__).resolve().parents[1]
    code = ("from memory.fastpath import jsonlite\n"
            "for text in ['{broken', '[1,]', '', '{} x', '\\ufeff{}', '\"\\x01\"']:\n"
            "    try:\n        jsonlite.fast_loads(text)\n    except ValueError as exc:\n"
            "        print(type(exc).__name__, exc)\n")
    env = {**os.environ, "PYTHONPATH": str(root)}  # -S: no site, so not the venv's editable install either
    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, check=True, env=env)
    want = []
    for text in ["{broken", "[1,]", "", "{} x", "\ufeff{}", '"\x01"']:
        try:
            json.loads(text)
        except ValueError as exc:
            want.append(f"{type(exc).__name__} {exc}")
    assert out.stdout.splitlines() == want
