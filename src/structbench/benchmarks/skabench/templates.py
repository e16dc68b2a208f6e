"""SQL question templates over one table: lookup, filter, multi-row, count, max/min and comparison.

Each template picks columns and values from the table's data and returns a ``Query``: the question,
the SQL that answers it, the SQL listing the rows its conditions select (its candidate set: the rows
the answer is derived from, the positive units), and a structured ``spec`` of what it asks. Queries
read the table as ``t`` so the builder can re-run them on a subset of rows (leave-one-out lineage).
Every template's answer is stable on any subset of rows that keeps the candidate set, which is what
makes noisy rows harmless; on a subset without any candidate row it has no answer, except a count
(``negative_rejection=False``).
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from structbench.benchmarks.skabench.database import ROW_ID, Value, quote
from structbench.benchmarks.skabench.forms import TableProfile, humanize
from structbench.core.registry import Registry


@dataclass(frozen=True)
class Query:
    """A templated question over table ``relation``, with SQL that computes its answer."""

    template: str
    relation: str
    question: str
    sql: str
    """Reads the table as ``t``; the first column of the result is the answer."""
    params: tuple[Value, ...]
    candidates_sql: str
    """``SELECT "__row" FROM t WHERE ...``: the rows that may belong to the lineage."""
    candidate_params: tuple[Value, ...]
    columns: tuple[int, ...]
    """The columns the question references (conditions, compared values, the answer's column)."""
    answer_column: int | None
    """The column the answer is read from (None for counts)."""
    spec: dict[str, Any] = field(default_factory=dict)
    """What the question asks, by column name and value (for provenance and independent checks)."""
    negative_rejection: bool = True
    """Whether the question has no answer on rows outside its candidate set (False for a count: 0)."""


Template = Callable[[TableProfile, random.Random], Query | None]
TEMPLATES: Registry[Template] = Registry("skabench question template")


def _groups(profile: TableProfile, column: int, low: int, high: int) -> list[tuple[str, list[int]]]:
    """Values of ``column`` shared by ``low``..``high`` rows, with those rows."""
    rows_by_value: dict[str, list[int]] = {}
    for i, row in enumerate(profile.relation.cells):
        if (value := row[column]) is not None:
            rows_by_value.setdefault(value, []).append(i)
    return [(v, rows) for v, rows in rows_by_value.items() if low <= len(rows) <= high]


def _unique_values(profile: TableProfile, column: int) -> list[int]:
    """Rows whose value in ``column`` occurs exactly once."""
    counts = Counter(r[column] for r in profile.relation.cells if r[column] is not None)
    return [i for i, r in enumerate(profile.relation.cells) if r[column] is not None and counts[r[column]] == 1]


def _text_columns(profile: TableProfile) -> list[int]:
    return [j for j in range(len(profile.columns)) if not profile.relation.numeric(j)]


_IDENTIFIER = re.compile(r"(^|_)(id|code|key)$|^id_", re.IGNORECASE)


def _numeric_columns(profile: TableProfile) -> list[int]:
    """Numeric columns that measure something (identifiers such as ``id`` are left out)."""
    return [
        j
        for j in range(len(profile.columns))
        if profile.relation.numeric(j) and j != profile.subject_column and not _IDENTIFIER.search(profile.columns[j])
    ]


def _name(profile: TableProfile, column: int) -> str:
    return humanize(profile.columns[column])


def _c(profile: TableProfile, column: int) -> str:
    return quote(profile.relation.keys[column])


def _entity_ref(profile: TableProfile, column: int, value: str) -> str:
    """How a question names the row whose ``column`` is ``value``."""
    if profile.natural_subject and column == profile.subject_column:
        return value
    return f"the {profile.noun} whose {_name(profile, column)} is {value}"


def _give(profile: TableProfile, column: int) -> str:
    """A hint naming the answer's column when entities are not named by it."""
    if profile.natural_subject and column == profile.subject_column:
        return ""
    return f" Answer with its {_name(profile, column)}."


@TEMPLATES.decorator("lookup")
def lookup(profile: TableProfile, rng: random.Random) -> Query | None:
    """What is the <target> of <the row identified by a unique value>?"""
    keys = [j for j in range(len(profile.columns)) if _unique_values(profile, j)]
    if profile.natural_subject and profile.subject_column in keys and rng.random() < 0.5:
        key = profile.subject_column
    elif keys:
        key = rng.choice(keys)
    else:
        return None
    assert key is not None
    row = rng.choice(_unique_values(profile, key))
    targets = [j for j in range(len(profile.columns)) if j != key and profile.relation.cells[row][j] is not None]
    if not targets:
        return None
    target = rng.choice(targets)
    value = profile.relation.cells[row][key]
    assert value is not None
    typed = profile.relation.value(row, key)
    return Query(
        template="lookup",
        relation=profile.relation.name,
        question=f"What is the {_name(profile, target)} of {_entity_ref(profile, key, value)}?",
        sql=f"SELECT {_c(profile, target)} FROM t WHERE {_c(profile, key)} = ?",
        params=(typed,),
        candidates_sql=f"SELECT {quote(ROW_ID)} FROM t WHERE {_c(profile, key)} = ?",
        candidate_params=(typed,),
        columns=(key, target),
        answer_column=target,
        spec={"select": profile.columns[target], "where": [[profile.columns[key], "=", value]]},
    )


def _group_and_number(
    profile: TableProfile, rng: random.Random, low: int, high: int, exclude: tuple[int | None, ...] = ()
) -> tuple[int, str, list[int], int] | None:
    """A text column, one of its values shared by ``low``..``high`` rows, those rows, and a numeric column."""
    numbers = [j for j in _numeric_columns(profile) if j not in exclude]
    groupings = [j for j in _text_columns(profile) if j not in exclude]
    rng.shuffle(groupings)
    for column in groupings:
        groups = _groups(profile, column, low, high)
        if groups and numbers:
            value, rows = rng.choice(groups)
            return column, value, rows, rng.choice(numbers)
    return None


def _ranked(profile: TableProfile, rows: list[int], number: int, top: bool) -> list[int]:
    """``rows`` with a value in ``number``, best first (highest when ``top``)."""
    present = [r for r in rows if profile.relation.cells[r][number] is not None]
    return sorted(present, key=lambda r: profile.relation.value(r, number), reverse=top)  # type: ignore[arg-type,return-value]


class _Leader(NamedTuple):
    """Rows sharing one value of a text column and, by a numeric column, their one named leading row."""

    name: int
    """The entity column (its cell names the answer)."""
    group: int
    value: str
    number: int
    top: bool
    """Leading by the highest value (else the lowest)."""
    first: int
    second: int
    """The leading row and the runner-up, whose values differ."""


def _leader(profile: TableProfile, rng: random.Random, most: int) -> _Leader | None:
    """A group of 2..``most`` rows, a numeric column, a direction, and the group's leading and second rows."""
    name = profile.name_column
    if name is None:
        return None
    picked = _group_and_number(profile, rng, 2, most, exclude=(name,))
    if picked is None:
        return None
    group, value, rows, number = picked
    top = rng.random() < 0.5
    ranked = _ranked(profile, rows, number, top)
    rel = profile.relation
    if len(ranked) < 2 or rel.value(ranked[0], number) == rel.value(ranked[1], number):
        return None
    if rel.cells[ranked[0]][name] is None:
        return None
    return _Leader(name, group, value, number, top, ranked[0], ranked[1])


@TEMPLATES.decorator("filter")
def filter_rows(profile: TableProfile, rng: random.Random) -> Query | None:
    """Which <entity> has <column> <value> and <number> greater (less) than <threshold>?"""
    lead = _leader(profile, rng, 40)
    if lead is None:
        return None
    name, group, value, number, top, _, runner_up = lead
    rel = profile.relation
    threshold_text = rel.cells[runner_up][number]
    op, words = (">", "greater than") if top else ("<", "less than")
    g, n = _c(profile, group), _c(profile, number)
    question = (
        f"Which {profile.noun} has {_name(profile, group)} {value} and {_name(profile, number)} "
        f"{words} {threshold_text}?{_give(profile, name)}"
    )
    return Query(
        template="filter",
        relation=rel.name,
        question=question,
        sql=f"SELECT {_c(profile, name)} FROM t WHERE {g} = ? AND {n} {op} ?",
        params=(value, rel.value(runner_up, number)),
        candidates_sql=f"SELECT {quote(ROW_ID)} FROM t WHERE {g} = ?",
        candidate_params=(value,),
        columns=(group, number, name),
        answer_column=name,
        spec={
            "select": profile.columns[name],
            "where": [[profile.columns[group], "=", value], [profile.columns[number], op, threshold_text]],
        },
    )


@TEMPLATES.decorator("multi_row")
def multi_row(profile: TableProfile, rng: random.Random) -> Query | None:
    """List the <name> of every <entity> whose <column> is <value> (several answers)."""
    name = profile.name_column
    if name is None:
        return None
    groupings = [j for j in range(len(profile.columns)) if j != name]
    rng.shuffle(groupings)
    rel = profile.relation
    for group in groupings:
        candidates = [
            (v, rows)
            for v, rows in _groups(profile, group, 2, 8)
            if len({rel.cells[r][name] for r in rows}) == len(rows) and all(rel.cells[r][name] for r in rows)
        ]
        if candidates:
            value, rows = rng.choice(candidates)
            typed = rel.value(rows[0], group)
            return Query(
                template="multi_row",
                relation=rel.name,
                question=f"List the {_name(profile, name)} of every {profile.noun} whose "
                f"{_name(profile, group)} is {value}.",
                sql=f"SELECT {_c(profile, name)} FROM t WHERE {_c(profile, group)} = ?",
                params=(typed,),
                candidates_sql=f"SELECT {quote(ROW_ID)} FROM t WHERE {_c(profile, group)} = ?",
                candidate_params=(typed,),
                columns=(group, name),
                answer_column=name,
                spec={"select": profile.columns[name], "where": [[profile.columns[group], "=", value]]},
            )
    return None


@TEMPLATES.decorator("count")
def count(profile: TableProfile, rng: random.Random) -> Query | None:
    """How many <entity> entries have <column> <value> [and <number> greater than <threshold>]?"""
    rel = profile.relation
    groupings = list(range(len(profile.columns)))
    rng.shuffle(groupings)
    for group in groupings:
        groups = _groups(profile, group, 2, 15)
        if not groups:
            continue
        value, rows = rng.choice(groups)
        typed = rel.value(rows[0], group)
        where = [[profile.columns[group], "=", value]]
        sql = f"SELECT COUNT(*) FROM t WHERE {_c(profile, group)} = ?"
        params: tuple[Value, ...] = (typed,)
        columns: tuple[int, ...] = (group,)
        condition = f"{_name(profile, group)} {value}"
        numbers = [j for j in _numeric_columns(profile) if j != group]
        if numbers and rng.random() < 0.5:
            number = rng.choice(numbers)
            ranked = _ranked(profile, rows, number, top=True)
            cuts = [
                k for k in range(2, len(ranked)) if rel.value(ranked[k - 1], number) != rel.value(ranked[k], number)
            ]
            if cuts:
                k = rng.choice(cuts)
                threshold_text = str(rel.cells[ranked[k]][number])
                sql += f" AND {_c(profile, number)} > ?"
                params += (rel.value(ranked[k], number),)
                columns += (number,)
                where.append([profile.columns[number], ">", threshold_text])
                condition += f" and {_name(profile, number)} greater than {threshold_text}"
        return Query(
            template="count",
            relation=rel.name,
            question=f"How many {profile.noun} entries have {condition}?",
            sql=sql,
            params=params,
            candidates_sql=f"SELECT {quote(ROW_ID)} FROM t WHERE {_c(profile, group)} = ?",
            candidate_params=(typed,),
            columns=columns,
            answer_column=None,
            spec={"count": True, "where": where},
            negative_rejection=False,
        )
    return None


@TEMPLATES.decorator("max_min")
def superlative(profile: TableProfile, rng: random.Random) -> Query | None:
    """Which <entity> has the highest (lowest) <number> among those whose <column> is <value>?"""
    lead = _leader(profile, rng, 60)
    if lead is None:
        return None
    name, group, value, number, top, _, _ = lead
    rel = profile.relation
    agg, word = ("MAX", "highest") if top else ("MIN", "lowest")
    g, n = _c(profile, group), _c(profile, number)
    return Query(
        template="max_min",
        relation=rel.name,
        question=f"Which {profile.noun} has the {word} {_name(profile, number)} among those whose "
        f"{_name(profile, group)} is {value}?{_give(profile, name)}",
        sql=f"SELECT {_c(profile, name)} FROM t WHERE {g} = ? AND {n} = (SELECT {agg}({n}) FROM t WHERE {g} = ?)",
        params=(value, value),
        candidates_sql=f"SELECT {quote(ROW_ID)} FROM t WHERE {g} = ?",
        candidate_params=(value,),
        columns=(group, number, name),
        answer_column=name,
        spec={
            "select": profile.columns[name],
            "argmax" if top else "argmin": profile.columns[number],
            "where": [[profile.columns[group], "=", value]],
        },
    )


@TEMPLATES.decorator("comparison")
def comparison(profile: TableProfile, rng: random.Random) -> Query | None:
    """Which has the higher (lower) <number>: <entity A> or <entity B>?"""
    rel = profile.relation
    keys = [j for j in (profile.subject_column, profile.name_column) if j is not None and not rel.numeric(j)]
    numbers = _numeric_columns(profile)
    if not keys or not numbers:
        return None
    key = keys[0]
    number = rng.choice([j for j in numbers if j != key] or numbers)
    rows = [r for r in _unique_values(profile, key) if rel.cells[r][number] is not None]
    if len(rows) < 2:
        return None
    a, b = rng.sample(rows, 2)
    if rel.value(a, number) == rel.value(b, number):
        return None
    top = rng.random() < 0.5
    op, word = (">", "higher") if top else ("<", "lower")
    av, bv = rel.cells[a][key], rel.cells[b][key]
    assert av is not None and bv is not None
    k, n = _c(profile, key), _c(profile, number)
    if profile.natural_subject and key == profile.subject_column:
        question = f"Which has the {word} {_name(profile, number)}, {av} or {bv}?"
    else:
        question = (
            f"Which {profile.noun} has the {word} {_name(profile, number)}: the one whose {_name(profile, key)} "
            f"is {av} or the one whose {_name(profile, key)} is {bv}?{_give(profile, key)}"
        )
    return Query(
        template="comparison",
        relation=rel.name,
        question=question,
        sql=f"SELECT CASE WHEN a.{n} {op} b.{n} THEN a.{k} WHEN b.{n} {op} a.{n} THEN b.{k} END "
        f"FROM t AS a, t AS b WHERE a.{k} = ? AND b.{k} = ?",
        params=(av, bv),
        candidates_sql=f"SELECT {quote(ROW_ID)} FROM t WHERE {k} IN (?, ?)",
        candidate_params=(av, bv),
        columns=(key, number),
        answer_column=key,
        spec={"compare": profile.columns[number], "op": op, "key": profile.columns[key], "values": [av, bv]},
    )
