"""Multi-hop Reasoning (Appendix H.3): questions whose answer links several pieces of evidence; the
difficulty is the number of hops (1-hop ... 5-hop, >5-hop in the paper; here 1 to 4).

- ``chain``: follow foreign keys across tables (``the continent of the country of Kabul``), shown as
  Markdown tables or as a graph of triples; 2 to 4 hops; ``best_then_chain`` starts from the row with
  the largest value of a column (``... of the city with the highest population``), 3 to 5 hops.
- ``best_then_lookup``: find the row with the largest value, then read another of its cells; 2 hops.
- ``one_hop``: read one fact from a table, infoboxes, lists or triples; 1 hop.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal

from structbench.benchmarks.structfact.generated.claims import Cell, Const, Value, compare
from structbench.benchmarks.structfact.generated.profile import Column, Link, Profile, World
from structbench.benchmarks.structfact.generated.templates.common import (
    MULTIHOP,
    NEI,
    Draft,
    Template,
    best,
    column_candidates,
    draw_rows,
    draw_target,
    extreme_row,
    extreme_word,
    lookup_draft,
    pick_columns,
    pick_rows,
    ref,
    sizes,
    stated_value,
    table_view,
    view,
)
from structbench.benchmarks.structfact.generated.views import Evidence, Form, View

MAX_LINKS = 3


def hops(n: int) -> str:
    return f"{n}-hop" if n <= 5 else ">5-hop"


@dataclass(frozen=True)
class Chain:
    """A start table, the foreign keys followed from it, and the attribute read at the end."""

    start: Profile
    links: tuple[Link, ...]
    indexes: tuple[dict[str, int], ...]
    """Per link: key text -> row of its target table."""
    attribute: Column


def _index(link: Link) -> dict[str, int]:
    return {link.target.cell(r, link.key): r for r in link.key.filled}


def _endings(target: Profile, key: Column) -> list[Column]:
    return [c for c in target.columns if c is not key and c.short and c.distinct >= 2 and not c.identifier]


def chains(world: World) -> list[Chain]:
    """Every chain of up to ``MAX_LINKS`` foreign keys from a table with named rows."""
    indexes: dict[int, dict[str, int]] = {}

    def index(link: Link) -> dict[str, int]:
        if id(link) not in indexes:
            indexes[id(link)] = _index(link)
        return indexes[id(link)]

    found: list[Chain] = []

    def extend(start: Profile, path: tuple[Link, ...]) -> None:
        last = path[-1]
        found.extend(
            Chain(start, path, tuple(index(link) for link in path), c)
            for c in _endings(last.target, last.key)
        )
        if len(path) < MAX_LINKS:
            seen = {start.name, *(link.target.name for link in path)}
            for link in last.target.links:
                if link.target.name not in seen:
                    extend(start, (*path, link))

    for p in world.profiles:
        if p.key is not None:
            for link in p.links:
                extend(p, (link,))
    return found


class ChainLookup(Template):
    """Is the <attribute> of the <table k> of ... of the <table 1> of <entity> <value>? Starting from the
    row with the largest (smallest) value of a number column instead of a named entity (``best``) adds a
    hop: ... of the <table 1> of the <start table> with the highest <number column>."""

    task = MULTIHOP

    def __init__(self, links: int, best: bool = False) -> None:
        self.links = links
        self.best = best
        self.name = "best_then_chain" if best else "chain"
        self.category = hops(links + 1 + best)

    def candidates(self, world: World) -> list[Any]:
        found = [c for c in chains(world) if len(c.links) == self.links]
        if not self.best:
            return found
        return [(c, n) for c in found for n in c.start.attributes("number") if n is not c.links[0].column]

    def table_of(self, candidate: Any) -> Profile:
        chain = candidate[0] if self.best else candidate
        assert isinstance(chain, Chain)
        return chain.start

    @staticmethod
    def _walk(chain: Chain, row: int) -> list[int] | None:
        """The rows the chain visits from ``row`` of its start table (None if a link is dangling)."""
        rows, profile = [row], chain.start
        for link, index in zip(chain.links, chain.indexes, strict=True):
            nxt = index.get(profile.cell(rows[-1], link.column))
            if nxt is None:
                return None
            rows.append(nxt)
            profile = link.target
        return rows if chain.attribute.values[rows[-1]] is not None else None

    def _start(
        self, candidate: Any, rng: random.Random
    ) -> tuple[Chain, list[int], list[int], Column | None, Literal["max", "min"]] | None:
        """The chain, its path, the start table's rows, the number column and extreme (``best``)."""
        chain: Chain = candidate[0] if self.best else candidate
        start, first = chain.start, chain.links[0].column
        assert start.key is not None
        if not self.best:
            pool = start.key.filled
            for _ in range(30):
                path = self._walk(chain, pool[rng.randrange(len(pool))])
                if path is not None:
                    rows = pick_rows(start, rng, sizes(rng, 3, 8), require=[first], include=[path[0]])
                    return chain, path, rows, None, "max"
            return None
        number: Column = candidate[1]
        pool = number.filled
        probes = (pool[rng.randrange(len(pool))] for _ in range(60))
        resolved = [r for r in probes if start.key.values[r] is not None and self._walk(chain, r) is not None]
        wanted = sizes(rng, 3, 8)
        count = min(wanted, len(set(resolved)))
        rows = pick_rows(start, rng, count, require=[first, number], include=resolved[:wanted])
        if len(rows) < 3:
            return None
        found = extreme_row(number, rows, rng)
        if found is None:
            return None
        fn, winner = found
        path = self._walk(chain, winner)
        return None if path is None else (chain, path, rows, number, fn)

    def draft(self, candidate: Any, rng: random.Random, want: str) -> Draft | None:
        found = self._start(candidate, rng)
        if found is None:
            return None
        chain, path, rows, number, fn = found
        start, first = chain.start, chain.links[0].column
        assert start.key is not None
        form: Form = "graph" if number is None and rng.random() < 0.3 else "table"
        need = [first] if number is None else [first, number]
        views = [View(start, start.key, rows, pick_columns(start, rng, need, len(need) + rng.randint(0, 2)), form)]
        previous, prev_rows = start, rows
        for i, (link, index) in enumerate(zip(chain.links, chain.indexes, strict=True)):
            target = link.target
            nxt = chain.links[i + 1].column if i + 1 < len(chain.links) else chain.attribute
            linked = [index[t] for r in prev_rows if (t := previous.cell(r, link.column)) in index]
            wanted = len(set(linked)) + rng.randint(1, 4)
            rows = pick_rows(target, rng, wanted, key=link.key, include=[path[i + 1], *linked])
            columns = pick_columns(target, rng, [nxt], rng.randint(1, 3), key=link.key)
            views.append(View(target, link.key, rows, columns, form))
            previous, prev_rows = target, rows
        last = views[-1]
        statement = stated_value(last.profile, chain.attribute, path[-1], rng, want, last.rows)
        if statement is None:
            return None
        if want == NEI:
            i = rng.randrange(1, len(views))
            views[i].rows.remove(path[i])
        if number is None:
            entity: Value = Const(value=start.cell(path[0], start.key))
            phrase = start.cell(path[0], start.key)
        else:
            entity = best(start, number, fn)
            phrase = f"the {start.name} with the {extreme_word(fn)} {number.name}"
        node: Value = Cell(table=start.name, key=start.key.name, entity=entity, column=first.name)
        ends = [*(link.column for link in chain.links[1:]), chain.attribute]
        for link, column in zip(chain.links, ends, strict=True):
            node = Cell(table=link.target.name, key=link.key.name, entity=node, column=column.name)
        taken = {chain.attribute.name, *(link.column.name for link in chain.links)}
        for link, source in zip(chain.links, [start, *(link.target for link in chain.links[:-1])], strict=True):
            twins = Counter(other.target.name for other in source.links)[link.target.name]
            noun = link.target.name if twins == 1 and link.target.name not in taken else link.column.name
            phrase = f"the {noun} of {phrase}"
        question = f"Is the {chain.attribute.name} of {phrase} {statement.text}?"
        rng.shuffle(views)
        claim = compare(node, "=", statement.value, statement.kind)
        return Draft(question, claim, Evidence(views))


class BestThenLookup(Template):
    """Is the <column> of the entry with the highest (lowest) <number column> <value>?"""

    task = MULTIHOP
    name = "best_then_lookup"
    category = hops(2)

    def candidates(self, world: World) -> list[Any]:
        return [
            (p, number, other)
            for p in world.profiles
            if p.key is not None
            for number in p.attributes("number")
            for other in p.attributes()
            if other is not number
        ]

    def draft(self, candidate: tuple[Profile, Column, Column], rng: random.Random, want: str) -> Draft | None:
        p, number, other = candidate
        rows = draw_rows(p, rng, [number], 4, 10)
        if rows is None:
            return None
        found = extreme_row(number, rows, rng)
        if found is None or other.values[found[1]] is None:
            return None
        fn, winner = found
        statement = stated_value(p, other, winner, rng, want, rows)
        if statement is None:
            return None
        v = table_view(p, rng, rows, [number, other])
        if want == NEI:
            v.columns.remove(rng.choice((number, other)))
        question = f"Is the {other.name} of the entry with the {extreme_word(fn)} {number.name} {statement.text}?"
        claim = compare(ref(p, best(p, number, fn), other), "=", statement.value, statement.kind)
        return Draft(question, claim, Evidence([v]))


class OneHop(Template):
    """Is the <column> of <entity> <value>? (one fact, in any form)"""

    task = MULTIHOP
    name = "one_hop"
    category = hops(1)

    def candidates(self, world: World) -> list[Any]:
        return column_candidates(world)

    def draft(self, candidate: tuple[Profile, Column], rng: random.Random, want: str) -> Draft | None:
        p, col = candidate
        form: Form = rng.choice(("table", "infobox", "list", "graph"))
        rows = draw_rows(p, rng, [col], *((2, 5) if form != "table" else (5, 15)), least=2)
        if rows is None:
            return None
        found = draw_target(p, col, rows, rng, want)
        if found is None:
            return None
        target, statement = found
        v = view(p, rows, pick_columns(p, rng, [col], rng.randint(2, 5)), form)
        if want == NEI:
            v.rows.remove(target)
        return lookup_draft(p, col, target, statement, Evidence([v]))


TEMPLATES: tuple[Template, ...] = (
    OneHop(),
    BestThenLookup(),
    *(ChainLookup(n) for n in range(1, MAX_LINKS + 1)),
    *(ChainLookup(n, best=True) for n in range(1, MAX_LINKS + 1)),
)
