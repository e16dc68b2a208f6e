"""Published-table files: validation errors name the file and the field; every table is registered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from structbench.benchmarks.presets import paper_tables, preset_table
from structbench.core.errors import DataError, UsageError
from structbench.papers import load_published

GOOD = {
    "benchmark": "toy",
    "title": "Toy",
    "paper": "A. Author: Toy: a paper",
    "table": "Table 1",
    "caption": "c",
    "scale": "percent",
    "decimals": 1,
    "metrics": {"Acc.": "accuracy"},
    "columns": [{"key": "a", "label": "A", "metric": "Acc."}, {"key": "b", "label": "B", "metric": "Acc."}],
    "rows": [{"model": "m1", "values": [1.0, None]}, {"model": "m2", "values": [2.0, 3.0]}],
}


def write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / f"t{len(list(tmp_path.iterdir()))}.json"
    path.write_text(json.dumps(data))
    return path


def test_numbers_merge_the_settings(tmp_path: Path) -> None:
    data = dict(GOOD, setting={"data": "d"})
    data["columns"] = [dict(GOOD["columns"][0], setting={"prompt": "p"}), GOOD["columns"][1]]
    data["rows"] = [dict(GOOD["rows"][0], setting={"prompt": "row wins", "method": "x"}), GOOD["rows"][1]]
    table = load_published(write(tmp_path, data))
    numbers = table.numbers()
    assert [(n.model, n.column, n.value) for n in numbers] == [("m1", "a", 1.0), ("m2", "a", 2.0), ("m2", "b", 3.0)]
    assert numbers[0].setting == {"data": "d", "prompt": "p", "method": "x"}  # the column's setting is most specific
    assert numbers[0].source == "Toy Table 1 (A)"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"rows": [{"model": "m1", "values": [1.0]}]}, "rows[0] (m1): 1 values for 2 columns"),
        ({"columns": [{"key": "a", "label": "A", "metric": "F1"}]}, "metric 'F1' is not described"),
        ({"columns": [GOOD["columns"][0], GOOD["columns"][0]]}, "duplicate column keys"),
        ({"scale": "permille"}, "scale"),
        ({"rows": [{"model": "m1", "values": [1.0, "x"]}]}, "rows.0.values.1"),
        ({"rows": [{"model": "m1", "values": [1.0, 2.0]}, {"model": "m1", "values": [1.0, 2.0]}]}, "duplicate rows"),
    ],
)
def test_malformed_files_name_the_field(tmp_path: Path, change: dict[str, object], message: str) -> None:
    path = write(tmp_path, {**GOOD, **change})
    with pytest.raises(DataError, match=str(path)) as err:
        load_published(path)
    assert message in str(err.value)


def test_not_json(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"benchmark":\n')
    with pytest.raises(DataError, match=rf"{path}:2: not JSON"):
        load_published(path)


def test_every_benchmark_table_is_consistent() -> None:
    tables = paper_tables()
    names = [t.name for t in tables]
    assert len(names) == len(set(names)) >= 10
    assert {t.benchmark for t in tables} >= {"structfact", "scitab", "skabench", "structext", "rfqa"}  # + test toys
    for table in tables:
        assert table.problems() == [], table.name
        assert table.published.benchmark == table.benchmark


def test_unknown_preset_suggests() -> None:
    assert preset_table("scitab-table4").benchmark == "scitab"
    with pytest.raises(UsageError, match="Did you mean: scitab-table4"):
        preset_table("scitab-tabel4")
