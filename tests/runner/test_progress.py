"""Progress on stderr: periodic lines when it is not a terminal, nothing when off."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest

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


def test_the_calls_show_what_a_slow_server_is_doing() -> None:
    from structbench.backends.stats import CallSnapshot, CallStats
    from structbench.runner.progress import calls_text

    now = time.monotonic()
    slow = CallSnapshot(in_flight=4, oldest=now - 118, retries=6, timeouts=4, answered=3, tokens=600)
    assert calls_text(slow, elapsed=60, now=now) == "4 calls in flight (oldest 1m58s), 10 tok/s, 6 retries (4 timeouts)"
    assert calls_text(CallSnapshot(), elapsed=5) == ""
    both = CallSnapshot(1, now - 5, 1, 0, 0, 0) + CallSnapshot(2, now - 9, 0, 1, 1, 7)
    assert (both.in_flight, both.oldest, both.retries, both.timeouts, both.tokens) == (3, now - 9, 1, 1, 7)
    stats = CallStats()
    first, second = stats.begin(), stats.begin()
    stats.end(first, tokens=12, answered=True)
    snap = stats.snapshot()
    assert (snap.in_flight, snap.answered, snap.tokens) == (1, 1, 12)
    stats.end(second)
    assert stats.snapshot().in_flight == 0 and stats.snapshot().oldest is None


def test_lines_show_the_calls_and_a_note_once_a_call_is_slow() -> None:
    from structbench.backends.stats import CallSnapshot

    out = io.StringIO()
    started = time.monotonic()
    calls = lambda: CallSnapshot(in_flight=2, oldest=started, timeouts=1, retries=1)  # noqa: E731
    with RunProgress(3, enabled="lines", interval=0.05, stream=out, calls=calls, slow_call=0.2) as progress:
        time.sleep(0.5)
        progress.advance("context")
    text = out.getvalue()
    assert "2 calls in flight" in text and "1 retries (1 timeouts)" in text
    assert text.splitlines()[-1].endswith("1 too long, 0 errors")  # a prompt too long for the model is no error
    notes = [line for line in text.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "--max-tokens" in notes[0] and "--timeout" in notes[0] and "--concurrency" in notes[0]


def test_the_bar_shows_the_calls_too() -> None:
    from structbench.backends.stats import CallSnapshot

    out = io.StringIO()
    with RunProgress(2, enabled="bar", stream=out, calls=lambda: CallSnapshot(in_flight=3)) as progress:
        progress.advance()
        progress.advance()
    assert "3 calls in flight" in out.getvalue()


def test_the_bar_fits_80_columns_with_each_time_labelled(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bar and what the calls are doing are two lines, each within 80 columns; elapsed time and ETA are named (an
    unlabelled elapsed time under "ETA" read as an ETA that grew)."""
    import re

    from structbench.backends.stats import CallSnapshot

    monkeypatch.setenv("COLUMNS", "80")  # the width rich gives a console on a file (or what the user's shell says)
    out = io.StringIO()
    started = time.monotonic() - 70
    calls = lambda: CallSnapshot(in_flight=7, oldest=started, tokens=30, retries=2, timeouts=1)  # noqa: E731
    with RunProgress(30, enabled="bar", stream=out, calls=calls) as progress:
        assert progress._progress.console.width == 80
        for _ in range(23):
            progress.advance()
        time.sleep(0.3)
    lines = [line for line in re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "\n", out.getvalue()).splitlines() if line.strip()]
    bar = next(line for line in reversed(lines) if line.startswith("evaluating"))
    assert "23/30" in bar and "elapsed " in bar and "ETA " in bar and bar.endswith("0 errors")
    assert any(line == "  7 calls in flight (oldest 1m10s), 2 retries (1 timeouts)" or
               line.startswith("  7 calls in flight (oldest 1m1") for line in lines)
    assert max(len(line.rstrip()) for line in lines) <= 80


def test_a_model_run_in_this_process_gets_no_note_on_slow_servers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The note on slow servers (--concurrency 1 or 2 for a small server) is for a server; a local model answers its
    calls one at a time, so they wait for it by design."""
    import toybench  # noqa: F401  (registers the toy benchmark)
    from structbench.backends.mock import MockBackend
    from structbench.data.datasets import DataContext
    from structbench.runfiles.runconfig import RunConfig
    from structbench.runner import run as run_module
    from structbench.runner.run import Run
    from structbench.runner.selection import prepare

    monkeypatch.setattr(run_module, "SLOW_CALL", 0.1)
    config = RunConfig(model="mock", benches=["toy:small"], limit=2)
    for name, remote in (("local", False), ("served", True)):
        backend = MockBackend(default="yes", latency=1.5)
        backend.remote = remote
        Run(tmp_path / name, config).execute(backend, prepare(config, DataContext()), cache=None, concurrency=2,
                                             progress="lines", progress_interval=0.1)
        notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note:")]
        assert bool(notes) == remote and all("--concurrency 1 or 2" in n for n in notes)
