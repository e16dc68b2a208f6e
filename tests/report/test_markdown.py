"""``report.markdown``: the Markdown report and the summary of a run whose names are hostile render as text, with
only the report's own headings, tables and figures (markdown-it, which passes HTML through as mkdocs-like renderers
do)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hostile import checked_markdown, hostile_run
from structbench.report.api import markdown_report
from structbench.report.markdown import render
from structbench.runfiles.results import read_metrics


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return hostile_run(tmp_path_factory.mktemp("hostile"))


def test_the_markdown_report_shows_hostile_names_as_text(hostile: Path) -> None:
    markdown = markdown_report([hostile])
    assert "\r" not in markdown and "\u2028" not in markdown
    checked_markdown(markdown)


def test_the_summary_shows_hostile_names_as_text(hostile: Path) -> None:
    metrics = read_metrics(hostile / "metrics.json")
    assert metrics.results[0].n == 6  # the run scored its samples
    checked_markdown(render(metrics))
