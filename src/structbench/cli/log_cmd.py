"""``structbench log RUN_DIR... --to mlflow|wandb``: runs already made, logged to experiment trackers
(``structbench.interop.trackers``); ``run --log-to`` does the same after a run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from structbench.cli.common import LogOptionOpt, LogSamplesOpt, echo, plain


def log(
    run_dirs: Annotated[list[Path], typer.Argument(help="One or more finished run directories.")],
    to: Annotated[str, typer.Option("--to", help=plain("mlflow, wandb, or mlflow,wandb (pip install "
                                                       "'structbench[mlflow]' / '[wandb]')."))],
    log_option: LogOptionOpt = None,
    log_samples: LogSamplesOpt = False,
) -> None:
    """Log finished runs to MLflow or Weights & Biases: configuration, headlines with intervals, tokens and cost,
    manifest, metrics and the HTML report. Exit 2 when a tracker fails (each run is still tried)."""
    from structbench.api import log_settings
    from structbench.core.errors import UsageError
    from structbench.interop.trackers import TrackerError
    from structbench.interop.trackers.log import log_each
    from structbench.runner.config import parse_options

    tracking = log_settings(to, parse_options(log_option or [], flag="--log-option"), log_samples)
    if tracking is None:
        raise UsageError(f"--to {to!r} names no tracker; give mlflow, wandb or mlflow,wandb")
    failed = []
    for run_dir in run_dirs:
        for outcome in log_each(run_dir, tracking):
            if outcome.error is None:
                echo(f"{run_dir}: logged to {outcome.tracker}: {outcome.where}")
            else:
                failed.append(f"{run_dir} to {outcome.tracker}: {outcome.error}")
    if failed:
        more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
        raise TrackerError(f"logging {failed[0]}{more}")
