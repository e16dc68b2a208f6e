"""Progress on stderr: periodic lines when it is not a terminal, nothing when off."""

from __future__ import annotations

import io
import time

from structbench.runner.progress import RunProgress


def test_lines_are_printed_periodically_and_at_the_end() -> None:
    out = io.StringIO()
    with RunProgress(10, enabled=True, interval=0.05, stream=out) as progress:
        assert progress.mode == "lines"  # a StringIO is not a terminal
        for i in range(10):
            progress.advance(error=i == 3)
            time.sleep(0.02)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("evaluating: 0/10 samples (0%)")
    assert len(lines) >= 3  # the opening line, at least one periodic line, the closing line
    assert any("ETA" in line for line in lines[1:-1])
    assert lines[-1].startswith("evaluating: 10/10 samples (100%)") and lines[-1].endswith("1 errors")


def test_off_prints_nothing() -> None:
    out = io.StringIO()
    with RunProgress(5, enabled="off", stream=out) as progress:
        progress.advance()
    assert out.getvalue() == "" and progress.done == 1
