"""Spatiotemporal Cognition (the paper's Geography-Time Reasoning, Appendix H.2): questions about dates and
years (temporal), places and coordinates (spatial), or both at once (spatiotemporal). Dates are often
asked in another spelling than the table's (``Dec 21, 1937`` against ``1937-12-21``)."""

from __future__ import annotations

import random
from typing import Any

from structbench.benchmarks.structfact.generated.claims import And, Arith, Year, cell, compare
from structbench.benchmarks.structfact.generated.profile import Column, Kind, Profile, World
from structbench.benchmarks.structfact.generated.templates.common import (
    NEI,
    NO,
    SPACETIME,
    YES,
    Draft,
    Template,
    other_value,
    pick_rows,
    ref,
    sizes,
    stated_value,
    table_view,
    view,
)
from structbench.benchmarks.structfact.generated.views import Evidence, View

TEMPORAL = "Temporal"
SPATIAL = "Spatial"
SPATIOTEMPORAL = "Spatiotemporal"


def _temporal(world: World) -> list[tuple[Profile, Column]]:
    return [(p, c) for p in world.profiles if p.key is not None for c in p.attributes() if c.temporal]


def _places(world: World) -> list[tuple[Profile, Column]]:
    return [(p, c) for p in world.profiles if p.key is not None for c in p.attributes("text") if c.place]


def _year(column: Column, row: int) -> int:
    value = column.values[row]
    return int(value[:4]) if isinstance(value, str) else int(value)  # type: ignore[arg-type]


def _lookup_view(p: Profile, rng: random.Random, rows: list[int], need: list[Column]) -> View:
    """A table, or (a quarter of the time) one list per entity."""
    if rng.random() < 0.25:
        listed = rows[: rng.randint(2, 5)]
        return view(p, listed, table_view(p, rng, listed, need).columns, "list")
    return table_view(p, rng, rows, need)


def _lookup(p: Profile, column: Column, rng: random.Random, want: str) -> tuple[View, int, Any] | None:
    rows = pick_rows(p, rng, sizes(rng), require=[column])
    if len(rows) < 3:
        return None
    v = _lookup_view(p, rng, rows, [column])
    target = rng.choice(v.rows)
    statement = stated_value(p, column, target, rng, want, v.rows)
    if statement is None:
        return None
    if want == NEI:
        v.rows.remove(target)
    return v, target, statement


class DateMatch(Template):
    """Was the <date column> of <entity> <date in another spelling>? / ... <year>?"""

    task = SPACETIME
    name = "date_match"
    category = TEMPORAL

    def candidates(self, world: World) -> list[Any]:
        return _temporal(world)

    def draft(self, candidate: tuple[Profile, Column], rng: random.Random, want: str) -> Draft | None:
        p, col = candidate
        found = _lookup(p, col, rng, want)
        if found is None or p.key is None:
            return None
        v, target, statement = found
        entity = p.cell(target, p.key)
        question = f"Was the {col.name} of {entity} {statement.text}?"
        claim = compare(ref(p, entity, col), "=", statement.value, statement.kind)
        return Draft(question, claim, Evidence([v]))


class BeforeYear(Template):
    """Was the <date column> of <entity> before (after) <year>?"""

    task = SPACETIME
    name = "before_year"
    category = TEMPORAL

    def candidates(self, world: World) -> list[Any]:
        return _temporal(world)

    def draft(self, candidate: tuple[Profile, Column], rng: random.Random, want: str) -> Draft | None:
        p, col = candidate
        rows = pick_rows(p, rng, sizes(rng), require=[col])
        if len(rows) < 3 or p.key is None:
            return None
        target = rng.choice(rows)
        year = _year(col, target)
        bound = year + rng.choice((-1, 1)) * rng.randint(1, 15)
        before = (year < bound) == (want != NO)
        v = table_view(p, rng, rows, [col])
        if want == NEI:
            v.rows.remove(target)
        entity = p.cell(target, p.key)
        question = f"Was the {col.name} of {entity} {'before' if before else 'after'} {bound}?"
        claim = compare(Year(of=ref(p, entity, col)), "<" if before else ">", float(bound), "number")
        return Draft(question, claim, Evidence([v]))


class DateOrder(Template):
    """Did the <date column> of <a> come before (after) that of <b>?"""

    task = SPACETIME
    name = "date_order"
    category = TEMPORAL

    def candidates(self, world: World) -> list[Any]:
        return _temporal(world)

    def draft(self, candidate: tuple[Profile, Column], rng: random.Random, want: str) -> Draft | None:
        p, col = candidate
        rows = pick_rows(p, rng, sizes(rng), require=[col])
        if len(rows) < 3 or p.key is None:
            return None
        a, b = rng.sample(rows, 2)
        if col.values[a] == col.values[b]:
            return None
        earlier = rng.random() < 0.5
        holds = (col.values[a] < col.values[b]) == earlier  # type: ignore[operator]
        if want != NEI and holds != (want == YES):
            a, b = b, a
        v = table_view(p, rng, rows, [col])
        if want == NEI:
            v.rows.remove(b)
        ea, eb = p.cell(a, p.key), p.cell(b, p.key)
        question = f"Did the {col.name} of {ea} come {'before' if earlier else 'after'} that of {eb}?"
        kind: Kind = "date" if col.kind == "date" else "number"
        claim = compare(
            ref(p, ea, col), "<" if earlier else ">", ref(p, eb, col), kind
        )
        return Draft(question, claim, Evidence([v]))


class YearsApart(Template):
    """Were the <date column>s of <a> and <b> <n> years apart?"""

    task = SPACETIME
    name = "years_apart"
    category = TEMPORAL

    def candidates(self, world: World) -> list[Any]:
        return _temporal(world)

    def draft(self, candidate: tuple[Profile, Column], rng: random.Random, want: str) -> Draft | None:
        p, col = candidate
        rows = pick_rows(p, rng, sizes(rng), require=[col])
        if len(rows) < 3 or p.key is None:
            return None
        a, b = rng.sample(rows, 2)
        gap = abs(_year(col, a) - _year(col, b))
        if gap == 0:
            return None
        stated = gap if want != NO else max(1, gap + rng.choice((-1, 1)) * rng.randint(1, 5))
        if want == NO and stated == gap:
            stated = gap + 1
        v = table_view(p, rng, rows, [col])
        if want == NEI:
            v.rows.remove(b)
        ea, eb = p.cell(a, p.key), p.cell(b, p.key)
        question = f"Were the {col.name} values of {ea} and {eb} {stated} years apart?"
        gap_claim = Arith(
            fn="absdiff",
            left=Year(of=ref(p, ea, col)),
            right=Year(of=ref(p, eb, col)),
        )
        return Draft(question, compare(gap_claim, "=", float(stated), "number"), Evidence([v]))


class PlaceMatch(Template):
    """Is the <place column> of <entity> <place>? (wrong: another entity's place)"""

    task = SPACETIME
    name = "place_match"
    category = SPATIAL

    def candidates(self, world: World) -> list[Any]:
        return _places(world)

    def draft(self, candidate: tuple[Profile, Column], rng: random.Random, want: str) -> Draft | None:
        p, col = candidate
        found = _lookup(p, col, rng, want)
        if found is None or p.key is None:
            return None
        v, target, statement = found
        entity = p.cell(target, p.key)
        question = rng.choice((
            f"Is the {col.name} of {entity} {statement.text}?",
            f"Is {entity} located in {statement.text} ({col.name})?",
        ))
        claim = compare(ref(p, entity, col), "=", statement.value, "text")
        return Draft(question, claim, Evidence([v]))


class SamePlace(Template):
    """Are <a> and <b> in the same <place column>?"""

    task = SPACETIME
    name = "same_place"
    category = SPATIAL

    def candidates(self, world: World) -> list[Any]:
        return [(p, c) for p, c in _places(world) if c.distinct < 0.8 * len(c.filled)]

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
        v = table_view(p, rng, rows, [col])
        if want == NEI:
            v.rows.remove(b)
        ea, eb = p.cell(a, key), p.cell(b, key)
        question = f"Are {ea} and {eb} in the same {col.name}?"
        claim = compare(cell(p.name, key.name, ea, col.name), "=", cell(p.name, key.name, eb, col.name), "text")
        return Draft(question, claim, Evidence([v]))


class Direction(Template):
    """Is <a> further north (south, east, west) than <b>? (latitude / longitude columns)"""

    task = SPACETIME
    name = "direction"
    category = SPATIAL

    def candidates(self, world: World) -> list[Any]:
        return [(p, c) for p in world.profiles if p.key is not None for c in p.attributes("number") if c.axis]

    def draft(self, candidate: tuple[Profile, Column], rng: random.Random, want: str) -> Draft | None:
        p, col = candidate
        rows = pick_rows(p, rng, sizes(rng), require=[col])
        if len(rows) < 3 or p.key is None:
            return None
        a, b = rng.sample(rows, 2)
        if col.values[a] == col.values[b]:
            return None
        larger = rng.random() < 0.5
        holds = (col.values[a] > col.values[b]) == larger  # type: ignore[operator]
        if want != NEI and holds != (want == YES):
            a, b = b, a
        v = table_view(p, rng, rows, [col])
        if want == NEI:
            v.rows.remove(b)
        way = {("north", True): "north", ("north", False): "south", ("east", True): "east", ("east", False): "west"}
        ea, eb = p.cell(a, p.key), p.cell(b, p.key)
        question = f"Is {ea} further {way[col.axis or 'north', larger]} than {eb} (by {col.name})?"
        claim = compare(
            ref(p, ea, col), ">" if larger else "<", ref(p, eb, col),
            "number",
        )
        return Draft(question, claim, Evidence([v]))


class PlaceAndTime(Template):
    """Is the <place column> of <entity> <place>, and was its <date column> <date>?"""

    task = SPACETIME
    name = "place_and_time"
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
        rows = pick_rows(p, rng, sizes(rng), require=[place, time])
        if len(rows) < 3 or p.key is None:
            return None
        v = _lookup_view(p, rng, rows, [place, time])
        target = rng.choice(v.rows)
        wrong = rng.choice(("place", "time")) if want == NO else None
        where = stated_value(p, place, target, rng, NO if wrong == "place" else YES, v.rows)
        when = stated_value(p, time, target, rng, NO if wrong == "time" else YES, v.rows)
        if where is None or when is None:
            return None
        if want == NEI:
            v.rows.remove(target)
        entity = p.cell(target, p.key)
        question = f"Is the {place.name} of {entity} {where.text}, and was its {time.name} {when.text}?"
        claim = And(parts=[
            compare(ref(p, entity, place), "=", where.value, "text"),
            compare(ref(p, entity, time), "=", when.value, when.kind),
        ])
        return Draft(question, claim, Evidence([v]))


class PlaceBeforeYear(Template):
    """Is <entity> in <place>, with a <date column> before (after) <year>?"""

    task = SPACETIME
    name = "place_before_year"
    category = SPATIOTEMPORAL

    def candidates(self, world: World) -> list[Any]:
        return PlaceAndTime().candidates(world)

    def draft(self, candidate: tuple[Profile, Column, Column], rng: random.Random, want: str) -> Draft | None:
        p, place, time = candidate
        rows = pick_rows(p, rng, sizes(rng), require=[place, time])
        if len(rows) < 3 or p.key is None:
            return None
        target = rng.choice(rows)
        wrong = rng.choice(("place", "time")) if want == NO else None
        true_place = place.values[target]
        stated_place = other_value(place, rng, [true_place], rows) if wrong == "place" else true_place
        if stated_place is None:
            return None
        year = _year(time, target)
        bound = year + rng.choice((-1, 1)) * rng.randint(1, 15)
        before = (year < bound) == (wrong != "time")
        v = table_view(p, rng, rows, [place, time])
        if want == NEI:
            v.rows.remove(target)
        entity = p.cell(target, p.key)
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
