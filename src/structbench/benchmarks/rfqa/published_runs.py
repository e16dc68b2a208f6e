"""What galois' published runs of RelationalFactQA did that the release does not say, from galois' own files.

The paper's Table 2 is galois' per-query scores of its runs (dbunibas/galois, branch ``reproducibility``,
``core/src/test/resources/llm-bench/llm-results/<model>_complete_results.xlsx``, committed 2025-05-09), made from
the conversations in its LLM caches (``.../llm-bench/cache/``). Read against them, the runs had:

- **Prompts** (``prompt_wording=published``): the templates before galois' rewrite of 2025-05-10, and for NL and
  SQL the JSON Schema of the *whole* table the query reads first, as galois' experiment configs declare it
  (``<db>-llama3-nl-experiment.json``: every attribute with its type, in Java ``HashMap`` order); this module
  ships those declarations (``galois_schemas.json``, schema only, no rows: the names, types and nullability).
- **CoT's denominator**: galois has no CoT score for 76 queries (mostly joins and nested queries its planner
  could not run); the paper's CoT numbers are means over the other 620 (``COT_UNSCORED``). In the DeepSeek run
  galois scored bird_73 and not galois_42; the list is the other six runs'.
- **The gold's types** (``text_columns``): a value of a plain column of an attribute galois declares nullable
  was text in its gold (PostgreSQL's writing: ``6194``, ``121590``), any other (a column declared not nullable, a
  computed one) a number; this, alone of the readings tried, gives galois' tuple similarity on every query that
  could be replayed (``benchmarks/rfqa_published.py``).
- **bird_51's gold** (``PUBLISHED_GOLD``): galois scored 0 for all 14 runs of "the longest river that flows to the
  Mediterranean Sea", those that answered "Nile" included (exact cell precision 0). Its config declares
  ``river.length`` a STRING and its PostgreSQL held the Nile's empty length as an empty text, not NULL, so
  ``ORDER BY Length DESC`` ranked the texts and ``'925.0'``, the Ebro, came first. structbench's gold (NULL
  first, as PostgreSQL sorts a NULL) is "Nile"; the presets score against "Ebro", as the paper did.

``python benchmarks/rfqa_published.py GALOIS_CHECKOUT --write-schemas`` rewrites ``galois_schemas.json`` from a
galois checkout's experiment configs (``write_schemas``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from structbench.core.errors import DataError

SCHEMAS_FILE = "galois_schemas.json"
CONFIGS = "core/src/test/resources/llm-bench"
"""Where a galois checkout holds its experiment configs (``<dataset>/<db>-llama3-nl-experiment.json``)."""

DATASETS = ("bird", "galois", "qatch", "spider1")
"""The release's sources (galois' configs also hold experiments outside RelationalFactQA)."""

COT_UNSCORED: frozenset[str] = frozenset(
    [f"bird_{i}" for i in (2, 5, 7, 9, 10, 12, 13, 14, 15, 18, 20, 21, 24, 26, 28, 32, 35, 36, 37, 38, 39, 40,
                           41, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64,
                           65, 66, 67, 73, 75, 76)]
    + [f"spider1_{i}" for i in (9, 10, 12, 13, 17, 18, 20, 21, 22, 23, 24, 25, 26, 27, 29, 30, 32, 36, 37, 38, 39,
                                47, 48, 49, 50, 52)]
)
"""The 76 queries galois' CoT runs did not score (no value in the results files): the paper's CoT means leave them
out."""

PUBLISHED_GOLD: dict[str, list[list[Any]]] = {"bird_51": [["Ebro"]]}
"""Gold rows galois scored against where they differ from the release's query run as PostgreSQL runs it."""


@dataclass(frozen=True)
class Attribute:
    """An attribute as galois' experiment config declares it."""

    name: str
    type: str
    """``INTEGER``, ``REAL``, ``STRING`` or ``BOOLEAN``."""
    nullable: bool


@cache
def _schemas() -> dict[str, dict[str, list[Attribute]]]:
    raw = json.loads(resources.files(__package__).joinpath(SCHEMAS_FILE).read_text(encoding="utf-8"))
    return {db: {table: [Attribute(*a) for a in attrs] for table, attrs in tables.items()}
            for db, tables in raw.items()}


def table_schema(db: str, table: str) -> list[Attribute] | None:
    """The attributes galois declared for ``table`` of ``db`` (``dataset/db_id``), in the config's order; None when
    its configs do not declare it."""
    return _schemas().get(db, {}).get(table.lower())


def text_columns(sql: str, db: str, columns: Sequence[str]) -> list[bool]:
    """For each output column of ``sql``, whether galois' gold held its values as text: a plain column of an
    attribute galois declares nullable (read against the published scores: an integer gold of such a column is
    never written ``%.2f``, one of a column declared not nullable or computed, a ``COUNT``, a ``MAX``, is)."""
    from sqlglot import exp

    from structbench.benchmarks.rfqa.engine import parsed, referenced_tables

    try:
        tree = parsed(sql)
    except Exception:  # a query sqlglot cannot read: every column typed
        return [False] * len(columns)
    select = tree if isinstance(tree, exp.Select) else tree.find(exp.Select)
    items = list(select.expressions) if select is not None else []
    if len(items) != len(columns):
        return [False] * len(columns)
    declared = [a for table in referenced_tables(sql) for a in table_schema(db, table) or ()]
    out = []
    for item in items:
        inner = item.this if isinstance(item, exp.Alias) else item
        name = inner.name.lower() if isinstance(inner, exp.Column) else None
        out.append(any(a.name == name and a.nullable for a in declared) if name else False)
    return out


def read_configs(checkout: Path) -> dict[str, dict[str, list[list[Any]]]]:
    """The NL configs' schemas of a galois checkout: ``dataset/db`` -> table -> ``[name, type, nullable]`` (names
    lower-cased, as PostgreSQL folds them)."""
    root = checkout / CONFIGS
    configs = sorted(p for p in root.glob("*/*-llama3-nl-experiment.json") if p.parent.name in DATASETS)
    if not configs:
        raise DataError(f"{root}: no <dataset>/<db>-llama3-nl-experiment.json; give the root of a galois checkout "
                        "(branch reproducibility)")
    out: dict[str, dict[str, list[list[Any]]]] = {}
    for path in configs:
        db = f"{path.parent.name}/{path.name.removesuffix('-llama3-nl-experiment.json')}"
        try:
            tables = json.loads(path.read_text(encoding="utf-8"))["query"]["schema"]["tables"]
            out[db] = {t["tableName"].lower(): [[a["name"].lower(), a["type"].upper(), bool(a.get("nullable", True))]
                                                for a in t["attributes"]] for t in tables}
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise DataError(f"{path}: not a galois experiment config ({err})") from None
    return out


def write_schemas(checkout: Path, target: Path | None = None) -> Path:
    """Rewrite the packaged ``galois_schemas.json`` (or ``target``) from a galois checkout's configs: one table a
    line, attributes in the config's order."""
    schemas = read_configs(checkout)
    target = target or Path(__file__).with_name(SCHEMAS_FILE)
    databases = [
        f"{json.dumps(db)}: {{\n" + ",\n".join(f"  {json.dumps(table)}: {json.dumps(attributes, ensure_ascii=False)}"
                                               for table, attributes in tables.items()) + "\n}"
        for db, tables in schemas.items()
    ]
    target.write_text("{\n" + ",\n".join(databases) + "\n}\n", encoding="utf-8")
    return target
