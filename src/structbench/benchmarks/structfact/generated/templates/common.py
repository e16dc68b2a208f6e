"""What every question template shares: drafts, the template interface, row and column picking, perturbation.

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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from structbench.benchmarks.structfact.generated.claims import And, Cell, Compare, cell
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


def view(profile: Profile, rows: list[int], columns: Sequence[Column], form: Form, key: Column | None = None) -> View:
    chosen = key or profile.key
    assert chosen is not None
    return View(profile, chosen, rows, [c for c in columns if c is not chosen], form)


def extreme(rng: random.Random) -> Literal["max", "min"]:
    """Which end a superlative asks about."""
    return "max" if rng.random() < 0.5 else "min"


def sizes(rng: random.Random, low: int = 5, high: int = 15) -> int:
    return rng.randint(low, high)


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


def ref(profile: Profile, entity: str, column: Column) -> Cell:
    """The claim's reference to ``column`` of the row named ``entity`` (by the entity column)."""
    assert profile.key is not None
    return cell(profile.name, profile.key.name, entity, column.name)
