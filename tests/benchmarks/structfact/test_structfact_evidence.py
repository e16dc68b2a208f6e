"""EVIDENCE strings -> typed evidence: tables, infoboxes, lists, graphs, mixed strings, fallbacks."""

from __future__ import annotations

import random

from structbench.benchmarks.structfact.evidence import parse_evidence, split_cells, structure_of
from structbench.data.evidence import Graph, ItemList, StructuredText, Table, Text
from structbench.data.perturb import shuffle_evidence, shuffle_table
from structbench.data.serialize import markdown_table


def test_regular_table_with_padding_and_alignment_row() -> None:
    (table,) = parse_evidence("| Mayor       | Term      |\n| :---------- | --------: |\n| Tom Pyne    | 1995–2000 |")
    assert table == Table(header=["Mayor", "Term"], rows=[["Tom Pyne", "1995–2000"]])


def test_infobox_title_row_becomes_caption() -> None:
    raw = "|   Rödåsel   |\n|------|------|\n| Country | Sweden |\n| Area |  |"
    (table,) = parse_evidence(raw)
    assert table == Table(header=["", ""], rows=[["Country", "Sweden"], ["Area", ""]], caption="Rödåsel")


def test_title_row_with_other_cell_count_is_kept_in_the_caption() -> None:
    (table,) = parse_evidence("|   Event|Gold|Silver   |\n|---|---|\n| Men's | Lesun |")
    assert isinstance(table, Table)
    assert table.caption == "Event | Gold | Silver"
    assert table.header == ["", ""]
    (empty,) = parse_evidence("|  |||  |\n|---|---|---|\n| Sire | a | b |")
    assert isinstance(empty, Table) and empty.caption is None and empty.rows == [["Sire", "a", "b"]]


def test_short_rows_are_padded_and_surplus_empty_cells_dropped() -> None:
    (table,) = parse_evidence("| a | b | c |\n|---|---|---|\n| 1 |\n| 1 | 2 | 3 |  |  |")
    assert isinstance(table, Table) and table.rows == [["1", "", ""], ["1", "2", "3"]]


def test_escaped_pipe_stays_in_its_cell() -> None:
    assert split_cells(r"| a \| b | c |") == ["a | b", "c"]
    (table,) = parse_evidence("| x | y |\n|---|---|\n| a \\| b | c |")
    assert isinstance(table, Table) and table.rows == [["a | b", "c"]]


def test_tables_that_do_not_fit_stay_markdown_text() -> None:
    no_separator = "| a | b |\n| 1 | 2 |"
    assert parse_evidence(no_separator) == [StructuredText(language="markdown", text=no_separator)]
    surplus = "| a | b |\n|---|---|\n| 1 | 2 | 3 |"
    assert parse_evidence(surplus) == [StructuredText(language="markdown", text=surplus)]


def test_lists_headings_and_mixed_strings() -> None:
    assert parse_evidence("* Changes (2008), Vagrant\n* Let Love In (2010), Vagrant") == [
        ItemList(items=["Changes (2008), Vagrant", "Let Love In (2010), Vagrant"])
    ]
    mixed = (
        "Istanbul got its name in 1930.\n### Population\n| Year | Population |\n|--|--|\n| 1940 | 793,900 |\n"
        "\nSee also:\n- Byzantium\n- Constantinople"
    )
    assert parse_evidence(mixed) == [
        Text(text="Istanbul got its name in 1930."),
        Table(header=["Year", "Population"], rows=[["1940", "793,900"]], caption="Population"),
        Text(text="See also:"),
        ItemList(items=["Byzantium", "Constantinople"]),
    ]
    assert parse_evidence("### Sires\n* Danzig\n* Secretariat") == [
        ItemList(items=["Danzig", "Secretariat"], title="Sires")
    ]


def test_triple_lines_are_a_graph_and_prose_is_text() -> None:
    assert parse_evidence("(Alamshar, breed, Thoroughbred)\n(Thoroughbred, used for, horse racing)") == [
        Graph(triples=[("Alamshar", "breed", "Thoroughbred"), ("Thoroughbred", "used for", "horse racing")])
    ]
    prose = "Review the provided data table carefully (all of it), then decide."
    assert parse_evidence(prose) == [Text(text=prose)]
    assert parse_evidence("  \n ") == []


def test_markdown_rendering_parses_back_to_the_same_table() -> None:
    table = Table(header=["Name", "Note"], rows=[["a | b", "x"], ["", "y"]])
    assert parse_evidence(markdown_table(table)) == [table]
    # the core renderer writes a caption as a plain line, which reads back as text (a heading would not)
    captioned = table.model_copy(update={"caption": "Caption"})
    assert parse_evidence(markdown_table(captioned)) == [Text(text="Caption"), table]
    assert parse_evidence("## Caption\n" + markdown_table(table)) == [captioned]


def test_structure_names() -> None:
    assert structure_of([Text(text="x"), Table(header=["a"], rows=[])]) == "table+text"
    assert structure_of([StructuredText(language="markdown", text="|")]) == "text"
    assert structure_of([]) == "none"


def test_shuffle_permutes_rows_and_columns_together_and_is_seeded() -> None:
    table = Table(header=[f"h{j}" for j in range(5)], rows=[[f"{i}{j}" for j in range(5)] for i in range(8)])
    both = shuffle_table(table, random.Random(1), "both")
    assert both != table
    assert sorted(both.header) == table.header
    for row in both.rows:  # every cell stays under its own column
        assert [cell[1] for cell in row] == [h[1] for h in both.header]
    assert sorted(r[both.header.index("h0")] for r in both.rows) == [r[0] for r in table.rows]
    assert shuffle_table(table, random.Random(1), "both") == both
    rows_only = shuffle_table(table, random.Random(2), "rows")
    assert rows_only.header == table.header and sorted(rows_only.rows) == table.rows
    cols_only = shuffle_table(table, random.Random(3), "columns")
    assert [r[cols_only.header.index("h0")] for r in cols_only.rows] == [r[0] for r in table.rows]

    items = ItemList(items=[str(i) for i in range(10)])
    text = Text(text="stays")
    shuffled = shuffle_evidence([items, text], random.Random(0), "both")
    assert isinstance(shuffled[0], ItemList) and sorted(shuffled[0].items) == items.items
    assert shuffled[0].items != items.items and shuffled[1] == text
    assert shuffle_evidence([items], random.Random(0), "columns") == [items]
