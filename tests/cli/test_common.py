"""``cli.common``'s printing: on a terminal (rich) and elsewhere, what comes from a run reaches the terminal
without its escape sequences or rich markup."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from hostile import hostile_run, no_escapes
from structbench.cli.common import echo, print_markdown, print_results
from structbench.report.api import markdown_report
from structbench.runfiles.results import read_metrics


class Terminal(io.StringIO):
    """A stdout that says it is a terminal (rich then writes its styles, and would write a link's escapes)."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("tty", [True, False])
def test_what_a_run_names_is_printed_without_escape_sequences(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              tty: bool) -> None:
    run = hostile_run(tmp_path)
    out = Terminal() if tty else io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setenv("COLUMNS", "400")
    print_results(read_metrics(run / "metrics.json"))
    print_markdown(markdown_report([run]))
    echo("model: " + read_metrics(run / "metrics.json").results[0].model)
    printed = out.getvalue()
    no_escapes(printed)
    assert "onerror" in printed and "]0;title" in printed  # the names are shown, less their control characters
