"""``core.regular``: a run's file is opened without waiting, and read only when it is a regular file."""

from __future__ import annotations

from pathlib import Path

import pytest

from faults import fifo
from structbench.core.errors import DataError
from structbench.core.regular import open_regular, read_regular


def test_a_fifo_or_a_directory_is_named_at_once_and_not_read(tmp_path: Path) -> None:
    with fifo(tmp_path / "manifest.json") as released, pytest.raises(DataError) as err:
        read_regular(tmp_path / "manifest.json")
    assert str(err.value) == f"{tmp_path / 'manifest.json'}: a FIFO, not a regular file; not read"
    assert released == []  # refused without waiting for a writer
    with pytest.raises(DataError, match="a directory, not a regular file"):
        open_regular(tmp_path)


def test_a_regular_file_reads_as_open_would(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"abc\n")
    assert read_regular(tmp_path / "f") == b"abc\n" and read_regular(tmp_path / "f", 2) == b"ab"
    with open_regular(tmp_path / "f") as fh:
        assert fh.readline() == b"abc\n"
    with pytest.raises(FileNotFoundError):
        open_regular(tmp_path / "missing")
