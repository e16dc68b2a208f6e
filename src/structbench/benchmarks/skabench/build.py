"""Build SKA-Bench instances from a database and write them as JSONL (the ``jsonl`` variant's input).

    python -m structbench.tools.skabench_build --rfqa galois/world_1 --data-dir ../shared/datasets \\
        --questions 50 --out world.jsonl
    python -m structbench.tools.skabench_build --csv my_tables/ --out mine.jsonl
    python -m structbench.tools.skabench_build --scitab sci_tab.json --min-rows 4 --out scitab.jsonl

``--synthesize-model BACKEND[:NAME][,BACKEND[:NAME]]`` adds LLM-synthesized noisy rows to every Table and
Table+Text instance (the paper's pipeline, ``synthesis``), e.g. ``--synthesize-model
openai:gpt-4o,openai:deepseek-chat --check-model openai:deepseek-chat --base-url URL --synthesize-rows 1500``:
the models take turns generating rows, the check model derives the condition and checks them. The models
are called through a model pool of the command's own (``structbench.runner.calls.ModelPool``, opened by the
command in ``structbench.tools.skabench_build``: a benchmark never imports the runner), which answers repeated
requests from the response cache (``--cache FILE``, default
``$STRUCTBENCH_CACHE/responses.sqlite``; ``--no-cache``), so an interrupted build resumes without repeating a
completed call. A model call that fails for good writes nothing and exits with code 3.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

from structbench.backends.base import BackendError
from structbench.benchmark import other_model
from structbench.benchmarks.skabench.builder import MAX_ROWS, build_instances
from structbench.benchmarks.skabench.database import Database
from structbench.benchmarks.skabench.instances import write_instances
from structbench.benchmarks.skabench.sources import load_rfqa_database, load_scitab_database
from structbench.benchmarks.skabench.synthesis import synthesize_noisy_rows, with_noisy_rows
from structbench.benchmarks.skabench.templates import TEMPLATES
from structbench.benchmarks.skabench.units import KNOWLEDGE_TYPES, Instance
from structbench.datasets import DataContext
from structbench.errors import ExitCode, StructbenchError, UsageError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m structbench.tools.skabench_build",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--rfqa", metavar="SOURCE/DB", help="a RelationalFactQA database, e.g. galois/world_1")
    source.add_argument("--csv", type=Path, metavar="DIR", help="a folder of CSV tables")
    source.add_argument("--scitab", type=Path, metavar="FILE", help="SciTab's sci_tab.json")
    parser.add_argument("--data-dir", type=Path, help="local copy of the datasets (<dir>/relationalfactqa/...)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--questions", type=int, default=30)
    parser.add_argument("--knowledge", default="all", help="comma list of kg, table, kg+text, table+text")
    parser.add_argument("--templates", default=None, help=f"comma list of {', '.join(TEMPLATES.names())}")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-rows", type=int, default=8)
    parser.add_argument("--min-columns", type=int, default=3, help="the paper's curation kept tables of 6+")
    parser.add_argument("--max-rows", type=int, default=MAX_ROWS, help="rows of a large table kept per instance")
    parser.add_argument(
        "--synthesize-model",
        metavar="BACKEND[:NAME][,...]",
        help="add LLM-synthesized noisy rows; several models take turns (the paper: GPT-4o and DeepSeek-V3)",
    )
    parser.add_argument("--check-model", metavar="BACKEND[:NAME]", help="derives the condition and checks rows "
                        "(default: the first synthesize model)")
    parser.add_argument("--base-url", default=None, help="the models' OpenAI-compatible server")
    parser.add_argument("--synthesize-rows", type=int, default=20, help="accepted rows to add per instance")
    parser.add_argument("--per-call", type=int, default=20, help="rows asked for per generation request")
    parser.add_argument("--patience", type=int, default=5, help="stop after this many rounds without a new row")
    parser.add_argument("--check", choices=("batch", "row"), default="batch")
    cache = parser.add_mutually_exclusive_group()
    cache.add_argument("--cache", type=Path, help="response cache file")
    cache.add_argument("--no-cache", action="store_true")
    return parser


def _database(args: argparse.Namespace) -> Database:
    if args.rfqa:
        return load_rfqa_database(args.rfqa, DataContext.from_env(args.data_dir))
    if args.csv:
        return Database.from_csv_folder(args.csv)
    return load_scitab_database(args.scitab)


def _models(text: str) -> list[str]:
    specs = [m.strip() for m in text.split(",") if m.strip()]
    if not specs:
        raise UsageError("--synthesize-model: give at least one BACKEND[:NAME]")
    return specs


async def synthesize(instances: list[Instance], args: argparse.Namespace) -> list[Instance]:
    """Every Table and Table+Text instance with synthesized noisy rows, its models taken from the active
    model pool (``other_model``)."""
    generators = [other_model(spec, args.base_url) for spec in _models(args.synthesize_model)]
    checker = other_model(args.check_model, args.base_url) if args.check_model else generators[0]
    out = []
    for instance in instances:
        if instance.knowledge_type not in ("table", "table+text"):
            out.append(instance)
            continue
        report = await synthesize_noisy_rows(
            instance,
            generators,
            checker=checker,
            target=args.synthesize_rows,
            per_call=args.per_call,
            check=args.check,
            patience=args.patience,
        )
        by_model = ", ".join(f"{n} from model {i + 1}" for i, n in sorted(report.accepted_by_model.items()))
        print(
            f"{instance.id}: {len(report.rows)} of {args.synthesize_rows} rows kept ({by_model or 'none'}), "
            f"{report.rejected} rejected, {report.malformed} malformed, {report.calls} calls"
            + (" (stopped: no new row for a while)" if report.stalled else ""),
            file=sys.stderr,
        )
        out.append(with_noisy_rows(instance, report.rows))
    return out


Synthesize = Callable[[list[Instance], argparse.Namespace], Coroutine[Any, Any, list[Instance]]]
"""``synthesize`` inside a model pool (what the command opens around it)."""


def main(argv: Sequence[str] | None, synthesize_in_pool: Synthesize) -> int:
    """The command: build, optionally synthesize noisy rows (``synthesize_in_pool``), write; the exit code."""
    args = _parser().parse_args(argv)
    try:
        kinds = [k.strip() for k in args.knowledge.split(",")] if args.knowledge != "all" else list(KNOWLEDGE_TYPES)
        unknown = [k for k in kinds if k not in KNOWLEDGE_TYPES]
        if unknown:
            raise UsageError(f"unknown knowledge type(s): {', '.join(unknown)}")
        templates = args.templates.split(",") if args.templates else None
        for name in templates or []:
            TEMPLATES.get(name)
        instances = build_instances(
            _database(args),
            args.questions,
            knowledge_types=[k for k in KNOWLEDGE_TYPES if k in kinds],
            seed=args.seed,
            templates=templates,
            min_rows=args.min_rows,
            min_columns=args.min_columns,
            max_rows=args.max_rows,
        )
        if args.synthesize_model:
            instances = asyncio.run(synthesize_in_pool(instances, args))
        count = write_instances(instances, args.out)
    except StructbenchError as err:
        print(f"error: {err}", file=sys.stderr)
        return err.exit_code
    except BackendError as err:
        print(f"error: a synthesis model call failed for good: {err} (nothing written; completed calls are "
              "cached, so running the same command again retries only what failed)", file=sys.stderr)
        return ExitCode.FAILED_SAMPLES
    print(f"wrote {count} instances to {args.out}", file=sys.stderr)
    return 0

