"""What several commands share: their flags' types, the readers of those flags, and how notes are printed."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from structbench.core.errors import ExitCode, Terminated, UsageError
from structbench.core.printable import printable
from structbench.runfiles.runformat import METRICS, SAMPLES

if TYPE_CHECKING:
    from structbench.runner.failures import Failure
    from structbench.runner.selection import SampleStream

_TAG = re.compile(r"\[(?=[A-Za-z#/@][^\[\]]*\])")


def plain(text: str) -> str:
    """A help text as written: typer shows help through Rich, which takes ``[word]`` (``'structbench[mlflow]'``) for
    a style and drops it; such brackets are escaped."""
    return _TAG.sub(r"\\[", text)


BenchArg = Annotated[str, typer.Argument(help="BENCH[:VARIANT]")]
DataDirOpt = Annotated[
    Path | None,
    typer.Option("--data-dir", help="Local copy of the datasets (<dir>/<dataset>/...); env STRUCTBENCH_DATA_DIR."),
]
ModifiedDataOpt = Annotated[
    bool,
    typer.Option("--allow-modified-data",
                 help="Use --data-dir files that differ from the public release (modified on purpose); the run's "
                      "manifest lists them. Without it such a file is an error."),
]
OptionOpt = Annotated[
    list[str] | None,
    typer.Option("--option", "-o", help="Benchmark run option KEY=VALUE or BENCH.KEY=VALUE (repeatable)."),
]
StrategyOpt = Annotated[str | None, typer.Option("--strategy", "-s", help="Strategy name (default: the benchmark's).")]
LimitOpt = Annotated[
    int | None, typer.Option("--limit", "-n", help="Evaluate the first N (at least 1) samples of each benchmark.")
]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed for generators, shuffles and sampling.")]
ThinkTagsOpt = Annotated[
    list[str] | None,
    typer.Option("--think-tags", help="OPEN,CLOSE tags around a thought (repeatable; default <think>,</think>)."),
]
ThoughtOpenedOpt = Annotated[
    bool,
    typer.Option("--thought-opened", help="The outputs begin inside a thought (the chat template opened it, as "
                                          "DeepSeek-R1's does): one without a closing tag is all thought."),
]
LogToOpt = Annotated[
    str | None,
    typer.Option("--log-to", help="Log the finished run to experiment trackers: mlflow, wandb or mlflow,wandb "
                                  + plain("(pip install 'structbench[mlflow]' / '[wandb]').")),
]
LogOptionOpt = Annotated[
    list[str] | None,
    typer.Option("--log-option", help="Tracker setting KEY=VALUE or TRACKER.KEY=VALUE (repeatable): tracking_uri, "
                                      "experiment (mlflow); project, entity, mode=offline, dir, group (wandb); "
                                      "run_name."),
]
LogSamplesOpt = Annotated[
    bool, typer.Option("--log-samples", help="Also log the per-sample table (W&B: a Table; MLflow: samples.json).")
]
OfflineOpt = Annotated[bool, typer.Option("--offline", help="Never download datasets; read --data-dir or the cache.")]


def console() -> Any:
    from rich.console import Console

    return Console()


def echo(text: str, *, err: bool = False) -> None:
    """``typer.echo`` of ``text`` without control characters: what the command line prints holds names and messages
    read from runs, whose escape sequences would reach the terminal (``core.printable``)."""
    typer.echo(printable(text), err=err)


def print_markdown(text: str) -> None:
    """Markdown on stdout: rendered by rich on a terminal, as it is elsewhere; without control characters."""
    text = printable(text)
    if sys.stdout.isatty():
        from rich.markdown import Markdown

        console().print(Markdown(text))
    else:
        typer.echo(text)


def print_results(metrics: Any) -> None:
    """A run's headline table (and its sweeps' robustness table): on a terminal fitted to its width, every name and
    number whole (``report.terminal``); elsewhere (a pipe, a log) as Markdown pipe tables."""
    from structbench.report.markdown import Grid, headline_grid, headline_table, robustness_grid

    if not sys.stdout.isatty():
        echo(headline_table(metrics))
        return
    from structbench.report.terminal import fitted

    def shown(grid: Grid) -> Grid:
        return Grid(grid.columns, [list(map(printable, row)) for row in grid.rows], grid.key,
                    list(map(printable, grid.names)))

    out = console()
    out.print(fitted(shown(headline_grid(metrics)), out.width))
    if metrics.robustness:
        out.print()
        out.print(fitted(shown(robustness_grid(metrics.robustness)), out.width))


def path_value(text: str | None, flag: str) -> Path | None:
    """A path flag's value; an empty one is refused (as a path it would be the current directory)."""
    if text is None:
        return None
    if not text.strip():
        raise UsageError(f"{flag} {text!r}: empty; give a directory (an empty value would mean the current one)")
    return Path(text)


def comma_list(text: str | None) -> list[str]:
    """``"a, b,a"`` -> ``["a", "b"]``: the items of a comma-separated flag, once each, in order."""
    return list(dict.fromkeys(part.strip() for part in (text or "").split(",") if part.strip()))


def preset_entry(name: str, bench: str, strategy: str | None, option: list[str] | None) -> tuple[str, str, list[str]]:
    """``export``/``score`` with ``--preset NAME``: the preset's entry for ``bench`` (its variant when ``bench`` names
    none), the strategy (the preset's only one for it when not given) and the ``--option`` pairs: the preset's, which
    make ``score`` parse and score as the paper did, and those it leaves open."""
    from structbench.api import preset_config
    from structbench.runner.config import parse_options, split_bench

    benches, strategies, options = preset_config(name, parse_options(option or [], output="--out"))
    wanted, variant = split_bench(bench)
    entries = [b for b in benches if split_bench(b)[0] == wanted and variant in (None, split_bench(b)[1] or variant)]
    whole = entries[0] if entries else _whole_of(benches, wanted, variant)
    if whole is None:
        raise UsageError(f"--preset {name} runs {', '.join(benches)}, not {bench}")
    entry = whole if variant is None or (":" in whole and split_bench(whole)[1] == variant) else f"{wanted}:{variant}"
    allowed = [s.rpartition("/")[2] for s in strategies
               if "/" not in s or s.rpartition("/")[0] in (whole, split_bench(whole)[0])]
    if strategy is None:
        if len(allowed) != 1:
            raise UsageError(f"--preset {name} runs the strategies {', '.join(allowed)} on {entry}: give --strategy")
        strategy = allowed[0]
    elif strategy not in allowed:
        raise UsageError(f"--preset {name} runs the strategies {', '.join(allowed)} on {entry}, not {strategy!r}")
    return entry, strategy, [f"{k}={v}" for k, v in options.items()]


def _whole_of(benches: Sequence[str], wanted: str, variant: str | None) -> str | None:
    """The preset's entry whose variant holds ``variant`` as a part (``rfqa:all`` for ``rfqa:spider1``), if any."""
    from structbench.benchmarks import BENCHMARKS
    from structbench.runner.config import split_bench

    if variant is None or wanted not in BENCHMARKS:
        return None
    parts = BENCHMARKS.get(wanted).loading.variant_parts
    return next((b for b in benches
                 if split_bench(b)[0] == wanted and variant in parts.get(split_bench(b)[1] or "", ())), None)


PresetScoreOpt = Annotated[
    str | None,
    typer.Option("--preset", help="Use one paper table's configuration (structbench list shows them): its options, "
                 "so outputs are parsed and scored as the paper's released code did."),
]


def shown_urls(base_url: str) -> str:
    """``--base-url`` (one URL or several, comma-separated) as stored: passwords ``[REDACTED]``."""
    from structbench.backends.openai_compat import shown_base_urls

    return shown_base_urls(base_url)


def echo_failures(failures: Sequence[Failure], run_dir: Path, samples: int) -> None:
    """The failed samples of a run, summed up on stderr."""
    from structbench.runner.failures import failure_summary

    echo(
        failure_summary(
            list(failures),
            samples,
            details=f"every message is in {run_dir / SAMPLES} (fields error, error_kind)",
            retry="running the same command again retries exactly the failed samples",
        ),
        err=True,
    )


@contextmanager
def interrupted(where: Path | Callable[[], Path]) -> Iterator[None]:
    """Ctrl-C and SIGTERM during a run end the command with their exit codes and say how to resume the run (in the
    directory ``where`` is, or names when called: the suite's current run)."""
    try:
        yield
    except KeyboardInterrupt:
        run_dir = where() if callable(where) else where
        echo(f"interrupted; finished samples are saved in {run_dir}, the same command resumes", err=True)
        raise typer.Exit(ExitCode.INTERRUPTED) from None
    except Terminated:
        run_dir = where() if callable(where) else where
        echo(f"terminated (SIGTERM); finished samples are saved in {run_dir}, the same command resumes",
                   err=True)
        raise typer.Exit(ExitCode.TERMINATED) from None


def echo_exclusions(metrics: Any, *, metrics_file: str | None = METRICS, samples_file: str | None = SAMPLES) -> None:
    """One stderr line per benchmark variant that left samples out, with the reasons (``extra.excluded``), and per
    entry whose prompts did not fit the model's context (``too_long``); each names the fields of ``metrics_file``
    and ``samples_file`` that hold what it counts (``score``'s are not a run's, or not written)."""
    from structbench.runfiles.results import (
        EXCLUDED,
        TOO_LONG_MEANING,
        TURN_LIMIT_MEANING,
        TURN_LIMIT_SCORED_MEANING,
    )

    for r in metrics.results:
        if r.too_long:
            echo(f"note: {_entry(r)}: {r.too_long} sample(s) {TOO_LONG_MEANING}"
                 f"{_held(metrics_file, 'too_long', samples_file, 'error_kind context')}", err=True)
        if r.turn_limit:
            echo(f"note: {_entry(r)}: {r.turn_limit} sample(s) {TURN_LIMIT_MEANING}"
                 f"{_held(metrics_file, 'turn_limit', samples_file, 'error_kind turns')}", err=True)
        if r.turn_limit_scored:
            echo(f"note: {_entry(r)}: {r.turn_limit_scored} of {r.n} sample(s) {TURN_LIMIT_SCORED_MEANING}"
                 f"{_held(metrics_file, 'turn_limit_scored', samples_file, 'turn_limit')}", err=True)
    seen = set()
    for r in metrics.results:
        excluded = r.extra.get(EXCLUDED)
        key = (r.benchmark, r.variant, str(excluded))
        if not excluded or key in seen:
            continue
        seen.add(key)
        reasons = "; ".join(f"{e['count']} {e['reason']}" for e in excluded)
        echo(f"note: {r.benchmark}:{r.variant} left out: {reasons}{_held(metrics_file, 'extra.excluded')}",
             err=True)


def echo_cut_off(metrics: Any, *, finish_reasons: bool = True, metrics_file: str | None = METRICS) -> None:
    """One stderr line per result whose samples got no answer because the replies ran out of tokens inside the
    model's thought (``reasoning_cut_off``): a reasoning model given a non-reasoning model's budget
    (``finish_reasons`` False: ``score``'s predictions, whose cause is unknown: ``cut_off_note``). Each names the
    field of ``metrics_file`` that counts them (None: no file was written)."""
    from structbench.report.markdown import cut_off_note

    for r in metrics.results:
        note = cut_off_note(r, finish_reasons=finish_reasons)
        if note is not None:
            echo(f"note: {_entry(r)}: {note}{_held(metrics_file, 'reasoning_cut_off')}", err=True)


def _held(metrics_file: str | None, field: str, samples_file: str | None = None, sample_field: str = "") -> str:
    """`` (FILE: field; ...)``: where a note's count is written, naming only the files the command wrote."""
    places = [f"{metrics_file}: {field}"] if metrics_file is not None else []
    if samples_file is not None and sample_field:
        places.append(f"{samples_file}: {sample_field}")
    return f" ({'; '.join(places)})" if places else ""


def _entry(r: Any) -> str:
    """``benchmark:variant/strategy``, with a sweep's cell: ``benchmark:variant[cell]/strategy`` (as failures name
    it)."""
    return f"{r.benchmark}:{r.variant}{f'[{r.cell}]' if r.cell else ''}/{r.strategy}"


def echo_usage(metrics: Any) -> None:
    """The run's tokens and cost, in one line after the table (stdout: part of what the run reports)."""
    from structbench.backends.usage import totals_text

    if metrics.usage is not None:
        echo(f"tokens: {totals_text(metrics.usage, metrics.prices)}")


def load_one(
    entry: str, strategy: str | None, option: list[str] | None, limit: int | None, seed: int, data_dir: Path | None,
    allow_modified_data: bool = False, offline: bool = False,
) -> tuple[Any, str, SampleStream, Any, Any]:
    """The benchmark, variant, samples (a ``SampleStream``: read once, as they are needed) and strategy of
    ``export``/``score``, and the settings that pick them; ``offline`` never downloads a dataset."""
    from structbench.benchmarks import BENCHMARKS
    from structbench.data.datasets import DataContext
    from structbench.runner.config import check_limit, check_options_used, parse_options, split_bench
    from structbench.runner.export import ExportSettings
    from structbench.runner.selection import load_benchmark, open_samples

    check_limit(limit)
    options = parse_options(option or [], output="--out")
    check_options_used([BENCHMARKS.get(split_bench(entry)[0])], options)
    bench, variant = load_benchmark(entry, options)
    strat = bench.strategy(strategy)
    context = DataContext.from_env(data_dir, offline=offline, allow_modified=allow_modified_data)
    samples = open_samples(bench, variant, context, seed=seed, limit=limit)
    settings = ExportSettings(bench=f"{bench.name}:{variant}", strategy=strat.name, seed=seed, limit=limit,
                              options=options)
    return bench, variant, samples, strat, settings
