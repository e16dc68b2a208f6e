"""The RelationalFactQA release: every file with its public URL and checksum, databases, declared types."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from structbench.releases.relationalfactqa import (
    COMMIT,
    MISSING_IN_RELEASE,
    build_manifest,
    database_source,
    databases,
    dataset_source,
    declared_types,
    manifest,
)


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
    packaged = Path(__file__).parents[2] / "src/structbench/releases/relationalfactqa/column_types.json"
    shared = shared_datasets / "relationalfactqa" / "galois_column_types.json"
    assert json.loads(packaged.read_text()) == json.loads(shared.read_text())


def test_one_database_source_checksums_and_urls() -> None:
    assert "galois/world_1" in databases() and "bird/disney" in databases()
    source = database_source("galois/world_1")
    assert [f.path for f in source.files] == [
        f"dataset/data/galois/world_1/{t}.csv" for t in ("city", "country", "country_language")
    ]
    for f in source.files:
        assert f.url == f"https://raw.githubusercontent.com/dario-tnn/relational-fact-qa/{COMMIT}/{f.path}"
        assert f.sha256 is not None and len(f.sha256) == 64


def test_declared_types_are_keyed_by_folder() -> None:
    # the queries' db_id "world1" lives in folder galois/world_1; its config is found by the folder name
    assert declared_types()["galois/world_1"]["city"]["population"] == "INTEGER"
    assert "galois/world1" not in declared_types()


@pytest.mark.shared
def test_one_database_checksums_match_shared_copy(shared_datasets: Path) -> None:
    for f in database_source("bird/disney").files:
        data = (shared_datasets / "relationalfactqa" / f.path).read_bytes()
        assert hashlib.sha256(data).hexdigest() == f.sha256


@pytest.mark.shared
def test_load_database_types_by_the_declarations(shared_datasets: Path) -> None:
    from structbench.data.datasets import DataContext
    from structbench.releases.relationalfactqa import load_database

    db = load_database("galois/world_1", DataContext(data_dir=shared_datasets, offline=True), keep_text=True)
    assert sorted(db.tables) == ["city", "country", "country_language"]
    assert db.tables["country"]["gnp"] == "DOUBLE" and db.tables["country"]["head_of_state"] == "VARCHAR"
    assert db.execute("SELECT count(*) FROM country WHERE head_of_state IS NULL")[2] == [(3,)]  # 'null' texts
    assert len(db.text["city"]) == 4079 and db.text["city"][0][:2] == ["1", "Kabul"]
