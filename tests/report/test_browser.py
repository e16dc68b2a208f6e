"""The HTML report in headless Chromium: no console errors, and the per-sample browser filters correctly.

Headless Chromium as ``tests/chromium.py`` starts it (the system's; skips without it, unless CI).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from chromium import chromium
from patience import patience
from structbench.backends.mock import MockBackend
from structbench.report.api import ReportOptions, write_report
from structbench.report.entries import StatsOptions

EVIL = "no </script><script>window.__pwned = 1</script><!-- pwned"
PAGE = 200


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    with chromium(console=True) as browser:
        yield browser


@pytest.fixture(scope="module")
def page(
    toy_runs: tuple[Path, Path], run_factory: Callable[..., Path], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, list[dict[str, Any]]]:
    """A report over two models x three benchmark variants, plus a run whose outputs try to break out."""
    root = tmp_path_factory.mktemp("browser")
    evil = run_factory(root, "evil", accuracy=0.0, strategies=("direct",), backend=MockBackend(default=EVIL))
    runs = [*toy_runs, evil]
    out = root / "report.html"
    write_report(runs, out, ReportOptions(stats=StatsOptions(resamples=50)))
    records = [json.loads(line) for run in runs for line in (run / "samples.jsonl").read_text().splitlines()]
    return out, records


def test_report_renders_without_errors_and_filters(driver: Any, page: tuple[Path, list[dict[str, Any]]]) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select, WebDriverWait

    path, records = page
    driver.get(path.as_uri())
    count = driver.find_element(By.ID, "sb-count")
    search = driver.find_element(By.ID, "sb-search")

    def shown() -> tuple[int, int]:
        rows = driver.find_elements(By.CSS_SELECTOR, "#sb-rows tr.sb-row")
        return int(count.get_attribute("data-count")), len(rows)

    def expect(keep: Callable[[dict[str, Any]], bool]) -> None:
        n = sum(map(keep, records))
        WebDriverWait(driver, patience(5)).until(lambda _: shown()[0] == n)
        assert shown() == (n, min(n, PAGE))

    def choose(select_id: str, value: str) -> None:
        Select(driver.find_element(By.ID, select_id)).select_by_value(value)

    def correct(r: dict[str, Any]) -> bool:
        return r["error"] is None and r["score"] >= 1

    WebDriverWait(driver, patience(10)).until(lambda _: count.get_attribute("data-count") != "0")
    severe = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert severe == []
    assert driver.execute_script("return window.__pwned === undefined")
    assert len(driver.find_elements(By.CSS_SELECTOR, "figure.plot svg")) >= 4
    assert len(records) > PAGE
    expect(lambda r: True)

    choose("sb-benchmark", "toylabels")
    expect(lambda r: r["benchmark"] == "toylabels")
    choose("sb-outcome", "correct")
    expect(lambda r: r["benchmark"] == "toylabels" and correct(r))
    choose("sb-task", "red")
    expect(lambda r: r["benchmark"] == "toylabels" and correct(r) and r["task"] == "red")
    choose("sb-model", "strong")
    expect(lambda r: r["benchmark"] == "toylabels" and correct(r) and r["task"] == "red" and r["model"] == "strong")
    for select_id in ("sb-benchmark", "sb-outcome", "sb-task", "sb-model"):
        choose(select_id, "")
    expect(lambda r: True)
    choose("sb-outcome", "wrong")
    expect(lambda r: not correct(r) and r["error"] is None and r["score"] <= 0)
    choose("sb-outcome", "")

    search.send_keys("pwned")
    expect(lambda r: "pwned" in r["output"])
    assert shown()[0] == 40  # the evil run: toy small, one strategy
    search.send_keys(Keys.CONTROL, "a", Keys.DELETE)
    search.send_keys("TOY-13")  # case-insensitive; matches ids toy-13 and toy-130 ... toy-139
    expect(lambda r: "toy-13" in r["id"])
    search.send_keys(Keys.CONTROL, "a", Keys.DELETE)
    expect(lambda r: True)

    driver.find_element(By.ID, "sb-more").click()
    assert shown()[1] == min(len(records), 2 * PAGE)

    # A row opens its details; a hostile output shows as text, not markup.
    search.send_keys("pwned")
    expect(lambda r: "pwned" in r["output"])
    driver.find_element(By.CSS_SELECTOR, "#sb-rows tr.sb-row").click()
    detail = driver.find_element(By.CSS_SELECTOR, "#sb-rows tr.sb-detail").text
    assert "Does the number" in detail and "</script><script>window.__pwned = 1</script>" in detail
    assert driver.execute_script("return window.__pwned === undefined")
    assert [e for e in driver.get_log("browser") if e["level"] == "SEVERE"] == []


def test_a_thought_shows_folded_and_a_cut_off_sample_says_so(driver: Any, thinking_run: Path,
                                                             tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    out = tmp_path / "report.html"
    write_report([thinking_run], out, ReportOptions(stats=StatsOptions(resamples=50)))
    records = [json.loads(line) for line in (thinking_run / "samples.jsonl").read_text().splitlines()]
    cut = next(r for r in records if r["reasoning_cut_off"])
    answered = next(r for r in records if not r["reasoning_cut_off"])
    driver.get(out.as_uri())
    count = driver.find_element(By.ID, "sb-count")
    WebDriverWait(driver, patience(10)).until(lambda _: count.get_attribute("data-count") == str(len(records)))
    search = driver.find_element(By.ID, "sb-search")
    for record, says in ((answered, "model's thought"), (cut, "cut off, the reply ran out of tokens")):
        search.clear()
        search.send_keys(record["id"])
        WebDriverWait(driver, patience(5)).until(lambda _, r=record: count.get_attribute("data-count") == str(
            sum(r["id"] in x["id"] for x in records)))
        row = next(tr for tr in driver.find_elements(By.CSS_SELECTOR, "#sb-rows tr.sb-row")
                   if tr.find_elements(By.TAG_NAME, "td")[3].text == record["id"])
        if record is cut:
            assert "(none: cut off in thought)" in row.text
        row.click()
        thought = driver.find_element(By.CSS_SELECTOR, "#sb-rows tr.sb-detail details.sb-thought")
        assert thought.get_attribute("open") is None  # folded
        assert says in thought.find_element(By.TAG_NAME, "summary").text
        thought.find_element(By.TAG_NAME, "summary").click()
        assert record["reasoning"] in thought.find_element(By.TAG_NAME, "pre").text
        row.click()  # closes the detail row again
    assert [e for e in driver.get_log("browser") if e["level"] == "SEVERE"] == []


def test_the_sample_table_fits_the_page_whatever_its_cells_hold(driver: Any,
                                                                page: tuple[Path, list[dict[str, Any]]]) -> None:
    """At 1400 px a row of long model names, ids and answers needed horizontal scrolling (each cell up to 22rem):
    the table now takes the page's width and cuts each cell (its whole text in the row's details and tooltip)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    path, _ = page
    driver.set_window_size(1400, 1000)
    try:
        driver.get(path.as_uri())
        count = driver.find_element(By.ID, "sb-count")
        WebDriverWait(driver, patience(10)).until(lambda _: count.get_attribute("data-count") != "0")
        widths = driver.execute_script(
            "var row = document.querySelector('#sb-rows tr.sb-row');"
            "row.querySelectorAll('td').forEach(function (td) {"
            "  td.textContent = 'openai:Qwen/Qwen2.5-72B '.repeat(20); });"
            "var table = document.querySelector('.sb-table');"
            "return [table.scrollWidth, table.parentElement.clientWidth, document.documentElement.scrollWidth,"
            "        window.innerWidth];")
        table, room, page_width, window = widths
        assert table <= room and page_width <= window, widths
    finally:
        driver.set_window_size(1280, 1600)
