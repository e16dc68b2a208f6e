"""Spatiotemporal Cognition (the paper's Geography-Time Reasoning, Appendix H.2): questions about dates and
years (temporal), places and coordinates (spatial), or both at once (spatiotemporal). Dates are often
asked in another spelling than the table's (``Dec 21, 1937`` against ``1937-12-21``)."""

from __future__ import annotations

import random
from abc import abstractmethod
from typing import Any

from structbench.benchmarks.structfact.generated.claims import And, Arith, Year, compare
from structbench.benchmarks.structfact.generated.profile import Column, Kind, Profile, World
from structbench.benchmarks.structfact.generated.templates.common import (
    NEI,
    NO,
    SPACETIME,
    ColumnTemplate,
    Draft,
    Statement,
    Template,
    column_candidates,
    draw_rows,
    draw_target,
    draw_two_facts,
    evidence_table,
    lookup_draft,
    name_of,
    ordered_pair,
    other_value,
    pair_claim,
    pick_rows,
    ref,
    sizes,
    table_view,
    value_claim,
    view,
)
from structbench.benchmarks.structfact.generated.views import Evidence, View

TEMPORAL = "Temporal"
SPATIAL = "Spatial"
SPATIOTEMPORAL = "Spatiotemporal"


def _year(column: Column, row: int) -> int:
    value = column.values[row]
    return int(value[:4]) if isinstance(value, str) else int(value)  # type: ignore[arg-type]


def _near_year(year: int, rng: random.Random) -> int:
    """A year 1 to 15 years before or after ``year``."""
    return year + rng.choice((-1, 1)) * rng.randint(1, 15)


def _lookup_view(p: Profile, rng: random.Random, rows: list[int], need: list[Column]) -> View:
    """A table, or (a quarter of the time) one list per entity."""
    if rng.random() < 0.25:
        listed = rows[: rng.randint(2, 5)]
        return view(p, listed, table_view(p, rng, listed, need).columns, "list")
    return table_view(p, rng, rows, need)


def _lookup(
    p: Profile, column: Column, rows: list[int], rng: random.Random, want: str
) -> tuple[View, int, Statement] | None:
    """A lookup's evidence (``_lookup_view``, without the row for NEI), row and statement."""
    v = _lookup_view(p, rng, rows, [column])
    found = draw_target(p, column, v.rows, rng, want)
    if found is None:
        return None
    target, statement = found
    if want == NEI:
        v.rows.remove(target)
    return v, target, statement


class _Temporal(ColumnTemplate):
    """A question about a date or year column."""

    task = SPACETIME
    category = TEMPORAL

    def takes(self, column: Column) -> bool:
        return column.temporal


class DateMatch(_Temporal):
    """Was the <date column> of <entity> <date in another spelling>? / ... <year>?"""

    name = "date_match"

    def ask(self, p: Profile, col: Column, rows: list[int], rng: random.Random, want: str) -> Draft | None:
        found = _lookup(p, col, rows, rng, want)
        if found is None:
            return None
        v, target, statement = found
        return lookup_draft(p, col, target, statement, Evidence([v]), verb="Was")


class BeforeYear(_Temporal):
    """Was the <date column> of <entity> before (after) <year>?"""

    name = "before_year"

    def ask(self, p: Profile, col: Column, rows: list[int], rng: random.Random, want: str) -> Draft | None:
        target = rng.choice(rows)
        year = _year(col, target)
        bound = _near_year(year, rng)
        before = (year < bound) == (want != NO)
        v = evidence_table(p, rng, rows, [col], want, drop_row=target)
        entity = name_of(p, target)
        question = f"Was the {col.name} of {entity} {'before' if before else 'after'} {bound}?"
        claim = compare(Year(of=ref(p, entity, col)), "<" if before else ">", float(bound), "number")
        return Draft(question, claim, Evidence([v]))


class DateOrder(_Temporal):
    """Did the <date column> of <a> come before (after) that of <b>?"""

    name = "date_order"

    def ask(self, p: Profile, col: Column, rows: list[int], rng: random.Random, want: str) -> Draft | None:
        pair = ordered_pair(col, rows, rng, want, "<")
        if pair is None:
            return None
        a, b, earlier = pair
        v = evidence_table(p, rng, rows, [col], want, drop_row=b)
        ea, eb = name_of(p, a), name_of(p, b)
        question = f"Did the {col.name} of {ea} come {'before' if earlier else 'after'} that of {eb}?"
        kind: Kind = "date" if col.kind == "date" else "number"
        return Draft(question, pair_claim(p, ea, "<" if earlier else ">", eb, col, kind), Evidence([v]))


class YearsApart(_Temporal):
    """Were the <date column>s of <a> and <b> <n> years apart?"""

    name = "years_apart"

    def ask(self, p: Profile, col: Column, rows: list[int], rng: random.Random, want: str) -> Draft | None:
        a, b = rng.sample(rows, 2)
        gap = abs(_year(col, a) - _year(col, b))
        if gap == 0:
            return None
        stated = gap if want != NO else max(1, gap + rng.choice((-1, 1)) * rng.randint(1, 5))
        if want == NO and stated == gap:
            stated = gap + 1
        v = evidence_table(p, rng, rows, [col], want, drop_row=b)
        ea, eb = name_of(p, a), name_of(p, b)
        question = f"Were the {col.name} values of {ea} and {eb} {stated} years apart?"
        gap_claim = Arith(
            fn="absdiff",
            left=Year(of=ref(p, ea, col)),
            right=Year(of=ref(p, eb, col)),
        )
        return Draft(question, compare(gap_claim, "=", float(stated), "number"), Evidence([v]))


class PlaceMatch(ColumnTemplate):
    """Is the <place column> of <entity> <place>? (wrong: another entity's place)"""

    task = SPACETIME
    name = "place_match"
    category = SPATIAL
    kind = "text"

    def takes(self, column: Column) -> bool:
        return column.place

    def ask(self, p: Profile, col: Column, rows: list[int], rng: random.Random, want: str) -> Draft | None:
        found = _lookup(p, col, rows, rng, want)
        if found is None:
            return None
        v, target, statement = found
        entity = name_of(p, target)
        question = rng.choice((
            f"Is the {col.name} of {entity} {statement.text}?",
            f"Is {entity} located in {statement.text} ({col.name})?",
        ))
        return Draft(question, value_claim(p, entity, col, statement), Evidence([v]))


class SamePlace(Template):
    """Are <a> and <b> in the same <place column>?"""

    task = SPACETIME
    name = "same_place"
    category = SPATIAL

    def candidates(self, world: World) -> list[Any]:
        return column_candidates(world, "text", lambda c: c.place and c.distinct < 0.8 * len(c.filled))

    def draft(self, candidate: tuple[Profile, Column], rng: random.Random, want: str) -> Draft | None:
        p, col = candidate
        key = p.key
        if key is None:
            return None
        if want == NO:
            rows = pick_rows(p, rng, sizes(rng), require=[col])
            a = rng.choice(rows)
            others = [r for r in rows if str(col.values[r]).casefold() != str(col.values[a]).casefold()]
            if not others:
                return None
            b = rng.choice(others)
        else:
            pool = col.filled
            a = pool[rng.randrange(len(pool))]
            probes = (pool[rng.randrange(len(pool))] for _ in range(60))
            same = [
                r for r in probes
                if col.values[r] == col.values[a] and key.values[r] not in (None, key.values[a])
            ]
            if key.values[a] is None or not same:
                return None
            b = same[0]
            rows = pick_rows(p, rng, sizes(rng), require=[col], include=[a, b])
        v = evidence_table(p, rng, rows, [col], want, drop_row=b)
        ea, eb = p.cell(a, key), p.cell(b, key)
        question = f"Are {ea} and {eb} in the same {col.name}?"
        return Draft(question, pair_claim(p, ea, "=", eb, col, "text"), Evidence([v]))


class Direction(ColumnTemplate):
    """Is <a> further north (south, east, west) than <b>? (latitude / longitude columns)"""

    task = SPACETIME
    name = "direction"
    category = SPATIAL
    kind = "number"

    def takes(self, column: Column) -> bool:
        return column.axis is not None

    def ask(self, p: Profile, col: Column, rows: list[int], rng: random.Random, want: str) -> Draft | None:
        pair = ordered_pair(col, rows, rng, want)
        if pair is None:
            return None
        a, b, larger = pair
        v = evidence_table(p, rng, rows, [col], want, drop_row=b)
        way = {("north", True): "north", ("north", False): "south", ("east", True): "east", ("east", False): "west"}
        ea, eb = name_of(p, a), name_of(p, b)
        question = f"Is {ea} further {way[col.axis or 'north', larger]} than {eb} (by {col.name})?"
        return Draft(question, pair_claim(p, ea, ">" if larger else "<", eb, col), Evidence([v]))


class _Spatiotemporal(Template):
    """A question about a place column and a date or year column of one table."""

    task = SPACETIME
    category = SPATIOTEMPORAL

    def candidates(self, world: World) -> list[Any]:
        return [
            (p, place, time)
            for p in world.profiles
            if p.key is not None
            for place in p.attributes("text")
            if place.place
            for time in p.attributes()
            if time.temporal
        ]

    def draft(self, candidate: tuple[Profile, Column, Column], rng: random.Random, want: str) -> Draft | None:
        p, place, time = candidate
        rows = draw_rows(p, rng, [place, time])
        return None if rows is None else self.ask(p, place, time, rows, rng, want)

    @abstractmethod
    def ask(
        self, p: Profile, place: Column, time: Column, rows: list[int], rng: random.Random, want: str
    ) -> Draft | None:
        """A question about ``place`` and ``time`` over ``rows`` aiming at label ``want``, or None."""


class PlaceAndTime(_Spatiotemporal):
    """Is the <place column> of <entity> <place>, and was its <date column> <date>?"""

    name = "place_and_time"

    def ask(
        self, p: Profile, place: Column, time: Column, rows: list[int], rng: random.Random, want: str
    ) -> Draft | None:
        v = _lookup_view(p, rng, rows, [place, time])
        found = draw_two_facts(p, place, time, v.rows, rng, want)
        if found is None:
            return None
        target, where, when = found
        if want == NEI:
            v.rows.remove(target)
        entity = name_of(p, target)
        question = f"Is the {place.name} of {entity} {where.text}, and was its {time.name} {when.text}?"
        claim = And(parts=[value_claim(p, entity, place, where), value_claim(p, entity, time, when)])
        return Draft(question, claim, Evidence([v]))


class PlaceBeforeYear(_Spatiotemporal):
    """Is <entity> in <place>, with a <date column> before (after) <year>?"""

    name = "place_before_year"

    def ask(
        self, p: Profile, place: Column, time: Column, rows: list[int], rng: random.Random, want: str
    ) -> Draft | None:
        target = rng.choice(rows)
        wrong = rng.choice(("place", "time")) if want == NO else None
        true_place = place.values[target]
        stated_place = other_value(place, rng, [true_place], rows) if wrong == "place" else true_place
        if stated_place is None:
            return None
        year = _year(time, target)
        bound = _near_year(year, rng)
        before = (year < bound) == (wrong != "time")
        v = evidence_table(p, rng, rows, [place, time], want, drop_row=target)
        entity = name_of(p, target)
        word = "before" if before else "after"
        question = f"Is {entity} in {stated_place} ({place.name}), with a {time.name} {word} {bound}?"
        claim = And(parts=[
            compare(ref(p, entity, place), "=", str(stated_place), "text"),
            compare(Year(of=ref(p, entity, time)), "<" if before else ">", float(bound), "number"),
        ])
        return Draft(question, claim, Evidence([v]))


TEMPLATES: tuple[Template, ...] = (
    DateMatch(),
    BeforeYear(),
    DateOrder(),
    YearsApart(),
    PlaceMatch(),
    SamePlace(),
    Direction(),
    PlaceAndTime(),
    PlaceBeforeYear(),
)
