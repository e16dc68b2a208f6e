"""Composition Understanding (Appendix H.4): irregular compositions of structured data.

- Complex Structures: several infoboxes, each a two-column table under a title cell spanning both columns
  (the paper's "single table cell spanning multiple columns"); the wrong value comes from another box.
- Missing Values: tables with cells written as ``N/A``, ``—``, ``-`` or left empty; a question about a
  missing cell, or a superlative over a column with one, has no answer (``NOT SURE ENOUGH``).
- Incomplete Descriptions: abbreviated column headers, spelled out only in an ``Abbreviations`` list.
"""

from __future__ import annotations

import random

from structbench.benchmarks.structfact.generated.profile import Column, Profile
from structbench.benchmarks.structfact.generated.templates.common import (
    COMPOSITION,
    NEI,
    ColumnTemplate,
    Draft,
    LookupTemplate,
    Template,
    best_claim,
    evidence_table,
    extreme_word,
    name_of,
    named_extreme,
    ordered_pair,
    pair_claim,
    pick_columns,
    table_view,
    view,
)
from structbench.benchmarks.structfact.generated.views import Evidence, View

COMPLEX = "Complex Structures"
MISSING = "Missing Values"
INCOMPLETE = "Incomplete Descriptions"
MARKERS = ("N/A", "—", "-", "")
"""How masked cells are written."""


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


def _infoboxes(p: Profile, rows: list[int], col: Column, rng: random.Random) -> View:
    """One infobox per row, showing ``col`` and some other columns."""
    return view(p, rows, pick_columns(p, rng, [col], rng.randint(3, 6)), "infobox")


def _comparison(p: Profile, col: Column, a: int, b: int, greater: bool, shown: View) -> Draft:
    """Is the <column> of <a> greater (less) than that of <b>?"""
    ea, eb = name_of(p, a), name_of(p, b)
    question = f"Is the {col.name} of {ea} {'greater' if greater else 'less'} than that of {eb}?"
    return Draft(question, pair_claim(p, ea, ">" if greater else "<", eb, col), Evidence([shown]))


class _CompositionTemplate(ColumnTemplate):
    """A Composition Understanding question over 4 to 10 rows (infoboxes: 2 to 4)."""

    task = COMPOSITION
    row_range = (4, 10)


class _CompositionLookup(_CompositionTemplate, LookupTemplate):
    """A lookup over one of the irregular compositions."""


class InfoboxLookup(_CompositionLookup):
    """Is the <column> of <entity> <value>? over infoboxes (wrong: another box's value)."""

    name = "infobox_lookup"
    category = COMPLEX
    row_range = (2, 4)
    least = 2

    def evidence(
        self, p: Profile, col: Column, rows: list[int], target: int, rng: random.Random, want: str
    ) -> Evidence | None:
        v = _infoboxes(p, rows, col, rng)
        if want == NEI:
            v.hidden.add((target, col.index))
        return Evidence([v])


class InfoboxComparison(_CompositionTemplate):
    """Is the <number column> of <a> greater (less) than that of <b>? across two infoboxes."""

    name = "infobox_comparison"
    category = COMPLEX
    kind = "number"
    row_range = (2, 4)
    least = 2

    def ask(self, p: Profile, col: Column, rows: list[int], rng: random.Random, want: str) -> Draft | None:
        pair = ordered_pair(col, rows, rng, want)
        if pair is None:
            return None
        a, b, greater = pair
        v = _infoboxes(p, rows, col, rng)
        if want == NEI:
            v.hidden.add((rng.choice((a, b)), col.index))
        return _comparison(p, col, a, b, greater, v)


class MissingLookup(_CompositionLookup):
    """Is the <column> of <entity> <value>? in a table with missing cells (its own, for NEI)."""

    name = "missing_lookup"
    category = MISSING

    def evidence(
        self, p: Profile, col: Column, rows: list[int], target: int, rng: random.Random, want: str
    ) -> Evidence | None:
        v = table_view(p, rng, rows, [col])
        _mask(v, rng, rng.randint(1, 3), {(target, col.index)})
        if want == NEI:
            v.masked[target, col.index] = rng.choice(MARKERS)
        return Evidence([v])


class MissingSuperlative(_CompositionTemplate):
    """Does <entity> have the highest (lowest) <column>? in a table with missing cells (in it, for NEI)."""

    name = "missing_superlative"
    category = MISSING
    kind = "number"

    def ask(self, p: Profile, col: Column, rows: list[int], rng: random.Random, want: str) -> Draft | None:
        found = named_extreme(col, rows, rng, want)
        if found is None:
            return None
        fn, chosen = found
        v = table_view(p, rng, rows, [col])
        _mask(v, rng, rng.randint(1, 2), {(r, col.index) for r in rows})
        if want == NEI:
            v.masked[rng.choice([r for r in rows if r != chosen]), col.index] = rng.choice(MARKERS)
        entity = name_of(p, chosen)
        question = f"Does {entity} have the {extreme_word(fn)} {col.name} among the entries listed?"
        return Draft(question, best_claim(p, col, fn, entity), Evidence([v]))


class AbbreviatedLookup(_CompositionLookup):
    """Is the <column> of <entity> <value>? where the table's header abbreviates <column>."""

    name = "abbreviated_lookup"
    category = INCOMPLETE

    def takes(self, column: Column) -> bool:
        return bool(abbreviate(column.name))

    def evidence(
        self, p: Profile, col: Column, rows: list[int], target: int, rng: random.Random, want: str
    ) -> Evidence | None:
        v = evidence_table(p, rng, rows, [col], want, drop_row=target)
        return Evidence([v]) if _abbreviate_view(v, col) else None


class AbbreviatedComparison(_CompositionTemplate):
    """Is the <number column> of <a> greater (less) than that of <b>? under an abbreviated header."""

    name = "abbreviated_comparison"
    category = INCOMPLETE
    kind = "number"

    def takes(self, column: Column) -> bool:
        return bool(abbreviate(column.name))

    def ask(self, p: Profile, col: Column, rows: list[int], rng: random.Random, want: str) -> Draft | None:
        pair = ordered_pair(col, rows, rng, want)
        if pair is None:
            return None
        a, b, greater = pair
        v = evidence_table(p, rng, rows, [col], want, drop_row=b)
        if not _abbreviate_view(v, col):
            return None
        return _comparison(p, col, a, b, greater, v)


TEMPLATES: tuple[Template, ...] = (
    InfoboxLookup(),
    InfoboxComparison(),
    MissingLookup(),
    MissingSuperlative(),
    AbbreviatedLookup(),
    AbbreviatedComparison(),
)
