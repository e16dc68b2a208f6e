"""Markdown serialization of every evidence type."""

from __future__ import annotations

from structbench.data import Graph, ItemList, Table, Text, Tree
from structbench.data.serialize import serialize


def test_markdown_forms() -> None:
    table = Table(header=["a", "b|c"], rows=[["1", "x|y"]], caption="T1")
    assert serialize([table]) == "T1\n\n| a | b\\|c |\n| --- | --- |\n| 1 | x\\|y |"
    assert serialize([ItemList(items=["p", "q"])]) == "- p\n- q"
    assert serialize([Graph(triples=[("s", "r", "o")])]) == "(s, r, o)"
    assert serialize([Tree(edges=[("r", "a"), ("a", "b"), ("r", "c")])]) == "- r\n  - a\n    - b\n  - c"
    assert serialize([Text(text="x"), Text(text="y")], separator="\n") == "x\ny"
