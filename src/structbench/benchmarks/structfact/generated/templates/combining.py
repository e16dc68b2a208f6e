"""Combining Structural and Unstructural (Appendix H.5): a table plus text that verbalizes other columns of
its rows (``The <column> of <entity> is <value>.``). The question needs the text (``Text Fact``) or the
table and the text together (``Table + Text``); when the text says nothing about the entity, the answer
is unknown. The structured part alone is the record's ``NEW_EVIDENCE`` (``drop_unstructured``)."""

from __future__ import annotations

import random
from typing import Any

from structbench.benchmarks.structfact.generated.claims import And, compare
from structbench.benchmarks.structfact.generated.profile import Column, Profile, World
from structbench.benchmarks.structfact.generated.templates.common import (
    COMBINING,
    NEI,
    NO,
    YES,
    Draft,
    Template,
    pick_columns,
    pick_rows,
    ref,
    sizes,
    stated_value,
    view,
)
from structbench.benchmarks.structfact.generated.views import Evidence, View

TEXT_FACT = "Text Fact"
TABLE_AND_TEXT = "Table + Text"


def _split(
    p: Profile, rng: random.Random, rows: list[int], target: int, in_table: list[Column], in_text: list[Column],
    want: str,
) -> Evidence:
    """A table of ``rows`` without the ``in_text`` columns, and text stating those for some of the rows
    (the target's only when the answer should be known)."""
    table_columns = pick_columns(p, rng, in_table, rng.randint(len(in_table) + 1, len(in_table) + 3))
    table_columns = [c for c in table_columns if c not in in_text]
    others = [r for r in rows if r != target]
    told = rng.sample(others, rng.randint(min(1, len(others)), len(others)))
    if want != NEI:
        told.append(target)
    text_columns = [*in_text, *[c for c in p.attributes() if c not in table_columns and c not in in_text][:1]]
    assert p.key is not None
    table = View(p, p.key, list(rows), table_columns)
    text = view(p, sorted(told), text_columns, "text")
    return Evidence([table, text], text_first=rng.random() < 0.3)


class TextFact(Template):
    """Is the <column> of <entity> <value>? where only the text states <column>."""

    task = COMBINING
    name = "text_fact"
    category = TEXT_FACT

    def candidates(self, world: World) -> list[Any]:
        return [(p, c) for p in world.profiles if p.key is not None for c in p.attributes()]

    def draft(self, candidate: tuple[Profile, Column], rng: random.Random, want: str) -> Draft | None:
        p, col = candidate
        rows = pick_rows(p, rng, sizes(rng, 3, 8), require=[col])
        if len(rows) < 2 or p.key is None:
            return None
        target = rng.choice(rows)
        statement = stated_value(p, col, target, rng, want, rows)
        if statement is None:
            return None
        evidence = _split(p, rng, rows, target, [], [col], want)
        entity = p.cell(target, p.key)
        question = f"Is the {col.name} of {entity} {statement.text}?"
        claim = compare(ref(p, entity, col), "=", statement.value, statement.kind)
        return Draft(question, claim, evidence)


class TableAndText(Template):
    """Is the <table column> of <entity> <value>, and is its <text column> <value>?"""

    task = COMBINING
    name = "table_and_text"
    category = TABLE_AND_TEXT

    def candidates(self, world: World) -> list[Any]:
        return [
            (p, a, b)
            for p in world.profiles
            if p.key is not None
            for a in p.attributes()
            for b in p.attributes()
            if a is not b
        ]

    def draft(self, candidate: tuple[Profile, Column, Column], rng: random.Random, want: str) -> Draft | None:
        p, in_table, in_text = candidate
        rows = pick_rows(p, rng, sizes(rng, 3, 8), require=[in_table, in_text])
        if len(rows) < 2 or p.key is None:
            return None
        target = rng.choice(rows)
        wrong = rng.choice(("table", "text")) if want == NO else None
        first = stated_value(p, in_table, target, rng, NO if wrong == "table" else YES, rows)
        second = stated_value(p, in_text, target, rng, NO if wrong == "text" else YES, rows)
        if first is None or second is None:
            return None
        evidence = _split(p, rng, rows, target, [in_table], [in_text], want)
        entity = p.cell(target, p.key)
        question = f"Is the {in_table.name} of {entity} {first.text}, and is its {in_text.name} {second.text}?"
        claim = And(parts=[
            compare(ref(p, entity, in_table), "=", first.value, first.kind),
            compare(ref(p, entity, in_text), "=", second.value, second.kind),
        ])
        return Draft(question, claim, evidence)


TEMPLATES: tuple[Template, ...] = (TextFact(), TableAndText())
