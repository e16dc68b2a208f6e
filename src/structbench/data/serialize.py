"""Turn structured evidence into prompt text; one registered serializer per text format."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from structbench.core.registry import Registry
from structbench.data.evidence import Evidence, Graph, ItemList, StructuredText, Table, Text, Tree
from structbench.data.formats import FORMATS
from structbench.data.layouts import LAYOUTS

Serializer = Callable[[Evidence], str]
"""Renders one piece of evidence as text."""

SERIALIZERS: Registry[Serializer] = Registry("serialization")


def _md_cell(value: str) -> str:
    return value.replace("|", "\\|").replace("\n", " ")


def markdown_table(table: Table) -> str:
    """A GitHub-flavoured Markdown table, caption first when there is one."""
    lines = []
    if table.caption:
        lines.append(table.caption)
        lines.append("")
    lines.append("| " + " | ".join(_md_cell(h) for h in table.header) + " |")
    lines.append("|" + "|".join(" --- " for _ in table.header) + "|")
    lines.extend("| " + " | ".join(_md_cell(c) for c in row) + " |" for row in table.rows)
    return "\n".join(lines)


def to_markdown(evidence: Evidence) -> str:
    """Markdown: tables as pipe tables, lists as bullets, graphs as triples, trees as nested bullets."""
    if isinstance(evidence, Table):
        return markdown_table(evidence)
    if isinstance(evidence, ItemList):
        head = [evidence.title, ""] if evidence.title else []
        return "\n".join([*head, *(f"- {item}" for item in evidence.items)])
    if isinstance(evidence, Graph):
        return "\n".join(f"({s}, {r}, {o})" for s, r, o in evidence.triples)
    if isinstance(evidence, Tree):
        return _tree_bullets(evidence)
    if isinstance(evidence, Text | StructuredText):
        return evidence.text
    raise TypeError(f"no Markdown form for {type(evidence).__name__}")


def _tree_bullets(tree: Tree) -> str:
    children: dict[str, list[str]] = {}
    nodes: dict[str, None] = {}  # insertion-ordered set
    for parent, child in tree.edges:
        children.setdefault(parent, []).append(child)
        nodes.update(dict.fromkeys((parent, child)))
    has_parent = {c for _, c in tree.edges}
    roots = [n for n in nodes if n not in has_parent]
    lines: list[str] = []

    def walk(node: str, depth: int) -> None:
        lines.append("  " * depth + f"- {node}")
        for c in children.get(node, []):
            walk(c, depth + 1)

    for root in roots:
        walk(root, 0)
    return "\n".join(lines)


SERIALIZERS.register("markdown", to_markdown)
for _name, _render in {**FORMATS, **LAYOUTS}.items():  # csv, json, html, xml, triples; ToRR's layouts
    SERIALIZERS.register(_name, _render)


def serialize(evidence: Sequence[Evidence], fmt: str = "markdown", separator: str = "\n\n") -> str:
    """Render all evidence in ``fmt`` (a registered serialization), joined by ``separator``."""
    render = SERIALIZERS.get(fmt)
    return separator.join(render(e) for e in evidence)

