"""QATCH-style generation: NL question + SQL pairs from your own tables, with gold by execution.

RFQA's "qatch" items were made this way (paper section 3): projections and selections with numeric,
categorical and mixed conditions over a table, phrased from templates. ``generate_pairs`` does the
same for any CSV file, folder of CSV files (a database) or mapping of table names to CSV files, and
adds DISTINCT, ORDER BY, LIMIT, GROUP BY, aggregates and joins (over columns of the same name whose
values overlap). Every SQL is executed on the loaded tables (DuckDB, typed as in ``database.py``)
and its result is the gold table; items with an empty result or more than ``max_rows`` rows are
dropped, like QATCH's manual pruning of trivial queries.

LIMIT items whose cut falls inside a tie (the k-th and (k+1)-th rows have the same key) are dropped
too: their gold table would depend on the engine's choice among equal rows. ORDER BY and LIMIT items
say ``NULLS LAST`` (PostgreSQL, whose NULL ordering the engine follows, puts NULLs first in DESC).

Entry points: ``generate_pairs(...)``, ``write_pairs(pairs, path)`` and ``read_pairs(path)`` in
Python, or ``structbench generate rfqa DATA --out pairs.jsonl [--per-category N]
[--seed S]``. Each JSONL line holds ``id, category, question, sql, tables, schema, types, gold
{columns, rows}, data`` (``schema``, ``question``, ``sql`` and ``gold`` as ``structbench export rfqa``
writes them; ``types`` the output columns' types; ``data`` the absolute path of the source tables).
Run them as a benchmark with ``structbench run -b rfqa:generated --option path=pairs.jsonl``.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import duckdb
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from sqlglot.errors import SqlglotError

from structbench.benchmarks.rfqa.database import NUMERIC_TYPES, Database, column_key, load_table, new_connection
from structbench.benchmarks.rfqa.engine import referenced_tables
from structbench.benchmarks.rfqa.gold import json_value
from structbench.core.atomic import write_text_atomic
from structbench.core.bounds import at_most
from structbench.core.errors import DataError

CATEGORIES = (
    "project",
    "select_categorical",
    "select_numerical",
    "select_mixed",
    "distinct",
    "order_by",
    "limit",
    "group_by",
    "aggregate",
    "join",
)
"""The kinds of query generated, as QATCH names its test categories."""
MAX_PER_CATEGORY = 1_000
"""The most pairs per category and table asked for (``core.bounds``; the paper's 696 queries hold a few per table)."""
MAX_ATTRIBUTES = 1_000
"""The most columns a projection may draw (``--max-attributes``)."""
MAX_GOLD_ROWS = 1_000_000
"""The most rows a gold table may keep (``--max-rows``): a thousand times the default."""
TRIES_PER_PAIR = 6
"""Draws allowed per pair asked for, beyond ``max_tries``: a category's draws are ``max(max_tries, TRIES_PER_PAIR *
per_category)``, so a larger ``per_category`` gets the draws it needs (the default 3 keeps the 20 draws, and its
seeded output) and the search still ends where a table holds fewer distinct questions than asked."""
IMPOSSIBLE = {
    "select_categorical": "no text column with a value",
    "select_numerical": "no numeric column with a value",
    "select_mixed": "not both a text and a numeric column with a value",
    "order_by": "no numeric column",
    "limit": "no numeric column whose top rows are not all tied",
    "group_by": "no text column",
    "aggregate": "no numeric column",
    "join": "no key-like column (...id, ...code, ...key) shared with another table, unique in exactly one of the two, "
    "with values in common",
}
"""Why a category cannot be asked of a table at all (``_Generator.make`` returned None)."""

_OPS = {
    "=": "is equal to",
    ">": "is greater than",
    "<": "is smaller than",
    ">=": "is greater or equal than",
    "<=": "is smaller or equal than",
}
_AGGS = {"MAX": "maximum", "MIN": "minimum", "AVG": "average", "SUM": "total"}
_IDENT = re.compile(r"^[a-z_][a-z0-9_]*$")
_KEYLIKE = re.compile(r"(id|code|key|abbreviation)$")
"""Column names that look like keys (``id``, ``aid``, ``country_code`` ...): candidates for joins."""


@dataclass(frozen=True)
class GeneratedPair:
    """One generated item: the question, its SQL and the gold table from executing it."""

    id: str
    category: str
    question: str
    sql: str
    tables: tuple[str, ...]
    columns: list[str]
    types: list[str]
    """The output columns' DuckDB types (BIGINT, DOUBLE, BOOLEAN, VARCHAR ...)."""
    rows: list[list[Any]]
    data: str | dict[str, str] | None = None
    """Where the tables came from: a CSV file or folder (absolute path), or table -> CSV file."""

    def to_json(self) -> dict[str, Any]:
        """The JSONL line: the export fields (question, sql, schema, gold) plus category, types, data."""
        return {
            "id": self.id,
            "category": self.category,
            "question": self.question,
            "sql": self.sql,
            "tables": list(self.tables),
            "schema": self.columns,
            "types": self.types,
            "gold": {"columns": self.columns, "rows": self.rows},
            "data": self.data,
        }


@cache
def _reserved() -> frozenset[str]:
    con = duckdb.connect(":memory:")
    try:
        rows = con.execute("SELECT keyword_name FROM duckdb_keywords() WHERE keyword_category = 'reserved'").fetchall()
    finally:
        con.close()
    return frozenset(r[0].lower() for r in rows)


def _ident(name: str) -> str:
    """An identifier, quoted only when it must be (not a plain lower-case name, or reserved)."""
    if _IDENT.match(name) and name not in _reserved():
        return name
    return '"' + name.replace('"', '""') + '"'


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | float):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def _list(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def load_tables(source: Path | Mapping[str, Path]) -> Database:
    """Load a CSV file, a folder of CSV files, or ``{table: csv}`` into one in-memory database."""
    if isinstance(source, Mapping):
        named = [(k, Path(v)) for k, v in source.items()]
    elif source.is_dir():
        named = [(p.stem, p) for p in sorted(source.glob("*.csv"))]
    else:
        named = [(source.stem, source)]
    if not named:
        raise DataError(f"{source}: no CSV tables found")
    files: dict[str, Path] = {}
    for name, path in named:
        if column_key(name) in files:
            raise DataError(f"{path}: table name {column_key(name)!r} already used by {files[column_key(name)]}")
        files[column_key(name)] = path
    db = Database(key="generated", connection=new_connection())
    for name, path in files.items():
        if not path.is_file():
            raise DataError(f"{path}: table file not found")
        load_table(db, name, path)
    return db


class _Generator:
    def __init__(self, db: Database, rng: random.Random, max_attributes: int, max_rows: int) -> None:
        self.db = db
        self.rng = rng
        self.max_attributes = max_attributes
        self.max_rows = max_rows
        self._values: dict[tuple[str, str], list[Any]] = {}
        self._unique: dict[tuple[str, str], bool] = {}
        self._tied: dict[tuple[str, str, int], bool] = {}

    def numeric(self, table: str) -> list[str]:
        return [c for c, t in self.db.tables[table].items() if t in NUMERIC_TYPES]

    def categorical(self, table: str) -> list[str]:
        return [c for c, t in self.db.tables[table].items() if t == "VARCHAR"]

    def values(self, table: str, column: str) -> list[Any]:
        key = (table, column)
        if key not in self._values:
            rows = self.db.connection.execute(
                f"SELECT DISTINCT {_ident(column)} FROM {_ident(table)} WHERE {_ident(column)} IS NOT NULL "
                f"ORDER BY 1 LIMIT 500"
            ).fetchall()
            self._values[key] = [r[0] for r in rows]
        return self._values[key]

    def describing(self, table: str, key: str) -> list[str]:
        """A column to show for ``table`` in a join: its first text column other than the key."""
        cols = [c for c in self.categorical(table) if c != key] or [c for c in self.db.tables[table] if c != key]
        return cols[:1] or [key]

    def unique(self, table: str, column: str) -> bool:
        """Whether ``column`` has no NULL and no repeated value in ``table`` (a key); computed once."""
        if (table, column) not in self._unique:
            self._unique[table, column] = self._is_unique(table, column)
        return self._unique[table, column]

    def _is_unique(self, table: str, column: str) -> bool:
        row = self.db.connection.execute(
            f"SELECT count(*) = count(DISTINCT {_ident(column)}) AND count(*) = count({_ident(column)}) "
            f"FROM {_ident(table)}"
        ).fetchall()[0]
        return bool(row[0])

    def tied_cut(self, table: str, key: str, k: int) -> bool:
        """Whether ``ORDER BY key DESC NULLS LAST LIMIT k`` cuts between rows of equal key (an
        ambiguous gold table); computed once."""
        if (table, key, k) not in self._tied:
            self._tied[table, key, k] = self._tied_cut(table, key, k)
        return self._tied[table, key, k]

    def _tied_cut(self, table: str, key: str, k: int) -> bool:
        rows = self.db.connection.execute(
            f"SELECT {_ident(key)} FROM {_ident(table)} ORDER BY 1 DESC NULLS LAST LIMIT {k + 1}"
        ).fetchall()
        if len(rows) <= k:
            return False
        return rows[k - 1][0] is None or rows[k][0] == rows[k - 1][0]

    def projection(self, table: str) -> list[str]:
        cols = list(self.db.tables[table])
        k = self.rng.randint(1, min(self.max_attributes, len(cols)))
        picked = self.rng.sample(cols, k)
        return [c for c in cols if c in picked]

    def condition(self, table: str, kind: str) -> tuple[str, str] | None:
        pool = self.numeric(table) if kind == "numerical" else self.categorical(table)
        pool = [c for c in pool if self.values(table, c)]  # (an all-NULL column has no value to compare with)
        if not pool:
            return None
        column = self.rng.choice(pool)
        values = self.values(table, column)
        value = self.rng.choice(values)
        op = self.rng.choice(list(_OPS)) if kind == "numerical" else "="
        return f"{_ident(column)} {op} {_literal(value)}", f"{column} {_OPS[op]} {value}"

    def make(self, category: str, table: str, tables: Sequence[str]) -> tuple[str, str, tuple[str, ...]] | None:
        """(question, sql, tables) for one item of ``category`` on ``table``, or None when impossible."""
        cols = self.projection(table)
        sel = ", ".join(_ident(c) for c in cols)
        noun = f"{table}s"
        if category == "project":
            return f"List the {_list(cols)} of all {noun}.", f"SELECT {sel} FROM {_ident(table)}", (table,)
        if category.startswith("select_"):
            kinds = {"select_categorical": ["categorical"], "select_numerical": ["numerical"]}.get(
                category, ["categorical", "numerical"]
            )
            conds = [self.condition(table, k) for k in kinds]
            if any(c is None for c in conds):
                return None
            where = " AND ".join(c[0] for c in conds if c)
            said = " and ".join(c[1] for c in conds if c)
            return (
                f"List the {_list(cols)} of {noun} WHERE {said}.",
                f"SELECT {sel} FROM {_ident(table)} WHERE {where}",
                (table,),
            )
        if category == "distinct":
            column = self.rng.choice(list(self.db.tables[table]))
            return (
                f"List the different {column} of {noun}.",
                f"SELECT DISTINCT {_ident(column)} FROM {_ident(table)}",
                (table,),
            )
        if category in ("order_by", "limit"):
            numeric = self.numeric(table)
            if category == "limit":  # (a key whose every cut is tied drew None, which ended the category)
                numeric = [c for c in numeric if not all(self.tied_cut(table, c, k) for k in range(1, 11))]
            if not numeric:
                return None
            key = self.rng.choice(numeric)
            if category == "order_by":
                return (
                    f"List the {_list(cols)} of {noun} in descending order of {key}.",
                    f"SELECT {sel} FROM {_ident(table)} ORDER BY {_ident(key)} DESC NULLS LAST",
                    (table,),
                )
            k = next((k for k in self.rng.sample(range(1, 11), 10) if not self.tied_cut(table, key, k)), None)
            if k is None:
                return None
            return (
                f"List the {_list(cols)} of the {k} {noun} with the highest {key}.",
                f"SELECT {sel} FROM {_ident(table)} ORDER BY {_ident(key)} DESC NULLS LAST LIMIT {k}",
                (table,),
            )
        if category == "group_by":
            cats = self.categorical(table)
            if not cats:
                return None
            g = self.rng.choice(cats)
            return (
                f"For each {g}, how many {noun} are there?",
                f"SELECT {_ident(g)}, COUNT(*) AS count FROM {_ident(table)} GROUP BY {_ident(g)}",
                (table,),
            )
        if category == "aggregate":
            numeric = self.numeric(table)
            if not numeric:
                return None
            n = self.rng.choice(numeric)
            agg = self.rng.choice(list(_AGGS))
            return (
                f"What is the {_AGGS[agg]} {n} of {noun}?",
                f"SELECT {agg}({_ident(n)}) AS {_ident(f'{agg.lower()}_{n}')} FROM {_ident(table)}",
                (table,),
            )
        if category == "join":
            return self.join(table, tables)
        raise ValueError(f"unknown category {category!r}; known: {', '.join(CATEGORIES)}")

    def join(self, table: str, tables: Sequence[str]) -> tuple[str, str, tuple[str, ...]] | None:
        """A join with another table over a key: a column of the same name, unique in exactly one of
        the two tables (a foreign key), whose values overlap."""
        options = []
        for other in tables:
            if other == table:
                continue
            for key in set(self.db.tables[table]) & set(self.db.tables[other]):
                if not _KEYLIKE.search(key) or self.unique(table, key) == self.unique(other, key):
                    continue
                if set(self.values(table, key)) & set(self.values(other, key)):
                    options.append((other, key))
        if not options:
            return None
        other, key = self.rng.choice(sorted(options))
        left = self.describing(table, key)
        right = self.describing(other, key)
        right_name = right[0] if right[0] != left[0] else f"{other}_{right[0]}"
        sql = (
            f"SELECT T1.{_ident(left[0])}, T2.{_ident(right[0])} AS {_ident(right_name)} FROM {_ident(table)} AS T1 "
            f"JOIN {_ident(other)} AS T2 ON T1.{_ident(key)} = T2.{_ident(key)}"
        )
        question = f"List the {left[0]} of {table}s together with the {right[0]} of the {other} with the same {key}."
        return question, sql, (table, other)


def generate_pairs(
    source: Path | str | Mapping[str, Path],
    *,
    per_category: int = 3,
    categories: Sequence[str] = CATEGORIES,
    seed: int = 0,
    max_attributes: int = 3,
    max_rows: int = 1000,
    max_tries: int = 20,
    note: Callable[[str], None] | None = None,
) -> list[GeneratedPair]:
    """Generate up to ``per_category`` items of each category for each table of ``source``.

    ``source`` is a CSV file, a folder of CSV files (one table each, the file stem as its name) or a
    mapping from table names to CSV files. Deterministic for a given ``seed``. Each category of a table gets
    ``max(max_tries, TRIES_PER_PAIR * per_category)`` draws; where they find fewer distinct questions with a gold table
    than asked, ``note`` is given one line saying how many and why (``shortfall``).
    """
    _bounded(per_category, max_attributes, max_rows)  # before any table is read
    src = Path(source) if isinstance(source, str) else source
    data = {k: str(Path(v).resolve()) for k, v in src.items()} if isinstance(src, Mapping) else str(src.resolve())
    return generate_from(
        load_tables(src),
        per_category=per_category,
        categories=categories,
        seed=seed,
        max_attributes=max_attributes,
        max_rows=max_rows,
        max_tries=max_tries,
        data=data,
        note=note,
    )


def _bounded(per_category: int, max_attributes: int, max_rows: int) -> None:
    at_most("--per-category", per_category, MAX_PER_CATEGORY)
    at_most("--max-attributes", max_attributes, MAX_ATTRIBUTES)
    at_most("--max-rows", max_rows, MAX_GOLD_ROWS)


def generate_from(
    db: Database,
    *,
    per_category: int = 3,
    categories: Sequence[str] = CATEGORIES,
    seed: int = 0,
    max_attributes: int = 3,
    max_rows: int = 1000,
    max_tries: int = 20,
    data: str | dict[str, str] | None = None,
    note: Callable[[str], None] | None = None,
) -> list[GeneratedPair]:
    """``generate_pairs`` over tables already loaded in ``db`` (``data`` is recorded in each pair); ``note`` is
    called with one line (``shortfall``) for each table and category that got fewer pairs than asked."""
    _bounded(per_category, max_attributes, max_rows)
    unknown = [c for c in categories if c not in CATEGORIES]
    if unknown:
        raise DataError(f"unknown categories {unknown}; known: {', '.join(CATEGORIES)}")
    rng = random.Random(seed if seed >= 0 else f"negative {seed}")  # (Random takes an int's absolute value)
    gen = _Generator(db, rng, max_attributes, max_rows)
    tables = sorted(db.tables)
    pairs: list[GeneratedPair] = []
    seen: set[str] = set()
    tries = max(max_tries, TRIES_PER_PAIR * per_category)
    for table in tables:
        for category in categories:
            made = 0
            missed: Counter[str] = Counter()
            for _ in range(tries):
                if made >= per_category:
                    break
                item = gen.make(category, table, tables)
                if item is None:
                    missed["impossible"] += 1
                    break
                question, sql, used = item
                if sql in seen:
                    missed["repeated"] += 1
                    continue
                seen.add(sql)
                try:
                    columns, types, rows = db.execute(sql)
                except duckdb.Error:
                    missed["failed"] += 1
                    continue
                if not rows or len(rows) > max_rows:
                    missed["empty" if not rows else "too_long"] += 1
                    continue
                made += 1
                pairs.append(
                    GeneratedPair(
                        id=f"{table}_{category}_{made}",
                        category=category,
                        question=question,
                        sql=sql,
                        tables=used,
                        columns=[c.lower() for c in columns],
                        types=types,
                        rows=[[json_value(v) for v in row] for row in rows],
                        data=data,
                    )
                )
            if made < per_category and note is not None:
                note(shortfall(table, category, made, per_category, missed, max_rows))
    return pairs


def shortfall(table: str, category: str, made: int, asked: int, missed: Counter[str], max_rows: int) -> str:
    """The line for a table and category that got ``made`` of ``asked`` pairs, from the draws that ``missed``
    (counted by kind): whether the table has no such question, or how many distinct ones the draws found and why
    the others were dropped, so that a user can tell a small table from a tight ``max_rows``."""
    head = f"table {table}, category {category}: {made} of {asked} pairs"
    if missed["impossible"]:
        return f"{head}: the table has {IMPOSSIBLE[category]}"
    draws = made + sum(missed.values())
    distinct = draws - missed["repeated"]
    kinds = {
        "too_long": f"over {max_rows:,} rows (the gold table's limit, --max-rows)",
        "empty": "no rows",
        "failed": "an execution error",
    }
    dropped = ", ".join(f"{missed[k]} with {v}" for k, v in kinds.items() if missed[k])
    return (
        f"{head}: {draws:,} draws found only {distinct:,} distinct questions"
        + (f", {dropped}" if dropped else "")
        + "; the table allows no more"
    )


def write_pairs(pairs: Sequence[GeneratedPair], path: Path) -> None:
    """Write ``pairs`` as JSON lines (one ``GeneratedPair.to_json()`` per line), whole or not at all, its folder made
    where it is missing."""
    write_text_atomic(path, "".join(json.dumps(pair.to_json(), ensure_ascii=False) + "\n" for pair in pairs))


class _GoldLine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    columns: list[str] = Field(min_length=1)
    rows: list[list[Any]]

    @model_validator(mode="after")
    def _rectangular(self) -> _GoldLine:
        for n, row in enumerate(self.rows):
            if len(row) != len(self.columns):
                raise ValueError(f"row {n} has {len(row)} value(s) for {len(self.columns)} column(s)")
        return self


class _PairLine(BaseModel):
    """One JSONL line as read: the generator's fields; ``category``, ``tables``, ``types`` and ``data``
    may be absent (lines exported by ``structbench export rfqa`` also read)."""

    model_config = ConfigDict(extra="ignore")

    id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    sql: str = Field(min_length=1)
    gold: _GoldLine
    category: str = "generated"
    tables: list[str] | None = None
    types: list[str] | None = None
    data: str | dict[str, str] | None = None

    @model_validator(mode="after")
    def _types_per_column(self) -> _PairLine:
        if self.types is not None and len(self.types) != len(self.gold.columns):
            raise ValueError(f"types has {len(self.types)} entries for {len(self.gold.columns)} gold column(s)")
        return self


def value_type(values: Sequence[Any]) -> str:
    """The DuckDB type of a column holding the JSON ``values`` (BIGINT, DOUBLE, BOOLEAN or VARCHAR)."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return "BOOLEAN"
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return "BIGINT"
    if present and all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
        return "DOUBLE"
    return "VARCHAR"


def read_pairs(path: Path) -> list[GeneratedPair]:
    """The pairs in a JSONL file written by ``write_pairs``; a malformed line raises ``DataError``
    naming the file and line. Missing ``types`` are inferred from the gold values."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise DataError(f"{path}: cannot read: {err}") from err
    pairs: list[GeneratedPair] = []
    seen: set[str] = set()
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        where = f"{path}:{number}"
        try:
            line = _PairLine.model_validate_json(raw)
        except ValidationError as err:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'line'}: {e['msg']}" for e in err.errors(include_url=False)
            )
            raise DataError(f"{where}: {problems}") from None
        if line.id in seen:
            raise DataError(f"{where}: duplicate id {line.id!r}")
        seen.add(line.id)
        try:
            tables = tuple(line.tables or referenced_tables(line.sql))
        except SqlglotError as err:
            raise DataError(f"{where}: sql does not parse: {err}") from None
        columns = line.gold.columns
        types = line.types or [value_type([row[i] for row in line.gold.rows]) for i in range(len(columns))]
        pairs.append(
            GeneratedPair(
                id=line.id,
                category=line.category,
                question=line.question,
                sql=line.sql,
                tables=tables,
                columns=columns,
                types=types,
                rows=line.gold.rows,
                data=line.data,
            )
        )
    if not pairs:
        raise DataError(f"{path}: no pairs (expected JSON lines written by the rfqa generator)")
    return pairs
