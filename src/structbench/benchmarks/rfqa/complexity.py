"""Query complexity from the SQL text (sqlglot), for the breakdown of the paper's Table 4.

The classes are Figure 1(b)'s: SELECT without WHERE; WHERE with numerical, categorical or mixed
conditions; AGGREGATIVE; JOIN; DISTINCT; GROUP BY; LIMIT; ORDER BY. A query can be in several
classes. A WHERE condition is numerical when the column it tests is numeric (from the database
schema when known) or, failing that, when it compares with a number literal; otherwise it is
categorical.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sqlglot import exp

from structbench.benchmarks.rfqa.database import NUMERIC_TYPES
from structbench.benchmarks.rfqa.engine import parse, parsed

CLASSES = (
    "SELECT without WHERE",
    "WHERE numerical condition",
    "WHERE categorical condition",
    "WHERE mixed condition",
    "AGGREGATIVE",
    "JOIN",
    "DISTINCT",
    "GROUP BY",
    "LIMIT",
    "ORDER BY",
)
"""Figure 1(b)'s query types, in the paper's order."""

PREDICATES = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Like, exp.ILike, exp.In, exp.Between, exp.Is)


@dataclass(frozen=True)
class QueryShape:
    """The SQL constructs a query uses."""

    tables: int
    where: bool
    numerical_conditions: int
    categorical_conditions: int
    aggregate: bool
    joins: int
    distinct: bool
    group_by: bool
    limit: bool
    order_by: bool
    nested: bool
    like: bool

    def classes(self) -> list[str]:
        """The Figure 1(b) classes this query belongs to."""
        out: list[str] = []
        if not self.where:
            out.append("SELECT without WHERE")
        elif self.numerical_conditions and self.categorical_conditions:
            out.append("WHERE mixed condition")
        elif self.numerical_conditions:
            out.append("WHERE numerical condition")
        elif self.categorical_conditions:
            out.append("WHERE categorical condition")
        flags = (
            (self.aggregate, "AGGREGATIVE"),
            (self.joins > 0, "JOIN"),
            (self.distinct, "DISTINCT"),
            (self.group_by, "GROUP BY"),
            (self.limit, "LIMIT"),
            (self.order_by, "ORDER BY"),
        )
        out.extend(name for flag, name in flags if flag)
        return out


def _column_types(tree: exp.Expr, schema: Mapping[str, Mapping[str, str]]) -> dict[str, dict[str, str]]:
    """Alias or table name -> column -> type, for the tables the query reads."""
    scope: dict[str, dict[str, str]] = {}
    for table in tree.find_all(exp.Table):
        cols = dict(schema.get(table.name.lower(), {}))
        scope[table.name.lower()] = cols
        if table.alias:
            scope[table.alias.lower()] = cols
    return scope


def _is_numeric_condition(pred: exp.Expr, scope: Mapping[str, Mapping[str, str]]) -> bool:
    for col in pred.find_all(exp.Column):
        if col.find_ancestor(exp.Subquery) is not None and col.find_ancestor(exp.Subquery) is not pred:
            continue
        name = col.name.lower()
        if col.table:
            types = [scope.get(col.table.lower(), {}).get(name)]
        else:
            types = [cols.get(name) for cols in scope.values()]
        known = [t for t in types if t]
        if known:
            return known[0].split("(")[0].upper() in NUMERIC_TYPES
    literals = [lit for lit in pred.find_all(exp.Literal)]
    return any(lit.is_number for lit in literals) and not any(lit.is_string for lit in literals)


def _conditions(where: exp.Expr) -> list[exp.Expr]:
    preds: list[exp.Expr] = []
    for node in where.find_all(*PREDICATES):
        parent = node.parent
        # a predicate nested in another predicate (NOT x IN ...) counts once
        if isinstance(parent, PREDICATES):
            continue
        preds.append(node)
    return preds


def shape(sql: str, schema: Mapping[str, Mapping[str, str]] | None = None) -> QueryShape:
    """The constructs of ``sql`` (the outermost query's WHERE, plus nested queries' use of operators)."""
    tree = parse(sql)
    scope = _column_types(tree, schema or {})
    where = tree.args.get("where")
    numerical = categorical = 0
    if where is not None:
        for pred in _conditions(where):
            if _is_numeric_condition(pred, scope):
                numerical += 1
            else:
                categorical += 1
    selects = list(tree.find_all(exp.Select))
    return QueryShape(
        tables=len({t.name.lower() for t in tree.find_all(exp.Table)}),
        where=where is not None,
        numerical_conditions=numerical,
        categorical_conditions=categorical,
        aggregate=tree.find(exp.AggFunc) is not None,
        joins=len(list(tree.find_all(exp.Join))),
        distinct=any(s.args.get("distinct") for s in selects) or tree.find(exp.Distinct) is not None,
        group_by=tree.args.get("group") is not None,
        limit=tree.args.get("limit") is not None,
        order_by=tree.args.get("order") is not None,
        nested=tree.find(exp.Subquery) is not None or len(selects) > 1,
        like=tree.find(exp.Like, exp.ILike) is not None,
    )


def has_order_by(sql: str) -> bool:
    """Whether the outermost query orders its result (QATCH's tuple order applies only then)."""
    return parsed(sql).args.get("order") is not None
