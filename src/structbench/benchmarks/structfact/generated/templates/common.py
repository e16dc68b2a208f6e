"""What every question template shares: drafts, the template interfaces, row and column picking, perturbation,
and the pieces of questions and claims.

A template turns one candidate (a table and the columns it needs) and a wanted label into a ``Draft``:
a question, its claim and the evidence; the question's difficulty is the template's ``category``. It
aims at the label by construction (the true value for ``YES``; a perturbed value, a swapped entity or
a wrong aggregate for ``NO``; the needed row, column or cell left out of the evidence for ``NOT SURE
ENOUGH``), but the label a question gets is the one its claim executes to; a draft whose execution
disagrees with the wanted label is dropped.
"""

from __future__ import annotations

import datetime
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from structbench.benchmarks.structfact.generated.claims import And, Best, Cell, Cmp, Compare, Value, cell, compare
from structbench.benchmarks.structfact.generated.profile import (
    DATE_PATTERNS,
    Column,
    Kind,
    Profile,
    World,
    date_pattern,
    write_date,
)
from structbench.benchmarks.structfact.generated.views import Evidence, Form, View
from structbench.benchmarks.structfact.loader import LABELS

YES, NO, NEI = LABELS

ARITHMETIC = "Arithmetic Calculation"
SPACETIME = "Spatiotemporal Cognition"
MULTIHOP = "Multi-hop Reasoning"
COMPOSITION = "Composition Understanding"
COMBINING = "Combining Structural and Unstructural"
TASKS = (ARITHMETIC, SPACETIME, MULTIHOP, COMPOSITION, COMBINING)
"""The five tasks, spelled as the release's CHALLENGE field (the paper's Geography-Time Reasoning is the
release's Spatiotemporal Cognition)."""


@dataclass
class Draft:
    """A question before its label is executed."""

    question: str
    claim: Compare | And
    evidence: Evidence


class Template(ABC):
    """One family of questions for one task, all of one fine-grained category (the difficulty annotation)."""

    task: ClassVar[str]
    name: str
    category: str

    @abstractmethod
    def candidates(self, world: World) -> list[Any]:
        """What the template can draw from (empty: it cannot make questions from these tables)."""

    @abstractmethod
    def draft(self, candidate: Any, rng: random.Random, want: str) -> Draft | None:
        """A question aiming at label ``want``, or None when this draw cannot make one."""

    def table_of(self, candidate: Any) -> Profile:
        """The table a candidate starts from (candidates are drawn table by table)."""
        table = candidate[0]
        assert isinstance(table, Profile)
        return table


def column_candidates(
    world: World, kind: Kind | None = None, keep: Callable[[Column], bool] = lambda column: True
) -> list[tuple[Profile, Column]]:
    """(table, column) for every attribute column of ``kind`` that ``keep`` accepts, in tables with named rows."""
    return [(p, c) for p in world.profiles if p.key is not None for c in p.attributes(kind) if keep(c)]


class ColumnTemplate(Template):
    """A template that asks about one column of a table: it draws the rows, then the question over them."""

    kind: ClassVar[Kind | None] = None
    """The kind of column asked about (None: any)."""
    row_range: ClassVar[tuple[int, int]] = (5, 15)
    """How many rows to draw (the count is drawn from this range)."""
    least: ClassVar[int] = 3
    """The fewest rows a question needs."""

    def takes(self, column: Column) -> bool:
        """Whether the template can ask about ``column`` (one of ``kind``)."""
        return True

    def candidates(self, world: World) -> list[Any]:
        return column_candidates(world, self.kind, self.takes)

    def draft(self, candidate: tuple[Profile, Column], rng: random.Random, want: str) -> Draft | None:
        p, col = candidate
        rows = draw_rows(p, rng, [col], *self.row_range, least=self.least)
        return None if rows is None else self.ask(p, col, rows, rng, want)

    @abstractmethod
    def ask(self, p: Profile, col: Column, rows: list[int], rng: random.Random, want: str) -> Draft | None:
        """A question about ``col`` over ``rows`` aiming at label ``want``, or None (see ``draft``)."""


class LookupTemplate(ColumnTemplate):
    """Is the <column> of <entity> <value>? The templates differ in the evidence they show."""

    def ask(self, p: Profile, col: Column, rows: list[int], rng: random.Random, want: str) -> Draft | None:
        found = draw_target(p, col, rows, rng, want)
        if found is None:
            return None
        target, statement = found
        shown = self.evidence(p, col, rows, target, rng, want)
        return None if shown is None else lookup_draft(p, col, target, statement, shown)

    @abstractmethod
    def evidence(
        self, p: Profile, col: Column, rows: list[int], target: int, rng: random.Random, want: str
    ) -> Evidence | None:
        """The evidence for the question about ``col`` of ``target`` (without it for ``NOT SURE ENOUGH``)."""


# --- rows and columns ---------------------------------------------------------------------------


def pick_rows(
    profile: Profile,
    rng: random.Random,
    count: int,
    require: Sequence[Column] = (),
    key: Column | None = None,
    include: Sequence[int] = (),
) -> list[int]:
    """Up to ``count`` rows (``include`` first) with distinct names in ``key`` and a value in every
    ``require`` column, in table order."""
    key = key or profile.key
    assert key is not None
    chosen = list(dict.fromkeys(include))
    names = {key.values[r] for r in chosen}
    pool = key.filled
    for _ in range(count * 6):
        if len(chosen) >= count or not pool:
            break
        r = pool[rng.randrange(len(pool))]
        name = key.values[r]
        if r in chosen or name in names or any(c.values[r] is None for c in require):
            continue
        chosen.append(r)
        names.add(name)
    return sorted(chosen)


def draw_rows(
    profile: Profile, rng: random.Random, require: Sequence[Column], low: int = 5, high: int = 15, least: int = 3
) -> list[int] | None:
    """``pick_rows`` for a count drawn from ``low`` to ``high``; None when fewer than ``least`` turn up."""
    rows = pick_rows(profile, rng, rng.randint(low, high), require=require)
    return rows if len(rows) >= least else None


def pick_columns(
    profile: Profile, rng: random.Random, need: Sequence[Column], total: int, key: Column | None = None
) -> list[Column]:
    """``need`` plus other short columns (never ``key``, by default the entity column) up to ``total``
    columns, in table order."""
    key = key or profile.key
    chosen = [c for c in dict.fromkeys(need) if c is not key]
    others = [c for c in profile.columns if c.short and c.distinct >= 2 and c is not key and c not in chosen]
    rng.shuffle(others)
    chosen += others[: max(0, total - len(chosen))]
    return sorted(chosen, key=lambda c: c.index)


def table_view(
    profile: Profile, rng: random.Random, rows: list[int], need: Sequence[Column], total: int | None = None
) -> View:
    """A table-form view of ``rows`` with the ``need`` columns and some others."""
    assert profile.key is not None
    width = total if total is not None else rng.randint(len(need) + 1, len(need) + 5)
    return View(profile, profile.key, rows, pick_columns(profile, rng, need, width))


def evidence_table(
    profile: Profile,
    rng: random.Random,
    rows: list[int],
    need: Sequence[Column],
    want: str,
    *,
    drop_row: int | None = None,
    drop_column: Column | None = None,
) -> View:
    """``table_view``, less the row or column the answer needs when ``want`` is ``NOT SURE ENOUGH``."""
    shown = table_view(profile, rng, rows, need)
    if want == NEI:
        if drop_row is not None:
            shown.rows.remove(drop_row)
        if drop_column is not None:
            shown.columns.remove(drop_column)
    return shown


def view(profile: Profile, rows: list[int], columns: Sequence[Column], form: Form, key: Column | None = None) -> View:
    chosen = key or profile.key
    assert chosen is not None
    return View(profile, chosen, rows, [c for c in columns if c is not chosen], form)


def extreme(rng: random.Random) -> Literal["max", "min"]:
    """Which end a superlative asks about."""
    return "max" if rng.random() < 0.5 else "min"


def sizes(rng: random.Random, low: int = 5, high: int = 15) -> int:
    return rng.randint(low, high)


def extreme_row(column: Column, rows: Sequence[int], rng: random.Random) -> tuple[Literal["max", "min"], int] | None:
    """A superlative's end (drawn) and the one row of ``rows`` at that end of ``column``; None on a tie."""
    fn = extreme(rng)
    top = (max if fn == "max" else min)(column.values[r] for r in rows)  # type: ignore[type-var]
    winners = [r for r in rows if column.values[r] == top]
    return (fn, winners[0]) if len(winners) == 1 else None


def named_extreme(
    column: Column, rows: list[int], rng: random.Random, want: str
) -> tuple[Literal["max", "min"], int] | None:
    """A superlative's end and the row a question names as the one at that end (for ``NO``, another)."""
    found = extreme_row(column, rows, rng)
    if found is None:
        return None
    fn, winner = found
    return fn, winner if want != NO else rng.choice([r for r in rows if r != winner])


def extreme_word(fn: Literal["max", "min"]) -> str:
    """How a question names a superlative's end."""
    return "highest" if fn == "max" else "lowest"


def ordered_pair(
    column: Column, rows: list[int], rng: random.Random, want: str, op: Literal["<", ">"] = ">"
) -> tuple[int, int, bool] | None:
    """Two of ``rows`` with different ``column`` values and whether the question asks ``a op b`` (else the
    reverse), ordered so that it holds for ``YES`` and fails for ``NO``; None on a tie."""
    a, b = rng.sample(rows, 2)
    va, vb = column.values[a], column.values[b]
    if va == vb:
        return None
    asks = rng.random() < 0.5
    ahead = va > vb if op == ">" else va < vb  # type: ignore[operator]
    if want != NEI and (ahead == asks) != (want == YES):
        a, b = b, a
    return a, b, asks


# --- values -------------------------------------------------------------------------------------


def number_text(column: Column, value: float, decimals: int | None = None) -> str:
    """``value`` written as ``column`` writes its numbers."""
    return column.style.format(value, decimals)


def shown_number(column: Column, value: float, decimals: int | None = None) -> float:
    """The number a reader gets from ``number_text`` (what the claim states)."""
    places = column.style.decimals if decimals is None else decimals
    return round(value, places) if places else float(round(value))


def decimals_of(column: Column, value: float) -> int:
    """The decimal places ``value`` needs (at most the column's)."""
    text = f"{value:.{column.style.decimals}f}"
    return len(text.split(".")[1].rstrip("0")) if "." in text else 0


def nearby(column: Column, value: float, rng: random.Random) -> float:
    """A different number close to ``value``, with its decimal places (never negative when it is not)."""
    step = 10.0 ** -decimals_of(column, value)
    scale = abs(value) * rng.choice((0.02, 0.05, 0.1, 0.25))
    delta = max(step, round(scale / step) * step) * rng.randint(1, 3)
    down = value - delta
    moved = down if rng.random() < 0.5 and (down >= 0 or value < 0) else value + delta
    return shown_number(column, moved)


def other_value(column: Column, rng: random.Random, avoid: Sequence[Any], rows: Sequence[int] = ()) -> Any:
    """Another value of ``column`` (from ``rows`` when given, else anywhere in the table), or None; text
    values differ from ``avoid`` in more than letter case."""
    pool = [column.values[r] for r in rows] if rows else [column.values[r] for r in column.filled]
    banned = {_fold(v) for v in avoid}
    for _ in range(20):
        if not pool:
            return None
        pick = pool[rng.randrange(len(pool))]
        if pick is not None and _fold(pick) not in banned:
            return pick
    return None


def _fold(value: Any) -> Any:
    return value.casefold() if isinstance(value, str) else value


def shift_date(iso: str, rng: random.Random) -> str:
    """Another date near ``iso``: some days, months or years away."""
    day = datetime.date.fromisoformat(iso)
    unit = rng.choice(("days", "months", "years"))
    sign = rng.choice((-1, 1))
    if unit == "days":
        days = datetime.timedelta(days=rng.randint(1, 27))
        moved = day + days if sign > 0 or day.year == 1 else day - days
    elif unit == "months":
        months = day.year * 12 + day.month - 1 + sign * rng.randint(1, 11)
        months = months if 12 <= months < 12 * 9999 else day.year * 12 + day.month - 1 + 1
        moved = datetime.date(months // 12, months % 12 + 1, min(day.day, 28))
    else:
        years = rng.randint(1, 10)
        year = day.year + sign * years if 1 <= day.year + sign * years <= 9999 else day.year - sign * years
        moved = datetime.date(year, day.month, min(day.day, 28))
    return moved.isoformat()


@dataclass(frozen=True)
class Statement:
    """A value as a question states it: the claim's constant, how it compares, and its words."""

    value: float | str
    kind: Kind
    text: str


def state(column: Column, value: float | str, rng: random.Random, cell_text: str | None = None) -> Statement:
    """``value`` of ``column`` in the question's words (a date in another spelling than ``cell_text``'s)."""
    if column.kind == "number":
        assert isinstance(value, float)
        return Statement(value, "number", number_text(column, value, decimals_of(column, value)))
    if column.kind == "date":
        assert isinstance(value, str)
        patterns = [i for i in range(len(DATE_PATTERNS)) if cell_text is None or i != date_pattern(cell_text)]
        return Statement(value, "date", write_date(value, rng.choice(patterns)))
    return Statement(value, "text", str(value))


def stated_value(
    profile: Profile, column: Column, row: int, rng: random.Random, want: str, rows: Sequence[int]
) -> Statement | None:
    """What a lookup question states for ``column`` at ``row``: the true value, or for ``NO`` a wrong one
    (another entity's value, or a nearby number or date)."""
    true = column.values[row]
    assert true is not None
    value: Any = true
    if want == NO:
        swapped = other_value(column, rng, [true], rows) if rng.random() < 0.5 or column.kind == "text" else None
        if swapped is None and column.kind == "text":
            swapped = other_value(column, rng, [true])
        if swapped is not None:
            value = swapped
        elif column.kind == "number":
            value = nearby(column, float(true), rng)
        elif column.kind == "date":
            value = shift_date(str(true), rng)
        else:
            return None
    return state(column, value, rng, profile.cell(row, column))


def draw_target(
    profile: Profile, column: Column, rows: list[int], rng: random.Random, want: str
) -> tuple[int, Statement] | None:
    """A lookup's row (drawn from ``rows``) and what the question states for its ``column`` (``stated_value``)."""
    target = rng.choice(rows)
    statement = stated_value(profile, column, target, rng, want, rows)
    return None if statement is None else (target, statement)


def draw_two_facts(
    profile: Profile, first: Column, second: Column, rows: list[int], rng: random.Random, want: str
) -> tuple[int, Statement, Statement] | None:
    """A two-fact question's row (drawn from ``rows``) and what it states for ``first`` and ``second``: both
    true, or for ``NO`` one of the two (drawn) wrong."""
    target = rng.choice(rows)
    wrong = rng.choice((0, 1)) if want == NO else None
    one = stated_value(profile, first, target, rng, NO if wrong == 0 else YES, rows)
    two = stated_value(profile, second, target, rng, NO if wrong == 1 else YES, rows)
    return None if one is None or two is None else (target, one, two)


# --- claims -------------------------------------------------------------------------------------


def name_of(profile: Profile, row: int) -> str:
    """The entity that ``row`` is about (its cell in the entity column)."""
    assert profile.key is not None
    return profile.cell(row, profile.key)


def ref(profile: Profile, entity: str | Value, column: Column) -> Cell:
    """The claim's reference to ``column`` of the row named ``entity`` (by the entity column; a name, or a value
    that gives one such as ``best``)."""
    assert profile.key is not None
    return cell(profile.name, profile.key.name, entity, column.name)


def best(profile: Profile, column: Column, fn: Literal["max", "min"]) -> Best:
    """The claim's reference to the entity with the largest (``max``) or smallest value of ``column``."""
    assert profile.key is not None
    return Best(fn=fn, table=profile.name, key=profile.key.name, column=column.name)


def best_claim(profile: Profile, column: Column, fn: Literal["max", "min"], entity: str) -> Compare:
    """The claim that ``entity`` is the one with the largest (``max``) or smallest value of ``column``."""
    return compare(best(profile, column, fn), "=", entity, "text")


def value_claim(profile: Profile, entity: str, column: Column, statement: Statement) -> Compare:
    """The claim that ``column`` of ``entity`` is the stated value."""
    return compare(ref(profile, entity, column), "=", statement.value, statement.kind)


def pair_claim(profile: Profile, a: str, op: Cmp, b: str, column: Column, kind: Kind = "number") -> Compare:
    """The claim that ``column`` of entity ``a`` is ``op`` that of entity ``b``."""
    return compare(ref(profile, a, column), op, ref(profile, b, column), kind)


def lookup_draft(
    profile: Profile, column: Column, target: int, statement: Statement, evidence: Evidence, verb: str = "Is"
) -> Draft:
    """The plain lookup: ``<verb> the <column> of <entity> <value>?``."""
    entity = name_of(profile, target)
    question = f"{verb} the {column.name} of {entity} {statement.text}?"
    return Draft(question, value_claim(profile, entity, column, statement), evidence)
