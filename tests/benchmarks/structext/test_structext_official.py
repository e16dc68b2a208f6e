"""The released files: declared with pinned URLs and checksums, loaded in full, scored by the oracle."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from structbench.benchmarks.structext import BENCHMARK
from structbench.benchmarks.structext.official import manifest, read_sample, source
from structbench.core.errors import DataError
from structbench.data.datasets import DataContext

pytestmark = pytest.mark.shared


def test_source_pins_every_file_to_its_commit() -> None:
    files = source().files
    assert len(files) == 1276 + 348 + 1
    by_top = Counter(f.path.split("/", 1)[0] for f in files)
    assert by_top == {"Benchmark": 1276, "New_Benchmark": 348, "Generation": 1}
    new = next(f for f in files if f.path.startswith("New_Benchmark/"))
    assert new.url == (
        "https://raw.githubusercontent.com/MikeGu721/StrucText-Eval/"
        f"3b13d4198cb2c8916d053266132c361052226029/{new.path}"
    )
    assert all(f.sha256 and len(f.sha256) == 64 for f in files)


def test_checksums_match_the_shared_copy(shared_datasets: Path) -> None:
    root = shared_datasets / "structext-eval"
    for path, digest in list(manifest()["files"].items())[::25]:
        assert hashlib.sha256((root / path).read_bytes()).hexdigest() == digest, path


def test_loads_every_released_file(shared_data: DataContext) -> None:
    samples = BENCHMARK({}).load("official", shared_data, seed=0, limit=None)
    assert len(samples) == 1624
    assert Counter(s.meta["release"] for s in samples) == {"Benchmark": 1276, "New_Benchmark": 348}
    assert len({s.meta["template"] for s in samples}) == 29
    assert Counter(s.meta["shots"] for s in samples)[10] == 116
    ten = next(s for s in samples if s.meta["shots"] == 10)
    assert len(ten.extra["examples"]) == 10 and ten.extra["rule_hint"]
    # Interleaved over templates: a short --limit covers every language, then every template.
    assert len({s.meta["language"] for s in samples[:8]}) == 8
    assert len({s.meta["template"] for s in samples[:29]}) == 29
    assert len({s.id for s in samples}) == 1624
    by_template = [s.id for s in samples if s.meta["template"] == "json.deepest"]
    files = [path.removesuffix(".json") for path in manifest()["files"]]
    assert by_template == sorted(by_template, key=files.index)  # manifest order kept


@pytest.mark.parametrize("strategy", ["naive", "few_shot", "simple_few_shot", "official", "official_hint"])
def test_oracle_scores_one_on_released_samples(shared_data: DataContext, strategy: str) -> None:
    from tests.benchmarks.structext.test_structext_benchmark import run

    bench = BENCHMARK({})
    samples = bench.load("official", shared_data, seed=0, limit=None)[::40]
    assert bench.aggregate(run(bench, samples, strategy))["rougeL"] == 1.0


def test_official_prompt_reproduces_the_release_layout(shared_data: DataContext) -> None:
    bench = BENCHMARK({})
    sample = next(s for s in bench.load("official", shared_data, seed=0, limit=None) if s.meta["shots"] == 2)
    text = bench.strategy("official_hint").build(sample).messages[-1].content  # type: ignore[attr-defined]
    assert text.startswith(f"There are References in {sample.meta['language']}. Based on the content under")
    assert f"### Hint:\n{sample.extra['rule_hint']}\n\n### Examples:\n\n### Question:\n" in text
    reference = sample.evidence[0].text  # type: ignore[union-attr]
    assert text.endswith(f"### Question:\n{sample.question}\n\n### Reference:\n{reference}\n\n### Answer:\n")


def test_malformed_files_name_the_file_and_field(tmp_path: Path, shared_datasets: Path) -> None:
    path = next(p for p in manifest()["files"] if p.endswith(".json"))
    record = json.loads((shared_datasets / "structext-eval" / path).read_text())
    del record["Answer"]
    (tmp_path / path).parent.mkdir(parents=True)
    (tmp_path / path).write_text(json.dumps(record))
    with pytest.raises(DataError, match="missing field 'Answer'"):
        read_sample(tmp_path, path)
    (tmp_path / path).write_text("{not json")
    with pytest.raises(DataError, match="cannot read JSON"):
        read_sample(tmp_path, path)


@pytest.mark.parametrize(("change", "message"), [
    ({"Answer": 42}, "field 'Answer' must be a string, not int"),
    ({"Question": 42}, "field 'Question' must be a string, not int"),
    ({"Reference": ["x"]}, "field 'Reference' must be a string, not list"),
    ({"RuleHint": 5}, "field 'RuleHint' must be a string, not int"),
    ({"Label": "xml"}, "field 'Label' must be an object, not str"),
    ({"examples": {"Question": "q"}}, "field 'examples' must be a list, not dict"),
    ({"examples": ["q"]}, r"examples\[0\]: must be an object, not str"),
    ({"Label.node_number": "two"}, "Label: field 'node_number' must be an integer, not str"),
    ({"Label.few_shot_num": True}, "Label: field 'few_shot_num' must be an integer, not bool"),
])
def test_a_wrong_typed_field_names_the_file_and_field(tmp_path: Path, shared_datasets: Path, change: dict[str, Any],
                                                      message: str) -> None:
    path = next(p for p in manifest()["files"] if p.endswith(".json"))
    record = json.loads((shared_datasets / "structext-eval" / path).read_text())
    for key, value in change.items():
        parent, _, field = key.rpartition(".")
        (record[parent] if parent else record)[field] = value
    (tmp_path / path).parent.mkdir(parents=True)
    (tmp_path / path).write_text(json.dumps(record))
    with pytest.raises(DataError, match=f"{re.escape(str(tmp_path / path))}.*{message}"):
        read_sample(tmp_path, path)
    (tmp_path / path).write_text("[]")
    with pytest.raises(DataError, match="must be an object, not list"):
        read_sample(tmp_path, path)
