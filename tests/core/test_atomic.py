"""Atomic files: whole or absent, and as readable as a file ``open`` creates."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from structbench.core.atomic import FILE_MODE, atomic_path, write_text_atomic
from structbench.runner.store import write_json_atomic


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_files_get_the_umask_mode_not_owner_only(tmp_path: Path) -> None:
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    write_text_atomic(tmp_path / "a.txt", "é\n")
    write_json_atomic(tmp_path / "metrics.json", {"a": 1})
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "é\n"
    assert _mode(tmp_path / "a.txt") == _mode(plain) == FILE_MODE
    assert _mode(tmp_path / "metrics.json") == FILE_MODE


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "out" / "t.json"
    write_text_atomic(target, "old")
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("killed")
    assert target.read_text() == "old"
    assert sorted(p.name for p in target.parent.iterdir()) == ["t.json"]
