"""``structbench view`` in headless Chromium while ``structbench run`` fills a run directory from a slow loopback
model: the count of finished samples rises on the page without a reload, a prompt holding ``<script>`` shows as
text, the finished run shows its metrics and report, and nothing is written into any run directory by the view."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chromium import chromium
from faults import child_pythonpath, serve
from view.conftest import make_run

HOSTILE = "<script>window.__pwned = 1</script><b>bold?</b>"
Listing = dict[str, tuple[int, int]]


def listing(root: Path) -> Listing:
    """Every file and folder under ``root``: its modification time and size."""
    return {str(p.relative_to(root)): (p.stat().st_mtime_ns, p.stat().st_size) for p in sorted(root.rglob("*"))}


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    with chromium(console=True) as browser:
        yield browser


def start(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=child_pythonpath(), STRUCTBENCH_PLUGINS="toybench",
               STRUCTBENCH_CACHE=str(tmp_path / "cache"))
    return subprocess.Popen([sys.executable, "-m", "structbench", *args], cwd=tmp_path, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def stop(proc: subprocess.Popen[str]) -> str:
    if proc.poll() is None:
        proc.terminate()
    _, err = proc.communicate(timeout=60)
    return err


def row(driver: Any, run_id: str) -> Any:
    from selenium.webdriver.common.by import By

    found = driver.find_elements(By.CSS_SELECTOR, f'tr.sv-run-row[data-run="{run_id}"]')
    return found[0] if found else None


def wait(predicate: Any, timeout: float, what: str) -> Any:
    """``predicate()`` once it is true; a row the page re-rendered between finding it and reading it (stale) is
    looked for again."""
    from selenium.common.exceptions import StaleElementReferenceException

    deadline = time.monotonic() + timeout
    while True:
        try:
            value = predicate()
        except StaleElementReferenceException:
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def test_a_run_is_followed_live_escaped_and_left_untouched(driver: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    runs = tmp_path / "runs"
    make_run(runs, "earlier", limit=20)
    before = listing(runs / "earlier")
    view = start(tmp_path, "view", "runs")
    try:
        assert view.stdout is not None
        line = view.stdout.readline()
        assert line.startswith("structbench view: http://127.0.0.1:"), line + stop(view)
        url = line.split()[2]
        with serve(tmp_path, "--latency", "0.5", "--reply", "yes") as model:
            run = start(tmp_path, "run", "-m", "openai:m", "--base-url", model.url, "-b", "toy:big", "-n", "60",
                        "--concurrency", "2", "--no-progress", "--system-prompt", HOSTILE, "--out", "runs/live")
            try:
                driver.get(url)
                driver.execute_script("window.__sameDocument = 42;")
                first = wait(lambda: (r := row(driver, "live")) is not None and r.get_attribute("data-status") ==
                             "running" and int(r.get_attribute("data-done")) > 0 and r, 120, "the running run")
                done = int(first.get_attribute("data-done"))
                assert int(first.get_attribute("data-total")) == 60
                rose = wait(lambda: (r := row(driver, "live")) is not None and
                            done < int(r.get_attribute("data-done")) and int(r.get_attribute("data-done")),
                            10, "the finished count to rise")
                assert rose > done  # two looks, a second apart, the same page
                assert driver.execute_script("return window.__sameDocument") == 42  # not reloaded

                row(driver, "live").click()
                sample = wait(lambda: driver.find_elements(By.CSS_SELECTOR, "#sv-sample-rows tr.sb-row"), 10,
                              "the samples of the run")
                sample[0].click()
                detail = wait(lambda: (d := driver.find_elements(By.CSS_SELECTOR, "#sv-sample-rows tr.sb-detail"))
                              and "prompt" in d[0].text and d[0].text, 10, "a sample's detail")
                assert HOSTILE in detail  # the markup shows as text
                assert driver.execute_script("return window.__pwned === undefined")
                assert not driver.find_elements(By.CSS_SELECTOR, "#sv-sample-rows b")
                assert run.wait(timeout=120) == 0, stop(run)
            finally:
                stop(run)
        metrics = json.loads((runs / "live" / "metrics.json").read_text())["results"][0]
        wait(lambda: row(driver, "live").get_attribute("data-status") == "done", 15, "the run to show as done")
        finished = row(driver, "live")
        assert finished.get_attribute("data-done") == finished.get_attribute("data-total") == "60"
        value = wait(lambda: (v := driver.find_elements(By.CSS_SELECTOR, "#sv-entry-rows td.sv-value")) and v[0].text,
                     10, "the run's result")
        assert value == f"{metrics['headline']['value']:.3f}"
        assert "metrics.json" in driver.find_element(By.ID, "sv-live-note").text
        frame = wait(lambda: (f := driver.find_element(By.ID, "sv-report")).is_displayed() and f, 15, "the report")
        driver.switch_to.frame(frame)
        wait(lambda: "structbench report" in driver.find_element(By.TAG_NAME, "body").text, 60, "the report's text")
        driver.switch_to.default_content()
        assert driver.execute_script("return window.__sameDocument") == 42

        after_run = listing(runs / "live")
        time.sleep(3)  # the page keeps asking meanwhile
        assert listing(runs / "live") == after_run
        assert listing(runs / "earlier") == before
        assert sorted(p.name for p in runs.iterdir()) == ["earlier", "live"]
        assert [e for e in driver.get_log("browser") if e["level"] == "SEVERE"] == []
    finally:
        err = stop(view)
    assert "Traceback" not in err, err
