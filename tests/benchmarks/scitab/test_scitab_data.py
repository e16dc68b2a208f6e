"""The loader: counts per label, validation errors, cell markers, the held-out pool."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest

from structbench.benchmarks.scitab import SciTab
from structbench.benchmarks.scitab.markup import clean
from structbench.benchmarks.scitab.pool import POOL_TABLES, find_demonstrations, select_pool
from structbench.benchmarks.scitab.source import COMMIT, DATA_FILE, SOURCE, ClaimRecord, read_claims
from structbench.data.evidence import Table
from structbench.data.sample import Sample
from structbench.datasets import DataContext
from structbench.errors import DataError


def test_release_counts_per_label(records: list[ClaimRecord]) -> None:
    assert len(records) == 1224
    assert Counter(r.label for r in records) == {"supports": 457, "refutes": 411, "not enough info": 356}
    assert len({r.table_id for r in records}) == 213
    assert len({r.paper_id for r in records}) == 80


def test_source_points_at_the_pinned_commit(shared_datasets: Path) -> None:
    (remote,) = SOURCE.files
    assert remote.url == (f"https://raw.githubusercontent.com/XinyuanLu00/SciTab/{COMMIT}/dataset/sci_tab.json")
    data = (shared_datasets / "scitab" / DATA_FILE).read_bytes()
    assert hashlib.sha256(data).hexdigest() == remote.sha256
    assert SOURCE.license == "MIT"


def test_pool_rule_and_test_set_counts(
    records: list[ClaimRecord], loaded: tuple[SciTab, dict[str, list[Sample]]]
) -> None:
    assert select_pool(records) == POOL_TABLES
    pool = [r for r in records if r.table_id in POOL_TABLES]
    assert len(set(POOL_TABLES)) == 5 and len(pool) == 25
    assert Counter(r.label for r in pool) == {"supports": 8, "refutes": 7, "not enough info": 10}
    _, samples = loaded
    assert Counter(s.gold.label for s in samples["all"]) == {  # type: ignore[union-attr]
        "supports": 449,
        "refutes": 404,
        "not enough info": 346,
    }
    assert Counter(s.gold.label for s in samples["2class"]) == {"supports": 449, "refutes": 404}  # type: ignore[union-attr]
    pool_ids = {r.id for r in pool}
    assert not pool_ids & {s.id for s in samples["all"]}
    assert [s.id for s in samples["all"]] == [r.id for r in records if r.id not in pool_ids]


def test_demonstrations_come_from_the_pool(records: list[ClaimRecord]) -> None:
    for setting, labels in (
        ("2-class", ["supports", "supports", "refutes"]),
        ("3-class", ["supports", "not enough info", "refutes"]),
    ):
        demos = find_demonstrations(records, setting)
        assert [d.label for d in demos] == labels
        assert all(d.table_id in POOL_TABLES for d in demos)
    # the claims the paper's H.2-H.4 prompts quote
    claims = [d.claim for d in find_demonstrations(records, "2-class")]
    assert claims[0].startswith("[CONTINUE] The effectiveness of our hierarchical attention design is proved")
    assert claims[2].endswith("CMOW-C yields 5 points higher scores on WordContent and BigramShift.")


def test_keep_pool_evaluates_every_claim(shared_data: DataContext) -> None:
    samples = SciTab({"keep_pool": "true"}).load("all", shared_data, seed=0, limit=None)
    assert Counter(s.gold.label for s in samples) == {  # type: ignore[union-attr]
        "supports": 457,
        "refutes": 411,
        "not enough info": 356,
    }


def test_caption_goes_with_the_table(loaded: tuple[SciTab, dict[str, list[Sample]]]) -> None:
    _, samples = loaded
    first = samples["all"][0]
    (table,) = first.evidence
    assert isinstance(table, Table)
    assert table.caption == "Table 1: Performance of supervised learning models with different features."
    assert table.header[:3] == ["Feature", "LR P", "LR R"]
    assert table.rows[1][3] == "0.93"  # "[BOLD] 0.93" in the release
    assert first.meta == {"table_id": "042a154a-add4-4bcb-be23-541a760b2e1c", "paper_id": "1904.10743v1"}


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


def test_markers_are_treated_consistently(
    shared_data: DataContext, records: list[ClaimRecord], loaded: tuple[SciTab, dict[str, list[Sample]]]
) -> None:
    def texts(samples: list[Sample]) -> list[str]:
        out = []
        for s in samples:
            t = s.evidence[0]
            assert isinstance(t, Table)
            out += [t.caption or "", *t.header, *(c for row in t.rows for c in row)]
        return out

    stripped = texts(loaded[1]["all"])
    assert not any(m in c for c in stripped for m in ("[BOLD]", "[ITALIC]", "[EMPTY]"))
    kept = texts(SciTab({"markup": "keep"}).load("all", shared_data, seed=0, limit=None))
    assert sum("[BOLD]" in c for c in kept) > 5000
    # claims are never changed: the paper's prompts keep "[CONTINUE]"
    claims = {r.id: r.claim for r in records}
    assert all(s.question == claims[s.id] for s in loaded[1]["all"])
    assert sum("[CONTINUE]" in s.question for s in loaded[1]["all"]) == 184


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
