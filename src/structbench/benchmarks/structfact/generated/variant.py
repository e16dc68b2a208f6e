"""``structfact:generated``: questions generated from the ``tables`` option, or a saved set re-checked."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from structbench.backends.tokens import TokenCounter, token_counter
from structbench.benchmarks.structfact.generated.generator import BUDGET, Generator, Question
from structbench.benchmarks.structfact.generated.options import GeneratedOptions
from structbench.benchmarks.structfact.generated.profile import World
from structbench.benchmarks.structfact.generated.release import checked_records
from structbench.benchmarks.structfact.generated.tables import load_tables
from structbench.benchmarks.structfact.loader import record_to_sample
from structbench.contract.benchmark import Samples
from structbench.core.errors import DataError, UsageError
from structbench.data.datasets import DataContext
from structbench.data.sample import Sample

GENERATED = "generated"


def generate_set(
    tables: str,
    data: DataContext,
    *,
    per_task: int,
    label_mix: str = "paper",
    seed: int = 0,
    counter: TokenCounter | None = None,
    budget: int = BUDGET,
    check: bool = True,
    note: Callable[[str], None] | None = None,
) -> list[Question]:
    """Questions from the tables named by ``tables`` (see ``tables.py``), every label checked; a task that got fewer
    than ``per_task`` is one line to ``note`` (``Generator.stream``)."""
    return list(stream_set(tables, data, per_task=per_task, label_mix=label_mix, seed=seed, counter=counter,
                           budget=budget, check=check, note=note)[0])


def stream_set(
    tables: str,
    data: DataContext,
    *,
    per_task: int,
    label_mix: str = "paper",
    seed: int = 0,
    counter: TokenCounter | None = None,
    budget: int = BUDGET,
    check: bool = True,
    first: int | None = None,
    note: Callable[[str], None] | None = None,
) -> tuple[Iterator[Question], int]:
    """``generate_set``'s questions, each made when it is read, and how many are asked for (``per_task`` for each
    task the tables allow); ``first``: how many the reader means to read, if it knows (``Generator.stream``). The
    tables are read, and a set they cannot make is refused, before it returns."""
    world = World.of(load_tables(tables, data))
    generator = Generator(world, counter or token_counter("regex"), budget=budget, check=check)
    if not generator.tasks():
        raise DataError(
            f"tables={tables}: no question can be made from these tables (each needs a column of short, mostly "
            "distinct names and at least one other column)"
        )

    def questions() -> Iterator[Question]:
        made = False
        for question in generator.stream(per_task, label_mix, seed=seed, first=first, note=note):
            made = True
            yield question
        if not made:
            raise DataError(f"tables={tables}: no question could be generated from these tables")

    return questions(), per_task * len(generator.tasks())


def generated_samples(options: GeneratedOptions, data: DataContext, *, seed: int, limit: int | None = None
                      ) -> Iterable[Sample]:
    """The variant's samples: generated with the run's seed as they are read (a stream: ``benchmark.Samples``; the
    first ``limit`` are all the reader takes), or read from ``questions_file`` and re-checked (a list)."""
    if options.questions_file is not None:
        clash = sorted(options.model_fields_set & {"tables", "per_task", "label_mix"})
        if clash:
            names = ", ".join(clash)
            raise UsageError(f"structfact:{GENERATED}: --option {names} cannot be used with questions_file=FILE")
        path = Path(options.questions_file).expanduser()
        if not path.is_file():
            raise DataError(f"questions_file={path}: not a file")
        samples = [record_to_sample(r, i, GENERATED, where, seed) for where, i, r in checked_records(path)]
        if not samples:
            raise DataError(f"{path}: no records")
        if len({s.id for s in samples}) != len(samples):
            raise DataError(f"{path}: duplicate ID fields")
        return samples
    questions, expected = stream_set(
        options.tables,
        data,
        per_task=options.per_task,
        label_mix=options.label_mix,
        seed=seed,
        counter=token_counter(options.token_counter),
        budget=options.max_evidence_tokens or BUDGET,
        first=limit,
    )
    made = (record_to_sample(q.record(), q.id, GENERATED, f"generated question {q.id}", seed) for q in questions)
    return Samples(made, expected=expected)
