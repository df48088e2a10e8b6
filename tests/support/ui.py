"""The web viewer under test: `memory ui` as a real process, and Debian's headless Chromium driven by Selenium
through chromium-driver (nothing downloaded: both are apt packages that scripts/test installs)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
DRIVER = "/usr/bin/chromedriver"
ARTIFACTS = Path(os.environ.get("MEMORY_TEST_ARTIFACTS", ROOT / "tmp" / "artifacts")) / "ui"


class Server:
    def __init__(self, proc: subprocess.Popen[str], url: str) -> None:
        self.proc, self.url = proc, url
        m = re.match(r"http://127\.0\.0\.1:(\d+)/\?token=(\S+)$", url)
        assert m, url
        self.port, self.token = int(m[1]), m[2]
        self.base = f"http://127.0.0.1:{self.port}"


@contextmanager
def running_ui(project: Path, *extra: str, env: dict[str, str] | None = None) -> Iterator[Server]:
    """`memory ui --no-browser` on a free port; its first stdout line is the URL."""
    proc = subprocess.Popen([sys.executable, "-m", "memory", "ui", "--no-browser", "-p", str(project), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env={**os.environ, **(env or {})})
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        if not line:
            raise AssertionError(f"memory ui printed no URL: {proc.stderr.read() if proc.stderr else ''}")
        yield Server(proc, line)
    finally:
        proc.send_signal(signal.SIGINT)  # as Ctrl-C
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def browser_missing() -> str | None:
    for path in (CHROMIUM, DRIVER):
        if not shutil.which(path):
            return f"{path} is not installed (apt-get install chromium chromium-driver; scripts/test does as root)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[dev]')"
    return None


def need_browser() -> None:
    """Skip without the browser, with the reason; on CI (CI=true) fail instead: there it must run."""
    why = browser_missing()
    if why and os.environ.get("CI"):
        pytest.fail(f"the viewer's browser tests must run on CI: {why}")
    if why:
        pytest.skip(why)


def chromium(width: int = 1280, height: int = 900) -> Any:
    """Headless Chromium from Debian through its chromedriver: no Selenium Manager, no download."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={width},{height}", "--no-first-run", "--disable-extensions",
                "--disable-background-networking", "--disable-sync", "--disable-component-update"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(executable_path=DRIVER), options=options)


def screenshot(driver: Any, name: str) -> Path:
    """A PNG of the whole page under ARTIFACTS (the window grown to the page's height first)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    # + the window's own chrome, so the whole page is in the viewport
    driver.set_window_size(driver.get_window_size()["width"], min(max(int(height) + 160, 400), 4000))
    path = ARTIFACTS / f"{name}.png"
    driver.save_screenshot(str(path))
    return path


def wait_for(check: Any, timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got or time.monotonic() > deadline:
            return got
        time.sleep(0.05)
