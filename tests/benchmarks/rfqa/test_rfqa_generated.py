"""The ``generated`` variant: generator pairs (JSONL, or CSV generated on the fly) run as a benchmark."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from structbench.backends.base import Choice, Request, Response
from structbench.benchmarks.rfqa import RFQABenchmark
from structbench.benchmarks.rfqa.generator import CATEGORIES, generate_pairs, write_pairs
from structbench.benchmarks.rfqa.prompts import json_type
from structbench.contract.benchmark import Attempt
from structbench.core.errors import DataError, UsageError
from structbench.data.datasets import DataContext
from structbench.data.sample import Sample, TableGold
from structbench.testing.cli import invoke

STRATEGIES = ("nl", "sql", "cot")


def load(path: Path, seed: int = 0, limit: int | None = None, **options: str) -> tuple[RFQABenchmark, list[Sample]]:
    bench = RFQABenchmark({"path": str(path), **options})
    return bench, bench.load("generated", DataContext(offline=True), seed=seed, limit=limit)


def run(bench: RFQABenchmark, strategy: str, sample: Sample, backend: Any = None) -> Attempt:
    async def generate(request: Request) -> Response:
        if backend is not None:
            return await backend.generate(request)
        return Response(choices=(Choice(text=bench.oracle(sample, request)),))

    return asyncio.run(bench.strategy(strategy).run(sample, generate))


def assert_oracle_perfect(bench: RFQABenchmark, samples: list[Sample]) -> None:
    for strategy in STRATEGIES:
        scored = [bench.score(s, run(bench, strategy, s), bench.strategy(strategy)) for s in samples]
        bad = [(s.id, s.values) for s in scored if s.values["cell_f1"] < 1 or s.values["tuple_similarity"] < 1]
        assert bad == [], strategy
        agg = bench.aggregate(scored)
        assert agg["avg_f1_ts"] == 1.0 and agg["invalid_rate"] == 0.0, strategy
        assert agg.get("tuple_order", 1.0) == 1.0, strategy


def test_csv_folder_generated_on_the_fly(small_tables: Path) -> None:
    bench, samples = load(small_tables, seed=3, per_category="2")
    assert {s.task for s in samples} == set(CATEGORIES)
    assert all(sum(s.task == c and s.id.startswith(t) for s in samples) <= 2 for c in CATEGORIES for t in ("ci", "co"))
    for s in samples:
        assert isinstance(s.gold, TableGold) and s.gold.rows
        assert s.variant == "generated" and s.meta["db"] == "generated/small_db"
        assert s.meta["category"] == s.task and s.meta["gold_status"] == "ok"
        assert {"attrs", "cells", "output_type"} <= set(s.meta)
        assert s.extra["cot"] and s.extra["json_schema"]["items"]["properties"]
        assert set(bench.export_fields(s)) == {"sql", "question", "schema", "gold"}
    by_id = {s.id: s for s in samples}
    join = next(s for s in samples if s.task == "join")
    assert "JOIN" in join.extra["complexity"] and len(join.extra["cot"]) == 2
    assert "GROUP BY" in next(s for s in samples if s.task == "group_by").extra["complexity"]
    assert "WHERE mixed condition" in next(s for s in samples if s.task == "select_mixed").extra["complexity"]
    assert next(s for s in samples if s.task == "order_by").extra["ordered"]
    assert bench.gold_report.counts()["ok"] == len(samples)
    assert_oracle_perfect(bench, samples)
    # the run's seed drives generation; the limit truncates
    assert [s.id for s in load(small_tables, seed=3, per_category="2")[1]] == list(by_id)
    assert [s.extra["sql"] for s in load(small_tables, seed=4, per_category="2")[1]] != [
        s.extra["sql"] for s in samples
    ]
    assert len(load(small_tables, seed=3, limit=5)[1]) == 5


def test_jsonl_round_trip_checks_gold_against_the_recorded_tables(small_tables: Path, tmp_path: Path) -> None:
    pairs_file = tmp_path / "pairs.jsonl"
    write_pairs(generate_pairs(small_tables, per_category=2, seed=3), pairs_file)
    bench, samples = load(pairs_file)
    fresh = load(small_tables, seed=3, per_category="2")[1]
    assert [s.model_dump() for s in samples] == [s.model_dump() for s in fresh]
    assert_oracle_perfect(bench, samples)

    # a gold table that no longer matches the data is reported, not silently trusted
    lines = [json.loads(line) for line in pairs_file.read_text().splitlines()]
    project = next(line for line in lines if line["category"] == "project")
    project["gold"]["rows"] = project["gold"]["rows"][:-1]
    pairs_file.write_text("".join(json.dumps(line) + "\n" for line in lines))
    bench, _ = load(pairs_file)
    mismatch = [r for r in bench.gold_report.problems()]
    assert [(r.qid, r.status.value) for r in mismatch] == [(project["id"], "count_mismatch")]


def test_jsonl_without_its_tables(small_tables: Path, tmp_path: Path) -> None:
    pairs_file = tmp_path / "pairs.jsonl"
    pairs = generate_pairs(small_tables, per_category=1, seed=0)
    lines = [{k: v for k, v in p.to_json().items() if k not in ("data", "types", "tables")} for p in pairs]
    pairs_file.write_text("".join(json.dumps(line) + "\n" for line in lines))
    bench, samples = load(pairs_file)
    assert bench.gold_report.counts()["unchecked"] == len(samples)
    assert all(s.extra["cot"] is None for s in samples)
    by_id = {p.id: p for p in pairs}
    for s in samples:  # types inferred from the gold values give the generator's JSON types
        expected = [json_type(t) for t in by_id[s.id].types]
        got = [p["type"] for p in s.extra["json_schema"]["items"]["properties"].values()]
        assert got == expected, s.id
    for strategy in ("nl", "sql"):
        scored = [bench.score(s, run(bench, strategy, s), bench.strategy(strategy)) for s in samples]
        assert bench.aggregate(scored)["avg_f1_ts"] == 1.0
    with pytest.raises(DataError, match="CoT method needs the item's source tables"):
        run(bench, "cot", samples[0])
    # --option data points at the tables: checked again, and CoT runs
    bench, samples = load(pairs_file, data=str(small_tables))
    assert bench.gold_report.counts()["ok"] == len(samples)
    assert_oracle_perfect(bench, samples)
    # a relative data path resolves against the JSONL file's folder
    lines = [{**line, "data": small_tables.name} for line in lines]
    pairs_file.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert load(pairs_file)[0].gold_report.counts()["ok"] == len(samples)


GOOD = {"id": "ok", "question": "Q?", "sql": "SELECT a FROM t", "gold": {"columns": ["a"], "rows": [[1]]}}


def _line(**changes: Any) -> str:
    return json.dumps({k: v for k, v in {**GOOD, **changes}.items() if v is not None})


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "Invalid JSON"),
        ('["a list"]', "object"),
        (_line(id="x", sql=None), "sql: Field required"),
        (_line(id="x", gold={"columns": ["a"], "rows": [[1, 2]]}), "row 0"),
        (_line(id=7), "id"),
        (_line(), "duplicate id"),
        (_line(id="y", types=[]), "types"),
        (_line(id="z", sql="SELECT ((("), "sql does not parse"),
    ],
)
def test_malformed_jsonl_names_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    pairs_file = tmp_path / "pairs.jsonl"
    pairs_file.write_text(f"{_line()}\n\n{line}\n")
    with pytest.raises(DataError, match=message) as err:
        load(pairs_file)
    assert str(err.value).startswith(f"{pairs_file}:3: ")


def test_bad_paths_and_options(tmp_path: Path, small_tables: Path) -> None:
    with pytest.raises(DataError, match=f"{tmp_path / 'nope.jsonl'}: not found"):
        load(tmp_path / "nope.jsonl")
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(DataError, match="notes.txt: expected a .jsonl file"):
        load(tmp_path / "notes.txt")
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(DataError, match="empty.jsonl: no pairs"):
        load(tmp_path / "empty.jsonl")
    (tmp_path / "empty_dir").mkdir()
    with pytest.raises(DataError, match="no CSV tables"):
        load(tmp_path / "empty_dir")
    with pytest.raises(DataError, match="--option data"):
        load(small_tables, data=str(small_tables))
    with pytest.raises(UsageError, match="needs --option path"):
        RFQABenchmark().load("generated", DataContext(offline=True), seed=0, limit=None)
    with pytest.raises(UsageError, match="apply only to rfqa:generated"):
        RFQABenchmark({"path": str(small_tables)}).load("qatch", DataContext(offline=True), seed=0, limit=None)
    with pytest.raises(UsageError, match="per_category"):
        RFQABenchmark({"per_category": "0"})


def test_a_real_database_every_strategy(shared_datasets: Path, tmp_path: Path) -> None:
    """spider1/movie_1 from the release, generated on the fly and through a JSONL file."""
    folder = shared_datasets / "relationalfactqa" / "dataset" / "data" / "spider1" / "movie_1"
    bench, samples = load(folder, seed=7)
    assert len(samples) >= 50 and {"join", "limit", "group_by", "aggregate"} <= {s.task for s in samples}
    assert_oracle_perfect(bench, samples)
    pairs_file = tmp_path / "movie_1.jsonl"
    write_pairs(generate_pairs(folder, seed=7), pairs_file)
    bench, from_file = load(pairs_file)
    assert [s.model_dump() for s in from_file] == [s.model_dump() for s in samples]
    assert bench.gold_report.counts()["ok"] == len(samples)


def test_cli_run_and_export(small_tables: Path, tmp_path: Path) -> None:
    """``structbench run`` with the oracle and ``structbench export``, as a user types them."""
    env = {**os.environ, "STRUCTBENCH_CACHE": str(tmp_path / "cache")}

    def sb(*args: str) -> str:
        proc = invoke(*args, env=env, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr + proc.stdout
        return proc.stdout

    out = sb(
        "run",
        "-m",
        "oracle",
        "-b",
        "rfqa:generated",
        "-s",
        "all",
        "-o",
        f"path={small_tables}",
        "-n",
        "20",
        "--out",
        "r",
    )
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    results = metrics["results"]
    assert {r["strategy"] for r in results} == set(STRATEGIES), out
    assert all((r["headline"]["name"], r["headline"]["value"]) == ("avg_f1_ts", 1.0) for r in results), out
    assert all(r["n"] == 20 and "excluded" not in r["extra"] for r in results), results  # every pair has its gold
    assert "left out" not in out
    sb("export", "rfqa:generated", "-o", f"path={small_tables}", "--out", "items.jsonl")
    lines = [json.loads(line) for line in (tmp_path / "items.jsonl").read_text().splitlines()]
    assert lines and all({"sql", "question", "schema", "gold", "prompt", "meta"} <= set(line) for line in lines)


def test_per_category_past_twenty_on_the_fly_with_a_warning_per_shortfall(
    shared_datasets: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``-o per_category=30`` got at most 20 per category, silently, as ``generate rfqa`` did."""
    country = shared_datasets / "relationalfactqa" / "dataset" / "data" / "galois" / "world_1" / "country.csv"
    with caplog.at_level("WARNING", logger="structbench.benchmarks.rfqa.generated"):
        samples = load(country, per_category="30")[1]
    counts = {c: sum(s.task == c for s in samples) for c in CATEGORIES}
    assert counts["select_numerical"] == counts["limit"] == 30, counts
    assert any("category join: 0 of 30 pairs" in r.getMessage() for r in caplog.records)
