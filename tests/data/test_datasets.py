"""Dataset resolution: local copy, download from a loopback mirror of ../shared/datasets, checksums, offline."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from structbench.core.errors import DataError, DatasetUnavailableError
from structbench.data.datasets import DataContext, DatasetSource, RemoteFile, cache_root


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture()
def mirror(shared_datasets: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Serve ../shared/datasets on loopback and point STRUCTBENCH_MIRROR at it."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(shared_datasets)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    monkeypatch.setenv("STRUCTBENCH_MIRROR", url)
    yield url
    server.shutdown()


def _source(shared: Path, sha: str | None = None) -> DatasetSource:
    path = "data/dataset_demo.json"
    digest = sha or hashlib.sha256((shared / "structfact" / path).read_bytes()).hexdigest()
    return DatasetSource(
        name="structfact",
        homepage="https://github.com/EganGu/StructFact",
        files=(RemoteFile(path, "https://example.invalid/dataset_demo.json", digest),),
    )


def test_download_into_cache(mirror: str, shared_datasets: Path) -> None:
    root = DataContext().locate(_source(shared_datasets))
    assert root == cache_root() / "datasets" / "structfact"
    got = (root / "data/dataset_demo.json").read_bytes()
    assert got == (shared_datasets / "structfact/data/dataset_demo.json").read_bytes()


def test_checksum_mismatch_leaves_nothing(mirror: str, shared_datasets: Path) -> None:
    with pytest.raises(DataError, match="checksum mismatch"):
        DataContext().locate(_source(shared_datasets, sha="0" * 64))
    folder = cache_root() / "datasets" / "structfact" / "data"
    assert not folder.exists() or list(folder.iterdir()) == []


def test_local_copy_and_missing_files(shared_datasets: Path, tmp_path: Path) -> None:
    assert DataContext(data_dir=shared_datasets).locate(_source(shared_datasets)) == shared_datasets / "structfact"
    with pytest.raises(DatasetUnavailableError, match="missing under"):
        DataContext(data_dir=tmp_path).locate(_source(shared_datasets))


def test_offline_error_says_what_to_fetch(shared_datasets: Path) -> None:
    with pytest.raises(DatasetUnavailableError) as info:
        DataContext(offline=True).locate(_source(shared_datasets))
    message = str(info.value)
    assert "https://example.invalid/dataset_demo.json" in message and "--data-dir" in message


def test_unreachable_source_is_a_clear_error(shared_datasets: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRUCTBENCH_MIRROR", "http://127.0.0.1:9")
    with pytest.raises(DatasetUnavailableError, match="cannot get data/dataset_demo.json"):
        DataContext(timeout=2).locate(_source(shared_datasets))


def test_the_fetch_hint_names_the_flag_the_user_types() -> None:
    from structbench.data.datasets import DataContext

    assert DataContext().dir_argument() == "--data-dir DIR"
    assert DataContext.from_env(None, dir_flag="-T data_dir=").dir_argument() == "-T data_dir=DIR"


def test_a_local_copy_that_differs_from_the_release_is_refused_or_recorded(
    shared_datasets: Path, tmp_path: Path
) -> None:
    """A ``--data-dir`` file is checked against the release's checksum as a download is: a damaged or edited copy is
    a ``DataError`` naming the file, unless the user allows modified data, which is then recorded."""
    source = _source(shared_datasets)
    copy = tmp_path / "structfact" / "data" / "dataset_demo.json"
    copy.parent.mkdir(parents=True)
    records = json.loads((shared_datasets / "structfact" / "data" / "dataset_demo.json").read_text())
    copy.write_text(json.dumps(records[:-3]))  # three records gone
    with pytest.raises(DataError, match=f"^{copy}: differs from the structfact release") as info:
        DataContext(data_dir=tmp_path).locate(source)
    assert "--allow-modified-data" in str(info.value)
    allowed = DataContext(data_dir=tmp_path, allow_modified=True)
    assert allowed.locate(source) == tmp_path / "structfact" and allowed.locate(source)
    digest = hashlib.sha256(copy.read_bytes()).hexdigest()
    assert [m.to_json() for m in allowed.modified] == [{"dataset": "structfact", "path": "data/dataset_demo.json",
                                                        "sha256": digest, "release_sha256": source.files[0].sha256}]
    copy.write_bytes((shared_datasets / "structfact" / "data" / "dataset_demo.json").read_bytes())  # restored
    assert DataContext(data_dir=tmp_path).locate(source) == tmp_path / "structfact"
