"""``structbench report`` and ``structbench compare``; registered on the app by ``cli.app``.

Only typer and pathlib load at import time; the report machinery (numpy, matplotlib, jinja2) loads
inside the commands so ``structbench --help`` stays fast.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from structbench.cli.common import echo, print_markdown

if TYPE_CHECKING:
    from structbench.report.entries import StatsOptions

ResamplesOpt = Annotated[int, typer.Option("--resamples", help="Bootstrap resamples (and randomization rounds).")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed of the bootstrap and randomization.")]
ConfidenceOpt = Annotated[float, typer.Option("--confidence", help="Confidence level of the intervals.")]


class ResampleChoice(StrEnum):
    """``--resample``."""

    cluster = "cluster"
    sample = "sample"


class CorrectionChoice(StrEnum):
    """``--correction``."""

    holm = "holm"
    bh = "bh"


ResampleOpt = Annotated[
    ResampleChoice,
    typer.Option("--resample", help="What the bootstrap and the tests resample: cluster (the benchmark's: the "
                                    "questions of one table together) or sample (every question on its own, as if "
                                    "independent)."),
]


def _stats(resamples: int, seed: int, confidence: float, resample: ResampleChoice = ResampleChoice.cluster,
           correction: CorrectionChoice = CorrectionChoice.holm) -> StatsOptions:
    from structbench.core.errors import UsageError
    from structbench.report.entries import StatsOptions

    if resamples < 1:
        raise UsageError("--resamples must be at least 1")
    if not 0.0 < confidence < 1.0:
        raise UsageError("--confidence must lie strictly between 0 and 1")
    return StatsOptions(resamples=resamples, seed=seed, confidence=confidence, by=resample.value,
                        correction=correction.value)


def report(
    run_dirs: Annotated[list[Path], typer.Argument(help="One or more run directories, or Inspect logs (a .eval "
                                                  "file, or a folder of them) of `inspect eval structbench/...`.")],
    out: Annotated[
        Path | None,
        typer.Option("--out", help="report.html (plus report.md beside it) or report.md; default: Markdown to stdout."),
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Also write every entry's metrics and intervals as JSON.")
    ] = None,
    title: Annotated[str | None, typer.Option(help="Report title.")] = None,
    resamples: ResamplesOpt = 1000,
    seed: SeedOpt = 0,
    confidence: ConfidenceOpt = 0.95,
    resample: ResampleOpt = ResampleChoice.cluster,
    correction: Annotated[
        CorrectionChoice,
        typer.Option("--correction", help="Leaderboard: correction of the tests against each column's best, holm "
                                          "(family-wise) or bh (Benjamini-Hochberg, false discovery rate)."),
    ] = CorrectionChoice.holm,
    samples: Annotated[bool, typer.Option(help="Include the per-sample browser.")] = True,
    max_text: Annotated[int, typer.Option(help="Characters of each prompt and output kept in the browser.")] = 20_000,
    sample_texts: Annotated[int, typer.Option(
        "--sample-texts", min=0, help="Samples of each entry whose prompt and replies the HTML carries (the others: "
        "their row; `structbench view` shows every sample's).")] = 1_000,
) -> None:
    """Tables, figures, confidence intervals and a per-sample browser over run directories or Inspect logs."""
    from structbench.core.errors import UsageError
    from structbench.report.api import ReportOptions, markdown_report, write_report

    stats = _stats(resamples, seed, confidence, resample, correction)
    options = ReportOptions(title=title, stats=stats, samples=samples, max_text=max_text, texts=sample_texts)
    if out is None:
        if json_out is not None:
            raise UsageError("--json needs --out")
        print_markdown(markdown_report(run_dirs, options))
        return
    for path in write_report(run_dirs, out, options, json_out=json_out):
        echo(f"wrote {path}")


def compare(
    run_a: Annotated[Path, typer.Argument(help="Run directory of system A.")],
    run_b: Annotated[Path, typer.Argument(help="Run directory of system B (may be A, with --strategy-a/-b).")],
    out: Annotated[Path | None, typer.Option("--out", help="Also write the comparison as JSON here.")] = None,
    strategy_a: Annotated[str | None, typer.Option(help="Pair this strategy of A ...")] = None,
    strategy_b: Annotated[str | None, typer.Option(help="... with this strategy of B.")] = None,
    resamples: ResamplesOpt = 1000,
    seed: SeedOpt = 0,
    confidence: ConfidenceOpt = 0.95,
    resample: ResampleOpt = ResampleChoice.cluster,
) -> None:
    """Paired bootstrap and approximate randomization of B against A on their shared samples, resampling and
    swapping the benchmark's clusters."""
    from structbench.core.atomic import write_json_atomic
    from structbench.report.compare import compare_runs, comparison_markdown, isolation_difference, small_notes
    from structbench.report.runs import BenchmarkCache, load_run

    stats = _stats(resamples, seed, confidence, resample)
    a = load_run(run_a)
    b = a if run_b.resolve() == run_a.resolve() else load_run(run_b)  # two strategies of one run: read it once
    benches = BenchmarkCache()
    rows = compare_runs(a, b, stats=stats, benches=benches, strategy_a=strategy_a, strategy_b=strategy_b)
    print_markdown(comparison_markdown(rows, str(run_a), str(run_b), notes=False))  # the notes: once, below
    skipped = [f"{name} {why}" for name, why in benches.notes.items()]
    for line in skipped:
        echo(f"note: left out {line}: its headline cannot be recomputed", err=True)
    notes = [note for note in (isolation_difference(a, b),) if note is not None]
    for note in notes:
        echo(f"note: {note}", err=True)
    for note in small_notes(rows):
        echo(f"warning: {note}", err=True)
    if out is not None:
        write_json_atomic(
            out,
            {
                "a": str(run_a),
                "b": str(run_b),
                "resamples": stats.resamples,
                "seed": stats.seed,
                "confidence": stats.confidence,
                "resample": stats.by,
                "comparisons": [c.as_dict() for c in rows],
                "skipped": skipped,
                "notes": notes,
            },
        )
        echo(f"wrote {out}")
