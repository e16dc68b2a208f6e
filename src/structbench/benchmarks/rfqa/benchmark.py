"""RelationalFactQA (Satriani et al., 2025): closed-book retrieval of whole tables from a model.

Read top to bottom: ``source.py`` (where the data comes from), ``queries.py`` + ``database.py`` +
``engine.py`` + ``gold.py`` (gold tables by executing each query), ``prompts.py`` + ``strategies.py``
+ ``cot.py`` (the NL, SQL and CoT methods), ``parsing.py`` (JSON recovery), ``normalize.py`` +
``matching.py`` + ``metrics.py`` (cell F1, tuple similarity and QATCH's metrics), ``complexity.py``
(breakdown by query type), ``generator.py`` (QATCH-style items from your own tables) and
``generated.py`` (the ``generated`` variant that runs them). ``galois.py`` reads replies as the paper's runs did
(``reading=galois``, what the presets use).
"""

from __future__ import annotations

import json
import logging
from collections import Counter, defaultdict
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from structbench.backends.base import Request
from structbench.benchmarks.rfqa import galois, galois_metrics, prompts, published_runs
from structbench.benchmarks.rfqa.complexity import CLASSES, has_order_by, shape
from structbench.benchmarks.rfqa.cot import BaseQuery, plan
from structbench.benchmarks.rfqa.database import Database, DatabaseCache, quote
from structbench.benchmarks.rfqa.engine import referenced_tables
from structbench.benchmarks.rfqa.generator import MAX_PER_CATEGORY
from structbench.benchmarks.rfqa.gold import GoldReport, GoldResult, GoldTable, execute_gold, json_value
from structbench.benchmarks.rfqa.matching import RULES, MatchRule
from structbench.benchmarks.rfqa.metrics import METRICS, align_records, table_metrics
from structbench.benchmarks.rfqa.parsing import parse_table
from structbench.benchmarks.rfqa.provenance import PROVENANCE
from structbench.benchmarks.rfqa.queries import Query, read_queries
from structbench.benchmarks.rfqa.source import QUERIES_FILE, dataset_source
from structbench.benchmarks.rfqa.strategies import Reading, RetrievalSettings, build_strategies, replay, run_query
from structbench.contract.benchmark import (
    Attempt,
    Benchmark,
    Exclusion,
    Loading,
    PaperParts,
    Scored,
    SequenceAt,
    Strategy,
)
from structbench.core.errors import UsageError
from structbench.core.memo import Memo
from structbench.data.datasets import DataContext
from structbench.data.sample import Sample, TableGold

if TYPE_CHECKING:
    from structbench.benchmarks.rfqa.generated import GeneratedItem

log = logging.getLogger(__name__)

SOURCES = ("bird", "galois", "qatch", "spider1")
UNSCORED = "galois_unscored"
"""Per-sample value marking a CoT query galois' published runs left unscored (``scorer=galois``)."""
UNSCORED_MEANING = ("CoT queries galois' published runs did not score, left out of the averages as the paper's CoT "
                    "means leave them out (--option scorer=galois)")
GENERATED = "generated"
"""The variant running QATCH-style pairs from the user's own tables (``--option path=...``)."""
CELL_BINS = ((1, "1"), (10, "2-10"), (50, "11-50"), (100, "51-100"), (500, "101-500"))


_LOADED: Memo[tuple[Hashable, ...], tuple[GoldResult, Sample | None]] = Memo(16384)
"""Each query's gold outcome and sample as this process computed them, by the query, the variant and its database
files' identity (``DatabaseCache.identity``): a second load of unchanged files (a test's, a sweep's cells, a suite's
entries) executes no query and parses no SQL again, and returns the same samples; a changed file is read again."""


def cells_bin(cells: int) -> str:
    """The output-size bucket of Figure 2 (right) a gold table with ``cells`` cells falls in."""
    for top, label in CELL_BINS:
        if cells <= top:
            return label
    return ">500"


class RFQAOptions(BaseModel):
    """Run options (``--option key=value``)."""

    model_config = ConfigDict(extra="forbid")

    reading: Reading = "structbench"
    """``galois``: run the conversation and read the replies as galois did when the paper's numbers were made
    (exact attribute names, by position for tuple similarity; CoT's numeric rewrite; tuples repeated within a
    reply dropped; ``iterations`` calls in all; see ``galois.py``), what the presets use. ``structbench``: the
    lenient reading (attribute names matched ignoring case and punctuation, JSON repaired, ``iterations``
    follow-ups after the first answer)."""
    scorer: Literal["structbench", "galois"] = "structbench"
    """``galois``: cell F1 (with its precision and recall) and tuple similarity computed as galois computed the
    published scores (``galois_metrics.py``: cells as text, ``%.2f``, an expected 0 never matched, tuple
    similarity keyed on the most distinct attribute matched exactly; the gold galois had for bird_51; CoT left
    unscored on the 76 queries galois' runs did not score), what the presets use; needs ``reading=galois``.
    ``structbench``: structbench's metrics (see the docs)."""
    string_rule: Literal["intended", "published"] = "intended"
    """``intended``: edit distance <= 10% of the expected length (the paper, and galois at the time of the paper).
    ``published``: the cell rule galois changed to on 2025-07-25, after the paper, floor(L(1-t)) <= distance <=
    ceil(L(1+t)); tuple similarity keeps structbench's matching (see the docs)."""
    numeric_tolerance: float = Field(0.1, ge=0)
    """Two numbers match when the returned one is within this share of the expected one."""
    string_tolerance: float = Field(0.1, ge=0)
    """Two texts match when their edit distance is within this share of the expected text's length."""
    iterations: int = Field(10, ge=0)
    """Follow-up "List more values" rounds after the first answer; under ``reading=galois``, the calls in all
    (galois' ``maxIterations``), so the presets set 10."""
    max_tokens: int = Field(4096, ge=1)
    """Generation limit per reply (a whole table can be long)."""
    structured_output: bool = False
    """Send the output's JSON Schema as the request's ``response_format``."""
    prompt_wording: prompts.Wording = "released"
    """Start prompts as the released code words them, as the published runs sent them (``published``: the
    wording before galois' rewrite of 2025-05-10, with the whole first table's schema; what the presets use) or as
    the paper's Figures 5-7 print them (see ``prompts``)."""
    path: str | None = None
    """``generated`` only: a JSONL file of generated pairs, or a CSV file or folder of CSV files to
    generate pairs from (with the run's seed)."""
    per_category: int = Field(3, ge=1, le=MAX_PER_CATEGORY)
    """``generated`` from CSV: pairs per query category and table (at most ``generator.MAX_PER_CATEGORY``)."""
    data: str | None = None
    """``generated`` from JSONL: the source tables (CSV file or folder) for every line, instead of the
    ``data`` path each line records."""


class RFQABenchmark(Benchmark[RFQAOptions]):
    """RelationalFactQA: 696 NL/SQL queries whose answers are tables, scored by cell F1 and tuple similarity."""

    name: ClassVar[str] = "rfqa"
    title: ClassVar[str] = "RelationalFactQA"
    provenance = PROVENANCE
    summary: ClassVar[str] = "closed-book generation of whole tables from NL or SQL questions"
    variants: ClassVar[tuple[str, ...]] = ("all", *SOURCES, GENERATED)
    default_strategy: ClassVar[str] = "nl"
    headline: ClassVar[str] = "avg_f1_ts"
    headline_label: ClassVar[str] = "avg(cell F1, tuple similarity)"
    metric_names: ClassVar[tuple[str, ...]] = (
        "avg_f1_ts",
        *(m for m in METRICS if m != "tuple_order"),
        "invalid_rate",
    )
    breakdown_keys: ClassVar[tuple[str, ...]] = ("task", "attrs", "cells", "output_type")
    cluster_unit: ClassVar[str | None] = "database"
    paper = PaperParts(scoring=("reading", "scorer"), tables=SequenceAt("structbench.benchmarks.rfqa.paper:TABLES"))
    loading = Loading(variant_parts={"all": SOURCES})

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        opts = self.options
        if opts.scorer == "galois" and opts.reading != "galois":
            raise UsageError("rfqa: --option scorer=galois scores the tuples galois read: add reading=galois")
        if opts.scorer == "galois" and opts.string_rule != "intended":
            raise UsageError("rfqa: --option string_rule applies to structbench's scorer; scorer=galois matches "
                             "cells with galois' own rule of the time")
        self.rule: MatchRule = RULES[opts.string_rule](opts.numeric_tolerance, opts.string_tolerance)
        self._strategies = build_strategies(self.settings)
        self._cache: DatabaseCache | None = None
        self._generated: dict[str, Database] = {}
        """The ``generated`` variant's source databases by ``meta["db"]``."""
        self.gold_report = GoldReport()
        """Every query's gold outcome from the last ``load`` (excluded samples included)."""
        self.excluded: Counter[str] = Counter()
        """The last ``load``'s queries left out for want of a gold table, by status (a generated set's pairs carry
        their gold and are all kept)."""

    def settings(self) -> RetrievalSettings:
        """The retrieval settings the strategies use, from the options."""
        o = self.options
        return RetrievalSettings(o.iterations, o.max_tokens, o.structured_output, o.prompt_wording, o.reading)

    # -- data ---------------------------------------------------------------------------------

    def load(self, variant: str, data: DataContext, *, seed: int, limit: int | None) -> list[Sample]:
        variant = self.check_variant(variant)
        if variant == GENERATED:
            if self.options.prompt_wording == "published":
                raise UsageError(f"rfqa:{GENERATED}: --option prompt_wording=published sends the published runs' "
                                 "prompts, which need galois' declarations of the release's tables")
            return self.load_generated(seed=seed, limit=limit)
        misplaced = sorted(self.options.model_fields_set & {"path", "data", "per_category"})
        if misplaced:
            raise UsageError(f"rfqa:{variant}: --option {', '.join(misplaced)} apply only to rfqa:{GENERATED}")
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
            result, sample = self.loaded(query, variant)
            self.gold_report.results.append(result)
            if sample is None:
                log.debug("rfqa: %s excluded (%s): %s", query.qid, result.status.value, result.reason)
                continue
            samples.append(sample)
        self.excluded = excluded = Counter(r.status.value for r in self.gold_report.results if r.table is None)
        if excluded:
            log.warning(
                "rfqa: %d of %d queries read have no gold table and are excluded (%s; each one is listed "
                "under extra.gold in metrics.json)",
                excluded.total(),
                len(self.gold_report.results),
                ", ".join(f"{n} {status}" for status, n in sorted(excluded.items())),
            )
        return samples

    def loaded(self, query: Query, variant: str) -> tuple[GoldResult, Sample | None]:
        """The query's gold outcome and its sample (None without a gold table), computed once per process for
        unchanged database files (``_LOADED``)."""
        cache = self._cache
        assert cache is not None
        key = (cache.identity(query.dataset, query.db_id), query.qid, query.dataset, query.db_id, query.sql,
               query.question, tuple(sorted(query.metadata.items())), variant)

        def compute() -> tuple[GoldResult, Sample | None]:
            result = execute_gold(query, cache)
            return result, None if result.table is None else self.make_sample(query, result, variant)

        return _LOADED.get_or_make(key, compute)

    def load_generated(self, *, seed: int, limit: int | None) -> list[Sample]:
        """The ``generated`` variant: pairs from ``--option path`` (JSONL, or CSV generated with ``seed``)."""
        # imported here: ``python -m structbench.benchmarks.rfqa.generator`` must not find it imported
        from structbench.benchmarks.rfqa.generated import load_items

        o = self.options
        if o.path is None:
            raise UsageError(
                f"rfqa:{GENERATED} needs --option path=FILE.jsonl (pairs written by "
                "python -m structbench.benchmarks.rfqa.generator) or path=CSV_FILE_OR_FOLDER"
            )
        items = load_items(Path(o.path), per_category=o.per_category, seed=seed, data=o.data)
        if limit is not None:
            items = items[:limit]
        self._generated = {i.db_key: i.database for i in items if i.database is not None}
        self.gold_report = GoldReport([i.check for i in items])
        self.excluded = Counter()
        return [self.make_generated_sample(item) for item in items]

    def make_sample(self, query: Query, result: GoldResult, variant: str) -> Sample:
        """The sample for one query with its executed gold table."""
        assert result.table is not None and self._cache is not None
        db = self._cache.get(query.dataset, query.db_id)
        scanned = (referenced_tables(query.sql) or [query.db_id])[0].lower()
        declared = published_runs.table_schema(f"{query.dataset}/{query.db_id}", scanned)
        published = None if declared is None else prompts.published_schema_text(
            scanned, [(a.name, a.type) for a in declared])
        return self.build_sample(
            sample_id=query.qid,
            variant=variant,
            task=query.dataset,
            question=query.question,
            sql=query.sql,
            table=result.table,
            title=(referenced_tables(query.sql) or [query.db_id])[0],
            schema=db.tables,
            meta={"db": f"{query.dataset}/{query.db_id}", "gold_status": result.status.value},
            extra={"annotated_tuples": query.tuples, "scanned_table": scanned, "published_schema": published,
                   "gold_as_text": published_runs.text_columns(query.sql, f"{query.dataset}/{query.db_id}",
                                                               result.table.columns)},
        )

    def make_generated_sample(self, item: GeneratedItem) -> Sample:
        """The sample for one generated pair (task = its query category)."""
        pair = item.pair
        return self.build_sample(
            sample_id=pair.id,
            variant=GENERATED,
            task=pair.category,
            question=pair.question,
            sql=pair.sql,
            table=GoldTable(columns=pair.columns, types=pair.types, rows=pair.rows),
            title=(pair.tables or ("table",))[0],
            schema=item.database.tables if item.database is not None else None,
            meta={"db": item.db_key, "category": pair.category, "gold_status": item.check.status.value},
            extra={"tables": list(pair.tables)},
        )

    def build_sample(
        self,
        *,
        sample_id: str,
        variant: str,
        task: str,
        question: str,
        sql: str,
        table: GoldTable,
        title: str,
        schema: Mapping[str, Mapping[str, str]] | None,
        meta: Mapping[str, Any],
        extra: Mapping[str, Any],
    ) -> Sample:
        """A sample with the breakdown keys and the strategies' payload; ``schema`` is the source
        database's (None when it is not at hand: no CoT plan, complexity from the SQL alone)."""
        numeric = table.numeric_columns
        output_type = "numerical" if all(numeric) else "categorical" if not any(numeric) else "mixed"
        return Sample(
            id=sample_id,
            benchmark=self.name,
            variant=variant,
            task=task,
            question=question,
            gold=TableGold(columns=table.columns, rows=table.rows),
            meta={
                **meta,
                "attrs": len(table.columns),
                "cells": cells_bin(len(table.columns) * len(table.rows)),
                "output_type": output_type,
            },
            extra={
                "sql": sql,
                "columns": table.columns,
                "column_types": table.types,
                "json_schema": prompts.json_schema(title, table.columns, table.types),
                "cot": [b.to_json() for b in plan(sql, schema)] if schema is not None else None,
                "complexity": shape(sql, schema).classes(),
                "ordered": has_order_by(sql),
                **extra,
            },
        )

    def database(self, sample: Sample) -> Database | None:
        """The loaded source database of ``sample`` (None when it is not at hand)."""
        key = sample.meta["db"]
        if key in self._generated:
            return self._generated[key]
        if self._cache is None or sample.variant == GENERATED:
            return None
        dataset, db_id = key.split("/", 1)
        return self._cache.get(dataset, db_id)

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
        if first.startswith(prompts.COT_OPENING):
            return json.dumps(self.base_rows(sample, first), ensure_ascii=False)
        gold = sample.gold
        assert isinstance(gold, TableGold)
        return json.dumps([dict(zip(gold.columns, row, strict=True)) for row in gold.rows], ensure_ascii=False)

    def base_rows(self, sample: Sample, prompt: str) -> list[dict[str, Any]]:
        """The true rows of the CoT base query that ``prompt`` asks for (run on the source database)."""
        bases = [BaseQuery.from_json(d) for d in sample.extra["cot"] or ()]
        matching = [b for b in bases if f"query: {b.text}." in prompt]
        db = self.database(sample)
        if not matching or db is None:
            raise RuntimeError(f"rfqa oracle: no base query of {sample.id} in the prompt (or data not loaded)")
        base = max(matching, key=lambda b: len(b.text))
        cols = ", ".join(quote(c) for c in base.columns)
        where = f" WHERE {base.conditions}" if base.conditions else ""
        _, _, rows = db.execute(f"SELECT {cols} FROM {quote(base.table)}{where}")
        return [dict(zip(base.columns, (json_value(v) for v in row), strict=True)) for row in rows]

    # -- scoring ------------------------------------------------------------------------------

    def score(self, sample: Sample, attempt: Attempt, strategy: Strategy) -> Scored:
        gold = sample.gold
        assert isinstance(gold, TableGold)
        if self.options.reading == "galois":
            records, how, rows = self.read_galois(attempt.as_written, gold.columns, once=not strategy.answer.derived)
        else:
            records, how = parse_table(attempt.output, gold.columns)
            rows = align_records(records or [], gold.columns)
        values = table_metrics(gold.rows, rows, rule=self.rule, ordered=bool(sample.extra.get("ordered")))
        if self.options.scorer == "galois":
            values.update(self.galois_values(sample, records or [], derived=strategy.answer.derived))
        values["invalid"] = 0.0 if records is not None else 1.0
        scored = Scored(
            id=sample.id,
            task=sample.task,
            parsed=records,
            gold={"columns": gold.columns, "rows": gold.rows},
            score=(values["cell_f1"] + values["tuple_similarity"]) / 2,
            values=values,
            meta={**sample.meta, "complexity": list(sample.extra.get("complexity", [])), "recovery": how},
        )
        return self.with_corrected(scored, lambda b: b.score(sample, self.replayed(sample, attempt), strategy))

    def galois_values(self, sample: Sample, records: Sequence[Mapping[str, Any]], *, derived: bool) -> dict[str, float]:
        """F1 and tuple similarity as galois scored the published runs (``scorer=galois``): against the gold galois
        had, over the tuples its scan returned (NL, SQL) or the query's result (CoT), and ``unscored`` for a CoT
        query galois' runs did not score."""
        gold = sample.gold
        assert isinstance(gold, TableGold)
        release = sample.variant != GENERATED
        rows = published_runs.PUBLISHED_GOLD.get(sample.id, gold.rows) if release else gold.rows
        as_text = sample.extra.get("gold_as_text") or [False] * len(gold.columns)
        expected = [galois_metrics.expected_tuple(gold.columns, row, as_text) for row in rows]
        if derived:
            result = [{k: galois_metrics.scanned_value(v) for k, v in r.items()} for r in records]
        else:
            declared = published_runs.table_schema(sample.meta["db"], sample.extra.get("scanned_table", ""))
            result = galois_metrics.scanned_tuples(
                records, None if declared is None else [(a.name, a.type, a.nullable) for a in declared])
        o = self.options
        values = galois_metrics.galois_scores(expected, result, galois_metrics.GaloisRule(o.numeric_tolerance,
                                                                                             o.string_tolerance))
        if derived and release and sample.id in published_runs.COT_UNSCORED:
            values[UNSCORED] = 1.0
        return values

    def averaged(self, scored: Scored) -> bool:
        """Every sample counts in the averages but, under ``scorer=galois``, the CoT queries galois left unscored."""
        return not scored.values.get(UNSCORED)

    @staticmethod
    def read_galois(
        output: str, columns: list[str], *, once: bool = True
    ) -> tuple[list[dict[str, Any]] | None, str, list[list[Any]]]:
        """``output`` read as galois did: its objects (``once``: each once, as galois reads a reply; CoT's output is
        the query's result, whose repeats count), and the cells its metrics compare (by exact attribute name, in
        the reply's order); records None when galois cannot read it."""
        try:
            objects = [o for o in galois.parse_rows(output) if o is not None]
        except galois.Unreadable:
            return None, "invalid", []
        seen: set[str] = set()
        records = []
        for o in objects:
            identity = galois.tuple_identity(o)
            if not once or identity not in seen:
                seen.add(identity)
                records.append(o)
        return records, "json", [galois.scored_row(r, columns) for r in records]

    def replayed(self, sample: Sample, attempt: Attempt) -> Attempt:
        """The attempt as structbench's reading takes the same replies (galois reading: re-read from the recorded
        rounds; a predictions file has none, so its output is read as it is)."""
        rounds = attempt.artifacts.get("rounds")
        if attempt.artifacts.get("reading") != "galois" or not rounds:
            return attempt
        if isinstance(rounds, dict):  # CoT: the base tables' conversations, then the query in memory
            bases = {b["table"]: list(b["columns"]) for b in sample.extra.get("cot") or ()}
            tables = {table: replay(entries, bases.get(table, [])) for table, entries in rounds.items()}
            result, _ = run_query(sample, tables)
            return Attempt(output=json.dumps(result, ensure_ascii=False, default=str))
        rows = replay(rounds, list(sample.extra["columns"]))
        return Attempt(output=json.dumps(rows, ensure_ascii=False, default=str))

    def cluster(self, sample: Sample) -> str | None:
        """The database the query is asked of (its gold tables come from it): several queries share one."""
        db = sample.meta.get("db")
        return None if db is None else str(db)

    def aggregate(self, scored: Sequence[Scored]) -> dict[str, float]:
        scored = [s for s in scored if self.averaged(s)]
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

    def exclusions(self, scored: Sequence[Scored]) -> list[Exclusion]:
        """The queries of the last ``load`` that have no gold table, by what went wrong."""
        out = [Exclusion(reason=f"queries without a gold table ({status}; see extra.gold.problems)", count=n)
               for status, n in sorted(self.excluded.items())]
        unscored = sum(not self.averaged(s) for s in scored)
        if unscored:
            out.append(Exclusion(reason=UNSCORED_MEANING, count=unscored))
        return out

    def export_fields(self, sample: Sample) -> dict[str, Any]:
        gold = sample.gold
        assert isinstance(gold, TableGold)
        return {
            "sql": sample.extra["sql"],
            "question": sample.question,
            "schema": list(gold.columns),
            "gold": {"columns": gold.columns, "rows": gold.rows},
        }
