"""The worker and its LanceDB process together (issue 27: under 300 MB while serving at 10,000 memories):
the model is not in memory while that process is up for the in-memory lists' build, the lists and the model
are freed before the flush that starts it when the worker goes light, and the process itself does not import
the REST client lancedb never calls for a local table."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memory.recall import embed
from memory.recall.embed import numpy_minilm
from memory.recall.search import Filters
from memory.recall.vector_host import REST_CLIENT, Host
from memory.store.workspace import Workspace
from memory.worker.index import ProjectIndex
from memory.worker.jobs import drain
from tests.test_vector_upkeep import fill

IMPORT = """
import json, sys
from memory.recall.vector_host import defer_rest_client
deferred = {defer} and defer_rest_client()
import lancedb
db = lancedb.connect(sys.argv[1])
t = db.create_table("t", data=[{{"id": i, "vector": [float(i), 1.0]}} for i in range(4)])
hits = t.search([3.0, 1.0]).metric("dot").limit(1).to_list()
rss = int([l for l in open("/proc/self/status") if l.startswith("VmRSS")][0].split()[1]) * 1024
apis = sorted(m for m in sys.modules if m.startswith("{rest}.api"))
import {rest} as client
print(json.dumps({{"deferred": deferred, "hit": hits[0]["id"], "rss": rss, "apis": apis,
                  "client": client.ApiClient.__name__}}))
"""


def imported(tmp_path: Path, defer: bool) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-c", IMPORT.format(defer=defer, rest=REST_CLIENT),
                          str(tmp_path / f"db-{defer}")], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1])
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_vector_process_imports_lancedb_without_its_rest_client(tmp_path: Path) -> None:
    lean, full = imported(tmp_path, True), imported(tmp_path, False)
    assert lean["deferred"] and lean["hit"] == full["hit"] == 3
    assert lean["apis"] == [] and full["apis"], (lean["apis"], full["apis"][:3])
    assert lean["client"] == full["client"] == "ApiClient"  # asked for, the package runs as before
    # Measured 2026-12-07: 20 MiB less (123 against 143 MiB with lancedb 0.40).
    assert full["rss"] - lean["rss"] > 8 << 20, (lean["rss"] >> 20, full["rss"] >> 20)


@pytest.fixture
def minilm() -> Any:
    if not numpy_minilm.available():
        pytest.skip("the packaged all-MiniLM-L6-v2 is not installed")
    return numpy_minilm.NumpyMiniLM()


def test_the_model_is_not_loaded_while_the_vector_process_reads_the_lists_out(
        home: Path, project: Path, minilm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = Workspace.for_dir(str(project), home=str(home))
    fill(ws, 40)
    first = ProjectIndex(str(home), ws.project.key, embed.Background(numpy_minilm.NumpyMiniLM()), Host())
    try:
        drain(first, lambda: True, lambda: None)  # indexed and staged
        assert first.waiting() == 40
    finally:
        first.vectors.inner.host.stop()
        first.close()
    assert not minilm.loaded  # a provider's name and dimension cost no weights
    host, seen = Host(), []
    real_call = host.call

    def call(op: str, *args: Any, **kw: Any) -> Any:
        seen.append((op, minilm.loaded))
        return real_call(op, *args, **kw)

    monkeypatch.setattr(host, "call", call)
    p = ProjectIndex(str(home), ws.project.key, embed.Background(minilm), host)
    p.warm_enabled = True
    try:
        p.warm_up(wait=True)
        assert p.warm is not None and p.warm.live == 40 and p.waiting() == 0  # the stage flushed by the build
        assert {op for op, _ in seen} >= {"upsert", "scan_open", "scan_next"}
        assert not [op for op, loaded in seen if loaded], seen  # never the model and the process at once
        assert host.pid is None and minilm.loaded  # stopped, then the model loaded for the searches
        calls = len(seen)
        hits = p.search("redis cache module", 5, Filters())
        assert hits and len(seen) == calls  # the lists answer: no call to the process
        p.drop_lists()  # the worker going light, before its flush
        minilm.unload()
        assert p.warm is None and not minilm.loaded
        assert p.search("redis cache module", 5, Filters()) and not p._warm_building  # no build again
    finally:
        host.stop()
        p.close()
