"""RelationalFactQA (Satriani et al., 2025): closed-book retrieval of whole tables from a model.

Read top to bottom: ``source.py`` (where the data comes from), ``queries.py`` + ``database.py`` +
``engine.py`` + ``gold.py`` (gold tables by executing each query), ``prompts.py`` + ``strategies.py``
+ ``cot.py`` (the NL, SQL and CoT methods), ``parsing.py`` (JSON recovery), ``normalize.py`` +
``matching.py`` + ``metrics.py`` (cell F1, tuple similarity and QATCH's metrics), ``complexity.py``
(breakdown by query type) and ``generator.py`` (QATCH-style items from your own tables).
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from structbench.backends.base import Request
from structbench.benchmark import Attempt, Benchmark, Scored, Strategy
from structbench.benchmarks.rfqa import prompts
from structbench.benchmarks.rfqa.complexity import CLASSES, has_order_by, shape
from structbench.benchmarks.rfqa.cot import BaseQuery, plan
from structbench.benchmarks.rfqa.database import DatabaseCache, quote
from structbench.benchmarks.rfqa.engine import referenced_tables
from structbench.benchmarks.rfqa.gold import GoldReport, GoldResult, execute_gold, json_value
from structbench.benchmarks.rfqa.matching import RULES, MatchRule
from structbench.benchmarks.rfqa.metrics import METRICS, align_records, table_metrics
from structbench.benchmarks.rfqa.parsing import parse_table
from structbench.benchmarks.rfqa.queries import Query, read_queries
from structbench.benchmarks.rfqa.source import QUERIES_FILE, dataset_source
from structbench.benchmarks.rfqa.strategies import RetrievalSettings, build_strategies
from structbench.data.sample import Sample, TableGold
from structbench.datasets import DataContext

log = logging.getLogger(__name__)

SOURCES = ("bird", "galois", "qatch", "spider1")
CELL_BINS = ((1, "1"), (10, "2-10"), (50, "11-50"), (100, "51-100"), (500, "101-500"))


def cells_bin(cells: int) -> str:
    """The output-size bucket of Figure 2 (right) a gold table with ``cells`` cells falls in."""
    for top, label in CELL_BINS:
        if cells <= top:
            return label
    return ">500"


class RFQAOptions(BaseModel):
    """Run options (``--option key=value``)."""

    model_config = ConfigDict(extra="forbid")

    string_rule: Literal["intended", "published"] = "intended"
    """``intended``: edit distance <= 10% of the expected length (the paper). ``published``: the
    released code's rule after 2025-07-25, floor(L(1-t)) <= distance <= ceil(L(1+t))."""
    numeric_tolerance: float = Field(0.1, ge=0)
    string_tolerance: float = Field(0.1, ge=0)
    iterations: int = Field(10, ge=0)
    """Follow-up "List more values" rounds after the first answer."""
    max_tokens: int = Field(4096, ge=1)
    structured_output: bool = False
    """Send the output's JSON Schema as the request's ``response_format``."""


class RFQABenchmark(Benchmark):
    """RelationalFactQA: 696 NL/SQL queries whose answers are tables, scored by cell F1 and tuple similarity."""

    name: ClassVar[str] = "rfqa"
    title: ClassVar[str] = "RelationalFactQA"
    variants: ClassVar[tuple[str, ...]] = ("all", *SOURCES)
    default_strategy: ClassVar[str] = "nl"
    headline: ClassVar[str] = "avg_f1_ts"
    metric_names: ClassVar[tuple[str, ...]] = (
        "avg_f1_ts",
        *(m for m in METRICS if m != "tuple_order"),
        "invalid_rate",
    )
    breakdown_keys: ClassVar[tuple[str, ...]] = ("task", "attrs", "cells", "output_type")
    Options: ClassVar[type[BaseModel]] = RFQAOptions

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        opts = self.opts
        self.rule: MatchRule = RULES[opts.string_rule](opts.numeric_tolerance, opts.string_tolerance)
        self._strategies = build_strategies(self.settings)
        self._cache: DatabaseCache | None = None
        self.gold_report = GoldReport()
        """Every query's gold outcome from the last ``load`` (excluded samples included)."""

    @property
    def opts(self) -> RFQAOptions:
        assert isinstance(self.options, RFQAOptions)
        return self.options

    def settings(self) -> RetrievalSettings:
        """The retrieval settings the strategies use, from the options."""
        o = self.opts
        return RetrievalSettings(o.iterations, o.max_tokens, o.structured_output)

    # -- data ---------------------------------------------------------------------------------

    def load(self, variant: str, data: DataContext, *, seed: int, limit: int | None) -> list[Sample]:
        variant = self.check_variant(variant)
        root = data.locate(dataset_source())
        queries = read_queries(root / QUERIES_FILE)
        if variant != "all":
            queries = [q for q in queries if q.dataset == variant]
        self._cache = DatabaseCache(root)
        self.gold_report = GoldReport()
        samples: list[Sample] = []
        for query in queries:
            if limit is not None and len(samples) >= limit:
                break
            result = execute_gold(query, self._cache)
            self.gold_report.results.append(result)
            if result.table is None:
                log.warning("rfqa: %s excluded (%s): %s", query.qid, result.status.value, result.reason)
                continue
            samples.append(self.make_sample(query, result, variant))
        excluded = len(self.gold_report.results) - len(samples)
        if excluded:
            log.warning(
                "rfqa: %d of %d queries read have no gold table and are excluded",
                excluded,
                len(self.gold_report.results),
            )
        return samples

    def make_sample(self, query: Query, result: GoldResult, variant: str) -> Sample:
        """The sample for one query with its executed gold table."""
        assert result.table is not None and self._cache is not None
        table = result.table
        db = self._cache.get(query.dataset, query.db_id)
        numeric = table.numeric_columns
        output_type = "numerical" if all(numeric) else "categorical" if not any(numeric) else "mixed"
        title = (referenced_tables(query.sql) or [query.db_id])[0]
        return Sample(
            id=query.qid,
            benchmark=self.name,
            variant=variant,
            task=query.dataset,
            question=query.question,
            gold=TableGold(columns=table.columns, rows=table.rows),
            meta={
                "db": f"{query.dataset}/{query.db_id}",
                "attrs": len(table.columns),
                "cells": cells_bin(len(table.columns) * len(table.rows)),
                "output_type": output_type,
                "gold_status": result.status.value,
            },
            extra={
                "sql": query.sql,
                "columns": table.columns,
                "column_types": table.types,
                "json_schema": prompts.json_schema(title, table.columns, table.types),
                "cot": [b.to_json() for b in plan(query.sql, db.tables)],
                "complexity": shape(query.sql, db.tables).classes(),
                "ordered": has_order_by(query.sql),
                "annotated_tuples": query.tuples,
            },
        )

    # -- prompting ----------------------------------------------------------------------------

    def strategies(self) -> Mapping[str, Strategy]:
        return self._strategies

    def oracle(self, sample: Sample, request: Request) -> str:
        """The gold table for NL/SQL, the base table's true rows for CoT, ``{}`` when asked for more."""
        assert request.messages is not None
        first = next(m.content for m in request.messages if m.role == "user")
        last = request.messages[-1].content
        if last in (prompts.ITERATIVE,):
            return "{}"
        if first.startswith(prompts.COT_FIRST.split("{")[0]):
            return json.dumps(self.base_rows(sample, first), ensure_ascii=False)
        gold = sample.gold
        assert isinstance(gold, TableGold)
        return json.dumps([dict(zip(gold.columns, row, strict=True)) for row in gold.rows], ensure_ascii=False)

    def base_rows(self, sample: Sample, prompt: str) -> list[dict[str, Any]]:
        """The true rows of the CoT base query that ``prompt`` asks for (run on the source database)."""
        bases = [BaseQuery.from_json(d) for d in sample.extra["cot"]]
        matching = [b for b in bases if f"query: {b.text}. " in prompt]
        if not matching or self._cache is None:
            raise RuntimeError(f"rfqa oracle: no base query of {sample.id} in the prompt (or data not loaded)")
        base = max(matching, key=lambda b: len(b.text))
        dataset, db_id = sample.meta["db"].split("/", 1)
        db = self._cache.get(dataset, db_id)
        cols = ", ".join(quote(c) for c in base.columns)
        where = f" WHERE {base.conditions}" if base.conditions else ""
        _, _, rows = db.execute(f"SELECT {cols} FROM {quote(base.table)}{where}")
        return [dict(zip(base.columns, (json_value(v) for v in row), strict=True)) for row in rows]

    # -- scoring ------------------------------------------------------------------------------

    def score(self, sample: Sample, attempt: Attempt, strategy: str) -> Scored:
        gold = sample.gold
        assert isinstance(gold, TableGold)
        records, how = parse_table(attempt.output, gold.columns)
        values = table_metrics(
            gold.rows,
            align_records(records or [], gold.columns),
            rule=self.rule,
            ordered=bool(sample.extra.get("ordered")),
        )
        values["invalid"] = 0.0 if records is not None else 1.0
        return Scored(
            id=sample.id,
            task=sample.task,
            parsed=records,
            gold={"columns": gold.columns, "rows": gold.rows},
            score=(values["cell_f1"] + values["tuple_similarity"]) / 2,
            values=values,
            meta={**sample.meta, "complexity": list(sample.extra.get("complexity", [])), "recovery": how},
        )

    def aggregate(self, scored: Sequence[Scored]) -> dict[str, float]:
        n = len(scored)
        out: dict[str, float] = {}
        for name in (m for m in METRICS if m != "tuple_order"):
            out[name] = sum(s.values.get(name, 0.0) for s in scored) / n if n else 0.0
        ordered = [s.values["tuple_order"] for s in scored if "tuple_order" in s.values]
        if ordered:
            out["tuple_order"] = sum(ordered) / len(ordered)
        out["invalid_rate"] = sum(s.values.get("invalid", 0.0) for s in scored) / n if n else 0.0
        out["avg_f1_ts"] = (out["cell_f1"] + out["tuple_similarity"]) / 2
        return out

    def extra_results(self, scored: Sequence[Scored]) -> dict[str, Any]:
        """Table 4's breakdown by query type and the gold report (what was excluded and why)."""
        groups: dict[str, list[Scored]] = defaultdict(list)
        for s in scored:
            for cls in s.meta.get("complexity", []):
                groups[cls].append(s)
        by_type = {cls: {"n": len(groups[cls]), **self.aggregate(groups[cls])} for cls in CLASSES if groups.get(cls)}
        return {"by_query_complexity": by_type, "gold": self.gold_report.to_json()}

    def export_fields(self, sample: Sample) -> dict[str, Any]:
        gold = sample.gold
        assert isinstance(gold, TableGold)
        return {
            "sql": sample.extra["sql"],
            "question": sample.question,
            "schema": list(gold.columns),
            "gold": {"columns": gold.columns, "rows": gold.rows},
        }
