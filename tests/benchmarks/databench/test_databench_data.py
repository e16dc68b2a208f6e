"""Where the data comes from: a local copy laid out as the Hub repository, or a download per dataset into the cache
(here from a loopback mirror of a generated set); what a bad copy says; the clusters."""

from __future__ import annotations

import shutil
import threading
from collections import Counter
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pandas as pd
import pytest

from structbench.benchmarks.databench import DataBench, source
from structbench.core.errors import DataError, DatasetUnavailableError
from structbench.data.datasets import DataContext, cache_root
from structbench.testing.cli import invoke


def test_a_local_copy_is_read_dataset_by_dataset(data: DataContext) -> None:
    bench = DataBench()
    samples = bench.load("lite", data, seed=0, limit=None)
    assert samples.expected == 2 * 20  # type: ignore[attr-defined]
    loaded = list(samples)
    assert [s.id for s in loaded[:2]] == ["001_Orchards/0", "001_Orchards/1"] and len(loaded) == 40
    assert bench.unit("lite") == "dataset"
    assert Counter(bench.cluster(s) for s in loaded) == {"001_Orchards": 20, "002_Lighthouses": 20}
    assert {s.task for s in loaded} == {"boolean", "category", "number", "list[category]", "list[number]"}


def test_a_directory_without_the_layout_says_how_to_get_one(tmp_path: Path) -> None:
    with pytest.raises(DatasetUnavailableError, match="structbench generate databench --out DIR"):
        list(DataBench().load("databench", DataContext(data_dir=tmp_path), seed=0, limit=None))
    done = invoke("run", "-m", "oracle", "-b", "databench", "--data-dir", str(tmp_path), "--out",
                  str(tmp_path / "r"))
    assert done.returncode == 2 and "databench: no data/<dataset>/qa.parquet" in done.stderr
    assert not (tmp_path / "r").exists()


def test_a_missing_table_and_a_bad_type_name_the_file(generated: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(generated, copy)
    folder = copy / source.NAME / source.DATA / "002_Lighthouses"
    (folder / source.ALL_FILE).unlink()
    with pytest.raises(DatasetUnavailableError, match="data/002_Lighthouses/all.parquet"):
        list(DataBench().load("databench", DataContext(data_dir=copy), seed=0, limit=None))
    assert len(list(DataBench().load("lite", DataContext(data_dir=copy), seed=0, limit=None))) == 40
    qa = pd.read_parquet(folder / source.QA_FILE)
    qa.loc[3, "type"] = "text"
    qa.to_parquet(folder / source.QA_FILE, index=False)
    with pytest.raises(DataError, match=r"002_Lighthouses/qa.parquet, row 4: answer type 'text' is not one of"):
        list(DataBench().load("lite", DataContext(data_dir=copy), seed=0, limit=None))


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def mirror(generated: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The generated set served on loopback as the Hub's files (``STRUCTBENCH_MIRROR``), as the release's first two
    datasets."""
    served = tmp_path / "served"
    for name, release in zip(["001_Orchards", "002_Lighthouses"], source.DATASETS[:2], strict=True):
        shutil.copytree(generated / source.NAME / source.DATA / name, served / source.NAME / source.DATA / release)
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(served)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("STRUCTBENCH_MIRROR", f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.setattr(source, "DATASETS", source.DATASETS[:2])
    yield served
    server.shutdown()


def test_downloads_fetch_each_datasets_questions_and_the_variants_tables_only(mirror: Path, tmp_path: Path) -> None:
    assert source.url("data/001_Forbes/qa.parquet") == (
        "https://huggingface.co/datasets/cardiffnlp/databench/resolve/main/data/001_Forbes/qa.parquet")
    done = invoke("run", "-m", "oracle", "-b", "databench:lite", "--strategy", "direct", "--no-cache", "--out",
                  str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    cached = cache_root() / "datasets" / source.NAME / source.DATA
    assert sorted(p.relative_to(cached).as_posix() for p in cached.rglob("*.parquet")) == [
        "001_Forbes/qa.parquet", "001_Forbes/sample.parquet", "002_Titanic/qa.parquet", "002_Titanic/sample.parquet"]
    assert "| databench | lite | direct | oracle | accuracy | 1.0000 |" in done.stdout
    offline = invoke("run", "-m", "oracle", "-b", "databench", "--offline", "--no-cache", "--out",
                     str(tmp_path / "offline"))
    assert offline.returncode == 2 and "databench: cannot get data/001_Forbes/all.parquet" in offline.stderr
