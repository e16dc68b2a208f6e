"""Breakdown tables: which metric a group shows."""

from __future__ import annotations

from pathlib import Path

from structbench.report.entries import EntryView
from structbench.report.tables import breakdown_pivot
from structbench.runfiles.results import Group, Headline, ResultEntry
from structbench.runfiles.rundir import entry_key, held_entry


def _view(breakdowns: dict[str, dict[str, Group]]) -> EntryView:
    result = ResultEntry(
        benchmark="b",
        variant="v",
        strategy="s",
        model="m",
        headline=Headline(name="f1", value=0.5),
        metrics={"f1": 0.5, "rejection_rate": 0.25, "other": 1.0},
        n=8,
        breakdowns=breakdowns,
    )
    return EntryView(result=result, records=held_entry(entry_key(result)), label="m", run=Path("."), interval=None,
                     bench=None)


def test_groups_without_the_headline_show_the_first_metric_they_have() -> None:
    view = _view(
        {
            "mixed": {"a": Group(n=2, metrics={"f1": 0.75}), "b": Group(n=2, metrics={"rejection_rate": 0.5})},
            "rejection": {"kg": Group(n=3, metrics={"other": 0.1, "rejection_rate": 0.5})},
        }
    )
    mixed = breakdown_pivot([view], "mixed")
    assert mixed is not None and mixed.caption == "f1 by mixed"  # the headline where some group has it
    assert mixed.rows == [["m", "s", "0.7500", "–"]]
    rejection = breakdown_pivot([view], "rejection")
    assert rejection is not None and rejection.caption == "rejection_rate by rejection"  # the entry's order
    assert rejection.rows == [["m", "s", "0.5000"]]
