"""The CSV, JSON, HTML, XML and triples serializations: registered, faithful, and parseable back."""

from __future__ import annotations

import csv
import io
import json

import pytest
from lxml import etree
from lxml import html as lxml_html

from structbench.data.evidence import Graph, ItemList, StructuredText, Table, Text, Tree
from structbench.data.formats import FORMATS, table_json, table_triples
from structbench.data.serialize import SERIALIZERS, serialize

MEDALS = Table(
    header=["Rank", "Nation", "Gold"],
    rows=[["1", "Venezuela", "9"], ["2", 'Guatemala, "GT"', "6"], ["3", "A & B <x>", ""]],
    caption="Medal table",
)
INFOBOX = Table(header=["", ""], rows=[["Created by", "Sande Stewart"], ["Release", ""]], caption="Sports on Tap")
PEOPLE = Table(header=["Name", "Born"], rows=[["Ada", "1815"], ["Alan", "1912"]])
GRAPH = Graph(triples=[("Alamshar", "breed", "Thoroughbred"), ("Thoroughbred", "used for", "racing")])
LIST = ItemList(items=["Changes (2008), Vagrant", "Let Love In"], title="Albums")
TREE = Tree(edges=[("root", "a"), ("a", "a1"), ("root", "b")])


def test_registered_next_to_markdown() -> None:
    for name in ("markdown", *FORMATS):
        assert name in SERIALIZERS
    assert set(FORMATS) == {"csv", "json", "html", "xml", "triples"}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_text_passes_through_every_format(fmt: str) -> None:
    assert serialize([Text(text="Plain <b>text</b>, as is.")], fmt) == "Plain <b>text</b>, as is."
    assert serialize([StructuredText(language="yaml", text="a: 1")], fmt) == "a: 1"


def test_csv_quotes_and_round_trips() -> None:
    text = serialize([MEDALS], "csv")
    caption, body = text.split("\n\n", 1)
    assert caption == "Medal table"
    assert list(csv.reader(io.StringIO(body))) == [MEDALS.header, *MEDALS.rows]
    assert '"Guatemala, ""GT"""' in body
    assert serialize([INFOBOX], "csv") == "Sports on Tap\n\nCreated by,Sande Stewart\nRelease,"
    assert (
        serialize([GRAPH], "csv")
        == "subject,relation,object\nAlamshar,breed,Thoroughbred\nThoroughbred,used for,racing"
    )
    assert serialize([LIST], "csv") == 'Albums\n\n"Changes (2008), Vagrant"\nLet Love In'
    assert serialize([TREE], "csv") == "parent,child\nroot,a\na,a1\nroot,b"


def test_json_forms() -> None:
    assert json.loads(serialize([PEOPLE], "json")) == [
        {"Name": "Ada", "Born": "1815"},
        {"Name": "Alan", "Born": "1912"},
    ]
    assert json.loads(serialize([MEDALS], "json"))["caption"] == "Medal table"
    assert json.loads(serialize([MEDALS], "json"))["rows"][2] == {"Rank": "3", "Nation": "A & B <x>", "Gold": ""}
    assert table_json(INFOBOX) == {"caption": "Sports on Tap", "columns": ["", ""], "rows": INFOBOX.rows}
    dup = Table(header=["x", "x"], rows=[["1", "2"]])
    assert table_json(dup) == {"columns": ["x", "x"], "rows": [["1", "2"]]}
    assert json.loads(serialize([GRAPH], "json"))[0] == {
        "subject": "Alamshar",
        "relation": "breed",
        "object": "Thoroughbred",
    }
    assert json.loads(serialize([LIST], "json")) == {"title": "Albums", "items": LIST.items}
    assert json.loads(serialize([ItemList(items=["x"])], "json")) == ["x"]
    assert json.loads(serialize([TREE], "json")) == {"root": {"a": {"a1": {}}, "b": {}}}
    assert "Rödåsel" in serialize([Table(header=["n"], rows=[["Rödåsel"]])], "json")  # not \\u-escaped


def test_html_is_a_table_that_parses_back() -> None:
    text = serialize([MEDALS], "html")
    table = lxml_html.fragment_fromstring(text)
    assert table.tag == "table"
    assert table.findtext("caption") == "Medal table"
    assert [th.text_content() for th in table.iter("th")] == MEDALS.header
    rows = [[td.text_content() for td in tr.iter("td")] for tr in table.find("tbody").iter("tr")]
    assert rows == MEDALS.rows
    assert "A &amp; B &lt;x&gt;" in text
    assert "<thead>" not in serialize([INFOBOX], "html")
    assert [li.text for li in lxml_html.fragment_fromstring(serialize([LIST], "html")).iter("li")] == LIST.items
    tree = lxml_html.fragment_fromstring(serialize([TREE], "html"))
    assert [li.text.strip() for li in tree.iter("li")] == ["root", "a", "a1", "b"]
    graph = lxml_html.fragment_fromstring(serialize([GRAPH], "html"))
    assert [th.text for th in graph.iter("th")] == ["Subject", "Relation", "Object"]


def test_xml_is_well_formed_and_names_columns() -> None:
    root = etree.fromstring(serialize([MEDALS], "xml"))
    assert root.tag == "table" and root.findtext("caption") == "Medal table"
    rows = root.findall("row")
    assert [c.get("column") for c in rows[0]] == MEDALS.header
    assert [[c.text or "" for c in r] for r in rows] == MEDALS.rows
    infobox = etree.fromstring(serialize([INFOBOX], "xml"))
    assert infobox.find("row/cell").get("column") is None
    control = Table(header=["a"], rows=[["bell\x07 here"]])
    assert etree.fromstring(serialize([control], "xml")).findtext("row/cell") == "bell here"
    items = etree.fromstring(serialize([LIST], "xml"))
    assert items.get("title") == "Albums" and [i.text for i in items] == LIST.items
    graph = etree.fromstring(serialize([GRAPH], "xml"))
    assert [(t.findtext("subject"), t.findtext("relation"), t.findtext("object")) for t in graph] == GRAPH.triples
    tree = etree.fromstring(serialize([TREE], "xml"))
    assert [n.get("name") for n in tree.iter("node")] == ["root", "a", "a1", "b"]


def test_triples() -> None:
    assert serialize([GRAPH], "triples") == "(Alamshar, breed, Thoroughbred)\n(Thoroughbred, used for, racing)"
    assert table_triples(PEOPLE) == [("Ada", "Born", "1815"), ("Alan", "Born", "1912")]
    medals = table_triples(MEDALS)  # numeric first column: rows are numbered, empty cells skipped
    assert medals[:3] == [("row 1", "Rank", "1"), ("row 1", "Nation", "Venezuela"), ("row 1", "Gold", "9")]
    assert ("row 3", "Gold", "") not in medals and len(medals) == 8
    assert serialize([MEDALS], "triples").startswith("Medal table\n\n(row 1, Rank, 1)")
    assert serialize([INFOBOX], "triples") == "(Sports on Tap, Created by, Sande Stewart)"
    untitled = Table(header=["", "", ""], rows=[["x", "y", "z"]])
    assert table_triples(untitled) == [("x", "column 2", "y"), ("x", "column 3", "z")]
    repeated = Table(header=["Team", "Year"], rows=[["Leeds", "1990"], ["Leeds", "1992"]])
    assert table_triples(repeated)[:2] == [("row 1", "Team", "Leeds"), ("row 1", "Year", "1990")]
    assert (
        serialize([LIST], "triples") == "(Albums, has item, Changes (2008), Vagrant)\n(Albums, has item, Let Love In)"
    )
    assert serialize([TREE], "triples").splitlines()[0] == "(root, has child, a)"


def test_cyclic_tree_does_not_recurse_forever() -> None:
    cyclic = Tree(edges=[("r", "a"), ("a", "b"), ("b", "a")])
    assert json.loads(serialize([cyclic], "json")) == {"r": {"a": {"b": {}}}}
    assert [n.get("name") for n in etree.fromstring(serialize([cyclic], "xml")).iter("node")] == ["r", "a", "b"]
