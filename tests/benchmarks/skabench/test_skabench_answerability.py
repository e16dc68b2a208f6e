"""What a context lets a reader answer: each question's SQL re-run on the cells a context shows.

A context is read back into a table (the rows, triples and paragraphs it shows, every other cell NULL) and
the instance's own SQL runs on it. Noise robustness contexts give back exactly the gold answers; negative
rejection contexts give no answer at all, for every question that takes part in that testbed.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

from structbench.backends.tokens import token_counter
from structbench.benchmarks.skabench import SkaBench
from structbench.benchmarks.skabench.builder import build_instances, format_value
from structbench.benchmarks.skabench.database import Database
from structbench.benchmarks.skabench.forms import profile
from structbench.benchmarks.skabench.metrics import normalize
from structbench.benchmarks.skabench.sources import load_rfqa_database
from structbench.benchmarks.skabench.testbeds import (
    INTEGRATION,
    NEGATIVE,
    NOISE,
    Context,
    ContextBuilder,
    Skipped,
    default_budgets,
    default_position,
)
from structbench.benchmarks.skabench.units import KNOWLEDGE_TYPES, Instance, Row, Triple
from structbench.data import csvdb
from structbench.data.datasets import DataContext

DECLARED = {"BIGINT": "INTEGER", "DOUBLE": "REAL", "VARCHAR": "STRING", "BOOLEAN": "BOOLEAN"}


def shown_cells(db: Database, instance: Instance, context: Context) -> dict[int, dict[int, str]]:
    """Row -> column -> cell text, for every cell the context shows (a triple's subject shows the subject
    column of a table whose entities are named by it)."""
    rel = db.relations[instance.meta["table"]]
    table = profile(rel)
    by_subject = {table.subject(r): r for r in range(len(rel.cells))}
    column = {name: j for j, name in enumerate(rel.columns)}
    text_columns = [column[c] for c in instance.meta["text_columns"]]
    shown: dict[int, dict[int, str]] = defaultdict(dict)

    def show(row: int, j: int) -> None:
        cell = rel.cells[row][j]
        if cell is not None:
            shown[row][j] = cell

    for unit in context.structured:
        if isinstance(unit, Row):
            assert unit.order is not None
            for name in instance.header or []:
                show(unit.order, column[name])
        else:
            assert isinstance(unit, Triple)
            row = by_subject[unit.subject]
            show(row, column[unit.relation])
            if table.natural_subject and table.subject_column is not None:
                show(row, table.subject_column)
    for passage in context.texts:
        parts = passage.text.split(": ")
        prefixes = [": ".join(parts[:k]) for k in range(1, len(parts))]
        subject = max((p for p in prefixes if p in by_subject), key=len)
        row = by_subject[subject]
        for j in text_columns:
            show(row, j)
        if table.natural_subject and table.subject_column is not None:
            show(row, table.subject_column)
    return shown


SHOWN = csvdb.Database(key="shown")


def answers_on(db: Database, instance: Instance, shown: dict[int, dict[int, str]]) -> set[str]:
    """The instance's SQL over a table holding only the shown cells."""
    rel = db.relations[instance.meta["table"]]
    rows = [[cells.get(j) for j in range(len(rel.columns))] for _, cells in sorted(shown.items())]
    declared = {key: DECLARED[ty] for key, ty in zip(rel.keys, rel.types, strict=True)}
    csvdb.load_rows(SHOWN, rel.name, rel.columns, rows, declared)
    try:
        _, _, result = SHOWN.execute(instance.meta["sql"], instance.meta["params"])
    finally:
        SHOWN.execute(f"DROP TABLE {csvdb.quote(rel.name)}")
        del SHOWN.tables[rel.name]
    return {normalize(format_value(r[0])) for r in result if r[0] is not None}


@pytest.fixture(scope="module")
def world(shared_data: DataContext) -> Database:
    return load_rfqa_database("galois/world_1", shared_data)


@pytest.fixture(scope="module")
def instances(world: Database) -> list[Instance]:
    return build_instances(world, 36, seed=21)


def test_noise_contexts_answer_the_gold_and_negative_contexts_answer_nothing(
    world: Database, instances: list[Instance]
) -> None:
    builder = ContextBuilder(token_counter("cl100k-approx"), keep_underfull=True)
    checked: Counter[tuple[str, str]] = Counter()
    for instance in instances:
        budget = default_budgets(NEGATIVE, instance.knowledge_type)[0]
        position = default_position(instance.knowledge_type)
        noise = builder.build(instance, NOISE, budget, position)
        if not isinstance(noise, Skipped):
            gold = {normalize(a) for a in instance.answers}
            assert answers_on(world, instance, shown_cells(world, instance, noise)) == gold, instance.question
            checked[("noise", instance.meta["template"])] += 1
        if not instance.negative_rejection:
            continue
        negative = builder.build(instance, NEGATIVE, budget, position)
        assert not isinstance(negative, Skipped)
        shown = shown_cells(world, instance, negative)
        assert shown, instance.id  # the context is not empty: noise is there, just nothing that answers
        assert answers_on(world, instance, shown) == set(), (instance.id, instance.question)
        checked[("negative", instance.meta["template"])] += 1
    templates = {"lookup", "filter", "multi_row", "max_min", "comparison"}
    assert {t for kind, t in checked if kind == "negative"} == templates
    assert {t for kind, t in checked if kind == "noise"} == templates | {"count"}
    assert {i.knowledge_type for i in instances if i.negative_rejection} == set(KNOWLEDGE_TYPES)


def test_counts_stay_out_of_negative_rejection(world: Database, instances: list[Instance]) -> None:
    counts = [i for i in instances if i.meta["template"] == "count"]
    assert counts and all(not i.negative_rejection for i in counts)
    assert all(i.negative_rejection for i in instances if i.meta["template"] != "count")
    bench = SkaBench({"testbed": "negative", "tokenizer": "regex", "underfull": "keep"})
    samples = bench.samples(instances, "rfqa")
    assert samples and {s.extra["source"]["template"] for s in samples} == {
        "lookup",
        "filter",
        "multi_row",
        "max_min",
        "comparison",
    }
    assert bench.skipped["negative rejection: the question stays answerable without its positives"] == len(counts)


def test_integration_counts_every_row_an_aggregate_looks_at(world: Database, instances: list[Instance]) -> None:
    seen: set[str] = set()
    for instance in instances:
        if instance.knowledge_type != "table":
            continue
        template = instance.meta["template"]
        lineage, candidates = instance.meta["lineage_rows"], instance.meta["candidate_rows"]
        rows = sorted(u.order for u in instance.positive_units if isinstance(u, Row))
        assert rows == candidates and set(lineage) <= set(candidates)
        if template in ("max_min", "filter"):
            # the answer is one row, but telling it apart takes every row of its group
            assert len(lineage) == 1 and len(candidates) >= 2
            seen.add(template)
    assert seen == {"max_min", "filter"}
    bench = SkaBench({"testbed": "integration", "tokenizer": "regex", "underfull": "keep", "knowledge": "table"})
    for sample in bench.samples([i for i in instances if i.knowledge_type == "table"], "rfqa"):
        assert sample.task == INTEGRATION
        count = len(sample.extra["source"]["candidate_rows"])
        assert sample.extra["positive_count"] == count
        assert sample.meta["positive_units"] == (str(count) if count <= 4 else ">4")
