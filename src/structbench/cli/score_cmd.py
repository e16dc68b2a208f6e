"""``structbench score``: parse and score a model's outputs (a predictions file) as a run would have."""

from __future__ import annotations

import contextlib
import json
from enum import StrEnum
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated

import typer

from structbench.cli.common import (
    BenchArg,
    DataDirOpt,
    LimitOpt,
    ModifiedDataOpt,
    OfflineOpt,
    OptionOpt,
    PresetScoreOpt,
    SeedOpt,
    StrategyOpt,
    ThinkTagsOpt,
    ThoughtOpenedOpt,
    echo,
    echo_cut_off,
    echo_exclusions,
    load_one,
    preset_entry,
    print_markdown,
)
from structbench.contract.benchmark import Scored
from structbench.core.errors import ExitCode, UsageError

if TYPE_CHECKING:
    from structbench.backends.reasoning import ThinkTags


class Missing(StrEnum):
    """``score --missing``: what a sample without a prediction becomes."""

    wrong = "wrong"
    skip = "skip"
    error = "error"


MISSING_HELP = {
    Missing.wrong: "scored as wrong (empty replies), counted in n",
    Missing.skip: "left out of n and of every metric",
}


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
    missing: Annotated[
        Missing,
        typer.Option("--missing", help="A sample without a prediction: 'wrong' scores it as an empty reply (counted "
                     "in n; refused where the benchmark's scoring leaves empty replies out of its averages), 'skip' "
                     "leaves it out of n and every metric, 'error' refuses the file."),
    ] = Missing.wrong,
    samples_out: Annotated[
        Path | None,
        typer.Option("--samples", help="Write one JSON line per scored prediction here: id, parsed answer, gold, "
                     "score and every per-sample metric value under 'values' (to compare query by query)."),
    ] = None,
    offline: OfflineOpt = False,
    think_tags: ThinkTagsOpt = None,
    thought_opened: ThoughtOpenedOpt = False,
) -> None:
    """Parse and score raw model outputs with the benchmark's own parser and metrics; with --preset, as the paper's
    released code parsed and scored them (structbench's corrected scores are recorded beside). A reasoning model's
    thought is taken out of each output first, as a run takes it out (--think-tags, --thought-opened)."""
    from structbench.core.atomic import atomic_path, write_json_atomic
    from structbench.report.markdown import render
    from structbench.runfiles.results import MetricsFile
    from structbench.runner.export import read_predictions, sample_line, score_predictions
    from structbench.runner.failures import Failure, failure_summary

    tags = _think_tags(think_tags)
    if preset is not None:
        bench, strategy, option = preset_entry(preset, bench, strategy, option)
    preds = read_predictions(predictions)
    b, variant, samples, strat, settings = load_one(bench, strategy, option, limit, seed, data_dir,
                                                     allow_modified_data, offline)
    failures: list[Failure] = []
    with contextlib.ExitStack() as stack:
        log: IO[str] | None = None
        if samples_out is not None:  # written whole or not at all
            log = stack.enter_context(stack.enter_context(atomic_path(samples_out)).open("w", encoding="utf-8"))

        def write(scored: Scored, is_missing: bool) -> None:
            if log is not None:
                log.write(json.dumps(sample_line(scored, is_missing), ensure_ascii=False, default=str) + "\n")

        entry = score_predictions(b, variant, samples, strat, preds, source=predictions, model=model,
                                  settings=settings, require_fingerprint=not unchecked, on_failure=failures.append,
                                  missing=missing.value, on_scored=write, think_tags=tags,
                                  thought_opened=thought_opened)
    metrics = MetricsFile(results=[entry])
    print_markdown(render(metrics, title=f"scores of {predictions}", finish_reasons=False))  # no finish reasons
    if entry.missing:
        echo(f"warning: {len(entry.missing)} sample(s) missing from {predictions}: "
                   f"{MISSING_HELP[missing]} (n = {entry.n}; --missing chooses)", err=True)
    written = str(out) if out is not None else None  # (the notes name a file only where one is written)
    echo_exclusions(metrics, metrics_file=written, samples_file=None)
    echo_cut_off(metrics, finish_reasons=False, metrics_file=written)
    if out is not None:
        write_json_atomic(out, metrics.model_dump(mode="json"))
        echo(f"wrote {out}", err=True)
    if samples_out is not None:
        echo(f"wrote {entry.n} scored sample(s) to {samples_out}", err=True)
    if failures:
        echo(
            failure_summary(
                failures,
                samples.count or 0,
                details="they are counted in harness_errors and left out of the metrics",
                retry="scoring again after a fix of the benchmark retries them",
            ),
            err=True,
        )
        raise typer.Exit(ExitCode.FAILED_SAMPLES)


def _think_tags(values: list[str] | None) -> ThinkTags | None:
    """``--think-tags`` values as tag pairs, checked as ``run`` checks them (None: the default tags)."""
    from structbench.backends.reasoning import check_tags
    from structbench.runner.config import parse_think_tags

    pairs = parse_think_tags(values or [])
    if pairs is None:
        return None
    try:
        return check_tags(pairs)
    except ValueError as err:
        raise UsageError(f"--think-tags: {err}") from None
