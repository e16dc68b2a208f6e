"""Testbed construction: budgets within 5%, positive units present (absent for rejection), positions."""

from __future__ import annotations

import random
from collections import defaultdict

import pytest

from structbench.backends.tokens import CountTokens as TokenCounter
from structbench.backends.tokens import token_counter
from structbench.benchmarks.skabench.testbeds import (
    INTEGRATION,
    NEGATIVE,
    NOISE,
    ORDER,
    Context,
    ContextBuilder,
    Skipped,
    default_budgets,
    parse_budget,
    positions_for,
)
from structbench.benchmarks.skabench.units import Instance, Passage, Row, Triple
from structbench.core.errors import UsageError

regex_count = token_counter("cl100k-approx")


def _within(context: Context, counter: TokenCounter) -> None:
    tokens = counter(context.knowledge)  # recounted here, not trusted from the builder
    assert tokens == context.tokens
    assert context.budget * 0.95 <= tokens <= context.budget, (context.instance.id, context.budget, tokens)


def _available(instance: Instance, builder: ContextBuilder) -> int:
    return sum(builder._tokens(u.line()) for u in [*instance.positive_units, *instance.noisy_units])


def _positive_present(context: Context) -> None:
    shown = [*context.structured, *context.texts]
    ids = {id(u) for u in shown}
    assert all(id(p) in ids for p in context.instance.positive_units)
    lines = {u.line() for u in shown}
    assert all(p.line() in lines for p in context.instance.positive_units)
    where = [context.structured[i] for i in context.positive_structured] + [
        context.texts[i] for i in context.positive_texts
    ]
    assert sorted(map(id, where)) == sorted(map(id, context.instance.positive_units))


def test_paper_budgets_hit_within_five_percent(
    world_instances: list[Instance], builder: ContextBuilder, cl100k: TokenCounter
) -> None:
    built: dict[tuple[str, int], int] = defaultdict(int)
    for instance in world_instances:
        for budget in default_budgets(NOISE, instance.knowledge_type):
            context = builder.build(instance, NOISE, budget, positions_for(NOISE, instance.knowledge_type)[0])
            if isinstance(context, Skipped):
                # Only when the whole knowledge base is too small for the budget.
                assert context.reason == "too little noise"
                assert _available(instance, builder) < budget
                continue
            _within(context, cl100k)
            _positive_present(context)
            built[(instance.knowledge_type, budget)] += 1
    expected = {("kg", b) for b in (1000, 4000, 12000, 24000)} | {("table", b) for b in (1000, 4000, 12000, 24000)}
    expected |= {(kt, b) for kt in ("kg+text", "table+text") for b in (4000, 12000, 24000)}
    assert expected <= set(built), expected - set(built)


def test_budget_up_to_128k(world_instances: list[Instance], builder: ContextBuilder, cl100k: TokenCounter) -> None:
    city_kg = next(i for i in world_instances if i.meta["table"] == "city" and i.knowledge_type == "kg")
    context = builder.build(city_kg, NOISE, parse_budget("128k"), "random")
    assert isinstance(context, Context)
    _within(context, cl100k)
    _positive_present(context)
    with pytest.raises(UsageError):
        parse_budget("129k")


def test_noise_is_nested_across_budgets_and_seeded(
    world_instances: list[Instance], builder: ContextBuilder, cl100k: TokenCounter
) -> None:
    instance = next(i for i in world_instances if i.knowledge_type == "kg" and i.meta["table"] != "city")
    small, large = (builder.build(instance, NOISE, b, "random") for b in (1000, 4000))
    assert isinstance(small, Context) and isinstance(large, Context)
    assert {id(u) for u in small.structured} <= {id(u) for u in large.structured}
    again = ContextBuilder(cl100k).build(instance, NOISE, 4000, "random")
    assert isinstance(again, Context) and again.knowledge == large.knowledge
    other = ContextBuilder(cl100k, seed=7).build(instance, NOISE, 4000, "random")
    assert isinstance(other, Context) and other.knowledge != large.knowledge


def test_kg_shuffled_and_tables_keep_row_order(world_instances: list[Instance], builder: ContextBuilder) -> None:
    for instance in world_instances:
        if instance.knowledge_type == "kg+text":
            continue
        context = builder.build(
            instance,
            NOISE,
            4000 if instance.knowledge_type != "table+text" else 12000,
            positions_for(NOISE, instance.knowledge_type)[0],
        )
        if isinstance(context, Skipped):
            continue
        if instance.knowledge_type.startswith("table"):
            orders = [u.order or 0 for u in context.structured if isinstance(u, Row)]
            assert orders == sorted(orders)
        else:
            # The shuffle interleaves the positives with noise (seed 42), it does not sort triples.
            subjects = [u.subject for u in context.structured if isinstance(u, Triple)]
            assert subjects != sorted(subjects)


def test_order_testbed_positions(
    world_instances: list[Instance], builder: ContextBuilder, cl100k: TokenCounter
) -> None:
    seen = set()
    for instance in world_instances:
        budget = default_budgets(ORDER, instance.knowledge_type)[0]
        for position in positions_for(ORDER, instance.knowledge_type):
            context = builder.build(instance, ORDER, budget, position)
            if isinstance(context, Skipped):
                continue
            _within(context, cl100k)
            _positive_present(context)
            n_struct, n_text = len(context.positive_structured), len(context.positive_texts)
            if position == "prefix":
                assert context.positive_structured == tuple(range(n_struct))
                assert context.positive_texts == tuple(range(n_text))
            elif position == "suffix":
                assert context.positive_structured == tuple(
                    range(len(context.structured) - n_struct, len(context.structured))
                )
                assert context.positive_texts == tuple(range(len(context.texts) - n_text, len(context.texts)))
            elif position == "original":
                orders = [u.order or 0 for u in context.structured if isinstance(u, Row)]
                assert orders == sorted(orders)
            seen.add((instance.knowledge_type, position))
    assert positions_for(ORDER, "kg") == ("prefix", "random", "suffix")
    assert positions_for(ORDER, "table") == ("original", "prefix", "random", "suffix")
    assert {("table", p) for p in ("original", "prefix", "random", "suffix")} <= seen
    assert {("kg", p) for p in ("prefix", "random", "suffix")} <= seen


def test_order_random_equals_noise_robustness_at_same_scale(
    world_instances: list[Instance], builder: ContextBuilder
) -> None:
    # As in the paper's Tables 3 and 4: KG "random" and Table "original" are the noise robustness 4k set.
    for kt, position in (("kg", "random"), ("table", "original")):
        instance = next(i for i in world_instances if i.knowledge_type == kt)
        a, b = builder.build(instance, NOISE, 4000, position), builder.build(instance, ORDER, 4000, position)
        assert isinstance(a, Context) and isinstance(b, Context) and a.knowledge == b.knowledge


def test_negative_rejection_has_only_noise(
    world_instances: list[Instance], builder: ContextBuilder, cl100k: TokenCounter
) -> None:
    built = 0
    for instance in world_instances:
        budget = default_budgets(NEGATIVE, instance.knowledge_type)[0]
        context = builder.build(instance, NEGATIVE, budget, positions_for(NEGATIVE, instance.knowledge_type)[0])
        if isinstance(context, Skipped):
            continue
        _within(context, cl100k)
        shown = {id(u) for u in [*context.structured, *context.texts]}
        assert not any(id(p) in shown for p in instance.positive_units)
        assert context.positive_structured == () and context.positive_texts == ()
        if instance.knowledge_type == "kg":
            lines = {u.line() for u in context.structured}
            assert not any(p.line() in lines for p in instance.positive_units)
        built += 1
    assert built >= len(world_instances) // 2


def _synthetic(n_noise: int, positives: int = 3) -> Instance:
    pos: list[Triple | Row | Passage] = [Triple(f"e{i}", "r", "v") for i in range(positives)]
    noise: list[Triple | Row | Passage] = [Triple(f"n{i}", "rel", f"value {i}") for i in range(n_noise)]
    noise += [Passage(f"noise paragraph {i} " * 20) for i in range(n_noise // 10)]
    noise += [Triple(f"g{i}", "r", "x", group=f"row{i // 2}") for i in range(40)]
    return Instance(
        id="syn",
        knowledge_type="kg+text",
        question="q",
        answers=["a"],
        positive_units=[*pos, Passage("pos text " * 5)],
        noisy_units=noise,
    )


@pytest.mark.parametrize("budget", [1000, 4000, 24000, 128000])
def test_budget_with_any_counter(budget: int) -> None:
    context = ContextBuilder(regex_count).build(_synthetic(30000), NOISE, budget, "random")
    assert isinstance(context, Context)
    _within(context, regex_count)
    _positive_present(context)


def test_groups_are_drawn_whole_and_skips_explained() -> None:
    builder = ContextBuilder(regex_count)
    context = builder.build(_synthetic(2000), INTEGRATION, 4000, "random")
    assert isinstance(context, Context)
    shown = {u.subject for u in context.structured if isinstance(u, Triple) and u.group}
    for i in range(20):
        assert (f"g{2 * i}" in shown) == (f"g{2 * i + 1}" in shown)
    short = builder.build(_synthetic(50), NOISE, 24000, "random")
    assert isinstance(short, Skipped) and short.reason == "too little noise"
    kept = ContextBuilder(regex_count, keep_underfull=True).build(_synthetic(50), NOISE, 24000, "random")
    assert isinstance(kept, Context) and kept.tokens < 24000 * 0.95
    over = builder.build(_synthetic(50, positives=600), NOISE, 1000, "random")
    assert isinstance(over, Skipped) and over.reason == "positives over budget"
    with pytest.raises(UsageError):
        builder.build(_synthetic(50), NOISE, 1000, "original")


def test_random_position_is_the_seeded_shuffle() -> None:
    instance = Instance(
        id="r",
        knowledge_type="table",
        question="q",
        answers=["a"],
        header=["x"],
        positive_units=[Row(("p1",), 5), Row(("p2",), 1)],
        noisy_units=[Row((f"n{i}",), i + 10) for i in range(10)],
    )
    context = ContextBuilder(regex_count, keep_underfull=True).build(instance, ORDER, 4000, "random")
    assert isinstance(context, Context)
    # Noise enters in one seeded draw (all of it fits); then positives + noise get one seeded shuffle.
    draw = [[i] for i in range(len(instance.noisy_units))]
    random.Random(42).shuffle(draw)
    arranged = [*instance.positive_units, *(instance.noisy_units[g[0]] for g in draw)]
    random.Random(42).shuffle(arranged)
    assert [u.line() for u in context.structured] == [u.line() for u in arranged]
    assert [context.structured[i].line() for i in context.positive_structured] == [
        u.line() for u in arranged if u in instance.positive_units
    ]
