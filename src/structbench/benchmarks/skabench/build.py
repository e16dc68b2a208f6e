"""Build SKA-Bench instances from a database and write them as JSONL (the ``jsonl`` variant's input).

    python -m structbench.benchmarks.skabench.build --rfqa galois/world_1 --data-dir ../shared/datasets \\
        --questions 50 --out world.jsonl
    python -m structbench.benchmarks.skabench.build --csv my_tables/ --out mine.jsonl
    python -m structbench.benchmarks.skabench.build --scitab sci_tab.json --min-rows 4 --out scitab.jsonl

``--synthesize-model BACKEND[:NAME]`` adds LLM-synthesized noisy rows to every table instance (the
paper's pipeline, ``synthesis``), e.g. ``--synthesize-model openai:gpt-4o --base-url ...``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

from structbench.benchmarks.skabench.builder import MAX_ROWS, build_instances
from structbench.benchmarks.skabench.database import Database
from structbench.benchmarks.skabench.instances import write_instances
from structbench.benchmarks.skabench.sources import load_rfqa_database, load_scitab_database
from structbench.benchmarks.skabench.synthesis import synthesize_noisy_rows, with_noisy_rows
from structbench.benchmarks.skabench.templates import TEMPLATES
from structbench.benchmarks.skabench.units import KNOWLEDGE_TYPES, Instance
from structbench.datasets import DataContext
from structbench.errors import StructbenchError, UsageError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m structbench.benchmarks.skabench.build",
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
    parser.add_argument("--max-rows", type=int, default=MAX_ROWS, help="rows of a large table kept per instance")
    parser.add_argument("--synthesize-model", metavar="BACKEND[:NAME]", help="add LLM-synthesized noisy rows")
    parser.add_argument("--base-url", default=None)
    parser.add_argument("--synthesize-rows", type=int, default=20)
    parser.add_argument("--check", choices=("batch", "row"), default="batch")
    return parser


def _database(args: argparse.Namespace) -> Database:
    if args.rfqa:
        return load_rfqa_database(args.rfqa, DataContext.from_env(args.data_dir))
    if args.csv:
        return Database.from_csv_folder(args.csv)
    return load_scitab_database(args.scitab)


async def _synthesize(instances: list[Instance], args: argparse.Namespace) -> list[Instance]:
    from structbench.backends.factory import BackendSpec, make_backend

    backend = make_backend(BackendSpec.parse(args.synthesize_model, base_url=args.base_url))
    try:
        out = []
        for instance in instances:
            if instance.knowledge_type != "table":
                out.append(instance)
                continue
            report = await synthesize_noisy_rows(
                instance, backend.generate, target=args.synthesize_rows, check=args.check
            )
            print(
                f"{instance.id}: {len(report.rows)} rows kept, {report.rejected} rejected, "
                f"{report.malformed} malformed, {report.calls} calls",
                file=sys.stderr,
            )
            out.append(with_noisy_rows(instance, report.rows))
        return out
    finally:
        await backend.aclose()


def main(argv: Sequence[str] | None = None) -> int:
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
            max_rows=args.max_rows,
        )
        if args.synthesize_model:
            instances = asyncio.run(_synthesize(instances, args))
        count = write_instances(instances, args.out)
    except StructbenchError as err:
        print(f"error: {err}", file=sys.stderr)
        return err.exit_code
    print(f"wrote {count} instances to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
