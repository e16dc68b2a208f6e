"""What each column of a source table holds: numbers, dates, years, places, coordinates, entity names.

Templates choose tables by these profiles. A column is a number column when every value is a number
(``12``, ``-0.5``, ``1,234``, ``$5``, ``39.1%``; no leading zeros, so codes such as ``007`` stay
text), a date column when every value is a date in one of ``DATE_PATTERNS``, else text. A place column
has a place word in its name (country, city, state ...) and values that look like names (capitalized,
no digits). The entity
column (``Profile.key``) is a short text column whose values are mostly distinct: it names the rows
(evidence never shows two rows with the same name).

``World`` holds every profile and the foreign keys found between tables of one database: a column
whose distinct values (at least 3) almost all occur in a distinct-valued column of another table, with
names that say so (the target table's name is part of the column's, or the two columns share a name).
"""

from __future__ import annotations

import calendar
import datetime
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

from structbench.benchmarks.structfact.generated.source_table import SourceTable
from structbench.core.memo import Memo

_NUMBER = re.compile(r"^([+-])?(\$)?(0|[1-9]\d{0,2}(?:,\d{3})+|[1-9]\d*)(?:\.(\d+))?(%)?$")
_ISO = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_MONTH_DAY_YEAR = re.compile(r"^([A-Z][a-z]+) (\d{1,2}), (\d{4})$")
_DAY_MONTH_YEAR = re.compile(r"^(\d{1,2}) ([A-Z][a-z]+) (\d{4})$")
MONTHS = {name: i for i, name in enumerate(calendar.month_name) if name} | {
    name: i for i, name in enumerate(calendar.month_abbr) if name
}
DATE_PATTERNS = ("1937-12-21", "Dec 21, 1937", "December 21, 1937", "21 December 1937")
"""The date spellings recognised in cells."""

_TIME_WORDS = ("year", "date", "founded", "established", "born", "birth", "released", "built", "independence",
               "opened", "indepyear", "since")
_PLACE_WORDS = ("country", "nation", "city", "state", "province", "region", "continent", "district", "county",
                "location", "capital", "town", "place", "municipality", "territory")
_NORTH = ("latitude", "lat")
_EAST = ("longitude", "long", "lon")
MAX_CELL_LENGTH = 60
"""Longer cells (biographies, overviews) never go into evidence."""


@dataclass(frozen=True)
class NumberStyle:
    """How a number column writes its values, so question numbers look like the table's."""

    decimals: int = 0
    thousands: bool = False
    prefix: str = ""
    suffix: str = ""

    def format(self, value: float, decimals: int | None = None) -> str:
        places = self.decimals if decimals is None else decimals
        body = f"{abs(value):,.{places}f}" if self.thousands else f"{abs(value):.{places}f}"
        sign = "-" if value < 0 and body.strip("0.,") else ""
        return f"{sign}{self.prefix}{body}{self.suffix}"


def parse_number(text: str) -> tuple[float, NumberStyle] | None:
    """A cell's number and how it is written, or None."""
    match = _NUMBER.match(text)
    if match is None:
        return None
    sign, dollar, digits, fraction, percent = match.groups()
    value = float(digits.replace(",", "") + ("." + fraction if fraction else ""))
    style = NumberStyle(len(fraction or ""), "," in digits, dollar or "", percent or "")
    return (-value if sign == "-" else value), style


def parse_date(text: str) -> str | None:
    """A cell's date as ISO ``YYYY-MM-DD``, or None."""
    if m := _ISO.match(text):
        year, month, day = int(m.group(1)), int(m.group(2)), int(m.group(3))
    elif m := _MONTH_DAY_YEAR.match(text):
        if m.group(1) not in MONTHS:
            return None
        year, month, day = int(m.group(3)), MONTHS[m.group(1)], int(m.group(2))
    elif m := _DAY_MONTH_YEAR.match(text):
        if m.group(2) not in MONTHS:
            return None
        year, month, day = int(m.group(3)), MONTHS[m.group(2)], int(m.group(1))
    else:
        return None
    try:
        return datetime.date(year, month, day).isoformat()
    except ValueError:
        return None


def write_date(iso: str, pattern: int) -> str:
    """An ISO date written as ``DATE_PATTERNS[pattern]``."""
    day = datetime.date.fromisoformat(iso)
    month = calendar.month_name[day.month]
    return (
        iso,
        f"{month[:3]} {day.day}, {day.year:04d}",
        f"{month} {day.day}, {day.year:04d}",
        f"{day.day} {month} {day.year:04d}",
    )[pattern]


def date_pattern(text: str) -> int:
    """Which of ``DATE_PATTERNS`` a date cell is written in."""
    if _ISO.match(text):
        return 0
    if m := _MONTH_DAY_YEAR.match(text):
        return 1 if len(m.group(1)) == 3 else 2
    return 3


Kind = Literal["number", "date", "text"]


@dataclass(frozen=True)
class Column:
    """One column's profile; ``values`` are typed per row (float, ISO date or text; None = no value)."""

    index: int
    name: str
    kind: Kind
    values: tuple[float | str | None, ...]
    style: NumberStyle = NumberStyle()
    integer: bool = False
    year: bool = False
    """Whole numbers from 1000 to 2100 under a time-like name."""
    place: bool = False
    """Text under a place-like name (country, city, state ...)."""
    axis: Literal["north", "east"] | None = None
    """Latitude (north) or longitude (east)."""
    distinct: int = 0
    unique: bool = False
    """Every value occurs once."""
    short: bool = True
    """Every cell fits evidence (at most ``MAX_CELL_LENGTH`` characters)."""
    identifier: bool = False
    """An id or code (``movie id``, ``rID``, ``zip code``): a link between tables, not a quantity to ask about."""

    @cached_property
    def filled(self) -> list[int]:
        """Rows with a value."""
        return [i for i, v in enumerate(self.values) if v is not None]

    @property
    def temporal(self) -> bool:
        return self.kind == "date" or self.year


def _words(name: str) -> list[str]:
    return name.lower().replace("-", " ").replace("(", " ").replace(")", " ").split()


def _has_word(name: str, words: Sequence[str]) -> bool:
    """Whether a word of ``name`` starts with one of ``words`` (``countrycode`` is a country column)."""
    return any(word.startswith(w) for word in _words(name) for w in words)


def _has_exact_word(name: str, words: Sequence[str]) -> bool:
    return any(word in words for word in _words(name))


def profile_column(index: int, name: str, cells: Sequence[str]) -> Column:
    """The profile of one column from its cells."""
    present = [c for c in cells if c]
    short = all(len(c) <= MAX_CELL_LENGTH for c in present)
    distinct = len(set(present))
    unique = distinct == len(present)
    numbers: dict[str, tuple[float, NumberStyle]] = {}
    for c in set(present):
        parsed = parse_number(c)
        if parsed is None:
            break
        numbers[c] = parsed
    else:
        if present:
            return _number_column(index, name, cells, numbers, distinct, unique, short)
    dates: dict[str, str] = {}
    for c in set(present):
        iso = parse_date(c)
        if iso is None:
            break
        dates[c] = iso
    else:
        if present:
            values = tuple(dates[c] if c else None for c in cells)
            return Column(index, name, "date", values, distinct=distinct, unique=unique, short=short)
    place = (_has_exact_word(name, _PLACE_WORDS) or _has_word(name, ("country", "nation"))) and _names_places(present)
    return Column(index, name, "text", tuple(c or None for c in cells), place=place, distinct=distinct,
                  unique=unique, short=short)


def _names_places(values: Sequence[str]) -> bool:
    """Whether nearly all values look like place names or codes (capitalized, no digits)."""
    good = sum(1 for v in values if v[:1].isupper() and not any(ch.isdigit() for ch in v))
    return bool(values) and good >= 0.9 * len(values)


def _number_column(index: int, name: str, cells: Sequence[str], numbers: dict[str, tuple[float, NumberStyle]],
                   distinct: int, unique: bool, short: bool) -> Column:
    styles = [style for _, style in numbers.values()]
    style = NumberStyle(
        decimals=max(s.decimals for s in styles),
        thousands=any(s.thousands for s in styles),
        prefix="$" if all(s.prefix for s in styles) else "",
        suffix="%" if all(s.suffix for s in styles) else "",
    )
    integer = all(s.decimals == 0 for s in styles)
    year = integer and _has_word(name, _TIME_WORDS) and all(1000 <= v <= 2100 for v, _ in numbers.values())
    words = _words(name)
    axis: Literal["north", "east"] | None = None
    if any(w in words for w in _NORTH):
        axis = "north"
    elif any(w in words for w in _EAST):
        axis = "east"
    values = tuple(numbers[c][0] if c else None for c in cells)
    identifier = integer and _is_identifier(name)
    return Column(index, name, "number", values, style, integer, year, False, axis, distinct, unique, short, identifier)


def _is_identifier(name: str) -> bool:
    words = _words(name)
    return bool(words) and (words[-1].endswith("id") or any(w in ("id", "code", "zip", "isbn13") for w in words))


@dataclass
class Profile:
    """A source table with its column profiles and entity column."""

    table: SourceTable
    columns: tuple[Column, ...]
    key: Column | None
    """The column that names the rows (short, mostly distinct text), if any."""
    links: list[Link] = field(default_factory=list)
    """Foreign keys out of this table."""

    @property
    def name(self) -> str:
        return self.table.name

    @property
    def source(self) -> str:
        return self.table.source

    def cell(self, row: int, column: Column) -> str:
        return self.table.rows[row][column.index]

    def attributes(self, kind: Kind | None = None) -> list[Column]:
        """Short columns worth asking about (not the entity column, not identifiers), of one kind."""
        return [
            c
            for c in self.columns
            if c is not self.key and c.short and c.distinct >= 2 and not c.identifier
            and (kind is None or c.kind == kind)
        ]


def _key_column(columns: Sequence[Column], rows: int) -> Column | None:
    """The entity column: short text, mostly filled, mostly distinct (evidence never shows a name twice)."""
    candidates = [
        c
        for c in columns
        if c.kind == "text" and c.distinct >= 5 and c.distinct >= 0.6 * rows and c.short
    ]
    named = [c for c in candidates if _has_word(c.name, ("name", "title", "laureate"))]
    chosen = named or candidates
    return chosen[0] if chosen else None


def profile_table(table: SourceTable) -> Profile:
    """Profile every column of ``table`` and choose its entity column."""
    columns = tuple(
        profile_column(j, name, [row[j] for row in table.rows]) for j, name in enumerate(table.header)
    )
    return Profile(table, columns, _key_column(columns, len(table.rows)))


@dataclass(frozen=True)
class Link:
    """A foreign key: the values of ``source``'s ``column`` name rows of ``target`` by its ``key`` column."""

    source: Profile
    column: Column
    target: Profile
    key: Column


def _linkable(column: Column) -> bool:
    if column.kind == "text":
        return column.short
    return column.kind == "number" and column.integer and column.style == NumberStyle()


def _singular(name: str) -> str:
    if name.endswith("ies"):
        return name[:-3] + "y"
    return name[:-1] if name.endswith("s") and not name.endswith("ss") else name


def _named_alike(column: Column, target: Profile, key: Column) -> bool:
    col, table, key_name = column.name.lower(), target.name.lower(), key.name.lower()
    if _singular(table) in col:
        return True
    return col == key_name and key_name not in ("id", "name", "code")


def find_links(profiles: Sequence[Profile]) -> None:
    """Fill ``Profile.links`` with the foreign keys among ``profiles`` (one database)."""
    keys = [(p, c, {p.cell(i, c) for i in c.filled}) for p in profiles for c in p.columns if c.unique and _linkable(c)]
    for source in profiles:
        for column in source.columns:
            if not _linkable(column) or column is source.key:
                continue
            values = {source.cell(i, column) for i in column.filled}
            if len(values) < 3:
                continue
            for target, key, key_values in keys:
                if target is source or key.kind != column.kind or key.distinct < 3:
                    continue
                if not _named_alike(column, target, key):
                    continue
                if len(values & key_values) >= 0.9 * len(values):
                    source.links.append(Link(source, column, target, key))


@dataclass
class World:
    """Every profiled table, grouped by database, with foreign keys found."""

    profiles: list[Profile]

    @classmethod
    def of(cls, tables: Sequence[SourceTable]) -> World:
        """The world of ``tables``; the same tables (the same objects: ``tables`` returns them again for files
        that have not changed) give the world made last time, since profiling them is most of a load's time."""
        # the entry holds the tables, so their ids stay theirs while it is kept
        return _WORLDS.get_or_make(tuple(id(t) for t in tables), lambda: (tuple(tables), cls._profile(tables)))[1]

    @classmethod
    def _profile(cls, tables: Sequence[SourceTable]) -> World:
        profiles = [profile_table(t) for t in tables if t.rows and len(t.header) >= 2]
        databases: dict[str, list[Profile]] = {}
        for p in profiles:
            databases.setdefault(p.table.group, []).append(p)
        for group in databases.values():
            find_links(group)
        return cls(profiles)


_WORLDS: Memo[tuple[int, ...], tuple[tuple[SourceTable, ...], World]] = Memo(4)
"""The last worlds made in this process, by their tables' identities (``World.of``)."""
