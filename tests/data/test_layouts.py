"""ToRR's table layouts: indexed row-major, a printed DataFrame (as pandas prints it), the code that builds one
(pandas reads it back), and plain concatenation; registered beside the other serializations."""

from __future__ import annotations

import pytest

from structbench.data.evidence import Graph, ItemList, StructuredText, Table, Text, Tree
from structbench.data.layouts import LAYOUTS, concatenation, dataframe, df_loader, indexed_row_major
from structbench.data.serialize import SERIALIZERS, serialize

MEDALS = Table(header=["Rank", "Nation", "Gold"],
               rows=[["1", "Venezuela", "9"], ["2", "Guatemala, GT", "16"], ["3", "A & B", ""]], caption="Medals")
WIDE = Table(header=["n"], rows=[[str(i)] for i in range(12)])
INFOBOX = Table(header=["", ""], rows=[["Created by", "Sande Stewart"], ["Release", "1991"]])


def test_registered_next_to_the_other_serializations() -> None:
    assert set(LAYOUTS) == {"indexed_row_major", "dataframe", "df_loader", "concat"}
    assert all(name in SERIALIZERS for name in LAYOUTS)


def test_indexed_row_major_is_one_line_of_numbered_rows() -> None:
    """As unitxt writes it for ToRR: the trailing space of an empty last cell stripped only at the very end."""
    assert indexed_row_major(MEDALS) == ("col : Rank | Nation | Gold row 1 : 1 | Venezuela | 9 row 2 : 2 | "
                                         "Guatemala, GT | 16 row 3 : 3 | A & B |")
    spaced = Table(header=["a", "b"], rows=[["x  y", ""], ["", "z"]])
    assert indexed_row_major(spaced) == "col : a | b row 1 : x  y |  row 2 :  | z"  # cells as they are
    assert indexed_row_major(INFOBOX) == "row 1 : Created by | Sande Stewart row 2 : Release | 1991"
    assert serialize([MEDALS], "indexed_row_major").startswith("Medals\ncol : Rank")  # the caption on a line before


def test_concatenation_is_every_name_and_cell_in_order() -> None:
    assert concatenation(MEDALS) == "Rank Nation Gold 1 Venezuela 9 2 Guatemala, GT 16 3 A & B"
    assert concatenation(INFOBOX) == "Created by Sande Stewart Release 1991"
    # unitxt's join: an empty cell inside the table leaves two spaces
    assert concatenation(Table(header=["a", "b"], rows=[["", "x"], ["y", "z"]])) == "a b  x y z"


@pytest.mark.parametrize("table", [MEDALS, WIDE, Table(header=["x", "yyyyy"], rows=[["abc", "de"]])])
def test_dataframe_prints_as_pandas_prints_it(table: Table) -> None:
    pd = pytest.importorskip("pandas")
    assert dataframe(table) == pd.DataFrame(table.rows, columns=table.header).to_string()


def test_df_loader_is_code_that_builds_the_table() -> None:
    pd = pytest.importorskip("pandas")
    code = df_loader(MEDALS)
    assert code.startswith('pd.DataFrame({\n"Rank": ["1", "2", "3"], ') and code.endswith("},\nindex=[0, 1, 2])")
    frame = eval(code, {"pd": pd})  # the layout's whole point: a model reads it as this code
    assert list(frame.columns) == MEDALS.header and frame.values.tolist() == MEDALS.rows
    repeated = df_loader(Table(header=["a", "a", "", "a"], rows=[["1", "2", "3", "4"]]))
    assert repeated == 'pd.DataFrame({\n"a": ["1"], "a_1": ["2"], "": ["3"], "a_2": ["4"]},\nindex=[0])'  # unitxt's
    escaped = 'pd.DataFrame({\n"Caf\\u00e9": ["Z\\u00fcrich"]},\nindex=[0])'
    assert df_loader(Table(header=["Café"], rows=[["Zürich"]])) == escaped


@pytest.mark.parametrize("fmt", sorted(LAYOUTS))
def test_text_passes_through_and_other_structures_are_laid_out_as_tables(fmt: str) -> None:
    assert serialize([Text(text="Plain <b>text</b>.")], fmt) == "Plain <b>text</b>."
    assert serialize([StructuredText(language="yaml", text="a: 1")], fmt) == "a: 1"
    graph = serialize([Graph(triples=[("Alamshar", "breed", "Thoroughbred")])], fmt)
    assert "Alamshar" in graph and "subject" in graph
    items = serialize([ItemList(items=["Let Love In"], title="Albums")], fmt)
    assert items.startswith("Albums\n") and "Let Love In" in items
    assert "parent" in serialize([Tree(edges=[("root", "a")])], fmt)
