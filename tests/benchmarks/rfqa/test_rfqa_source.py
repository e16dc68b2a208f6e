"""The packaged manifest: every release file with its public URL and checksum."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from structbench.benchmarks.rfqa.source import COMMIT, MISSING_IN_RELEASE, build_manifest, dataset_source, manifest


def test_manifest_lists_the_release() -> None:
    source = dataset_source()
    assert source.name == "relationalfactqa"
    assert len(source.files) == 158
    assert sorted(f.path for f in source.files if f.optional) == sorted(MISSING_IN_RELEASE)
    for f in source.files:
        assert f.url == f"https://raw.githubusercontent.com/dario-tnn/relational-fact-qa/{COMMIT}/{f.path}"
        assert f.optional or (f.sha256 is not None and len(f.sha256) == 64)


@pytest.mark.shared
def test_manifest_matches_the_shared_copy(shared_datasets: Path) -> None:
    root = shared_datasets / "relationalfactqa"
    assert build_manifest(root) == manifest()
    for f in dataset_source().files:
        if not f.optional:
            assert hashlib.sha256((root / f.path).read_bytes()).hexdigest() == f.sha256


@pytest.mark.shared
def test_packaged_column_types_are_the_galois_ones(shared_datasets: Path) -> None:
    packaged = Path(__file__).parents[3] / "src/structbench/benchmarks/rfqa/column_types.json"
    shared = shared_datasets / "relationalfactqa" / "galois_column_types.json"
    assert json.loads(packaged.read_text()) == json.loads(shared.read_text())
