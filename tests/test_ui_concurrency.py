"""The viewer answers other requests while a search waits on a worker: a real `memory ui` process, and a
worker socket that accepts a search and does not answer (a busy or starting worker, which the viewer waits
up to 2 s for)."""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from memory.base import worker_client
from tests.support.ui import ROOT, Server, running_ui


def _get(s: Server, path: str) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=30)
    conn.request("GET", path, headers={"Host": f"127.0.0.1:{s.port}", "Cookie": f"memory_ui_{s.port}={s.token}"})
    response = conn.getresponse()
    return response.status, response.read().decode()


class SilentWorker:
    """Listens on the worker's socket, takes each request and never answers until stopped."""

    def __init__(self, home: Path) -> None:
        self.path = worker_client.socket_path(str(home))
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(self.path)
        self.sock.listen(8)
        self.asked = threading.Event()
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(conn)
            self.asked.set()

    def stop(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()
        os.unlink(self.path)


def test_a_waiting_search_holds_up_no_other_request(home: Path, project: Path) -> None:
    saved = subprocess.run([sys.executable, "-m", "memory", "save", "-p", str(project), "--type", "decision",
                            "The viewer serves pages from a threadpool"], capture_output=True, text=True,
                           cwd=ROOT, timeout=60)
    assert saved.returncode == 0, saved.stderr
    worker = SilentWorker(home)
    try:
        with running_ui(project, env={"MEMORY_WORKER": "on"}) as s:
            slow: dict[str, object] = {}

            def search() -> None:
                t0 = time.monotonic()
                slow["status"], slow["page"] = _get(s, "/?q=threadpool&mode=hybrid")
                slow["took"] = time.monotonic() - t0

            searching = threading.Thread(target=search)
            searching.start()
            assert worker.asked.wait(20), "the hybrid search never asked the worker"
            for path in ("/static/ui.css", "/sessions", "/?q=threadpool&mode=keyword"):
                status, page = _get(s, path)
                assert status == 200, (path, page[:200])
                # answered while the search still waits on the silent worker (it gives up after 2 s): an
                # ordering, not a wall-clock bound, so a loaded machine cannot fail it
                assert searching.is_alive(), path
            assert "The viewer serves pages" in page  # the keyword search ran beside the waiting one
            searching.join(30)
            assert slow["status"] == 200 and "The viewer serves pages" in str(slow["page"])  # keyword fallback
            assert float(slow["took"]) >= 1.5  # type: ignore[arg-type]
    finally:
        worker.stop()
