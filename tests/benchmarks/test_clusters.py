"""Each benchmark declares the cluster of its samples (the table, database, instance or document they share), and
its vectorized statistics equal ``aggregate`` on weighted resamples."""

from __future__ import annotations

import random
from collections import Counter
from itertools import islice

import numpy as np
import pytest

from structbench.benchmarks import BENCHMARKS
from structbench.contract.benchmark import Scored
from structbench.data.datasets import DataContext
from structbench.stats.bootstrap import counts_of


def _clusters(name: str, variant: str, data: DataContext, options: dict[str, str] | None = None,
              limit: int | None = None) -> tuple[str, Counter[str | None], int]:
    bench = BENCHMARKS.get(name)(options or {})
    samples = list(islice(bench.load(variant, data, seed=0, limit=limit), limit))  # a load may stream
    return bench.unit(variant), Counter(bench.cluster(s) for s in samples), len(samples)


def test_scitab_claims_share_208_tables(shared_data: DataContext) -> None:
    unit, clusters, n = _clusters("scitab", "all", shared_data)
    assert (unit, len(clusters), n) == ("table", 208, 1199) and None not in clusters


def test_structfact_clusters_by_table_or_evidence(shared_data: DataContext) -> None:
    unit, clusters, n = _clusters("structfact", "demo", shared_data)
    assert unit == "evidence" and all(str(c).startswith("evidence:") for c in clusters) and sum(clusters.values()) == n
    unit, clusters, n = _clusters("structfact", "demo", shared_data, {"option_map": "0,1,2"})
    assert n == 75 and len(clusters) <= 25 and min(clusters.values()) >= 3  # one question under three maps: one
    unit, clusters, n = _clusters("structfact", "generated", shared_data, {"per_task": "20"})
    assert unit == "table" and all(str(c).startswith("table:rfqa/") for c in clusters)
    assert 10 < len(clusters) < n  # generated questions share their source tables
    unit, clusters, n = _clusters("structfact", "generated", shared_data, {"tables": "synthetic", "per_task": "20"})
    assert unit == "evidence" and all(str(c).startswith("evidence:") for c in clusters)
    assert len(clusters) == n == 100  # each question shows its own rows of the world's three tables


def test_rfqa_queries_share_databases(shared_data: DataContext) -> None:
    unit, clusters, n = _clusters("rfqa", "all", shared_data, limit=120)
    assert unit == "database" and None not in clusters and len(clusters) < n / 3


def test_skabench_contexts_share_their_instance(shared_data: DataContext) -> None:
    unit, clusters, n = _clusters("skabench", "rfqa", shared_data, {"questions": "3", "testbed": "all"})
    assert unit == "instance" and len(clusters) == 3 and n > 3 * len(clusters)  # 3 questions, each in 4 types


def test_structext_questions_cluster_by_document(shared_data: DataContext) -> None:
    unit, clusters, n = _clusters("structext", "test", shared_data, limit=60)
    assert unit == "document" and None not in clusters and sum(clusters.values()) == n


def _check_statistic(name: str, pool: list[Scored], metrics: list[str], options: dict[str, str] | None = None) -> None:
    bench = BENCHMARKS.get(name)(options or {})
    idx = np.random.default_rng(2).integers(0, len(pool), size=(40, len(pool)))
    weights = counts_of(idx, len(pool))
    for metric in metrics:
        stat = bench.statistic(pool, metric)
        assert stat is not None, metric
        slow = [bench.aggregate([pool[i] for i in row]).get(metric, np.nan) for row in idx]
        assert stat.weighted(weights) == pytest.approx(slow, abs=1e-12, nan_ok=True), metric


def test_skabench_statistics_equal_aggregate() -> None:
    rng = random.Random(3)
    pool = []
    for i in range(60):
        rejection = i % 9 == 0  # few rejection samples: some resamples draw none (NaN, as aggregate)
        value = float(rng.random() < 0.5) if rejection else rng.random()
        pool.append(Scored(id=f"s{i}", task="t", parsed=None, gold=None, score=value,
                           meta={"testbed": "negative_rejection" if rejection else "noise_robustness"}))
    _check_statistic("skabench", pool, ["f1", "rejection_rate"])


@pytest.mark.parametrize("empty", ["zero", "drop"])
def test_structext_statistics_equal_aggregate(empty: str) -> None:
    rng = random.Random(4)
    pool = []
    for i in range(50):
        blank = rng.random() < 0.2
        raw = 0.0 if blank else rng.random()
        values = {"rougeL": float(raw >= 0.75), "rougeL_raw": raw, "exact_match": float(raw > 0.95), "bleu": raw / 2,
                  "empty": float(blank)}
        pool.append(Scored(id=f"s{i}", task="t", parsed="", gold="", score=values["rougeL"], values=values))
    _check_statistic("structext", pool, ["rougeL", "rougeL_raw", "exact_match", "bleu", "empty_rate"],
                     {"empty": empty})
