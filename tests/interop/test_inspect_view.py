"""A converted log opens in ``inspect view``: Inspect's own viewer, in headless Chromium, lists the logs and shows
a log's headline metrics and samples.

Headless Chromium as ``tests/chromium.py`` starts it (the system's; skips without it, unless CI).
"""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from extras import require_extra

require_extra("inspect_ai", "inspect")

from chromium import chromium  # noqa: E402
from faults import free_port  # noqa: E402
from interop_runs import sb  # noqa: E402
from patience import patience  # noqa: E402


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium("1400,1600") as driver:
        yield driver


@pytest.fixture
def viewer(oracle_run: Path, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """``inspect view`` over the converted logs of the oracle run; its URL and the log folder."""
    sb(tmp_path, "convert", str(oracle_run), "--to", "inspect", "--out", "logs")
    port = free_port()
    inspect = Path(sys.executable).with_name("inspect")
    proc = subprocess.Popen([str(inspect), "view", "--log-dir", str(tmp_path / "logs"), "--port", str(port),
                             "--display", "none"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + patience(60)
        while True:
            try:
                urllib.request.urlopen(url, timeout=2).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.3)
        yield url, tmp_path / "logs"
    finally:
        proc.terminate()
        proc.wait(timeout=patience(20))


def _text_with(browser: Any, wanted: list[str], timeout: float = 45) -> str:
    deadline = time.monotonic() + timeout
    while True:
        text = str(browser.find_element("tag name", "body").text)
        if all(w in text for w in wanted) or time.monotonic() > deadline:
            return text
        time.sleep(0.5)


@pytest.mark.shared
def test_inspect_view_lists_the_logs_and_shows_a_logs_samples(browser: Any, viewer: tuple[str, Path]) -> None:
    url, logs = viewer
    browser.get(url)
    text = _text_with(browser, ["scitab_all_pot", "structext_test_official_hint"])
    assert "scitab_all_pot" in text and "structext_test_official_hint" in text and "structbench/oracle" in text
    (cot,) = logs.glob("*_scitab-all-cot_*.eval")
    browser.get(f"{url}#/logs/{cot.name}")
    text = _text_with(browser, ["MACRO_F1", "068fc4e5-d40c-4788-a5a7-bad858cbd7c7"])
    assert "scitab_all_cot" in text and "MACRO_F1" in text and "scitab:all" in text
    assert "068fc4e5-d40c-4788-a5a7-bad858cbd7c7" in text and "Read the following table" in text
