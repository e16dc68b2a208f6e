"""Build SKA-Bench instances from a database (``structbench generate skabench``, the ``jsonl`` variant's input).

    structbench generate skabench --rfqa galois/world_1 --data-dir ../shared/datasets --questions 50 --out world.jsonl
    structbench generate skabench --csv my_tables/ --out mine.jsonl
    structbench generate skabench --scitab sci_tab.json --min-rows 4 --out scitab.jsonl

``--synthesize-model BACKEND[:NAME][,BACKEND[:NAME]]`` adds LLM-synthesized noisy rows to every Table and
Table+Text instance (the paper's pipeline, ``synthesis``): the models take turns generating rows, the check model
derives the condition and checks them. The models come from the active model pool (``other_model``): the command
opens one of its own (``structbench.tools.skabench_build``), as a benchmark never imports the runner.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from structbench.benchmarks.skabench.builder import MAX_KEPT_ROWS, MAX_QUESTIONS, MAX_ROWS, iter_instances
from structbench.benchmarks.skabench.database import Database
from structbench.benchmarks.skabench.sources import load_rfqa_database, load_scitab_database
from structbench.benchmarks.skabench.synthesis import synthesize_noisy_rows, with_noisy_rows
from structbench.benchmarks.skabench.templates import TEMPLATES
from structbench.benchmarks.skabench.units import KNOWLEDGE_TYPES, Instance
from structbench.contract.benchmark import other_model
from structbench.core.bounds import at_most
from structbench.core.errors import UsageError
from structbench.data.datasets import DataContext


@dataclass(frozen=True)
class Source:
    """Where the tables come from: exactly one of a RelationalFactQA database, a folder of CSV tables, SciTab."""

    rfqa: str | None = None
    csv: Path | None = None
    scitab: Path | None = None
    data_dir: Path | None = None

    def database(self) -> Database:
        given = [flag for flag, value in (("--rfqa", self.rfqa), ("--csv", self.csv), ("--scitab", self.scitab))
                 if value is not None]
        if len(given) != 1:
            raise UsageError(f"give exactly one of --rfqa, --csv, --scitab (given: {', '.join(given) or 'none'})")
        if self.rfqa is not None:
            return load_rfqa_database(self.rfqa, DataContext.from_env(self.data_dir))
        if self.csv is not None:
            return Database.from_csv_folder(self.csv)
        assert self.scitab is not None
        return load_scitab_database(self.scitab)


@dataclass(frozen=True)
class Shape:
    """Which instances: how many questions, of which knowledge types and templates, over which tables."""

    questions: int = 30
    knowledge: str = "all"
    templates: str | None = None
    seed: int = 0
    min_rows: int = 8
    min_columns: int = 3
    max_rows: int = MAX_ROWS

    def __post_init__(self) -> None:
        at_most("--questions", self.questions, MAX_QUESTIONS)
        at_most("--max-rows", self.max_rows, MAX_KEPT_ROWS)


MAX_SYNTHESIZED_ROWS = 200_000
"""The most rows synthesized per instance (``core.bounds``): over a hundred times the paper's 1,522 on average."""
MAX_PER_CALL = 1_000
"""The most rows asked for per request: 50 times the paper's 20, more than a reply holds."""
MAX_PATIENCE = 1_000
"""The most fruitless rounds in a row before giving up."""


@dataclass(frozen=True)
class Synthesis:
    """The noisy-row synthesis of ``--synthesize-model``: the models taking turns, the checking model (default: the
    first), the rows wanted per instance and asked for per request, and when to give up."""

    models: str
    check_model: str | None = None
    base_url: str | None = None
    rows: int = 20
    per_call: int = 20
    patience: int = 5
    check: Literal["batch", "row"] = "batch"

    def __post_init__(self) -> None:
        at_most("--synthesize-rows", self.rows, MAX_SYNTHESIZED_ROWS)
        at_most("--per-call", self.per_call, MAX_PER_CALL)
        at_most("--patience", self.patience, MAX_PATIENCE)


def build(source: Source, shape: Shape, note: Callable[[str], None] | None = None) -> Iterator[Instance]:
    """The instances of ``shape`` over ``source``'s database, each built as it is read (each holds a whole table's
    units: thousands of questions are gigabytes); the options are checked and the database read at once. Fewer
    questions than asked: one line to ``note`` once the last is read (``builder.shortfall``)."""
    kinds = [k.strip() for k in shape.knowledge.split(",")] if shape.knowledge != "all" else list(KNOWLEDGE_TYPES)
    unknown = [k for k in kinds if k not in KNOWLEDGE_TYPES]
    if unknown:
        raise UsageError(f"unknown knowledge type(s): {', '.join(unknown)} (known: {', '.join(KNOWLEDGE_TYPES)})")
    templates = shape.templates.split(",") if shape.templates else None
    for name in templates or []:
        TEMPLATES.get(name)
    return iter_instances(
        source.database(),
        shape.questions,
        knowledge_types=[k for k in KNOWLEDGE_TYPES if k in kinds],
        seed=shape.seed,
        templates=templates,
        min_rows=shape.min_rows,
        min_columns=shape.min_columns,
        max_rows=shape.max_rows,
        note=note,
    )


def _models(text: str) -> list[str]:
    specs = [m.strip() for m in text.split(",") if m.strip()]
    if not specs:
        raise UsageError("--synthesize-model: give at least one BACKEND[:NAME]")
    return specs


async def synthesize(
    instances: Iterable[Instance], synthesis: Synthesis, note: Callable[[str], None]
) -> AsyncIterator[Instance]:
    """Every Table and Table+Text instance with synthesized noisy rows, as each is done (a stream), its models taken
    from the active model pool (``other_model``); ``note`` gets one line per instance."""
    generators = [other_model(spec, synthesis.base_url) for spec in _models(synthesis.models)]
    checker = other_model(synthesis.check_model, synthesis.base_url) if synthesis.check_model else generators[0]
    for instance in instances:
        if instance.knowledge_type not in ("table", "table+text"):
            yield instance
            continue
        report = await synthesize_noisy_rows(
            instance,
            generators,
            checker=checker,
            target=synthesis.rows,
            per_call=synthesis.per_call,
            check=synthesis.check,
            patience=synthesis.patience,
        )
        by_model = ", ".join(f"{n} from model {i + 1}" for i, n in sorted(report.accepted_by_model.items()))
        note(
            f"{instance.id}: {len(report.rows)} of {synthesis.rows} rows kept ({by_model or 'none'}), "
            f"{report.rejected} rejected, {report.malformed} malformed, {report.calls} calls"
            + (" (stopped: no new row for a while)" if report.stalled else "")
        )
        yield with_noisy_rows(instance, report.rows)
