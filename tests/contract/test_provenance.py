"""Every benchmark says where its data comes from, its license and its paper's citation, and the licenses agree
with what each release's SOURCE.md in ``../shared/datasets`` records."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from structbench.benchmarks import BENCHMARKS
from structbench.contract.provenance import combined_license

BUILT_IN = ("rfqa", "scitab", "skabench", "structext", "structfact")
DATASET_DIRS = {"rfqa": "relationalfactqa", "scitab": "scitab", "skabench": "ska-bench",
                "structext": "structext-eval", "structfact": "structfact"}


@pytest.mark.parametrize("name", BUILT_IN)
def test_each_benchmark_declares_its_provenance(name: str) -> None:
    cls = BENCHMARKS.get(name)
    source = cls.provenance
    assert source is not None
    assert source.bibtex.lstrip().startswith("@") and source.bibtex.rstrip().endswith("}")
    assert cls.title.split("-")[0] in source.paper and cls.title.split("-")[0] in source.bibtex
    assert source.license and source.license_note and source.source
    assert set(source.variants) <= set(cls.variants)


@pytest.mark.shared
@pytest.mark.parametrize("name", BUILT_IN)
def test_the_license_is_the_one_source_md_records(name: str, shared_datasets: Path) -> None:
    text = (shared_datasets / DATASET_DIRS[name] / "SOURCE.md").read_text()
    (line,) = [x for x in text.splitlines() if re.match(r"- License:", x)]
    expected = "mit" if re.match(r"- License: MIT\b", line) else "unknown"
    assert BENCHMARKS.get(name).provenance.license == expected, line  # type: ignore[union-attr]


def test_the_card_names_one_license_only_when_all_agree() -> None:
    assert combined_license(["mit", "mit"]) == "mit"
    assert combined_license(["mit", "unknown"]) == "other"
    assert combined_license(["unknown"]) == "unknown"
