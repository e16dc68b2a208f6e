"""``structbench run suite.yaml``: every model of a suite file, one run directory each, then one report."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from structbench.errors import BudgetError, ExitCode, RunStoppedError

if TYPE_CHECKING:
    from structbench.cli.app import RunSettings


def run_suite(path: Path, out: Path | None, settings: RunSettings, *, max_reply_bytes: int) -> int:
    """Validate the suite, run each model (resuming what earlier invocations finished), write the report over all
    of them and print one table; the exit code is the worst of the runs' (a stopped run does not stop the next
    model's)."""
    from structbench.cli.app import (
        Costs,
        _echo_cut_off,
        _echo_exclusions,
        _echo_failures,
        _echo_usage,
        _execute,
        _print_markdown,
    )
    from structbench.errors import UsageError
    from structbench.report.api import ReportOptions, write_report
    from structbench.report.markdown import headline_table
    from structbench.results import MetricsFile
    from structbench.runner.suite import load_suite, runs, suite_prices

    suite = load_suite(path)
    prices = suite_prices(suite, path)
    if prices is not None:
        if settings.costs is not None and settings.costs.prices is not None:
            raise UsageError(f"{path} sets prices; --prices cannot be given beside it")
        settings = replace(settings, costs=replace(settings.costs or Costs(), prices=prices))
    root = out or (path.parent / suite.out if suite.out else Path("runs") / path.stem)
    planned = runs(suite, root, path.parent)
    results = []
    robustness = []
    finished: list[Path] = []
    code = ExitCode.OK
    for i, plan in enumerate(planned, start=1):
        typer.echo(f"[{i}/{len(planned)}] {plan.name}: {plan.config.model} -> {plan.run_dir}", err=True)
        spec = replace(plan.spec, max_reply_bytes=max_reply_bytes)
        try:
            the_run, metrics = _execute(plan.config, spec, plan.run_dir, settings)
        except (RunStoppedError, BudgetError) as err:
            typer.echo(f"error: {plan.name}: {err}", err=True)
            code = max(code, err.exit_code)
            continue
        results.extend(metrics.results)
        robustness.extend(metrics.robustness)
        finished.append(plan.run_dir)
        _echo_exclusions(metrics)
        _echo_cut_off(metrics)
        _echo_usage(metrics)
        if the_run.failures:
            _echo_failures(the_run)
            code = max(code, ExitCode.FAILED_SAMPLES)
    if results:
        _print_markdown(headline_table(MetricsFile(results=results, robustness=robustness)))
    if finished and suite.report != "none":
        target = root / ("report.html" if suite.report == "html" else "report.md")
        for written in write_report(finished, target, ReportOptions(title=f"structbench suite {path.name}")):
            typer.echo(f"wrote {written}")
    typer.echo(f"suite directory: {root}")
    return int(code)
