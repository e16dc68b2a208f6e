"""``structbench run``: evaluate a model (or each model of a suite file) through ``structbench.api``. Its options are
``runner.arguments.RunArguments``' fields, each spelt by its ``Flag``: this module turns them into typer's parameters,
reads the values back into ``evaluate``'s keywords, calls the API and prints."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import annotated_types
import typer

from structbench.api import DEFAULT_SUITE_TITLE
from structbench.cli.common import (
    echo,
    echo_cut_off,
    echo_exclusions,
    echo_failures,
    echo_usage,
    interrupted,
    plain,
    print_results,
)
from structbench.core.errors import ExitCode, UsageError
from structbench.runner.arguments import FLAGS, SUITE_DEFINED, RunArguments, check_arguments, flag_name

if TYPE_CHECKING:
    from structbench.api import EvalResult


def _typed(ctx: typer.Context, name: str) -> bool:
    """Whether flag ``name`` was given on the command line (ParameterSource.COMMANDLINE, compared by name: typer
    vendors click)."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name == "COMMANDLINE"


def _option(name: str) -> inspect.Parameter:
    """Option ``name`` of ``RunArguments`` as a typer parameter: its ``Flag``'s names, help and type, the field's
    default and (where the flag checks it) range."""
    field, flag = RunArguments.model_fields[name], FLAGS[name]
    settings: dict[str, Any] = {"help": plain(flag.help)}
    if flag.ranged:
        for rule in field.metadata:
            if isinstance(rule, annotated_types.Ge):
                settings["min"] = rule.ge
            elif isinstance(rule, annotated_types.Le):
                settings["max"] = rule.le
        if flag.min is not None:
            settings["min"] = flag.min
    if flag.show_default is not None:
        settings["show_default"] = flag.show_default
    kind = flag.cli if flag.cli is not None else field.annotation
    default = field.default
    if isinstance(kind, type) and default is not None and not isinstance(default, kind):
        default = kind(default)  # an enum's member
    option = typer.Option(*flag.names, **settings)
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                             annotation=Annotated[kind, option])


def _keywords(given: dict[str, Any]) -> dict[str, Any]:
    """The command's option values as ``evaluate``'s keywords: each ``Flag``'s reader applied to a value given."""
    values = {}
    for name, flag in FLAGS.items():
        value = given[name]
        if flag.parse is not None and value is not None and value not in ([], ()):
            value = flag.parse(list(value) if isinstance(value, tuple) else value)
        elif value in ([], ()):
            value = None
        values[name] = value
    return values


def run(
    ctx: typer.Context,
    suite: Annotated[
        Path | None,
        typer.Argument(help="A suite file (YAML): models x benchmarks, one run directory per model, then the report.",
                       show_default=False),
    ] = None,
    **options: Any,
) -> None:
    """Evaluate a model, or every model of a suite file. With no arguments: a quick offline suite on the embedded
    model."""
    from structbench.api import is_default_suite, log, plan_run, run_settings
    from structbench.api import run as run_config

    args = check_arguments(_keywords(options), caller="run", flags=True)
    if suite is not None:
        from structbench.api import run_tracking
        from structbench.cli.suite_cmd import run_suite

        tracking = run_tracking(args)
        settings = run_settings(args, flags=True)
        typed = [flag_name(name) for name in SUITE_DEFINED if _typed(ctx, name)]
        if typed and not suite.is_file():  # a model named where the suite goes: ``run oracle -b scitab``
            raise UsageError(f"{suite}: no such suite file (a model is named with --model, e.g. `-m {suite}`)")
        if typed:
            raise UsageError(f"{suite} defines the models and benchmarks; {', '.join(typed)} cannot be given with a "
                             "suite file (--out, --cache, --no-cache, --offline, --progress and the like can)")
        out = Path(args.out) if args.out is not None else None
        code = run_suite(suite, out, settings, max_reply_mb=args.max_reply_mb, tracking=tracking)
        if code != ExitCode.OK:
            raise typer.Exit(code)
        return
    plan = plan_run(args, [name for name in FLAGS if _typed(ctx, name)], flags=True, caller="run")
    with interrupted(plan.run_dir):
        result = run_config(plan.config, out=plan.run_dir, connection=plan.connection, settings=plan.settings,
                            notify=echo_err)
    print_results(result.metrics)
    echo(_summary(result, DEFAULT_SUITE_TITLE if is_default_suite(result.config) else None))
    echo(f"run directory: {result.run_dir}")
    echo_usage(result.metrics)
    echo_exclusions(result.metrics)
    echo_cut_off(result.metrics)
    if plan.tracking is not None:  # after the table: the run is on disk, and a tracker that fails is only a warning
        log(result.run_dir, plan.tracking, echo_err)
    if result.failures:
        echo_failures(result.failures, result.run_dir, len(result.records))
        raise typer.Exit(ExitCode.FAILED_SAMPLES)


_own = inspect.signature(run, eval_str=True)
run.__signature__ = _own.replace(  # type: ignore[attr-defined]  # typer reads the options from it
    parameters=[*list(_own.parameters.values())[:2], *(_option(name) for name in FLAGS)])


def echo_err(line: str) -> None:
    echo(line, err=True)


def _summary(result: EvalResult, suite: str | None) -> str:
    """The paragraph after the table: the model and suite that ran, and how to read each score (``report.summary``);
    ``suite`` describes the suite where the command knows it (the default one)."""
    import shutil

    from structbench.benchmarks import BENCHMARKS
    from structbench.report.summary import answer_counts, run_summary, suite_text
    from structbench.runfiles.columns import RecordView

    metrics = result.metrics
    if suite is None:
        entries: dict[tuple[str, str], tuple[list[str], int]] = {}
        for r in metrics.results:
            samples = r.n + r.harness_errors + r.too_long + r.turn_limit
            strategies = entries.setdefault((r.benchmark, r.variant), ([], samples))[0]
            strategies += [r.strategy] if r.strategy not in strategies else []  # once, however many sweep cells
        suite = suite_text([(BENCHMARKS.get(b).title, b, v, s, n) for (b, v), (s, n) in entries.items()])
    width = min(100, max(40, shutil.get_terminal_size((100, 24)).columns))
    records = result.records
    answers = records.answer_counts() if isinstance(records, RecordView) else answer_counts(records)
    return "\n" + run_summary(result.model_title, suite, metrics, answers, width=width) + "\n"
