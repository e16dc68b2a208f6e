"""The generator's label (SQL over the shown cells) on hand-built evidence, and the check agreeing with it."""

from __future__ import annotations

import pytest

from structbench.benchmarks.structfact.generated.claims import (
    Aggregate,
    And,
    Best,
    Cell,
    Compare,
    Count,
    Year,
    cell,
    compare,
    to_json,
)
from structbench.benchmarks.structfact.generated.execute import Executor
from structbench.benchmarks.structfact.generated.profile import Column, Profile, World, profile_column
from structbench.benchmarks.structfact.generated.source_table import SourceTable
from structbench.benchmarks.structfact.generated.verify import verify
from structbench.benchmarks.structfact.generated.views import Evidence, Form, Unrenderable, View


def _table(world: World, name: str) -> Profile:
    return next(p for p in world.profiles if p.name == name)


def _column(p: Profile, name: str) -> Column:
    return next(c for c in p.columns if c.name == name)


def _rows(p: Profile, *names: str) -> list[int]:
    assert p.key is not None
    return [p.key.values.index(n) for n in names]


def _view(p: Profile, names: tuple[str, ...], columns: tuple[str, ...], form: Form = "table") -> View:
    assert p.key is not None
    return View(p, p.key, _rows(p, *names), [_column(p, c) for c in columns], form)


def both(claim: Compare | And, evidence: Evidence) -> str:
    """The executed label, after checking that the independent check reads the same from the strings."""
    executed = Executor().label(claim, evidence)
    assert verify(evidence.strings(), to_json(claim)) == executed
    return executed


@pytest.mark.parametrize("form", ["table", "infobox", "list", "graph", "text"])
def test_lookup_in_every_form(atlas_world: World, form: Form) -> None:
    countries = _table(atlas_world, "countries")
    view = _view(countries, ("France", "Japan", "Kenya"), ("continent", "population"), form)
    evidence = Evidence([view])
    asia = cell("countries", "name", "Japan", "continent")
    assert both(compare(asia, "=", "Asia", "text"), evidence) == "YES"
    assert both(compare(asia, "=", "Europe", "text"), evidence) == "NO"
    assert both(compare(cell("countries", "name", "Chile", "continent"), "=", "South America", "text"), evidence) == (
        "NOT SURE ENOUGH"
    )
    population = cell("countries", "name", "Kenya", "population")
    assert both(compare(population, ">", 50000000.0, "number"), evidence) == "YES"


def test_masked_hidden_and_missing_cells_are_unknown(atlas_world: World) -> None:
    countries = _table(atlas_world, "countries")
    view = _view(countries, ("France", "Japan", "Kenya"), ("capital", "population"))
    population = _column(countries, "population")
    view.masked[_rows(countries, "Japan")[0], population.index] = "N/A"
    evidence = Evidence([view])
    japan = cell("countries", "name", "Japan", "population")
    assert both(compare(japan, "=", 124516650.0, "number"), evidence) == "NOT SURE ENOUGH"
    best = Best(fn="max", table="countries", key="name", column="population")
    assert both(compare(best, "=", "France", "text"), evidence) == "NOT SURE ENOUGH"
    assert both(compare(cell("countries", "name", "Kenya", "capital"), "=", "Nairobi", "text"), evidence) == "YES"
    boxes = _view(countries, ("France", "Kenya"), ("capital", "population"), "infobox")
    boxes.hidden.add((_rows(countries, "Kenya")[0], population.index))
    kenya = cell("countries", "name", "Kenya", "population")
    assert both(compare(kenya, "=", 51526000.0, "number"), Evidence([boxes])) == "NOT SURE ENOUGH"
    cities = _table(atlas_world, "cities")
    lyon = cell("cities", "city name", "Lyon", "first recorded")  # empty in the source
    only_lyon = Evidence([_view(cities, ("Lyon",), ("first recorded",))])
    assert both(compare(Year(of=lyon), "<", 2000.0, "number"), only_lyon) == "NOT SURE ENOUGH"


def test_whole_table_claims_need_every_value(atlas_world: World) -> None:
    countries = _table(atlas_world, "countries")
    names = ("France", "Germany", "Norway")
    total = Aggregate(fn="sum", table="countries", column="area km2")
    full = Evidence([_view(countries, names, ("area km2",))])
    assert both(compare(total, "=", 551695.0 + 357588.0 + 385207.0, "number"), full) == "YES"
    assert both(compare(total, "=", 551695.0 + 357588.0, "number"), full) == "NO"
    assert both(compare(total, "=", 1.0, "number"), Evidence([_view(countries, names, ("capital",))])) == (
        "NOT SURE ENOUGH"
    )
    count = Count(table="countries", column="area km2", cmp=">", value=360000.0)
    assert both(compare(count, "=", 2.0, "number"), full) == "YES"
    best = Best(fn="min", table="countries", key="name", column="area km2")
    assert both(compare(best, "=", "Germany", "text"), full) == "YES"


def test_chains_need_every_hop(atlas_world: World) -> None:
    countries, cities, museums = (_table(atlas_world, n) for n in ("countries", "cities", "museums"))
    code = _column(countries, "code")
    city_name = _column(cities, "city name")
    museum_view = _view(museums, ("Louvre", "KODE"), ("city",))
    city_view = View(cities, city_name, _rows(cities, "Paris", "Bergen"), [_column(cities, "country code")])
    country_rows = [countries.key.values.index(n) for n in ("France", "Norway")] if countries.key else []
    country_view = View(countries, code, country_rows, [_column(countries, "continent")])
    chain = Cell(
        table="countries",
        key="code",
        entity=Cell(table="cities", key="city name", entity=cell("museums", "museum", "KODE", "city"),
                    column="country code"),
        column="continent",
    )
    for form in ("table", "graph"):
        views = [museum_view, city_view, country_view]
        for v in views:
            v.form = form  # type: ignore[assignment]
        assert both(compare(chain, "=", "Europe", "text"), Evidence(views)) == "YES"
        assert both(compare(chain, "=", "Asia", "text"), Evidence(views)) == "NO"
    city_view.rows.remove(_rows(cities, "Bergen")[0])
    assert both(compare(chain, "=", "Europe", "text"), Evidence([museum_view, city_view, country_view])) == (
        "NOT SURE ENOUGH"
    )


def test_text_and_table_combine(atlas_world: World) -> None:
    countries = _table(atlas_world, "countries")
    table = _view(countries, ("Chile", "Ghana", "Egypt"), ("continent",))
    text = _view(countries, ("Chile", "Ghana"), ("capital",), "text")
    claim = And(parts=[
        compare(cell("countries", "name", "Ghana", "continent"), "=", "Africa", "text"),
        compare(cell("countries", "name", "Ghana", "capital"), "=", "Accra", "text"),
    ])
    evidence = Evidence([table, text])
    assert both(claim, evidence) == "YES"
    assert evidence.strings()[1] == "The capital of Chile is Santiago.\nThe capital of Ghana is Accra."
    assert evidence.structured_strings() == evidence.strings()[:1]
    egypt = compare(cell("countries", "name", "Egypt", "capital"), "=", "Cairo", "text")
    assert both(egypt, evidence) == "NOT SURE ENOUGH"


def test_unrenderable_facts_are_refused(atlas_world: World) -> None:
    museums = _table(atlas_world, "museums")
    graph = _view(museums, ("Louvre",), ("opened",), "graph")  # "Aug 10, 1793" is fine as an object
    assert graph.strings() == ["(Louvre, opened, Aug 10, 1793)"]
    columns = (profile_column(0, "name", ["Washington, D.C."]), profile_column(1, "size", ["177"]))
    comma = Profile(SourceTable("csv/x", "t", ("name", "size"), (("Washington, D.C.", "177"),)), columns, columns[0])
    with pytest.raises(Unrenderable, match="triple"):
        Evidence([View(comma, columns[0], [0], [columns[1]], "graph")]).strings()
    with pytest.raises(Unrenderable, match="sentence value"):
        Evidence([View(comma, columns[1], [0], [columns[0]], "text")]).strings()


def test_one_executor_labels_question_after_question_alike(atlas_world: World) -> None:
    """The executor's tables are made once and emptied for each claim: a wide table's rows, or the rows of a
    table the next claim does not load, never reach it, and the schema changes only while tables are made."""
    countries, cities = _table(atlas_world, "countries"), _table(atlas_world, "cities")
    names = ("France", "Germany", "Norway")
    full = Evidence([_view(countries, names, ("area km2", "capital"))])
    fewer = Evidence([_view(countries, names[:2], ("area km2",))])
    city = Evidence([_view(cities, ("Lyon", "Paris"), ("country code",))])
    total = Aggregate(fn="sum", table="countries", column="area km2")
    count = Count(table="countries", column="area km2", cmp=">", value=0.0)
    oslo = cell("countries", "name", "Norway", "capital")
    behind = Evidence([*city.views, *full.views])  # the claim reads the second table only
    questions = [
        (compare(oslo, "=", "Oslo", "text"), behind),
        (compare(total, "=", 551695.0 + 357588.0 + 385207.0, "number"), full),
        (compare(cell("cities", "city name", "Lyon", "country code"), "=", "FR", "text"), city),
        (compare(count, "=", 2.0, "number"), fewer),
        (compare(oslo, "=", "Oslo", "text"), full),
        (compare(oslo, "=", "Oslo", "text"), fewer),
        (compare(count, "=", 3.0, "number"), full),
    ]
    executor = Executor()
    schema = []
    for claim, evidence in questions * 2:
        assert executor.label(claim, evidence) == Executor().label(claim, evidence) == both(claim, evidence)
        schema.append(executor.connection.execute("PRAGMA temp.schema_version").fetchone()[0])
    assert len(set(schema[len(questions):])) == 1  # the second round made no table


def test_shown_rows_and_facts_agree_with_shown(atlas_world: World) -> None:
    countries = _table(atlas_world, "countries")
    view = _view(countries, ("France", "Japan", "Kenya", "Chile"), ("capital", "population"), "list")
    japan, kenya = _rows(countries, "Japan", "Kenya")
    view.masked[japan, _column(countries, "population").index] = "N/A"
    view.hidden.add((kenya, _column(countries, "capital").index))
    every_row = range(len(countries.table.rows))
    for column in countries.columns:
        assert view.shown_rows(column) == {r for r in every_row if view.shown(r, column)}, column.name
    expected = [(view.text(r, view.key), c.name, view.text(r, c)) for r in view.rows for c in view.columns
                if view.shown(r, c)]
    assert view.facts() == expected and len(expected) == 6
