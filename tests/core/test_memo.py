"""The per-process memo: each value made once while it is kept, the oldest dropped first, files known by identity."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from structbench.core.memo import Memo, file_identity, folder_identity


def test_a_value_is_made_once_and_the_oldest_is_dropped_to_make_room() -> None:
    made: list[str] = []

    def make(key: str) -> str:
        made.append(key)
        return key.upper()

    memo: Memo[str, str] = Memo(2)
    assert memo.get_or_make("a", lambda: make("a")) == "A"
    assert memo.get_or_make("a", lambda: make("a")) == "A"
    assert memo.get_or_make("b", lambda: make("b")) == "B"
    assert made == ["a", "b"]
    assert memo.get_or_make("c", lambda: make("c")) == "C"
    assert len(memo) == 2 and "a" not in memo and "b" in memo and "c" in memo
    assert memo.get_or_make("a", lambda: make("a")) == "A"
    assert made == ["a", "b", "c", "a"]
    assert "b" not in memo


def test_a_failed_make_keeps_nothing() -> None:
    memo: Memo[str, int] = Memo(4)

    def fail() -> int:
        raise ValueError("unreadable")

    with pytest.raises(ValueError, match="unreadable"):
        memo.get_or_make("k", fail)
    assert "k" not in memo and len(memo) == 0
    assert memo.get_or_make("k", lambda: 1) == 1


def test_get_and_put_keep_what_is_put_and_drop_the_oldest() -> None:
    memo: Memo[str, int] = Memo(2)
    assert memo.get("a") is None
    memo.put("a", 1)
    memo.put("b", 2)
    memo.put("a", 3)  # put again: now the newest
    memo.put("c", 4)
    assert (memo.get("a"), memo.get("b"), memo.get("c")) == (3, None, 4) and len(memo) == 2


def test_threads_putting_at_once_keep_at_most_the_bound() -> None:
    from concurrent.futures import ThreadPoolExecutor

    memo: Memo[int, int] = Memo(64)
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda k: memo.put(k, k), range(20_000)))
    assert len(memo) == 64 and all(memo.get(k) in (k, None) for k in range(20_000))


def test_a_memo_keeps_at_least_one_entry() -> None:
    with pytest.raises(ValueError, match="at least one"):
        Memo(0)


def test_a_file_changes_identity_when_its_size_or_time_does(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("a\n1\n")
    before = file_identity(path)
    assert file_identity(tmp_path / "." / "t.csv") == before  # the same file by another spelling
    assert before[0] == str(path.resolve())
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    touched = file_identity(path)
    assert touched != before
    path.write_text("a\n12\n")
    assert file_identity(path) not in (before, touched)


def test_a_folder_changes_identity_when_a_matching_file_does(tmp_path: Path) -> None:
    (tmp_path / "b.csv").write_text("x\n1\n")
    (tmp_path / "a.csv").write_text("y\n2\n")
    before = folder_identity(tmp_path, "*.csv")
    assert before[0] == str(tmp_path.resolve())
    assert [name for name, _, _ in before[1]] == ["a.csv", "b.csv"]
    (tmp_path / "notes.txt").write_text("not a table")
    assert folder_identity(tmp_path, "*.csv") == before
    (tmp_path / "a.csv").write_text("y\n22\n")
    changed = folder_identity(tmp_path, "*.csv")
    assert changed != before
    (tmp_path / "c.csv").write_text("z\n")
    assert folder_identity(tmp_path, "*.csv") not in (before, changed)
