"""The shared table perturbations: each keeps the table's facts, is seeded by the seed and the table's content, and
refuses unknown names; benchmarks accept them through one options model."""

from __future__ import annotations

from collections import Counter

import pytest

from structbench.core.errors import UsageError
from structbench.data.evidence import Graph, ItemList, Table, Text
from structbench.data.perturb import (
    PERTURBATIONS,
    PerturbationOptions,
    dates,
    parse_perturbation,
    perturb,
    thousands,
)

CITIES = Table(
    header=["City", "Country", "Population", "Founded"],
    rows=[[f"City{i}", f"Land{i % 3}", str(10_000 * (i + 1) + i), str(1500 + i)] for i in range(12)],
    caption="Cities",
)
GRAPH = Graph(triples=[(f"s{i}", "has", f"o{i}") for i in range(8)])
ITEMS = ItemList(items=[f"item {i}" for i in range(8)], title="Things")
TEXT = Text(text="Founded on 2020-03-15 with 1234567 people.")


def one(spec: str, piece: object = CITIES, seed: int = 0) -> object:
    return perturb([piece], spec, seed)[0]  # type: ignore[list-item]


def columns(table: Table) -> Counter[tuple[str, ...]]:
    return Counter(tuple([h, *(r[j] for r in table.rows)]) for j, h in enumerate(table.header))


def test_every_perturbation_is_registered_with_its_description() -> None:
    assert PERTURBATIONS.names() == ["shuffle_rows", "shuffle_columns", "transpose", "empty_rows", "no_header",
                                     "thousands", "dates"]
    assert all(PERTURBATIONS.get(n).description for n in PERTURBATIONS.names())


def test_shuffles_keep_every_row_and_column_and_move_them() -> None:
    rows = one("shuffle_rows")
    assert isinstance(rows, Table) and rows.header == CITIES.header and rows.caption == "Cities"
    assert Counter(map(tuple, rows.rows)) == Counter(map(tuple, CITIES.rows)) and rows.rows != CITIES.rows
    cols = one("shuffle_columns")
    assert isinstance(cols, Table) and columns(cols) == columns(CITIES) and cols.header != CITIES.header
    assert Counter(map(tuple, cols.rows)) != Counter(map(tuple, CITIES.rows))  # cells moved with their column


def test_transpose_turns_rows_into_columns() -> None:
    t = one("transpose")
    assert isinstance(t, Table)
    assert t.header == [" ", *(str(i) for i in range(12))]  # ToRR's labels (unitxt's TransposeTable)
    assert [r[0] for r in t.rows] == CITIES.header
    assert t.rows[2][1:] == [r[2] for r in CITIES.rows]
    headerless = one("transpose", Table(header=["", ""], rows=[["Created by", "Ann"], ["Year", "1999"]]))
    assert isinstance(headerless, Table)
    assert headerless.header == ["0", "1"] and headerless.rows == [["Created by", "Year"], ["Ann", "1999"]]


def test_empty_rows_are_inserted_and_the_others_keep_their_order() -> None:
    t = one("empty_rows")
    assert isinstance(t, Table)
    blank = [r for r in t.rows if not any(r)]
    assert len(blank) == 3 and all(len(r) == 4 for r in blank)  # 12 rows // 4
    assert [r for r in t.rows if any(r)] == CITIES.rows
    small = one("empty_rows", Table(header=["a"], rows=[["1"]]))
    assert isinstance(small, Table) and len(small.rows) == 2  # at least one


def test_no_header_blanks_the_names() -> None:
    t = one("no_header")
    assert isinstance(t, Table) and t.header == ["", "", "", ""] and t.rows == CITIES.rows


@pytest.mark.parametrize(("given", "shown"), [
    ("1234567", "1,234,567"), ("-45000", "-45,000"), ("12345.25", "12,345.25"), ("98765 %", "98,765 %"),
    ("1998", "1998"), ("2099", "2099"), ("3000", "3,000"), ("999", "999"), ("0123456", "0123456"),
    ("1,234", "1,234"), ("12 km", "12 km"), ("abc", "abc"), ("", ""),
])
def test_thousands_separators_on_whole_cell_numbers_but_years(given: str, shown: str) -> None:
    assert thousands(given) == shown


@pytest.mark.parametrize(("given", "shown"), [
    ("2020-03-15", "March 15, 2020"), ("born 1999-12-01 in Oslo", "born December 1, 1999 in Oslo"),
    ("March 15, 2020", "2020-03-15"), ("15 March 2020", "2020-03-15"), ("2020-02-30", "2020-02-30"),
    ("February 30, 2020", "February 30, 2020"),
    ("from 2001-01-02 to March 4, 2005", "from January 2, 2001 to 2005-03-04"),
    ("no date here", "no date here"), ("1,234", "1,234"),
])
def test_dates_swap_between_iso_and_written_out(given: str, shown: str) -> None:
    assert dates(given) == shown


def test_value_changes_reach_cells_list_items_and_graph_objects_not_text() -> None:
    t = one("thousands")
    assert isinstance(t, Table)
    assert t.rows[0] == ["City0", "Land0", "10,000", "1500"] and t.header == CITIES.header
    assert one("dates", ItemList(items=["2020-03-15"])) == ItemList(items=["March 15, 2020"])
    assert one("thousands", Graph(triples=[("x", "pop", "12345")])) == Graph(triples=[("x", "pop", "12,345")])
    for spec in ("thousands", "dates", "transpose", "shuffle_rows", "no_header"):
        assert one(spec, TEXT) == TEXT  # free text is never changed


def test_rows_shuffle_lists_and_graphs_and_the_rest_leave_them_alone() -> None:
    items, graph = one("shuffle_rows", ITEMS), one("shuffle_rows", GRAPH)
    assert isinstance(items, ItemList) and sorted(items.items) == sorted(ITEMS.items) and items != ITEMS
    assert isinstance(graph, Graph) and sorted(graph.triples) == sorted(GRAPH.triples) and graph != GRAPH
    for spec in ("shuffle_columns", "transpose", "empty_rows", "no_header"):
        assert one(spec, ITEMS) == ITEMS and one(spec, GRAPH) == GRAPH


def test_draws_depend_on_the_seed_and_the_table_not_on_the_call() -> None:
    assert one("shuffle_rows") == one("shuffle_rows")  # the same table reads the same in every question
    assert one("shuffle_rows", seed=1) != one("shuffle_rows", seed=0)
    other = CITIES.model_copy(update={"caption": "Towns"})
    first, second = perturb([CITIES, other], "shuffle_rows")
    assert isinstance(first, Table) and isinstance(second, Table) and first.rows != second.rows  # its own draw
    assert perturb([CITIES], "none") == [CITIES] and perturb([CITIES], "") == [CITIES]


def test_perturbations_compose_in_order() -> None:
    both = one("transpose+no_header")
    assert isinstance(both, Table) and both.header == [""] * 13 and [r[0] for r in both.rows] == CITIES.header
    other = one("no_header+transpose")
    assert isinstance(other, Table) and other.header[0] == "0"  # a headerless table transposes without names


def test_unknown_names_are_refused_with_the_known_ones() -> None:
    assert parse_perturbation(" shuffle_rows + dates ") == ("shuffle_rows", "dates")
    assert parse_perturbation("none") == ()
    with pytest.raises(UsageError, match=r"unknown perturbation 'transpos'\. Did you mean: transpose\? Known: none, "):
        parse_perturbation("shuffle_rows+transpos")


def test_the_options_model_normalises_and_checks_the_spec() -> None:
    assert PerturbationOptions(perturbation=" transpose + dates").perturbation == "transpose+dates"
    assert PerturbationOptions(perturbation="none").perturbs is False
    opts = PerturbationOptions(perturbation="shuffle_rows", perturbation_seed=3)
    assert opts.perturbation_fields() == {"perturbation": "shuffle_rows", "perturbation_seed": 3}
    assert opts.perturbed([CITIES]) == perturb([CITIES], "shuffle_rows", 3)
    with pytest.raises(ValueError, match="unknown perturbation 'flip'"):
        PerturbationOptions(perturbation="flip")
