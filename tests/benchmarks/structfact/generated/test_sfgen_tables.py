"""Source tables and their profiles: CSV folders, RFQA's databases, SciTab's tables; kinds, keys, links."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.structfact.generated.conftest import write_atlas
from structbench.benchmarks.structfact.generated.profile import (
    NumberStyle,
    World,
    parse_date,
    parse_number,
    write_date,
)
from structbench.benchmarks.structfact.generated.source_table import MAX_ROWS, make_table
from structbench.benchmarks.structfact.generated.tables import csv_tables, load_tables
from structbench.core.errors import DataError
from structbench.data.datasets import DataContext


def test_numbers_keep_how_they_are_written() -> None:
    assert parse_number("1,234.50") == (1234.5, NumberStyle(2, True, "", ""))
    assert parse_number("-$5") == (-5.0, NumberStyle(0, False, "$", ""))
    assert parse_number("39.1%") == (39.1, NumberStyle(1, False, "", "%"))
    assert parse_number("007") is None and parse_number("12,34") is None and parse_number("1e5") is None
    assert NumberStyle(2, True, "$", "").format(-1234.5) == "-$1,234.50"


def test_dates_in_the_release_spellings() -> None:
    assert parse_date("Dec 21, 1937") == parse_date("21 December 1937") == "1937-12-21"
    assert parse_date("1937-02-30") is None and parse_date("Decem 21, 1937") is None
    assert [write_date("1937-12-21", i) for i in range(4)] == [
        "1937-12-21", "Dec 21, 1937", "December 21, 1937", "21 December 1937"
    ]


def test_csv_folder_is_one_database(atlas: Path) -> None:
    tables = csv_tables(atlas)
    assert [t.name for t in tables] == ["cities", "countries", "museums"]
    assert {t.source for t in tables} == {"csv/atlas"}
    countries = tables[1]
    assert countries.header == ("name", "code", "continent", "capital", "population", "area km2", "un member since")
    lyon = next(r for r in tables[0].rows if r[0] == "Lyon")
    assert lyon[-1] == ""  # an empty cell is no value


def test_profiles_find_kinds_keys_and_links(atlas_world: World) -> None:
    by_name = {p.name: p for p in atlas_world.profiles}
    countries, cities, museums = by_name["countries"], by_name["cities"], by_name["museums"]
    kinds = {c.name: c for c in countries.columns}
    assert countries.key is kinds["name"]
    assert kinds["population"].kind == "number" and kinds["population"].integer
    assert kinds["un member since"].year and kinds["continent"].place and kinds["capital"].place
    city_columns = {c.name: c for c in cities.columns}
    assert city_columns["latitude"].axis == "north" and city_columns["longitude"].axis == "east"
    assert city_columns["first recorded"].kind == "date" and city_columns["first recorded"].temporal
    assert city_columns["country code"].kind == "text" and city_columns["country code"].place
    opened = next(c for c in museums.columns if c.name == "opened")
    assert opened.kind == "date" and opened.values[0] == "1793-08-10"
    links = {(link.source.name, link.column.name, link.target.name, link.key.name) for p in atlas_world.profiles
             for link in p.links}
    assert links == {("cities", "country code", "countries", "code"), ("museums", "city", "cities", "city name")}


def test_ragged_csv_names_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "bad.csv").write_text("a,b\n1,2\n3\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"bad\.csv:3: 1 fields, the header has 2"):
        csv_tables(tmp_path)
    with pytest.raises(DataError, match="no such file or folder"):
        load_tables(str(tmp_path / "missing"), DataContext(offline=True))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataError, match="no CSV files"):
        csv_tables(empty)


def test_make_table_names_columns_and_caps_rows() -> None:
    table = make_table("csv/x", "my_table#", ["", "A b", "a_b", "c"], [["1", " x  y ", "dup", "n/a"]] * (MAX_ROWS + 5))
    assert table.name == "my table"
    assert table.header == ("Column 1", "A b", "c")  # "a_b" shows as "a b", a duplicate of "A b"
    assert table.rows[0] == ("1", "x y", "")
    assert len(table.rows) == MAX_ROWS


@pytest.mark.shared
def test_rfqa_databases_are_chosen_by_prefix(shared_data: DataContext) -> None:
    presidents = load_tables("rfqa/galois/presidents", shared_data)
    assert [(t.source, t.name) for t in presidents] == [("rfqa/galois/presidents", "world presidents")]
    assert {t.source for t in load_tables("rfqa/galois", shared_data)} == {
        "rfqa/galois/flight_2", "rfqa/galois/flight_4", "rfqa/galois/presidents", "rfqa/galois/spider_geo",
        "rfqa/galois/world_1",
    }
    with pytest.raises(DataError, match="no RelationalFactQA database matches"):
        load_tables("rfqa/nowhere", shared_data)


@pytest.mark.shared
def test_scitab_tables_are_separate_databases(shared_data: DataContext) -> None:
    tables = load_tables("scitab", shared_data)
    assert len(tables) == 213
    assert {t.source for t in tables} == {"scitab"}
    assert len({t.group for t in tables}) == 213
    assert not any("[BOLD]" in cell for t in tables for row in t.rows for cell in row)
    world = World.of(tables)
    assert not any(p.links for p in world.profiles)


def test_unchanged_files_are_read_and_profiled_once(tmp_path: Path) -> None:
    """A second load of the same files returns the same tables and world (a test's or a sweep's second load
    costs nothing); a file that changed is read again, and its world made again."""
    folder = write_atlas(tmp_path / "atlas")
    first = load_tables(str(folder), DataContext(offline=True))
    again = load_tables(str(folder), DataContext(offline=True))
    assert all(a is b for a, b in zip(first, again, strict=True))
    assert World.of(again) is World.of(first)
    cities = folder / "cities.csv"
    cities.write_text(cities.read_text().replace("Lyon,FRA,522250", "Lyon,FRA,522251"))
    changed = load_tables(str(folder), DataContext(offline=True))
    assert [a is b for a, b in zip(first, changed, strict=True)] == [False, True, True]
    assert changed[0].rows[1][2] == "522251" and first[0].rows[1][2] == "522250"
    world = World.of(changed)
    assert world is not World.of(first) and world.profiles[0].table is changed[0]
