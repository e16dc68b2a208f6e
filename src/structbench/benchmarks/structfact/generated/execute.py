"""The generator's label: a claim compiled to SQL and executed on the cells the evidence shows.

Each source table in a question's evidence becomes a SQLite table holding exactly the cells its views
show (``View.shown``: the lineage), typed from the column profiles; every other cell is NULL. The
claim becomes one SQL expression whose NULL is "unknown", so SQL's three-valued logic gives the label:
1 is ``YES``, 0 is ``NO``, NULL is ``NOT SURE ENOUGH`` (a needed row or column left out, a masked cell).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from structbench.benchmarks.structfact.generated.claims import (
    Aggregate,
    And,
    Arith,
    Best,
    Cell,
    Compare,
    Const,
    Count,
    Year,
    columns_read,
)
from structbench.benchmarks.structfact.generated.profile import Column, Kind, Profile
from structbench.benchmarks.structfact.generated.views import Evidence
from structbench.benchmarks.structfact.loader import LABELS

YES, NO, NEI = LABELS


class _Relation:
    """One source table as loaded for a question: SQL names of the table and of the columns the claim reads."""

    def __init__(self, sql_name: str, profile: Profile, read: set[str]) -> None:
        self.sql = sql_name
        self.profile = profile
        self.columns = {c.name: (f"c{c.index}", c) for c in profile.columns if c.name in read}

    def column(self, name: str) -> tuple[str, Column] | None:
        return self.columns.get(name)


class Executor:
    """Labels claims by executing them on the evidence (one in-memory SQLite connection, reused).

    Its tables ``t0``, ``t1`` ... are made once and emptied before each claim loads them: creating and dropping a
    table per question changed the schema each time, which cost more than the claim itself. A table has the
    columns of the widest source table loaded into it so far (``c<index>``, untyped as before); the columns a
    claim does not read stay NULL and no query names them."""

    def __init__(self) -> None:
        self.connection = sqlite3.connect(":memory:")
        self.widths: dict[int, int] = {}
        """The columns of ``t0``, ``t1`` ... as made (by number)."""

    def label(self, claim: Compare | And, evidence: Evidence) -> str:
        """``YES``, ``NO`` or ``NOT SURE ENOUGH`` for ``claim`` over ``evidence``."""
        relations = self._load(evidence, columns_read(claim))
        sql, params = _Compiler(relations).predicate(claim)
        value = self.connection.execute(f"SELECT {sql}", params).fetchone()[0]
        return NEI if value is None else YES if value else NO

    def _table(self, i: int, width: int) -> str:
        """The name of table ``i``, empty, made (again, wider) where it has fewer than ``width`` columns."""
        name = f"t{i}"
        made = self.widths.get(i, 0)
        if made >= width:
            self.connection.execute(f"DELETE FROM {name}")
            return name
        if made:
            self.connection.execute(f"DROP TABLE {name}")
        self.connection.execute(f"CREATE TEMP TABLE {name} ({', '.join(f'c{j}' for j in range(width))})")
        self.widths[i] = width
        return name

    def _load(self, evidence: Evidence, read: set[tuple[str, str]]) -> dict[str, _Relation]:
        profiles: dict[str, Profile] = {}
        for view in evidence.views:
            if profiles.setdefault(view.name, view.profile) is not view.profile:
                raise ValueError(f"two source tables named {view.name!r} in one evidence")
        relations: dict[str, _Relation] = {}
        for i, (name, profile) in enumerate(profiles.items()):
            relation = _Relation(f"t{i}", profile, {column for table, column in read if table == name})
            if not relation.columns:
                continue
            self._table(i, 1 + max(c.index for c in profile.columns))
            views = [v for v in evidence.views if v.profile is profile]
            rows = list(dict.fromkeys(r for v in views for r in v.rows))
            columns = [c for _, c in relation.columns.values()]
            stated = [set().union(*(v.shown_rows(c) for v in views)) for c in columns]
            records = [[c.values[r] if r in shown else None for c, shown in zip(columns, stated, strict=True)]
                       for r in rows]
            names = ", ".join(sql for sql, _ in relation.columns.values())
            marks = ", ".join("?" * len(columns))
            self.connection.executemany(f"INSERT INTO {relation.sql} ({names}) VALUES ({marks})", records)
            relations[name] = relation
        return relations


_NULL = ("NULL", "null")


class _Compiler:
    """Claim -> SQL expression (and its parameters); values carry their kind."""

    def __init__(self, relations: dict[str, _Relation]) -> None:
        self.relations = relations
        self.params: list[Any] = []

    def bind(self, value: Any) -> str:
        self.params.append(value)
        return "?"

    def predicate(self, claim: Compare | And) -> tuple[str, list[Any]]:
        return self._predicate(claim), self.params

    def _predicate(self, claim: Compare | And) -> str:
        if isinstance(claim, And):
            return "(" + " AND ".join(self._predicate(p) for p in claim.parts) + ")"
        left, left_kind = self.value(claim.left)
        right, right_kind = self.value(claim.right)
        for kind in (left_kind, right_kind):
            if kind not in ("null", "const", claim.kind):
                raise ValueError(f"a {kind} compared as {claim.kind}: {claim}")
        if claim.kind == "number" and claim.cmp in ("=", "!="):
            op = "<=" if claim.cmp == "=" else ">"
            return f"(ABS({left} - {right}) {op} {self.bind(claim.tol)})"
        return f"({left} {claim.cmp} {right})"

    def _table(self, name: str, column: str) -> tuple[_Relation, str, Column] | None:
        relation = self.relations.get(name)
        found = relation.column(column) if relation else None
        return None if relation is None or found is None else (relation, *found)

    def value(self, node: Any) -> tuple[str, Kind | str]:
        if isinstance(node, Const):
            return self.bind(node.value), "const"
        if isinstance(node, Cell):
            target, key = self._table(node.table, node.column), self._table(node.table, node.key)
            if target is None or key is None:
                return _NULL
            entity, _ = self.value(node.entity)
            relation, column, col = target
            return f"(SELECT {column} FROM {relation.sql} WHERE {key[1]} = {entity})", col.kind
        if isinstance(node, Year):
            inner, kind = self.value(node.of)
            if kind == "date":
                return f"CAST(substr({inner}, 1, 4) AS INTEGER)", "number"
            return (f"CAST({inner} AS INTEGER)", "number") if kind == "number" else _NULL
        if isinstance(node, Arith):
            left, _ = self.value(node.left)
            right, _ = self.value(node.right)
            expr = {"sub": f"({left} - {right})", "absdiff": f"ABS({left} - {right})",
                    "share": f"({left} * 100.0 / {right})"}[node.fn]
            return expr, "number"
        if isinstance(node, Aggregate | Count | Best):
            return self._whole(node)
        raise TypeError(f"not a value: {node!r}")

    def _whole(self, node: Aggregate | Count | Best) -> tuple[str, Kind | str]:
        found = self._table(node.table, node.column)
        if found is None:
            return _NULL
        relation, c, _ = found
        t = relation.sql
        complete = f"COUNT(*) > 0 AND COUNT({c}) = COUNT(*)"
        if isinstance(node, Aggregate):
            return f"(SELECT CASE WHEN {complete} THEN {node.fn.upper()}({c}) END FROM {t})", "number"
        if isinstance(node, Count):
            bound = self.bind(node.value)
            return f"(SELECT CASE WHEN {complete} THEN SUM({c} {node.cmp} {bound}) END FROM {t})", "number"
        key = self._table(node.table, node.key)
        if key is None:
            return _NULL
        extreme = f"(SELECT {node.fn.upper()}({c}) FROM {t})"
        unique = f"(SELECT COUNT(*) FROM {t} WHERE {c} = {extreme}) = 1"
        pick = f"(SELECT {key[1]} FROM {t} WHERE {c} = {extreme})"
        return f"(SELECT CASE WHEN {complete} AND {unique} THEN {pick} END FROM {t})", key[2].kind
