"""Combining Structural and Unstructural (Appendix H.5): a table plus text that verbalizes other columns of
its rows (``The <column> of <entity> is <value>.``). The question needs the text (``Text Fact``) or the
table and the text together (``Table + Text``); when the text says nothing about the entity, the answer
is unknown. The structured part alone is the record's ``NEW_EVIDENCE`` (``drop_unstructured``)."""

from __future__ import annotations

import random
from typing import Any

from structbench.benchmarks.structfact.generated.claims import And
from structbench.benchmarks.structfact.generated.profile import Column, Profile, World
from structbench.benchmarks.structfact.generated.templates.common import (
    COMBINING,
    NEI,
    Draft,
    LookupTemplate,
    Template,
    draw_rows,
    draw_two_facts,
    name_of,
    pick_columns,
    value_claim,
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


class TextFact(LookupTemplate):
    """Is the <column> of <entity> <value>? where only the text states <column>."""

    task = COMBINING
    name = "text_fact"
    category = TEXT_FACT
    row_range = (3, 8)
    least = 2

    def evidence(
        self, p: Profile, col: Column, rows: list[int], target: int, rng: random.Random, want: str
    ) -> Evidence | None:
        return _split(p, rng, rows, target, [], [col], want)


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
        rows = draw_rows(p, rng, [in_table, in_text], 3, 8, least=2)
        if rows is None:
            return None
        found = draw_two_facts(p, in_table, in_text, rows, rng, want)
        if found is None:
            return None
        target, first, second = found
        evidence = _split(p, rng, rows, target, [in_table], [in_text], want)
        entity = name_of(p, target)
        question = f"Is the {in_table.name} of {entity} {first.text}, and is its {in_text.name} {second.text}?"
        claim = And(parts=[value_claim(p, entity, in_table, first), value_claim(p, entity, in_text, second)])
        return Draft(question, claim, evidence)


TEMPLATES: tuple[Template, ...] = (TextFact(), TableAndText())
