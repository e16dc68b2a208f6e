"""``structbench score``: parse and score a model's outputs (a predictions file) as a run would have."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from structbench.cli.common import (
    BenchArg,
    DataDirOpt,
    LimitOpt,
    ModifiedDataOpt,
    OptionOpt,
    PresetScoreOpt,
    SeedOpt,
    StrategyOpt,
    echo_cut_off,
    echo_exclusions,
    load_one,
    preset_entry,
    print_markdown,
)
from structbench.errors import ExitCode


def score(
    bench: BenchArg,
    predictions: Annotated[
        Path, typer.Option("--predictions", "-p", help="JSON lines, Parquet, or an export --format hf folder, with "
                           "'id', 'fingerprint' and 'output'.")
    ],
    strategy: StrategyOpt = None,
    out: Annotated[Path | None, typer.Option("--out", help="Write metrics JSON here.")] = None,
    limit: LimitOpt = None,
    seed: SeedOpt = 0,
    option: OptionOpt = None,
    data_dir: DataDirOpt = None,
    allow_modified_data: ModifiedDataOpt = False,
    model: Annotated[str, typer.Option(help="Model name to record in the results.")] = "predictions",
    unchecked: Annotated[
        bool,
        typer.Option("--unchecked", help="Score lines without a 'fingerprint' by id alone (not recommended)."),
    ] = False,
    preset: PresetScoreOpt = None,
) -> None:
    """Parse and score raw model outputs with the benchmark's own parser and metrics; with --preset, as the paper's
    released code parsed and scored them (structbench's corrected scores are recorded beside)."""
    from structbench.atomic import write_json_atomic
    from structbench.report.markdown import render
    from structbench.results import MetricsFile
    from structbench.runner.export import read_predictions, score_predictions
    from structbench.runner.failures import Failure, failure_summary

    if preset is not None:
        bench, strategy, option = preset_entry(preset, bench, strategy, option)
    preds = read_predictions(predictions)
    b, variant, samples, strat, settings = load_one(bench, strategy, option, limit, seed, data_dir,
                                                     allow_modified_data)
    failures: list[Failure] = []
    entry = score_predictions(b, variant, samples, strat, preds, source=predictions, model=model,
                              settings=settings, require_fingerprint=not unchecked, on_failure=failures.append)
    metrics = MetricsFile(results=[entry])
    print_markdown(render(metrics, title=f"scores of {predictions}"))
    if entry.missing:
        typer.echo(f"warning: {len(entry.missing)} sample(s) missing from {predictions}, counted as wrong", err=True)
    echo_exclusions(metrics)
    echo_cut_off(metrics)
    if out is not None:
        write_json_atomic(out, metrics.model_dump(mode="json"))
    if failures:
        typer.echo(
            failure_summary(
                failures,
                samples.count or 0,
                details="they are counted in harness_errors and left out of the metrics",
                retry="scoring again after a fix of the benchmark retries them",
            ),
            err=True,
        )
        raise typer.Exit(ExitCode.FAILED_SAMPLES)
