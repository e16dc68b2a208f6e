"""Outcomes as columns: they read back as the ``Scored`` objects they hold, and metrics, breakdowns, epochs,
intervals and baselines computed from them equal those computed from the objects."""

from __future__ import annotations

import random

import numpy as np
import pytest

from structbench.benchmarks.scitab import BENCHMARK as SCITAB
from structbench.benchmarks.structfact import BENCHMARK as STRUCTFACT
from structbench.contract.benchmark import CORRECTED, Scored, corrected_scored
from structbench.runfiles.outcomes import Growing, Outcomes, value_key
from structbench.runfiles.results import compute_result
from structbench.stats.baselines import _chance_by_statistic, answered
from structbench.stats.metric import metric_interval

LABELS = ["YES", "NO", "NOT SURE ENOUGH"]


def _pool(n: int, *, epochs: int = 1, seed: int = 0) -> list[Scored]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        gold = rng.choice(LABELS)
        for epoch in range(epochs):
            parsed = rng.choice([*LABELS, None])
            meta = {"source": rng.choice(["a", "b"]), "difficulty": rng.choice([1, "1", 2, None])}
            if i % 5:
                meta["structure"] = "table"
            values = {"vote_share": rng.random()} if i % 3 else {}
            out.append(Scored(id=f"q{i:04d}", task=rng.choice(["t1", "t2"]), parsed=parsed, gold=gold,
                              score=float(parsed == gold), values=values, meta=meta,
                              cluster=None if i % 7 == 0 else f"table{i // 4}", epoch=epoch))
    return out


def test_outcomes_read_back_as_the_objects_they_hold() -> None:
    pool = _pool(50, epochs=2)
    pool.append(Scored(id="odd", task="t", parsed=[["a", 1], {"k": True}], gold=[1.0, None], score=0.5,
                       values={"x": float("nan")}, meta={"complexity": ["join", "filter"]}))
    outcomes = Outcomes.of(pool)
    assert len(outcomes) == len(pool)
    assert list(outcomes)[:-1] == pool[:-1]
    last = outcomes[-1]
    assert last.model_dump_json() == pool[-1].model_dump_json() and last.values["x"] != last.values["x"]  # NaN kept
    assert last.parsed == [["a", 1], {"k": True}] and outcomes[3] == pool[3]
    assert list(outcomes[10:13]) == pool[10:13]
    assert list(outcomes.take([5, 5, 0])) == [pool[5], pool[5], pool[0]]


def test_values_that_python_finds_equal_but_json_tells_apart_stay_apart() -> None:
    assert len({value_key(v) for v in (1, 1.0, True, "1")}) == 4
    outcomes = Outcomes.of([Scored(id=str(i), task="t", parsed=v, gold=v, score=1.0)
                            for i, v in enumerate([1, 1.0, True])])
    assert [type(s.parsed) for s in outcomes] == [int, float, bool]


def test_breakdown_groups_are_the_values_as_text_and_none_is_in_no_group() -> None:
    pool = _pool(60)
    groups = dict(Outcomes.of(pool).groups("difficulty"))
    assert set(groups) == {"1", "2"}  # 1 and "1" are one group, as metrics.json names them; None is none
    assert [pool[i].id for i in groups["1"]] == [s.id for s in pool if s.meta.get("difficulty") in (1, "1")]
    assert dict(Outcomes.of(pool).groups("structure"))["table"].tolist() == [i for i in range(60) if i % 5]


@pytest.mark.parametrize("epochs", [1, 3])
def test_a_result_from_columns_equals_the_result_from_objects(epochs: int) -> None:
    """``compute_result`` reads columns; fed the objects one at a time (a plain sequence that is not a list, so no
    column shortcut applies inside the benchmark), each number is the same."""
    pool = _pool(120, epochs=epochs)
    bench = STRUCTFACT()
    from_columns = compute_result(bench, "generated", "zero_shot", "m", Outcomes.of(pool))
    metrics = bench.aggregate(pool) if epochs == 1 else None
    if metrics is not None:
        assert from_columns.metrics == pytest.approx(metrics)
    for key, groups in from_columns.breakdowns.items():
        for value, group in groups.items():
            members = [s for s in pool if str(s.task if key == "task" else s.meta.get(key)) == value]
            assert group.n == len({s.id for s in members})
            if epochs == 1:
                assert group.metrics == pytest.approx(bench.aggregate(members))
    assert from_columns.n == 120
    if epochs > 1:
        assert from_columns.epochs is not None and from_columns.epochs.outcomes == 360
        by_id: dict[str, list[object]] = {}
        for s in pool:
            by_id.setdefault(s.id, []).append(s.parsed)
        same = [len({repr(p) for p in answers}) == 1 for answers in by_id.values()]
        assert from_columns.epochs.agreement == pytest.approx(sum(same) / len(same))


@pytest.mark.parametrize("by", ["cluster", "sample"])
@pytest.mark.parametrize("epochs", [1, 2])
def test_an_interval_over_columns_is_the_interval_over_objects(by: str, epochs: int) -> None:
    pool = _pool(300, epochs=epochs, seed=4)
    random.Random(1).shuffle(pool)  # written in any order: the canonical order decides
    for bench, metric in ((STRUCTFACT(), "weighted_f1"), (STRUCTFACT(), "accuracy")):
        objects = metric_interval(pool, bench, metric, by=by, variant="generated")  # type: ignore[arg-type]
        columns = metric_interval(Outcomes.of(pool), bench, metric, by=by, variant="generated")  # type: ignore[arg-type]
        assert columns == objects


def test_corrected_twins_from_columns_are_the_objects_twins() -> None:
    pool = [Scored(id=str(i), task="t", parsed="a", gold="a", score=0.25 * i,
                   values={"rougeL": 0.1 * i, f"{CORRECTED}rougeL": 0.2 * i, f"{CORRECTED}score": 0.5})
            for i in range(4)]
    twins = Outcomes.of(pool).corrected()
    assert twins is not None
    assert list(twins) == [corrected_scored(s) for s in pool]
    assert Outcomes.of([*pool[:2], Scored(id="x", task="t", parsed=None, gold=None, score=0.0)]).corrected() is None


@pytest.mark.parametrize("bench, labels, metric", [
    (STRUCTFACT(), LABELS, "weighted_f1"),
    (STRUCTFACT(), LABELS, "macro_f1"),
    (SCITAB(), ["supports", "refutes", "not enough info"], "macro_f1"),
])
def test_chance_through_the_statistic_is_chance_through_aggregate(bench: object, labels: list[str],
                                                                   metric: str) -> None:
    rng = random.Random(2)
    pool = [Scored(id=str(i), task="t", parsed=None, gold=rng.choice(labels[:2] if i % 4 else labels), score=0.0,
                   meta={"setting": "3-class"}) for i in range(80)]
    picks = np.random.default_rng(0).integers(0, len(labels), size=(25, len(pool)))
    by_aggregate = [bench.aggregate(answered(pool, [labels[i] for i in row]))[metric] for row in picks]  # type: ignore[attr-defined]
    for given in (pool, Outcomes.of(pool)):
        fast = _chance_by_statistic(bench, given, labels, metric, picks)
        assert fast is not None and fast == pytest.approx(by_aggregate, abs=1e-12)
    assert STRUCTFACT().baselines(Outcomes.of(pool)) == pytest.approx(STRUCTFACT().baselines(pool))


def test_a_growing_column_reads_as_every_set_in_turn() -> None:
    """Rows appended in order wait in a list (#44); skipped rows, rewritten rows, ``grow_to`` and reads between
    sets give what setting each row of an array in turn gives."""
    rng = random.Random(3)
    column, model = Growing(np.int64, -1), []
    for _ in range(400):
        pick = rng.random()
        if pick < 0.6 or not model:
            row = len(model)  # the next row
        elif pick < 0.75:
            row = len(model) + rng.randint(1, 40)  # past the end: the rows between keep the fill
        elif pick < 0.9:
            row = rng.randrange(len(model))  # a row already set, rewritten
        else:
            size = len(model) + rng.randint(0, 20)
            column.grow_to(size)
            model += [-1] * (size - len(model))
            continue
        value = rng.randint(0, 10**6)
        model += [-1] * (row + 1 - len(model))
        model[row] = value
        column.set(row, value)
        if rng.random() < 0.1:
            assert column.array().tolist() == model
        assert column.size == len(model)
    assert column.array().tolist() == model
