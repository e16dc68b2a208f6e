"""StructFact data: the demo's counts and provenance, typed evidence, the full variant and bad input."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest

from structbench.benchmarks.structfact import StructFact
from structbench.benchmarks.structfact.source import COMMIT, DEMO, DEMO_PATH
from structbench.core.errors import DataError, DatasetUnavailableError, UsageError
from structbench.data.datasets import DataContext
from structbench.data.evidence import ItemList, StructuredText, Table, Text
from structbench.data.sample import LabelGold, Sample

pytestmark = pytest.mark.shared


def _labels(samples: list[Sample]) -> Counter[str]:
    return Counter(s.gold.label for s in samples if isinstance(s.gold, LabelGold))


def test_demo_counts(demo: list[Sample]) -> None:
    assert len(demo) == 25
    assert _labels(demo) == {"YES": 21, "NO": 4}
    assert Counter(s.task for s in demo) == {
        "Arithmetic Calculation": 5,
        "Composition Understanding": 5,
        "Spatiotemporal Cognition": 5,
        "Combining Structural and Unstructural": 5,
        "Multi-hop Reasoning": 5,
    }
    assert [s.id for s in demo] == [str(i) for i in range(25)]
    assert all(s.benchmark == "structfact" and s.variant == "demo" for s in demo)


def test_demo_source_is_the_published_file(shared_datasets: Path) -> None:
    (remote,) = DEMO.files
    assert remote.url == f"https://raw.githubusercontent.com/EganGu/StructFact/{COMMIT}/{DEMO_PATH}"
    local = shared_datasets / "structfact" / DEMO_PATH
    assert hashlib.sha256(local.read_bytes()).hexdigest() == remote.sha256


def test_demo_evidence_is_fully_typed(demo: list[Sample]) -> None:
    kinds = Counter(piece.kind for s in demo for piece in s.evidence)
    assert kinds == {"table": 40, "list": 10, "text": 5}
    assert not any(isinstance(p, StructuredText) for s in demo for p in s.evidence)
    for s in demo:
        for piece in s.evidence:
            if isinstance(piece, Table):
                assert all(len(row) == len(piece.header) for row in piece.rows)
    first = demo[0].evidence[0]
    assert isinstance(first, Table)
    assert first.header == ["Rank", "Nation", "Gold", "Silver", "Bronze", "Total"]
    assert first.rows[8] == ["9", "Colombia", "0", "1", "3", "4"]
    infobox = demo[8].evidence[0]
    assert isinstance(infobox, Table) and infobox.caption == "Sports on Tap"
    assert infobox.rows[0] == ["Created by", "Sande Stewart"]
    eudaronia = demo[9].evidence[1]
    assert isinstance(eudaronia, ItemList) and eudaronia.items[0] == "Eudaronia aperta (Sykes, 1925)"
    combining = [s for s in demo if s.task.startswith("Combining")]
    assert sum(isinstance(p, Text) for s in combining for p in s.evidence) == 5  # all the demo's text
    assert demo[0].meta == {"structure": "table"}
    assert demo[9].meta == {"structure": "list+table"}
    assert demo[0].extra["evidence_raw"][0].startswith("| Rank  | Nation")


def test_limit(shared_data: DataContext) -> None:
    assert len(StructFact().load("demo", shared_data, seed=0, limit=3)) == 3


def _full_record(i: int, label: str = "NOT SURE ENOUGH") -> dict[str, object]:
    return {
        "CHALLENGE": "Arithmetic Calculation",
        "LABEL": label,
        "QUESTION": f"Is row {i} there?",
        "EVIDENCE": ["Some context.", "| a | b |\n| - | - |\n| 1 | 2 |"],
        "NEW_EVIDENCE": ["| a | b |\n| - | - |\n| 1 | 2 |"],
        "SOURCE": "tabfact",
        "TABLE": None,
        "CLAIM": "row exists",
        "ANSWER": "yes",
        "SHUFFLED_ROWS": 1,
        "DENSITY": 0.5,
        "len_evidence": 2,
    }


def test_full_variant_from_json_list_object_and_jsonl(tmp_path: Path) -> None:
    as_list = tmp_path / "full.json"
    as_list.write_text(json.dumps([_full_record(0), _full_record(1, "Yes")]))
    bench = StructFact({"full_path": str(as_list)})
    samples = bench.load("full", DataContext(offline=True), seed=0, limit=None)
    assert [s.gold.label for s in samples if isinstance(s.gold, LabelGold)] == ["NOT SURE ENOUGH", "YES"]
    assert samples[0].meta == {"structure": "table+text", "source": "tabfact"}
    assert samples[0].extra["new_evidence_raw"] == ["| a | b |\n| - | - |\n| 1 | 2 |"]
    assert samples[0].extra["release"] == {
        "CLAIM": "row exists",
        "ANSWER": "yes",
        "SHUFFLED_ROWS": 1,
        "DENSITY": 0.5,
        "len_evidence": 2,
    }

    as_object = tmp_path / "full_object.json"
    as_object.write_text(json.dumps({"q17": _full_record(17)}))
    assert [
        s.id for s in StructFact({"full_path": str(as_object)}).load("full", DataContext(), seed=0, limit=None)
    ] == ["q17"]

    jsonl = tmp_path / "full.jsonl"
    jsonl.write_text("\n".join(json.dumps(_full_record(i)) for i in range(3)) + "\n\n")
    loaded = StructFact({"full_path": str(jsonl)}).load("full", DataContext(), seed=0, limit=2)
    assert [s.id for s in loaded] == ["0", "1"]


def test_full_variant_found_in_data_dir(tmp_path: Path) -> None:
    target = tmp_path / "structfact" / "data" / "dataset_full.jsonl"
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps(_full_record(0)) + "\n")
    samples = StructFact().load("full", DataContext(data_dir=tmp_path), seed=0, limit=None)
    assert len(samples) == 1


def test_full_variant_missing_says_where_to_put_it(tmp_path: Path) -> None:
    with pytest.raises(DatasetUnavailableError, match="full_path"):
        StructFact().load("full", DataContext(data_dir=tmp_path), seed=0, limit=None)
    with pytest.raises(DatasetUnavailableError, match="not a file"):
        StructFact({"full_path": str(tmp_path / "nope.json")}).load("full", DataContext(), seed=0, limit=None)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('[{"CHALLENGE": "x", "QUESTION": "q", "EVIDENCE": []}]', r"record 0: missing field LABEL"),
        ('[{"CHALLENGE": "x", "LABEL": "maybe", "QUESTION": "q", "EVIDENCE": []}]', r"record 0: field LABEL"),
        ('[{"CHALLENGE": "x", "LABEL": "YES", "QUESTION": "", "EVIDENCE": []}]', r"field QUESTION"),
        ('[{"CHALLENGE": "x", "LABEL": "YES", "QUESTION": "q", "EVIDENCE": ["a", 1]}]',
         r"field EVIDENCE must be a list of strings; item 1 is int"),
        ('[{"CHALLENGE": "x", "LABEL": "YES", "QUESTION": "q", "EVIDENCE": {}}]', r"field EVIDENCE .* got dict"),
        ('{"a": 3}', r"record 'a': a record must be a JSON object"),
        ("[1, ", r"bad\.json:1: not JSON"),
        ('"text"', r"expected a JSON list or object"),
        ("[]", r"no records"),
    ],
)
def test_bad_records_name_file_and_record(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(DataError, match=message):
        StructFact({"full_path": str(path)}).load("full", DataContext(), seed=0, limit=None)


def test_bad_jsonl_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(_full_record(0)) + "\n{oops\n")
    with pytest.raises(DataError, match=r"bad\.jsonl:2: not JSON"):
        StructFact({"full_path": str(path)}).load("full", DataContext(), seed=0, limit=None)


def test_bad_options_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="option_map"):
        StructFact({"option_map": "6"})
    with pytest.raises(UsageError, match="unknown serialization 'yaml'"):
        StructFact({"serialization": "yaml"})
    with pytest.raises(UsageError, match="token_counter: unknown token counter 'bpe'"):
        StructFact({"token_counter": "bpe"})
    with pytest.raises(UsageError, match="typo"):
        StructFact({"typo": "1"})
    with pytest.raises(UsageError, match="no variant"):
        StructFact().check_variant("small")
