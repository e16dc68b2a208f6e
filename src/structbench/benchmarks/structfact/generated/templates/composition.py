"""Composition Understanding (Appendix H.4): irregular compositions of structured data.

- Complex Structures: several infoboxes, each a two-column table under a title cell spanning both columns
  (the paper's "single table cell spanning multiple columns"); the wrong value comes from another box.
- Missing Values: tables with cells written as ``N/A``, ``—``, ``-`` or left empty; a question about a
  missing cell, or a superlative over a column with one, has no answer (``NOT SURE ENOUGH``).
- Incomplete Descriptions: abbreviated column headers, spelled out only in an ``Abbreviations`` list.
"""

from __future__ import annotations

import random
from typing import Any

from structbench.benchmarks.structfact.generated.claims import Best, compare
from structbench.benchmarks.structfact.generated.profile import Column, Profile, World
from structbench.benchmarks.structfact.generated.templates.common import (
    COMPOSITION,
    NEI,
    NO,
    YES,
    Draft,
    Template,
    extreme,
    pick_columns,
    pick_rows,
    ref,
    sizes,
    stated_value,
    table_view,
    view,
)
from structbench.benchmarks.structfact.generated.views import Evidence, View

COMPLEX = "Complex Structures"
MISSING = "Missing Values"
INCOMPLETE = "Incomplete Descriptions"
MARKERS = ("N/A", "—", "-", "")
"""How masked cells are written."""


def _attributes(world: World) -> list[tuple[Profile, Column]]:
    return [(p, c) for p in world.profiles if p.key is not None for c in p.attributes()]


def _numbers(world: World) -> list[tuple[Profile, Column]]:
    return [(p, c) for p in world.profiles if p.key is not None for c in p.attributes("number")]


def abbreviate(name: str) -> str | None:
    """``population 2020`` -> ``pop. 2020``: long words cut to three letters; None when nothing shortens."""
    short = " ".join(w[:3] + "." if len(w) > 4 and w.isalpha() else w for w in name.split())
    return None if short == name else short


def _abbreviate_view(v: View, column: Column) -> bool:
    """Abbreviate the headers of ``v`` that shorten (``column``'s must); False when they would clash."""
    shown = {c.name for c in [v.key, *v.columns]}
    for c in v.columns:
        short = abbreviate(c.name)
        if short is not None:
            v.abbreviations[c.index] = short
    if column.index not in v.abbreviations:
        return False
    used = list(v.abbreviations.values())
    return len(set(used)) == len(used) and not shown & set(used)


def _mask(v: View, rng: random.Random, count: int, avoid: set[tuple[int, int]]) -> None:
    cells = [(r, c.index) for r in v.rows for c in v.columns if (r, c.index) not in avoid]
    marker = rng.choice(MARKERS)
    for spot in rng.sample(cells, min(count, len(cells))):
        v.masked[spot] = marker


class InfoboxLookup(Template):
    """Is the <column> of <entity> <value>? over infoboxes (wrong: another box's value)."""

    task = COMPOSITION
    name = "infobox_lookup"
    category = COMPLEX

    def candidates(self, world: World) -> list[Any]:
        return _attributes(world)

    def draft(self, candidate: tuple[Profile, Column], rng: random.Random, want: str) -> Draft | None:
        p, col = candidate
        rows = pick_rows(p, rng, rng.randint(2, 4), require=[col])
        if len(rows) < 2 or p.key is None:
            return None
        target = rng.choice(rows)
        statement = stated_value(p, col, target, rng, want, rows)
        if statement is None:
            return None
        v = view(p, rows, pick_columns(p, rng, [col], rng.randint(3, 6)), "infobox")
        if want == NEI:
            v.hidden.add((target, col.index))
        entity = p.cell(target, p.key)
        question = f"Is the {col.name} of {entity} {statement.text}?"
        claim = compare(ref(p, entity, col), "=", statement.value, statement.kind)
        return Draft(question, claim, Evidence([v]))


class InfoboxComparison(Template):
    """Is the <number column> of <a> greater (less) than that of <b>? across two infoboxes."""

    task = COMPOSITION
    name = "infobox_comparison"
    category = COMPLEX

    def candidates(self, world: World) -> list[Any]:
        return _numbers(world)

    def draft(self, candidate: tuple[Profile, Column], rng: random.Random, want: str) -> Draft | None:
        p, col = candidate
        rows = pick_rows(p, rng, rng.randint(2, 4), require=[col])
        if len(rows) < 2 or p.key is None:
            return None
        a, b = rng.sample(rows, 2)
        if col.values[a] == col.values[b]:
            return None
        greater = rng.random() < 0.5
        if want != NEI and ((col.values[a] > col.values[b]) == greater) != (want == YES):  # type: ignore[operator]
            a, b = b, a
        v = view(p, rows, pick_columns(p, rng, [col], rng.randint(3, 6)), "infobox")
        if want == NEI:
            v.hidden.add((rng.choice((a, b)), col.index))
        ea, eb = p.cell(a, p.key), p.cell(b, p.key)
        question = f"Is the {col.name} of {ea} {'greater' if greater else 'less'} than that of {eb}?"
        claim = compare(
            ref(p, ea, col), ">" if greater else "<", ref(p, eb, col),
            "number",
        )
        return Draft(question, claim, Evidence([v]))


class MissingLookup(Template):
    """Is the <column> of <entity> <value>? in a table with missing cells (its own, for NEI)."""

    task = COMPOSITION
    name = "missing_lookup"
    category = MISSING

    def candidates(self, world: World) -> list[Any]:
        return _attributes(world)

    def draft(self, candidate: tuple[Profile, Column], rng: random.Random, want: str) -> Draft | None:
        p, col = candidate
        rows = pick_rows(p, rng, sizes(rng, 4, 10), require=[col])
        if len(rows) < 3 or p.key is None:
            return None
        target = rng.choice(rows)
        statement = stated_value(p, col, target, rng, want, rows)
        if statement is None:
            return None
        v = table_view(p, rng, rows, [col])
        _mask(v, rng, rng.randint(1, 3), {(target, col.index)})
        if want == NEI:
            v.masked[target, col.index] = rng.choice(MARKERS)
        entity = p.cell(target, p.key)
        question = f"Is the {col.name} of {entity} {statement.text}?"
        claim = compare(ref(p, entity, col), "=", statement.value, statement.kind)
        return Draft(question, claim, Evidence([v]))


class MissingSuperlative(Template):
    """Does <entity> have the highest (lowest) <column>? in a table with missing cells (in it, for NEI)."""

    task = COMPOSITION
    name = "missing_superlative"
    category = MISSING

    def candidates(self, world: World) -> list[Any]:
        return _numbers(world)

    def draft(self, candidate: tuple[Profile, Column], rng: random.Random, want: str) -> Draft | None:
        p, col = candidate
        rows = pick_rows(p, rng, sizes(rng, 4, 10), require=[col])
        if len(rows) < 3 or p.key is None:
            return None
        fn = extreme(rng)
        top = (max if fn == "max" else min)(col.values[r] for r in rows)  # type: ignore[type-var]
        winners = [r for r in rows if col.values[r] == top]
        if len(winners) != 1:
            return None
        chosen = winners[0] if want != NO else rng.choice([r for r in rows if r != winners[0]])
        v = table_view(p, rng, rows, [col])
        _mask(v, rng, rng.randint(1, 2), {(r, col.index) for r in rows})
        if want == NEI:
            v.masked[rng.choice([r for r in rows if r != chosen]), col.index] = rng.choice(MARKERS)
        entity = p.cell(chosen, p.key)
        most = "highest" if fn == "max" else "lowest"
        question = f"Does {entity} have the {most} {col.name} among the entries listed?"
        claim = compare(Best(fn=fn, table=p.name, key=p.key.name, column=col.name), "=", entity, "text")
        return Draft(question, claim, Evidence([v]))


class AbbreviatedLookup(Template):
    """Is the <column> of <entity> <value>? where the table's header abbreviates <column>."""

    task = COMPOSITION
    name = "abbreviated_lookup"
    category = INCOMPLETE

    def candidates(self, world: World) -> list[Any]:
        return [(p, c) for p, c in _attributes(world) if abbreviate(c.name)]

    def draft(self, candidate: tuple[Profile, Column], rng: random.Random, want: str) -> Draft | None:
        p, col = candidate
        rows = pick_rows(p, rng, sizes(rng, 4, 10), require=[col])
        if len(rows) < 3 or p.key is None:
            return None
        target = rng.choice(rows)
        statement = stated_value(p, col, target, rng, want, rows)
        if statement is None:
            return None
        v = table_view(p, rng, rows, [col])
        if not _abbreviate_view(v, col):
            return None
        if want == NEI:
            v.rows.remove(target)
        entity = p.cell(target, p.key)
        question = f"Is the {col.name} of {entity} {statement.text}?"
        claim = compare(ref(p, entity, col), "=", statement.value, statement.kind)
        return Draft(question, claim, Evidence([v]))


class AbbreviatedComparison(Template):
    """Is the <number column> of <a> greater (less) than that of <b>? under an abbreviated header."""

    task = COMPOSITION
    name = "abbreviated_comparison"
    category = INCOMPLETE

    def candidates(self, world: World) -> list[Any]:
        return [(p, c) for p, c in _numbers(world) if abbreviate(c.name)]

    def draft(self, candidate: tuple[Profile, Column], rng: random.Random, want: str) -> Draft | None:
        p, col = candidate
        rows = pick_rows(p, rng, sizes(rng, 4, 10), require=[col])
        if len(rows) < 3 or p.key is None:
            return None
        a, b = rng.sample(rows, 2)
        if col.values[a] == col.values[b]:
            return None
        greater = rng.random() < 0.5
        if want != NEI and ((col.values[a] > col.values[b]) == greater) != (want == YES):  # type: ignore[operator]
            a, b = b, a
        v = table_view(p, rng, rows, [col])
        if not _abbreviate_view(v, col):
            return None
        if want == NEI:
            v.rows.remove(b)
        ea, eb = p.cell(a, p.key), p.cell(b, p.key)
        question = f"Is the {col.name} of {ea} {'greater' if greater else 'less'} than that of {eb}?"
        claim = compare(
            ref(p, ea, col), ">" if greater else "<", ref(p, eb, col),
            "number",
        )
        return Draft(question, claim, Evidence([v]))


TEMPLATES: tuple[Template, ...] = (
    InfoboxLookup(),
    InfoboxComparison(),
    MissingLookup(),
    MissingSuperlative(),
    AbbreviatedLookup(),
    AbbreviatedComparison(),
)
