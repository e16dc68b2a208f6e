"""QATCH-style generation from user tables, gold by execution."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from structbench.benchmarks.rfqa.generator import CATEGORIES, generate_pairs, main
from structbench.errors import DataError


@pytest.fixture
def tables(tmp_path: Path) -> Path:
    (tmp_path / "country.csv").write_text(
        "country_id,name,continent,population\n1,Italy,Europe,59\n2,France,Europe,68\n3,Japan,Asia,125\n4,Peru,America,34\n"
    )
    (tmp_path / "city.csv").write_text(
        "city,country_id,population\nRome,1,2.8\nMilan,1,1.4\nParis,2,2.1\nTokyo,3,14.0\nKyoto,3,1.5\nLima,4,9.7\n"
    )
    return tmp_path


def test_every_category_with_gold_by_execution(tables: Path) -> None:
    pairs = generate_pairs(tables, per_category=2, seed=1)
    assert {p.category for p in pairs} == set(CATEGORIES)
    assert len({p.sql for p in pairs}) == len(pairs)
    rows = list(csv.DictReader((tables / "country.csv").open()))
    for p in pairs:
        assert p.rows and all(len(r) == len(p.columns) for r in p.rows)
        if p.category == "select_numerical" and p.tables == ("country",):
            column, op, value = p.sql.split(" WHERE ")[1].split(" ", 2)
            if column == "population":
                keep = [r for r in rows if eval(f"{int(r['population'])} {'==' if op == '=' else op} {value}")]
                assert len(p.rows) == len(keep), p.sql
    join = next(p for p in pairs if p.category == "join")
    assert "country_id" in join.sql and len(join.tables) == 2
    assert generate_pairs(tables, per_category=2, seed=1) == pairs  # deterministic


def test_single_csv_and_cli(tables: Path, tmp_path: Path) -> None:
    out = tmp_path / "pairs.jsonl"
    said: list[str] = []
    assert main([str(tables / "country.csv"), "--out", str(out), "--per-category", "1"], write=said.append) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines and said == [f"wrote {len(lines)} pairs to {out}"]
    assert set(lines[0]) == {"id", "category", "question", "sql", "tables", "schema", "gold"}
    assert all(line["tables"] == ["country"] for line in lines)


def test_bad_input(tmp_path: Path) -> None:
    with pytest.raises(DataError):
        generate_pairs(tmp_path)
    with pytest.raises(DataError):
        generate_pairs(tmp_path, categories=["pivot"])
