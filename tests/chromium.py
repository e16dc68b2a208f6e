"""Headless Chromium for the tests that open a page (the report, ``inspect view``, ``structbench view``).

The system Chromium and chromedriver (Debian ``chromium``, ``chromium-driver``; ``.ci/run`` installs them) through
selenium; nothing is downloaded. Without them the test skips, unless ``STRUCTBENCH_REQUIRE_SHARED=1`` (CI).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest


def need(what: str) -> None:
    """Skip for want of ``what``; fail in CI, where everything must be there."""
    if os.environ.get("STRUCTBENCH_REQUIRE_SHARED") == "1":
        pytest.fail(f"{what} is required (STRUCTBENCH_REQUIRE_SHARED=1) but missing")
    pytest.skip(f"{what} not available")


@contextmanager
def chromium(window: str = "1280,1600", *, console: bool = False) -> Iterator[Any]:
    """A selenium driver of headless Chromium with a profile of its own (removed after); ``console`` keeps the
    browser's console log (``driver.get_log("browser")``)."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    chromedriver = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    if path is None or not os.path.exists(chromedriver):
        need("chromium and chromium-driver")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        need("selenium")
    options = webdriver.ChromeOptions()
    options.binary_location = str(path)
    profile = tempfile.mkdtemp(prefix="structbench-chromium-")
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
                 f"--window-size={window}"):
        options.add_argument(flag)
    if console:
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=chromedriver), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
