"""More text serializations of evidence: CSV, JSON, HTML, XML and triples (Markdown lives in ``serialize``, which
registers these beside it).

Every table-based benchmark offers them through its ``serialization`` option. Conventions shared by all
formats:

- Free text (``Text``, ``StructuredText``) is passed through unchanged: it has no structure to re-render.
- A table caption, a list title and a tree root are kept where the format has a place for them
  (``<caption>``, a ``caption`` attribute or key) and otherwise written as a line before the data.
- A header made only of empty strings (untitled columns, e.g. a Wikipedia infobox) is left out where the
  format allows it (CSV, HTML, XML); JSON then uses the ``columns``/``rows`` form.
- Characters that XML 1.0 cannot hold (control characters) are dropped in HTML and XML output.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable
from typing import Any

from lxml import etree
from lxml import html as lxml_html

from structbench.data.evidence import Evidence, Graph, ItemList, StructuredText, Table, Text, Tree

_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _xml_text(value: str) -> str:
    return _XML_ILLEGAL.sub("", value)


def _el(tag: str, *children: str | etree._Element, **attrib: str) -> etree._Element:
    """An element, as ``lxml.builder.E.<tag>(*children, **attrib)`` builds it: a string child is text (after the
    last child element, its tail), an element is appended. Not ``lxml.builder`` itself: its ``E`` answers any
    attribute, ``__dict__`` too, with a ``functools.partial``, and vLLM's CPU platform, starting an engine in this
    process (``VLLM_ENABLE_V1_MULTIPROCESSING=0``), reads ``vars()`` of every object in every loaded module as a
    mapping: with ``lxml.builder`` loaded, no engine started ("'functools.partial' object has no attribute 'get'")."""
    element = etree.Element(tag)
    for name, value in attrib.items():
        element.set(name, value)
    for child in children:
        if not isinstance(child, str):
            element.append(child)
        elif len(element):
            element[-1].tail = (element[-1].tail or "") + child
        else:
            element.text = (element.text or "") + child
    return element


def _has_header(table: Table) -> bool:
    return any(h.strip() for h in table.header)


def _tree_children(tree: Tree) -> tuple[list[str], dict[str, list[str]]]:
    """Roots in first-seen order and each node's children, from the parent -> child edges."""
    children: dict[str, list[str]] = {}
    order: list[str] = []
    for parent, child in tree.edges:
        children.setdefault(parent, []).append(child)
        for node in (parent, child):
            if node not in order:
                order.append(node)
    has_parent = {c for _, c in tree.edges}
    return [n for n in order if n not in has_parent], children


def _with_title(title: str | None, body: str) -> str:
    return f"{title}\n\n{body}" if title else body


def _passthrough(evidence: Evidence) -> str | None:
    if isinstance(evidence, Text | StructuredText):
        return evidence.text
    return None


# --- CSV -------------------------------------------------------------------------------------------


def _csv_rows(rows: list[list[str]]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue().rstrip("\n")


def to_csv(evidence: Evidence) -> str:
    """RFC 4180 CSV (quoted where needed); graphs as subject,relation,object and trees as parent,child."""
    text = _passthrough(evidence)
    if text is not None:
        return text
    if isinstance(evidence, Table):
        rows = ([evidence.header] if _has_header(evidence) else []) + evidence.rows
        return _with_title(evidence.caption, _csv_rows(rows))
    if isinstance(evidence, ItemList):
        return _with_title(evidence.title, _csv_rows([[item] for item in evidence.items]))
    if isinstance(evidence, Graph):
        return _csv_rows([["subject", "relation", "object"], *map(list, evidence.triples)])
    if isinstance(evidence, Tree):
        return _csv_rows([["parent", "child"], *map(list, evidence.edges)])
    raise TypeError(f"no CSV form for {type(evidence).__name__}")


# --- JSON ------------------------------------------------------------------------------------------


def table_json(table: Table) -> Any:
    """A list of row objects keyed by column name when the names are unique and non-empty, else
    ``{"columns": [...], "rows": [[...]]}``; a caption turns either into ``{"caption": ..., ...}``."""
    names = [h.strip() for h in table.header]
    if all(names) and len(set(names)) == len(names):
        records = [dict(zip(names, row, strict=False)) for row in table.rows]
        return {"caption": table.caption, "rows": records} if table.caption else records
    body: dict[str, Any] = {"columns": table.header, "rows": table.rows}
    return {"caption": table.caption, **body} if table.caption else body


def _tree_json(tree: Tree) -> Any:
    roots, children = _tree_children(tree)

    def node(name: str, seen: frozenset[str]) -> Any:
        kids = [k for k in children.get(name, []) if k not in seen]
        return {k: node(k, seen | {k}) for k in kids}

    return {r: node(r, frozenset({r})) for r in roots}


def to_json(evidence: Evidence) -> str:
    """Indented JSON (non-ASCII kept): tables as records, lists as arrays, graphs as triple objects."""
    text = _passthrough(evidence)
    if text is not None:
        return text
    value: Any
    if isinstance(evidence, Table):
        value = table_json(evidence)
    elif isinstance(evidence, ItemList):
        value = {"title": evidence.title, "items": evidence.items} if evidence.title else evidence.items
    elif isinstance(evidence, Graph):
        value = [{"subject": s, "relation": r, "object": o} for s, r, o in evidence.triples]
    elif isinstance(evidence, Tree):
        value = _tree_json(evidence)
    else:
        raise TypeError(f"no JSON form for {type(evidence).__name__}")
    return json.dumps(value, ensure_ascii=False, indent=2)


# --- HTML ------------------------------------------------------------------------------------------


def _html_table(header: list[str] | None, rows: list[list[str]], caption: str | None) -> Any:
    parts: list[Any] = []
    if caption:
        parts.append(_el("caption", _xml_text(caption)))
    if header is not None:
        parts.append(_el("thead", _el("tr", *(_el("th", _xml_text(h)) for h in header))))
    parts.append(_el("tbody", *(_el("tr", *(_el("td", _xml_text(c)) for c in row)) for row in rows)))
    return _el("table", *parts)


def _html_tree(tree: Tree) -> Any:
    roots, children = _tree_children(tree)

    def items(names: list[str], seen: frozenset[str]) -> Any:
        lis = []
        for name in names:
            kids = [k for k in children.get(name, []) if k not in seen]
            li = _el("li", _xml_text(name))
            if kids:
                li.append(items(kids, seen | set(kids)))
            lis.append(li)
        return _el("ul", *lis)

    return items(roots, frozenset(roots))


def to_html(evidence: Evidence) -> str:
    """An HTML fragment: a ``<table>`` (caption, thead, tbody), or a ``<ul>`` for lists and trees."""
    text = _passthrough(evidence)
    if text is not None:
        return text
    if isinstance(evidence, Table):
        header = evidence.header if _has_header(evidence) else None
        element = _html_table(header, evidence.rows, evidence.caption)
    elif isinstance(evidence, ItemList):
        element = _el("ul", *(_el("li", _xml_text(i)) for i in evidence.items))
        if evidence.title:
            element = _el("div", _el("p", _xml_text(evidence.title)), element)
    elif isinstance(evidence, Graph):
        element = _html_table(["Subject", "Relation", "Object"], [list(t) for t in evidence.triples], None)
    elif isinstance(evidence, Tree):
        element = _html_tree(evidence)
    else:
        raise TypeError(f"no HTML form for {type(evidence).__name__}")
    out: str = lxml_html.tostring(element, pretty_print=True, encoding="unicode")
    return out.rstrip("\n")


# --- XML -------------------------------------------------------------------------------------------


def to_xml(evidence: Evidence) -> str:
    """Indented XML; a cell names its column in an attribute (``<cell column="...">``), any name works."""
    text = _passthrough(evidence)
    if text is not None:
        return text
    if isinstance(evidence, Table):
        element = _el("table")
        if evidence.caption:
            element.append(_el("caption", _xml_text(evidence.caption)))
        named = _has_header(evidence)
        for row in evidence.rows:
            row_el = _el("row")
            for i, cell in enumerate(row):
                cell_el = _el("cell", _xml_text(cell))
                if named and i < len(evidence.header):
                    cell_el.set("column", _xml_text(evidence.header[i]))
                row_el.append(cell_el)
            element.append(row_el)
    elif isinstance(evidence, ItemList):
        element = _el("list", *(_el("item", _xml_text(i)) for i in evidence.items))
        if evidence.title:
            element.set("title", _xml_text(evidence.title))
    elif isinstance(evidence, Graph):
        element = _el("graph", *(
            _el("triple", _el("subject", _xml_text(s)), _el("relation", _xml_text(r)), _el("object", _xml_text(o)))
            for s, r, o in evidence.triples
        ))
    elif isinstance(evidence, Tree):
        element = _xml_tree(evidence)
    else:
        raise TypeError(f"no XML form for {type(evidence).__name__}")
    out: str = etree.tostring(element, pretty_print=True, encoding="unicode")
    return out.rstrip("\n")


def _xml_tree(tree: Tree) -> Any:
    roots, children = _tree_children(tree)

    def node(name: str, seen: frozenset[str]) -> Any:
        el = _el("node", name=_xml_text(name))
        for kid in children.get(name, []):
            if kid not in seen:
                el.append(node(kid, seen | {kid}))
        return el

    return _el("tree", *(node(r, frozenset({r})) for r in roots))


# --- triples ---------------------------------------------------------------------------------------


def _triple_line(s: str, r: str, o: str) -> str:
    return f"({s}, {r}, {o})"


_NUMBER = re.compile(r"[-+]?[\d.,]+%?")


def table_triples(table: Table) -> list[tuple[str, str, str]]:
    """The facts of a table as triples, one per non-empty cell.

    A header-less two-column table (an infobox) is a list of key-value pairs:
    ``(caption or "table", key, value)``. Otherwise a cell is ``(row key, column, value)``: the row key is
    the first column's value when those values are unique, non-empty and not numbers (a name column),
    else ``row i`` (1-based); untitled columns are called ``column j``.
    """
    if not _has_header(table) and len(table.header) == 2:
        subject = table.caption or "table"
        return [(subject, key.strip(), value.strip()) for key, value in table.rows if key.strip() and value.strip()]
    firsts = [row[0].strip() if row else "" for row in table.rows]
    keyed = (
        len(table.header) > 1
        and bool(firsts)
        and all(firsts)
        and len(set(firsts)) == len(firsts)
        and not any(_NUMBER.fullmatch(f) for f in firsts)
    )
    names = [h.strip() or f"column {j + 1}" for j, h in enumerate(table.header)]
    triples = []
    for i, row in enumerate(table.rows):
        subject = firsts[i] if keyed else f"row {i + 1}"
        for j, cell in enumerate(row):
            if (keyed and j == 0) or not cell.strip():
                continue
            column = names[j] if j < len(names) else f"column {j + 1}"
            triples.append((subject, column, cell.strip()))
    return triples


def to_triples(evidence: Evidence) -> str:
    """One ``(subject, relation, object)`` line per fact: graphs as they are, tables cell by cell
    (``table_triples``), lists as ``(title, has item, item)``, trees as ``(parent, has child, child)``."""
    text = _passthrough(evidence)
    if text is not None:
        return text
    if isinstance(evidence, Graph):
        triples = list(evidence.triples)
        title = None
    elif isinstance(evidence, Table):
        keyed_by_caption = not _has_header(evidence) and len(evidence.header) == 2
        triples, title = table_triples(evidence), None if keyed_by_caption else evidence.caption
    elif isinstance(evidence, ItemList):
        subject = evidence.title or "list"
        triples, title = [(subject, "has item", item) for item in evidence.items], None
    elif isinstance(evidence, Tree):
        triples, title = [(p, "has child", c) for p, c in evidence.edges], None
    else:
        raise TypeError(f"no triples form for {type(evidence).__name__}")
    return _with_title(title, "\n".join(_triple_line(*t) for t in triples))


FORMATS: dict[str, Callable[[Evidence], str]] = {
    "csv": to_csv,
    "json": to_json,
    "html": to_html,
    "xml": to_xml,
    "triples": to_triples,
}
"""The serializations this module offers; ``serialize`` registers them in ``SERIALIZERS``."""
