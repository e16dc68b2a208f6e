"""Arithmetic Calculation (paper Appendix H.1): numerical matching, numerical comparison (including
superlatives) and computational analysis (totals, averages, differences, counts, percentages)."""

from __future__ import annotations

import math
import random
from typing import Any

from structbench.benchmarks.structfact.generated.claims import Aggregate, Arith, Best, Count, compare
from structbench.benchmarks.structfact.generated.profile import Column, Profile, World
from structbench.benchmarks.structfact.generated.templates.common import (
    ARITHMETIC,
    NEI,
    NO,
    YES,
    Draft,
    Template,
    decimals_of,
    extreme,
    nearby,
    number_text,
    other_value,
    pick_rows,
    ref,
    shown_number,
    sizes,
    table_view,
)
from structbench.benchmarks.structfact.generated.views import Evidence

MATCHING = "Numerical Matching"
COMPARISON = "Numerical Comparison"
COMPUTATION = "Computational Analysis"


def number_candidates(world: World) -> list[tuple[Profile, Column]]:
    """(table, number column) for every table with named rows; years are left to Spatiotemporal Cognition."""
    return [(p, c) for p in world.profiles if p.key is not None for c in p.attributes("number") if not c.year]


def rounding(column: Column) -> float:
    """Half a unit of the column's last decimal place: the tolerance of computed numbers (0 for integers)."""
    return 0.5 * 10.0 ** -column.style.decimals if column.style.decimals else 0.0


def off_edge(value: float, stated: float, tol: float) -> bool:
    """Whether ``stated`` rounds ``value`` safely inside the tolerance (never at its edge)."""
    return abs(value - stated) <= (0.9 * tol if tol else 1e-9)


class _NumberTemplate(Template):
    task = ARITHMETIC

    def candidates(self, world: World) -> list[Any]:
        return number_candidates(world)

    @staticmethod
    def rows(p: Profile, column: Column, rng: random.Random, low: int = 4, high: int = 12) -> list[int] | None:
        rows = pick_rows(p, rng, sizes(rng, low, high), require=[column])
        return rows if len(rows) >= 3 else None


class ValueMatch(_NumberTemplate):
    """Is the <column> of <entity> <number>?"""

    name = "value_match"
    category = MATCHING

    def draft(self, candidate: tuple[Profile, Column], rng: random.Random, want: str) -> Draft | None:
        p, col = candidate
        rows = self.rows(p, col, rng)
        if rows is None or p.key is None:
            return None
        target = rng.choice(rows)
        entity, true = p.cell(target, p.key), col.values[target]
        assert isinstance(true, float)
        stated = true
        if want == NO:
            swapped = other_value(col, rng, [true], rows) if rng.random() < 0.5 else None
            stated = swapped if isinstance(swapped, float) else nearby(col, true, rng)
        view = table_view(p, rng, rows, [col])
        if want == NEI:
            view.rows.remove(target)
        text = number_text(col, stated, decimals_of(col, stated))
        question = rng.choice((f"Is the {col.name} of {entity} {text}?", f"Does {entity} have a {col.name} of {text}?"))
        claim = compare(ref(p, entity, col), "=", stated, "number")
        return Draft(question, claim, Evidence([view]))


class PairComparison(_NumberTemplate):
    """Is the <column> of <a> greater (less) than that of <b>?"""

    name = "pair_comparison"
    category = COMPARISON

    def draft(self, candidate: tuple[Profile, Column], rng: random.Random, want: str) -> Draft | None:
        p, col = candidate
        rows = self.rows(p, col, rng)
        if rows is None or p.key is None:
            return None
        a, b = rng.sample(rows, 2)
        if col.values[a] == col.values[b]:
            return None
        greater = rng.random() < 0.5
        holds = (col.values[a] > col.values[b]) == greater  # type: ignore[operator]
        if want != NEI and holds != (want == YES):
            a, b = b, a
        view = table_view(p, rng, rows, [col])
        if want == NEI:
            view.rows.remove(rng.choice((a, b)))
        ea, eb = p.cell(a, p.key), p.cell(b, p.key)
        word, adjective = ("greater", "higher") if greater else ("less", "lower")
        question = rng.choice((
            f"Is the {col.name} of {ea} {word} than that of {eb}?",
            f"Does {ea} have a {adjective} {col.name} than {eb}?",
        ))
        claim = compare(
            ref(p, ea, col), ">" if greater else "<", ref(p, eb, col),
            "number",
        )
        return Draft(question, claim, Evidence([view]))


class Threshold(_NumberTemplate):
    """Is the <column> of <entity> above (below) <number>?"""

    name = "threshold"
    category = COMPARISON

    def draft(self, candidate: tuple[Profile, Column], rng: random.Random, want: str) -> Draft | None:
        p, col = candidate
        rows = self.rows(p, col, rng)
        if rows is None or p.key is None:
            return None
        target = rng.choice(rows)
        entity, true = p.cell(target, p.key), col.values[target]
        assert isinstance(true, float)
        bound = nearby(col, true, rng)
        above = (true > bound) == (want != NO)
        view = table_view(p, rng, rows, [col])
        if want == NEI:
            view.rows.remove(target)
        text = number_text(col, bound, decimals_of(col, bound))
        word = rng.choice(("above", "more than")) if above else rng.choice(("below", "less than"))
        question = f"Is the {col.name} of {entity} {word} {text}?"
        claim = compare(ref(p, entity, col), ">" if above else "<", bound, "number")
        return Draft(question, claim, Evidence([view]))


class Superlative(_NumberTemplate):
    """Does <entity> have the highest (lowest) <column> among the entries listed?"""

    name = "superlative"
    category = COMPARISON

    def draft(self, candidate: tuple[Profile, Column], rng: random.Random, want: str) -> Draft | None:
        p, col = candidate
        rows = self.rows(p, col, rng)
        if rows is None or p.key is None:
            return None
        fn = extreme(rng)
        top = (max if fn == "max" else min)(col.values[r] for r in rows)  # type: ignore[type-var]
        winners = [r for r in rows if col.values[r] == top]
        if len(winners) != 1:
            return None
        chosen = winners[0] if want != NO else rng.choice([r for r in rows if r != winners[0]])
        view = table_view(p, rng, rows, [col])
        if want == NEI:
            view.columns.remove(col)
        entity = p.cell(chosen, p.key)
        most = "highest" if fn == "max" else "lowest"
        question = rng.choice((
            f"Does {entity} have the {most} {col.name} among the entries listed?",
            f"Is {entity} the entry with the {most} {col.name}?",
        ))
        claim = compare(Best(fn=fn, table=p.name, key=p.key.name, column=col.name), "=", entity, "text")
        return Draft(question, claim, Evidence([view]))


class Total(_NumberTemplate):
    """Is the total <column> of all the entries listed <number>? (wrong: a row left out, or off by a little)"""

    name = "total"
    category = COMPUTATION

    def draft(self, candidate: tuple[Profile, Column], rng: random.Random, want: str) -> Draft | None:
        p, col = candidate
        rows = self.rows(p, col, rng, 3, 10)
        if rows is None:
            return None
        values = [float(col.values[r]) for r in rows]  # type: ignore[arg-type]
        total, tol = math.fsum(values), rounding(col)
        stated = shown_number(col, total)
        if not off_edge(total, stated, tol):
            return None
        if want == NO:
            forgot = shown_number(col, total - rng.choice(values))
            stated = forgot if rng.random() < 0.5 and forgot != stated else nearby(col, stated, rng)
            if abs(stated - total) <= 2 * tol:
                return None
        view = table_view(p, rng, rows, [col])
        if want == NEI:
            view.columns.remove(col)
        text = number_text(col, stated, decimals_of(col, stated))
        question = rng.choice((
            f"Is the total {col.name} of all the entries listed {text}?",
            f"Do the entries listed have a combined {col.name} of {text}?",
        ))
        claim = compare(Aggregate(fn="sum", table=p.name, column=col.name), "=", stated, "number", tol)
        return Draft(question, claim, Evidence([view]))


class Average(_NumberTemplate):
    """Is the average <column> of the entries listed <number> (to two decimal places)?"""

    name = "average"
    category = COMPUTATION

    def draft(self, candidate: tuple[Profile, Column], rng: random.Random, want: str) -> Draft | None:
        p, col = candidate
        rows = self.rows(p, col, rng, 3, 10)
        if rows is None:
            return None
        values = [float(col.values[r]) for r in rows]  # type: ignore[arg-type]
        mean, tol = math.fsum(values) / len(values), 0.005
        stated = round(mean, 2)
        if not off_edge(mean, stated, tol):
            return None
        if want == NO:
            shift = max(0.05, abs(mean) * rng.choice((0.05, 0.1, 0.2)))
            stated = round(mean + rng.choice((-1, 1)) * shift, 2)
            if abs(stated - mean) <= 4 * tol:
                return None
        view = table_view(p, rng, rows, [col])
        if want == NEI:
            view.columns.remove(col)
        text = number_text(col, stated, 2)
        question = f"Is the average {col.name} of the entries listed {text} (to two decimal places)?"
        claim = compare(Aggregate(fn="avg", table=p.name, column=col.name), "=", stated, "number", tol)
        return Draft(question, claim, Evidence([view]))


class Difference(_NumberTemplate):
    """Is the <column> of <a> <number> more than that of <b>?"""

    name = "difference"
    category = COMPUTATION

    def draft(self, candidate: tuple[Profile, Column], rng: random.Random, want: str) -> Draft | None:
        p, col = candidate
        rows = self.rows(p, col, rng)
        if rows is None or p.key is None:
            return None
        a, b = rng.sample(rows, 2)
        va, vb = float(col.values[a]), float(col.values[b])  # type: ignore[arg-type]
        if va == vb:
            return None
        if va < vb:
            a, b, va, vb = b, a, vb, va
        tol = rounding(col)
        stated = shown_number(col, va - vb)
        if not off_edge(va - vb, stated, tol):
            return None
        if want == NO:
            stated = nearby(col, stated, rng)
            if abs(stated - (va - vb)) <= 2 * tol:
                return None
        view = table_view(p, rng, rows, [col])
        if want == NEI:
            view.rows.remove(b)
        ea, eb = p.cell(a, p.key), p.cell(b, p.key)
        text = number_text(col, stated, decimals_of(col, stated))
        question = rng.choice((
            f"Is the {col.name} of {ea} {text} more than that of {eb}?",
            f"Does {ea} exceed {eb} in {col.name} by {text}?",
        ))
        difference = Arith(fn="sub", left=ref(p, ea, col), right=ref(p, eb, col))
        claim = compare(difference, "=", stated, "number", tol)
        return Draft(question, claim, Evidence([view]))


class CountAbove(_NumberTemplate):
    """Is the number of entries listed with a <column> above <number> equal to <n>?"""

    name = "count_above"
    category = COMPUTATION

    def draft(self, candidate: tuple[Profile, Column], rng: random.Random, want: str) -> Draft | None:
        p, col = candidate
        rows = self.rows(p, col, rng, 4, 12)
        if rows is None:
            return None
        values = sorted({float(col.values[r]) for r in rows})  # type: ignore[arg-type]
        if len(values) < 3:
            return None
        bound = rng.choice(values[:-1])
        count = len([r for r in rows if float(col.values[r]) > bound])  # type: ignore[arg-type]
        stated = count
        if want == NO:
            stated = count + rng.choice([d for d in (-1, 1) if 0 <= count + d <= len(rows)])
        view = table_view(p, rng, rows, [col])
        if want == NEI:
            view.columns.remove(col)
        above = number_text(col, bound, decimals_of(col, bound))
        question = f"Is the number of entries listed with a {col.name} above {above} equal to {stated}?"
        claim = compare(Count(table=p.name, column=col.name, cmp=">", value=bound), "=", float(stated), "number")
        return Draft(question, claim, Evidence([view]))


class Share(_NumberTemplate):
    """Does <entity> account for more than <p>% of the total <column> of the entries listed?"""

    name = "share"
    category = COMPUTATION

    def draft(self, candidate: tuple[Profile, Column], rng: random.Random, want: str) -> Draft | None:
        p, col = candidate
        rows = self.rows(p, col, rng, 3, 10)
        if rows is None or p.key is None:
            return None
        values = [float(col.values[r]) for r in rows]  # type: ignore[arg-type]
        total = math.fsum(values)
        if min(values) < 0 or total <= 0:
            return None
        target = rng.choice(rows)
        share = 100.0 * float(col.values[target]) / total  # type: ignore[arg-type]
        step = rng.choice((0, 1, 2, 5))
        percent = math.floor(share) - step if want != NO else math.ceil(share) + step
        if percent < 0 or abs(share - percent) < 0.3:
            return None
        view = table_view(p, rng, rows, [col])
        if want == NEI:
            view.rows.remove(target)
        entity = p.cell(target, p.key)
        question = f"Does {entity} account for more than {percent}% of the total {col.name} of the entries listed?"
        part = Arith(fn="share", left=ref(p, entity, col),
                     right=Aggregate(fn="sum", table=p.name, column=col.name))
        claim = compare(part, ">", float(percent), "number")
        return Draft(question, claim, Evidence([view]))


TEMPLATES: tuple[Template, ...] = (
    ValueMatch(),
    PairComparison(),
    Threshold(),
    Superlative(),
    Total(),
    Average(),
    Difference(),
    CountAbove(),
    Share(),
)
