"""Arithmetic Calculation (paper Appendix H.1): numerical matching, numerical comparison (including
superlatives) and computational analysis (totals, averages, differences, counts, percentages)."""

from __future__ import annotations

import math
import random

from structbench.benchmarks.structfact.generated.claims import Aggregate, Arith, Count, compare
from structbench.benchmarks.structfact.generated.profile import Column, Profile
from structbench.benchmarks.structfact.generated.templates.common import (
    ARITHMETIC,
    NEI,
    NO,
    ColumnTemplate,
    Draft,
    Template,
    best_claim,
    decimals_of,
    evidence_table,
    extreme_word,
    name_of,
    named_extreme,
    nearby,
    number_text,
    ordered_pair,
    other_value,
    pair_claim,
    ref,
    shown_number,
    table_view,
)
from structbench.benchmarks.structfact.generated.views import Evidence

MATCHING = "Numerical Matching"
COMPARISON = "Numerical Comparison"
COMPUTATION = "Computational Analysis"


def rounding(column: Column) -> float:
    """Half a unit of the column's last decimal place: the tolerance of computed numbers (0 for integers)."""
    return 0.5 * 10.0 ** -column.style.decimals if column.style.decimals else 0.0


def off_edge(value: float, stated: float, tol: float) -> bool:
    """Whether ``stated`` rounds ``value`` safely inside the tolerance (never at its edge)."""
    return abs(value - stated) <= (0.9 * tol if tol else 1e-9)


class _NumberTemplate(ColumnTemplate):
    """A question about a number column (years are left to Spatiotemporal Cognition)."""

    task = ARITHMETIC
    kind = "number"
    row_range = (4, 12)

    def takes(self, column: Column) -> bool:
        return not column.year


class _AggregateTemplate(_NumberTemplate):
    """A question that adds up the rows' numbers (totals, averages, shares), over 3 to 10 rows."""

    row_range = (3, 10)

    @staticmethod
    def numbers(column: Column, rows: list[int]) -> list[float]:
        return [float(column.values[r]) for r in rows]  # type: ignore[arg-type]


class ValueMatch(_NumberTemplate):
    """Is the <column> of <entity> <number>?"""

    name = "value_match"
    category = MATCHING

    def ask(self, p: Profile, col: Column, rows: list[int], rng: random.Random, want: str) -> Draft | None:
        target = rng.choice(rows)
        entity, true = name_of(p, target), col.values[target]
        assert isinstance(true, float)
        stated = true
        if want == NO:
            swapped = other_value(col, rng, [true], rows) if rng.random() < 0.5 else None
            stated = swapped if isinstance(swapped, float) else nearby(col, true, rng)
        view = evidence_table(p, rng, rows, [col], want, drop_row=target)
        text = number_text(col, stated, decimals_of(col, stated))
        question = rng.choice((f"Is the {col.name} of {entity} {text}?", f"Does {entity} have a {col.name} of {text}?"))
        claim = compare(ref(p, entity, col), "=", stated, "number")
        return Draft(question, claim, Evidence([view]))


class PairComparison(_NumberTemplate):
    """Is the <column> of <a> greater (less) than that of <b>?"""

    name = "pair_comparison"
    category = COMPARISON

    def ask(self, p: Profile, col: Column, rows: list[int], rng: random.Random, want: str) -> Draft | None:
        pair = ordered_pair(col, rows, rng, want)
        if pair is None:
            return None
        a, b, greater = pair
        view = table_view(p, rng, rows, [col])
        if want == NEI:
            view.rows.remove(rng.choice((a, b)))
        ea, eb = name_of(p, a), name_of(p, b)
        word, adjective = ("greater", "higher") if greater else ("less", "lower")
        question = rng.choice((
            f"Is the {col.name} of {ea} {word} than that of {eb}?",
            f"Does {ea} have a {adjective} {col.name} than {eb}?",
        ))
        claim = pair_claim(p, ea, ">" if greater else "<", eb, col)
        return Draft(question, claim, Evidence([view]))


class Threshold(_NumberTemplate):
    """Is the <column> of <entity> above (below) <number>?"""

    name = "threshold"
    category = COMPARISON

    def ask(self, p: Profile, col: Column, rows: list[int], rng: random.Random, want: str) -> Draft | None:
        target = rng.choice(rows)
        entity, true = name_of(p, target), col.values[target]
        assert isinstance(true, float)
        bound = nearby(col, true, rng)
        above = (true > bound) == (want != NO)
        view = evidence_table(p, rng, rows, [col], want, drop_row=target)
        text = number_text(col, bound, decimals_of(col, bound))
        word = rng.choice(("above", "more than")) if above else rng.choice(("below", "less than"))
        question = f"Is the {col.name} of {entity} {word} {text}?"
        claim = compare(ref(p, entity, col), ">" if above else "<", bound, "number")
        return Draft(question, claim, Evidence([view]))


class Superlative(_NumberTemplate):
    """Does <entity> have the highest (lowest) <column> among the entries listed?"""

    name = "superlative"
    category = COMPARISON

    def ask(self, p: Profile, col: Column, rows: list[int], rng: random.Random, want: str) -> Draft | None:
        found = named_extreme(col, rows, rng, want)
        if found is None:
            return None
        fn, chosen = found
        view = evidence_table(p, rng, rows, [col], want, drop_column=col)
        entity, most = name_of(p, chosen), extreme_word(fn)
        question = rng.choice((
            f"Does {entity} have the {most} {col.name} among the entries listed?",
            f"Is {entity} the entry with the {most} {col.name}?",
        ))
        return Draft(question, best_claim(p, col, fn, entity), Evidence([view]))


class Total(_AggregateTemplate):
    """Is the total <column> of all the entries listed <number>? (wrong: a row left out, or off by a little)"""

    name = "total"
    category = COMPUTATION

    def ask(self, p: Profile, col: Column, rows: list[int], rng: random.Random, want: str) -> Draft | None:
        values = self.numbers(col, rows)
        total, tol = math.fsum(values), rounding(col)
        stated = shown_number(col, total)
        if not off_edge(total, stated, tol):
            return None
        if want == NO:
            forgot = shown_number(col, total - rng.choice(values))
            stated = forgot if rng.random() < 0.5 and forgot != stated else nearby(col, stated, rng)
            if abs(stated - total) <= 2 * tol:
                return None
        view = evidence_table(p, rng, rows, [col], want, drop_column=col)
        text = number_text(col, stated, decimals_of(col, stated))
        question = rng.choice((
            f"Is the total {col.name} of all the entries listed {text}?",
            f"Do the entries listed have a combined {col.name} of {text}?",
        ))
        claim = compare(Aggregate(fn="sum", table=p.name, column=col.name), "=", stated, "number", tol)
        return Draft(question, claim, Evidence([view]))


class Average(_AggregateTemplate):
    """Is the average <column> of the entries listed <number> (to two decimal places)?"""

    name = "average"
    category = COMPUTATION

    def ask(self, p: Profile, col: Column, rows: list[int], rng: random.Random, want: str) -> Draft | None:
        values = self.numbers(col, rows)
        mean, tol = math.fsum(values) / len(values), 0.005
        stated = round(mean, 2)
        if not off_edge(mean, stated, tol):
            return None
        if want == NO:
            shift = max(0.05, abs(mean) * rng.choice((0.05, 0.1, 0.2)))
            stated = round(mean + rng.choice((-1, 1)) * shift, 2)
            if abs(stated - mean) <= 4 * tol:
                return None
        view = evidence_table(p, rng, rows, [col], want, drop_column=col)
        text = number_text(col, stated, 2)
        question = f"Is the average {col.name} of the entries listed {text} (to two decimal places)?"
        claim = compare(Aggregate(fn="avg", table=p.name, column=col.name), "=", stated, "number", tol)
        return Draft(question, claim, Evidence([view]))


class Difference(_NumberTemplate):
    """Is the <column> of <a> <number> more than that of <b>?"""

    name = "difference"
    category = COMPUTATION

    def ask(self, p: Profile, col: Column, rows: list[int], rng: random.Random, want: str) -> Draft | None:
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
        view = evidence_table(p, rng, rows, [col], want, drop_row=b)
        ea, eb = name_of(p, a), name_of(p, b)
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

    def ask(self, p: Profile, col: Column, rows: list[int], rng: random.Random, want: str) -> Draft | None:
        values = sorted({float(col.values[r]) for r in rows})  # type: ignore[arg-type]
        if len(values) < 3:
            return None
        bound = rng.choice(values[:-1])
        count = len([r for r in rows if float(col.values[r]) > bound])  # type: ignore[arg-type]
        stated = count
        if want == NO:
            stated = count + rng.choice([d for d in (-1, 1) if 0 <= count + d <= len(rows)])
        view = evidence_table(p, rng, rows, [col], want, drop_column=col)
        above = number_text(col, bound, decimals_of(col, bound))
        question = f"Is the number of entries listed with a {col.name} above {above} equal to {stated}?"
        claim = compare(Count(table=p.name, column=col.name, cmp=">", value=bound), "=", float(stated), "number")
        return Draft(question, claim, Evidence([view]))


class Share(_AggregateTemplate):
    """Does <entity> account for more than <p>% of the total <column> of the entries listed?"""

    name = "share"
    category = COMPUTATION

    def ask(self, p: Profile, col: Column, rows: list[int], rng: random.Random, want: str) -> Draft | None:
        values = self.numbers(col, rows)
        total = math.fsum(values)
        if min(values) < 0 or total <= 0:
            return None
        target = rng.choice(rows)
        share = 100.0 * float(col.values[target]) / total  # type: ignore[arg-type]
        step = rng.choice((0, 1, 2, 5))
        percent = math.floor(share) - step if want != NO else math.ceil(share) + step
        if percent < 0 or abs(share - percent) < 0.3:
            return None
        view = evidence_table(p, rng, rows, [col], want, drop_row=target)
        entity = name_of(p, target)
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
