"""``claimdb.databases``: the databases extracted to the cache whole, another run's copy kept when it came first, and
a failing disk reported, never taken for that copy."""

from __future__ import annotations

import errno
import os
import zipfile
from pathlib import Path

import pytest

from structbench.benchmarks.claimdb import databases
from structbench.benchmarks.claimdb.databases import open_databases
from structbench.core import atomic
from structbench.core.errors import StorageError

HEADER = "SQLite format 3\x00"


def _zip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STRUCTBENCH_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "dbs.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("dbs/a.sqlite", HEADER + "mine")
    return path


def test_another_run_s_copy_moved_in_first_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _zip(tmp_path, monkeypatch)
    real = atomic.move_into_place

    def rival_first(staging: Path, folder: Path) -> None:  # another run extracts the same zip meanwhile
        theirs = atomic.staging_dir(folder)
        (theirs / "a.sqlite").write_text(HEADER + "theirs")
        real(theirs, folder)
        real(staging, folder)

    monkeypatch.setattr(databases, "move_into_place", rival_first)
    found = open_databases(path)
    assert found["a"].read_text() == HEADER + "theirs"
    assert [p.name for p in found["a"].parent.parent.iterdir()] == [found["a"].parent.name]  # no draft left


def test_a_failing_sync_after_the_move_is_an_error_not_another_run_s_copy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The folder was renamed into place but its entry could not be synced (EIO): a power cut could lose it."""
    path = _zip(tmp_path, monkeypatch)
    real = atomic.fsync_dir
    cache = tmp_path / "cache" / "claimdb-databases"

    def failing(folder: Path) -> None:
        if Path(folder) == cache and any(cache.iterdir()):  # the parent's sync after the rename
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real(folder)

    monkeypatch.setattr(atomic, "fsync_dir", failing)
    with pytest.raises(StorageError, match=rf"{cache}/\w+: cannot be written \(Input/output error\).*{path}"):
        open_databases(path)
