"""``structbench run suite.yaml``: every model of a suite file through ``structbench.api.evaluate_suite``, one run
directory each, then one report; this module prints what the API returns."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from structbench.cli.common import (
    echo,
    echo_cut_off,
    echo_exclusions,
    echo_failures,
    echo_usage,
    interrupted,
    print_results,
)
from structbench.core.errors import ExitCode

if TYPE_CHECKING:
    from structbench.api import SuiteRun
    from structbench.interop.trackers import Tracking
    from structbench.runner.session import RunSettings


def run_suite(path: Path, out: Path | None, settings: RunSettings, *, max_reply_mb: float,
              tracking: Tracking | None = None) -> int:
    """Run the suite and print one table over its models; the exit code is the worst of the runs' (a stopped run
    does not stop the next model's). With ``tracking``, each finished run is logged to its trackers."""
    from structbench.api import evaluate_suite

    current: list[Path] = [path]
    codes = [ExitCode.OK]

    def on_start(i: int, count: int, planned: SuiteRun) -> None:
        current[0] = planned.run_dir
        echo(f"[{i}/{count}] {planned.name}: {planned.model} -> {planned.run_dir}", err=True)

    def on_run(done: SuiteRun) -> None:
        if done.result is None:
            echo(f"error: {done.name}: {done.error}", err=True)
            codes.append(ExitCode(done.error.exit_code) if done.error is not None else ExitCode.STOPPED)
            return
        echo_exclusions(done.result.metrics)
        echo_cut_off(done.result.metrics)
        echo_usage(done.result.metrics)
        if done.result.failures:
            echo_failures(done.result.failures, done.run_dir, len(done.result.records))
            codes.append(ExitCode.FAILED_SAMPLES)

    def echo_err(line: str) -> None:
        echo(line, err=True)

    with interrupted(lambda: current[0]):
        result = evaluate_suite(path, out=out, settings=settings, max_reply_mb=max_reply_mb, notify=echo_err,
                                on_start=on_start, on_run=on_run, tracking=tracking)
    if result.results:
        print_results(result.metrics)
    for written in result.reports:
        echo(f"wrote {written}")
    echo(f"suite directory: {result.root}")
    return int(max(codes))
