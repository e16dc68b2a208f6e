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
    manifest, metrics and the HTML report. Every run is read first: one that is not a finished, whole run is
    refused (exit 2) before any is logged. Exit 2 when a tracker fails (each run is still tried)."""
    from structbench.api import log_settings
    from structbench.core.errors import UsageError
    from structbench.interop.trackers import TrackerError
    from structbench.interop.trackers.log import log_payload
    from structbench.interop.trackers.payload import Payload
    from structbench.runner.config import parse_options

    tracking = log_settings(to, parse_options(log_option or [], flag="--log-option"), log_samples)
    if tracking is None:
        raise UsageError(f"--to {to!r} names no tracker; give mlflow, wandb or mlflow,wandb")
    payloads = [Payload(run_dir, samples=tracking.samples) for run_dir in run_dirs]  # all read before any is logged
    failed = []
    for run_dir, payload in zip(run_dirs, payloads, strict=True):
        for outcome in log_payload(payload, tracking):
            if outcome.error is None:
                echo(f"{run_dir}: logged to {outcome.tracker}: {outcome.where}")
            else:
                failed.append(f"{run_dir} to {outcome.tracker}: {outcome.error}")
    if failed:
        more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
        raise TrackerError(f"logging {failed[0]}{more}")
