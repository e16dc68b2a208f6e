"""Gold by execution over the real release: every query accounted for, counts as annotated."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from structbench.benchmarks.rfqa import RFQABenchmark
from structbench.benchmarks.rfqa.database import DatabaseCache
from structbench.benchmarks.rfqa.gold import GoldReport, GoldStatus
from structbench.benchmarks.rfqa.queries import Query
from structbench.benchmarks.rfqa.source import MISSING_IN_RELEASE
from structbench.data.datasets import DataContext
from structbench.data.sample import Sample, TableGold

pytestmark = pytest.mark.shared


def test_all_696_queries_are_read(rfqa_queries: list[Query]) -> None:
    assert len(rfqa_queries) == 696
    assert {q.dataset for q in rfqa_queries} == {"bird", "galois", "qatch", "spider1"}
    assert sum(q.dataset == "qatch" for q in rfqa_queries) == 496


def test_report_accounts_for_every_query(rfqa_report: GoldReport, rfqa_queries: list[Query]) -> None:
    assert [r.qid for r in rfqa_report.results] == [q.qid for q in rfqa_queries]
    # observed on the release snapshot: every executed query returns the annotated number of rows
    assert rfqa_report.counts() == {"ok": 681, "count_mismatch": 0, "missing_table": 15, "error": 0, "unchecked": 0}


def test_nulls_sort_as_in_postgres(rfqa_samples: list[Sample]) -> None:
    """bird_51 orders by a text column with a NULL (the Nile's length) DESC LIMIT 1: PostgreSQL puts
    NULLs first in descending order, DuckDB by default last (which gave "Ebro")."""
    sample = next(s for s in rfqa_samples if s.id == "bird_51")
    assert isinstance(sample.gold, TableGold) and sample.gold.rows == [["Nile"]]


def test_every_missing_database_names_a_missing_file(rfqa_report: GoldReport, rfqa_root: Path) -> None:
    missing = [r for r in rfqa_report.problems() if r.status is GoldStatus.MISSING_TABLE]
    assert len(missing) == 15
    for r in missing:
        assert r.table is None and r.reason
        named = [p for p in MISSING_IN_RELEASE if p.removeprefix("dataset/data/") in r.reason]
        assert named, r.reason
        assert all(not (rfqa_root / p).exists() for p in named)
    summary = rfqa_report.to_json()
    assert len(summary["problems"]) == 15 and all(p["reason"] for p in summary["problems"])


def test_gold_for_every_query_with_its_database(
    rfqa_report: GoldReport, rfqa_samples: list[Sample], rfqa_queries: list[Query], rfqa_cache: DatabaseCache
) -> None:
    by_id = {s.id: s for s in rfqa_samples}
    assert len(rfqa_samples) == 681
    for q in rfqa_queries:
        result = rfqa_report.by_id()[q.qid]
        if result.status is GoldStatus.MISSING_TABLE:
            assert q.qid not in by_id
            continue
        sample = by_id[q.qid]
        assert isinstance(sample.gold, TableGold)
        assert len(sample.gold.rows) == q.tuples
        assert all(len(row) == len(sample.gold.columns) for row in sample.gold.rows)
        assert len(sample.gold.columns) == q.metadata["attrs"] or q.dataset != "qatch"


def test_largest_gold_table_has_904_tuples(rfqa_samples: list[Sample]) -> None:
    sizes = sorted(len(s.gold.rows) for s in rfqa_samples if isinstance(s.gold, TableGold))
    assert sizes[-1] == 904 and sizes[0] == 1


def test_variants_filter_by_source(rfqa_samples: list[Sample]) -> None:
    assert {s.task for s in rfqa_samples} == {"bird", "galois", "qatch", "spider1"}
    assert sum(s.task == "qatch" for s in rfqa_samples) == 496


def test_loading_reports_inferred_columns(rfqa_cache: DatabaseCache) -> None:
    assert rfqa_cache.get("spider1", "imdb").issues == [
        "actor.birt_city: no declared type, inferred VARCHAR",
        "directed_by.id: no declared type, inferred BIGINT",
    ]
    assert rfqa_cache.get("qatch", "nobel_prize").issues == []  # 'null' markers are NULLs, not cast failures


def test_a_variant_logs_its_exclusions_in_one_line(shared_data: DataContext, caplog: pytest.LogCaptureFixture) -> None:
    """One summary warning (not one line per query); each exclusion is in the gold report, at debug level too."""
    bench = RFQABenchmark()
    with caplog.at_level(logging.DEBUG, logger="structbench.benchmarks.rfqa.benchmark"):
        samples = bench.load("galois", shared_data, seed=0, limit=None)
    assert len(samples) == 64 and {s.task for s in samples} == {"galois"}
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warnings == ["rfqa: 8 of 72 queries read have no gold table and are excluded (8 missing_table; "
                        "each one is listed under extra.gold in metrics.json)"]
    debug = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
    assert sum("excluded (missing_table)" in m and "galois/movies/movie.csv" in m for m in debug) == 8
    assert bench.gold_report.counts()["missing_table"] == 8
    assert bench.extra_results([])["gold"]["counts"]["missing_table"] == 8


@pytest.mark.shared
def test_a_second_load_executes_no_query_again(shared_data: DataContext, monkeypatch: pytest.MonkeyPatch) -> None:
    """A process keeps each query's gold and sample by its database files' identity: a second benchmark's load of
    unchanged files returns the same samples without running a query."""
    from structbench.benchmarks.rfqa import benchmark

    bench = RFQABenchmark()
    first = bench.load("galois", shared_data, seed=0, limit=5)

    def refuse(*args: object) -> None:
        raise AssertionError("a query executed again")

    monkeypatch.setattr(benchmark, "execute_gold", refuse)
    again = RFQABenchmark()
    assert all(a is b for a, b in zip(again.load("galois", shared_data, seed=0, limit=5), first, strict=True))
    assert again.gold_report.to_json() == bench.gold_report.to_json()


def test_database_identity_follows_its_files(tmp_path: Path) -> None:
    """What the gold is kept by changes when a table file does (its size or modification time)."""
    folder = tmp_path / "dataset" / "data" / "galois" / "small"
    folder.mkdir(parents=True)
    table = folder / "t.csv"
    table.write_text("a\n1\n")
    before = DatabaseCache(tmp_path).identity("galois", "small")
    assert DatabaseCache(tmp_path).identity("galois", "small") == before
    table.write_text("a\n12\n")
    assert DatabaseCache(tmp_path).identity("galois", "small") != before
