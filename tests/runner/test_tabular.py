"""``export --format parquet|hf``: typed columns that ``datasets.load_dataset`` reads back as the JSON lines say."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from extras import require_extra

require_extra("datasets", "datasets")

import datasets  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from structbench.benchmarks import BENCHMARKS  # noqa: E402
from structbench.cli.app import app  # noqa: E402
from structbench.core.errors import UsageError  # noqa: E402
from structbench.runner.tabular import to_table  # noqa: E402


def _export(*args: str) -> None:
    result = CliRunner().invoke(app, ["export", *args])
    assert result.exit_code == 0, result.output


def _as_exported(value: Any) -> Any:
    """A JSON line's value as the table stores it (empty mappings are null)."""
    if isinstance(value, dict):
        return {k: _as_exported(v) for k, v in value.items()} or None
    if isinstance(value, list):
        return [_as_exported(v) for v in value]
    return value


def _decoded(row: dict[str, Any], json_columns: list[str]) -> dict[str, Any]:
    return {k: json.loads(v) if k in json_columns and v is not None else v for k, v in row.items()}


def _drop_none(value: Any) -> Any:
    """Arrow structs carry every field of every row (absent ones as None); JSON lines only their own."""
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_none(v) for v in value]
    return value


@pytest.mark.shared
@pytest.mark.parametrize("bench", BENCHMARKS.names())
def test_hf_folder_and_parquet_load_back_as_the_json_lines(bench: str, every_dataset: Path, tmp_path: Path) -> None:
    common = [bench, "--limit", "6", "--data-dir", str(every_dataset)]
    _export(*common, "--out", str(tmp_path / "e.jsonl"))
    _export(*common, "--format", "hf", "--out", str(tmp_path / "hf"))
    _export(*common, "--format", "parquet", "--out", str(tmp_path / "e.parquet"))
    lines = [json.loads(x) for x in (tmp_path / "e.jsonl").read_text().splitlines()]
    _, json_columns = to_table(lines)
    card = (tmp_path / "hf" / "README.md").read_text()
    assert all(f"`{c}` | `string` (JSON text)" in card for c in json_columns)

    loaded = datasets.load_dataset(str(tmp_path / "hf"), cache_dir=str(tmp_path / "hf-cache"))
    assert list(loaded) == ["test"]
    test = loaded["test"]
    assert test.num_rows == len(lines) == 6
    features = test.features
    assert features["id"] == datasets.Value("string")
    assert "prompt" not in json_columns and isinstance(features["prompt"], datasets.List)
    assert features["prompt"].feature == {"role": datasets.Value("string"), "content": datasets.Value("string")}
    assert "meta" not in json_columns and isinstance(features["meta"], dict)
    for got, want in zip(test, lines, strict=True):
        assert _drop_none(_decoded(got, json_columns)) == _drop_none(_as_exported(want))

    parquet = datasets.load_dataset("parquet", data_files=str(tmp_path / "e.parquet"), split="train",
                                    cache_dir=str(tmp_path / "hf-cache"))
    assert parquet.features == features and parquet["fingerprint"] == [x["fingerprint"] for x in lines]


def test_rows_that_disagree_on_a_type_are_kept_as_json() -> None:
    table, as_json = to_table([{"id": "a", "cells": [1, "x"], "opts": {}}, {"id": "b", "cells": [2], "opts": {}}])
    assert as_json == ["cells"] and table.column("cells").to_pylist() == ['[1, "x"]', "[2]"]
    assert table.column("opts").to_pylist() == [None, None]


def test_parquet_written_a_batch_at_a_time_types_each_column_as_the_whole_table_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Columns whose rows differ between batches (a null, then ints, then a float; a struct gaining a field; a
    list that turns mixed in the last batch) get the type all rows give them at once, and each batch is a row
    group."""
    import pyarrow.parquet as pq

    from structbench.runner import tabular

    monkeypatch.setattr(tabular, "BATCH", 3)
    lines = [{"id": str(i), "n": None if i < 3 else (i if i < 7 else i + 0.5), "opts": {},
              "gold": {"a": i} if i < 4 else {"a": i, "b": "x"}, "cells": [i, "x"] if i == 9 else [i],
              **({"late": True} if i == 8 else {})}
             for i in range(10)]
    written = tabular.write_parquet(iter(lines), tmp_path / "e.parquet")
    table, as_json = to_table(lines)
    assert written.as_json == as_json == ["cells"] and written.rows == 10
    got = pq.read_table(tmp_path / "e.parquet")
    assert got.schema == table.schema and got.to_pylist() == table.to_pylist()
    assert pq.ParquetFile(tmp_path / "e.parquet").metadata.num_row_groups == 4


def test_score_reads_the_parquet_and_the_folder_that_export_writes(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    import toybench  # noqa: F401  (registers ``toy``)

    def answered(table: pa.Table, wrong: int) -> pa.Table:
        """The export with an ``output`` column: the gold label, except in the first ``wrong`` rows."""
        gold = [g["label"] for g in table.column("gold").to_pylist()]
        outputs = [("no" if g == "yes" else "yes") if i < wrong else g for i, g in enumerate(gold)]
        return table.append_column("output", pa.array(outputs))

    _export("toy", "--limit", "8", "--format", "parquet", "--out", str(tmp_path / "e.parquet"))
    pq.write_table(answered(pq.read_table(tmp_path / "e.parquet"), wrong=2), tmp_path / "p.parquet")
    result = CliRunner().invoke(app, ["score", "toy", "--limit", "8", "-p", str(tmp_path / "p.parquet"),
                                      "--out", str(tmp_path / "m.json")])
    assert result.exit_code == 0, result.output
    entry = json.loads((tmp_path / "m.json").read_text())["results"][0]
    assert entry["n"] == 8 and entry["headline"]["value"] == 0.75 and entry["missing"] == []

    _export("toy", "--limit", "8", "--format", "hf", "--out", str(tmp_path / "folder"))
    data = next((tmp_path / "folder" / "data").glob("*.parquet"))
    pq.write_table(answered(pq.read_table(data), wrong=0), data)
    result = CliRunner().invoke(app, ["score", "toy", "--limit", "8", "-p", str(tmp_path / "folder"),
                                      "--out", str(tmp_path / "f.json")])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "f.json").read_text())["results"][0]["headline"]["value"] == 1.0
    # predictions for other settings are refused by their fingerprints, naming the row
    args = ["score", "toy", "--limit", "8", "--seed", "3", "-p", str(tmp_path / "p.parquet")]
    refused = CliRunner().invoke(app, args)
    assert isinstance(refused.exception, UsageError) and "p.parquet, row 1: " in str(refused.exception)
    assert "score with `toy:small --strategy direct --seed 0 --limit 8`" in str(refused.exception)
