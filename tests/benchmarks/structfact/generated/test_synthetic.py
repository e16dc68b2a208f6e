"""The fictional world (``tables=synthetic``): fixed, linked, and enough for every task, with no download."""

from __future__ import annotations

from structbench.benchmarks.structfact.generated.profile import World
from structbench.benchmarks.structfact.generated.synthetic import synthetic_tables
from structbench.benchmarks.structfact.generated.variant import generate_set
from structbench.data.datasets import DataContext


def test_the_world_is_the_same_on_every_call_and_linked() -> None:
    first, second = synthetic_tables(), synthetic_tables()
    assert first == second
    assert [t.name for t in first] == ["country", "city", "athlete"]
    world = World.of(first)
    links = {(link.source.name, link.column.name, link.target.name) for p in world.profiles for link in p.links}
    assert ("city", "country", "country") in links and ("athlete", "country", "country") in links
    names = [row[0] for table in first for row in table.rows]
    assert len(names) == len(set(names))  # no country, city or athlete shares a name


def test_every_task_and_label_from_the_world_offline() -> None:
    questions = generate_set("synthetic", DataContext(offline=True), per_task=30, label_mix="balanced", seed=3)
    records = [q.record() for q in questions]
    assert len({r["CHALLENGE"] for r in records}) == 5
    assert {r["LABEL"] for r in records} == {"YES", "NO", "NOT SURE ENOUGH"}
    assert {r["SOURCE"] for r in records} == {"synthetic/world"}
