"""Session fixtures: the release's queries, databases and gold tables are loaded once; a small
database of the tests' own for the generator."""

from __future__ import annotations

from pathlib import Path

import pytest

from structbench.benchmarks.rfqa import RFQABenchmark
from structbench.benchmarks.rfqa.database import DatabaseCache
from structbench.benchmarks.rfqa.gold import GoldReport
from structbench.benchmarks.rfqa.queries import Query, read_queries
from structbench.benchmarks.rfqa.source import QUERIES_FILE
from structbench.data.datasets import DataContext
from structbench.data.sample import Sample


@pytest.fixture(scope="session")
def rfqa_root(shared_datasets: Path) -> Path:
    """The release folder (holding ``dataset/``)."""
    return shared_datasets / "relationalfactqa"


@pytest.fixture(scope="session")
def rfqa_queries(rfqa_root: Path) -> list[Query]:
    return read_queries(rfqa_root / QUERIES_FILE)


@pytest.fixture(scope="session")
def rfqa_loaded(shared_data: DataContext) -> tuple[RFQABenchmark, list[Sample]]:
    """The benchmark after loading the full ``all`` variant (every gold table executed once)."""
    bench = RFQABenchmark()
    samples = bench.load("all", shared_data, seed=0, limit=None)
    return bench, samples


@pytest.fixture(scope="session")
def rfqa_bench(rfqa_loaded: tuple[RFQABenchmark, list[Sample]]) -> RFQABenchmark:
    return rfqa_loaded[0]


@pytest.fixture(scope="session")
def rfqa_samples(rfqa_loaded: tuple[RFQABenchmark, list[Sample]]) -> list[Sample]:
    return rfqa_loaded[1]


@pytest.fixture(scope="session")
def rfqa_report(rfqa_bench: RFQABenchmark) -> GoldReport:
    return rfqa_bench.gold_report


@pytest.fixture(scope="session")
def rfqa_cache(rfqa_bench: RFQABenchmark) -> DatabaseCache:
    assert rfqa_bench._cache is not None
    return rfqa_bench._cache


@pytest.fixture
def small_tables(tmp_path: Path) -> Path:
    """A two-table database written by the test: countries and their cities (joinable on country_id)."""
    folder = tmp_path / "small_db"
    folder.mkdir()
    (folder / "country.csv").write_text(
        "country_id,name,continent,population\n"
        "1,Italy,Europe,59\n2,France,Europe,68\n3,Japan,Asia,125\n4,Peru,America,34\n5,Chile,America,\n"
    )
    (folder / "city.csv").write_text(
        "city,country_id,population\nRome,1,2.8\nMilan,1,1.4\nParis,2,2.1\nTokyo,3,14.0\nKyoto,3,1.5\n"
        "Lima,4,9.7\nL'Aquila,1,0.07\n"
    )
    return folder
