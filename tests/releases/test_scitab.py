"""The SciTab release: its pinned file, the claim reader, the cell markers, and who reads them from here."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from structbench.benchmarks.scitab import markup as bench_markup
from structbench.benchmarks.scitab import source as bench_source
from structbench.benchmarks.skabench.sources import load_scitab_database
from structbench.benchmarks.structfact.generated.tables import load_tables
from structbench.core.errors import DataError
from structbench.data.datasets import DataContext
from structbench.releases import scitab
from structbench.releases.scitab import COMMIT, DATA_FILE, SOURCE, read_claims
from structbench.releases.scitab.markup import clean
from synthetic_releases import SYNTHETIC, synthetic_context

SYNTHETIC_FILE = SYNTHETIC / "scitab" / DATA_FILE


@pytest.mark.shared
def test_source_points_at_the_pinned_commit(shared_datasets: Path) -> None:
    (remote,) = SOURCE.files
    assert remote.url == f"https://raw.githubusercontent.com/XinyuanLu00/SciTab/{COMMIT}/dataset/sci_tab.json"
    data = (shared_datasets / "scitab" / DATA_FILE).read_bytes()
    assert hashlib.sha256(data).hexdigest() == remote.sha256
    assert SOURCE.license == "MIT"


def test_the_benchmark_names_the_release() -> None:
    """SciTab's public names are the data layer's objects, not copies."""
    for name in scitab.__all__:
        assert getattr(bench_source, name) is getattr(scitab, name), name
    assert bench_markup.clean is clean


@pytest.mark.parametrize(
    ("cell", "stripped"),
    [
        ("[BOLD] 0.93", "0.93"),
        ("[BOLD] Model", "Model"),
        ("70.41/ [BOLD] 79.15", "70.41/ 79.15"),
        ("[ITALIC]  [BOLD] 0.94", "0.94"),
        ("L +  [BOLD] CW600 + W2VW300", "L + CW600 + W2VW300"),
        ("Fleiss’ kappa  [ITALIC] k", "Fleiss’ kappa k"),
        ("[EMPTY]", ""),
        ("74.5 (± 0.7)", "74.5 (± 0.7)"),
    ],
)
def test_cell_markers(cell: str, stripped: str) -> None:
    assert clean(cell, "strip") == stripped
    assert clean(cell, "keep") == cell


def _write(tmp_path: Path, content: object) -> Path:
    path = tmp_path / "sci_tab.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


GOOD = {
    "paper": "P",
    "paper_id": "1",
    "table_caption": "Table 1: x",
    "table_column_names": ["a", "b"],
    "table_content_values": [["1", "2"]],
    "id": "c1",
    "claim": "a is 1",
    "label": "supports",
    "table_id": "t1",
}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('[{"id": "c1",\n "claim": }]', "sci_tab.json:2: not valid JSON"),
        ({"records": []}, "expected a JSON list"),
        ([{**GOOD, "label": "true"}], "record 0 (id c1): field label"),
        ([{k: v for k, v in GOOD.items() if k != "claim"}], "record 0 (id c1): field claim"),
        ([{**GOOD, "table_content_values": [["1"]]}], "field table_content_values.0: 1 cells for 2 columns"),
        ([GOOD, GOOD], "record 1 (id c1): duplicate id"),
    ],
)
def test_malformed_data_is_a_clear_error(tmp_path: Path, content: object, message: str) -> None:
    with pytest.raises(DataError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_claims(_write(tmp_path, content))


def test_structfact_generator_reads_the_tables_through_the_release() -> None:
    """``tables=scitab``: one table per table id, captioned, markers removed (the synthetic release)."""
    tables = load_tables("scitab", synthetic_context())
    records = read_claims(SYNTHETIC_FILE)
    assert [t.database for t in tables] == list(dict.fromkeys(r.table_id for r in records))
    tides = tables[-1]
    assert tides.name == "Table 1: Mean absolute error (cm) of tide forecasts on three synthetic harbours."
    assert tides.header == ("Model", "Harrowgate", "Cobble Quay", "Gullcliff", "Avg.")
    assert tides.rows[1] == ("Harmonic", "9.8", "8.1", "", "9.0")  # "[EMPTY]" is no value
    assert tides.rows[2][0] == "TideNet (ours)" and tides.rows[2][4] == "6.6"  # "[BOLD] " removed


def test_skabench_reads_the_tables_through_the_release() -> None:
    """``build --scitab``: a table per table id, headers and cells cleaned, ``[EMPTY]`` a NULL, numbers typed."""
    db = load_scitab_database(SYNTHETIC_FILE)
    assert list(db.relations) == [f"t{i}_synthetic-000{i + 1}" for i in range(6)]
    tides = db.relations["t5_synthetic-0006"]
    assert tides.columns == ["Model", "Harrowgate", "Cobble Quay", "Gullcliff", "Avg."]
    assert tides.types == ["VARCHAR", "DOUBLE", "DOUBLE", "DOUBLE", "DOUBLE"]
    assert tides.cells[1] == ["Harmonic", "9.8", "8.1", None, "9.0"]
    assert tides.value(2, 4) == 6.6
    assert list(load_scitab_database(SYNTHETIC_FILE, limit=2).relations) == ["t0_synthetic-0001", "t1_synthetic-0002"]


def test_a_malformed_file_stops_every_reader(tmp_path: Path) -> None:
    bad = _write(tmp_path, [{**GOOD, "table_content_values": [["1"]]}])
    with pytest.raises(DataError, match="1 cells for 2 columns"):
        load_scitab_database(bad)
    (tmp_path / "scitab" / "dataset").mkdir(parents=True)
    bad.rename(tmp_path / "scitab" / DATA_FILE)
    with pytest.raises(DataError, match="1 cells for 2 columns"):
        load_tables("scitab", DataContext(data_dir=tmp_path, offline=True, allow_modified=True))


def test_a_file_that_is_not_utf8_is_a_data_error_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "sci_tab.json"
    path.write_bytes(b'[\n{"id": "a",\n "claim": "na\xefve"}]')
    with pytest.raises(DataError, match=r"sci_tab.json:3: not UTF-8 text \(byte 0xef at offset 27"):
        read_claims(path)
