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


def test_the_cut_off_note_tells_a_thought_never_closed_from_one_out_of_tokens() -> None:
    """Replies cut off at the budget want a larger --reasoning-budget; replies the model ended itself inside an
    unclosed thought (``replies_unclosed``) do not: their tags or template are wrong."""
    from structbench.report.markdown import cut_off_note
    from structbench.runfiles.results import Headline, ResultEntry

    def entry(cut: int, unclosed: int) -> ResultEntry:
        return ResultEntry(benchmark="scitab", variant="all", strategy="zero_shot", model="m",
                           headline=Headline(name="macro_f1", value=0.0), metrics={}, n=4, reasoning_cut_off=4,
                           replies_cut_off=cut, replies_unclosed=unclosed)

    budget = cut_off_note(entry(4, 0))
    assert budget is not None and "ran out of tokens" in budget and "--reasoning-budget N." in budget
    unclosed = cut_off_note(entry(4, 4))
    assert unclosed is not None and "ran out of tokens" not in unclosed
    assert "4 of the model's replies ended (finish_reason stop) inside a thought the model never closed" in unclosed
    assert "--reasoning-budget will not help" in unclosed and "--think-tags" in unclosed
    both = cut_off_note(entry(5, 3))
    assert both is not None and "3 of the model's replies ended" in both
    assert "2 more ran out of tokens inside the thought" in both
