"""The incremental reader of ``samples.jsonl``: only what was appended is read, a line being written waits for the
next read, a replaced or shortened file starts again, and a line that is not a record is named and skipped."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from faults import fifo
from structbench.core.errors import DataError
from structbench.runfiles.recordlines import RecordTail, read_lines, record_at, torn_tail
from structbench.runfiles.records import SampleRecord


def line(i: int, **fields: object) -> bytes:
    record = SampleRecord(benchmark="toy", variant="small", strategy="direct", model="m", id=f"s-{i}", task="t",
                          prompt=f"prompt {i}", output=f"reply {i}", score=float(i % 2), **fields)  # type: ignore[arg-type]
    return record.model_dump_json().encode() + b"\n"


def append(path: Path, data: bytes) -> None:
    with path.open("ab") as fh:
        fh.write(data)


def test_each_read_takes_only_the_lines_appended_since_the_last(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    lines = [line(i) for i in range(300)]
    path.write_bytes(b"".join(lines))
    tail = RecordTail(path)
    first = tail.read()
    assert [r.id for _, r in first.records] == [f"s-{i}" for i in range(300)]
    assert tail.offset == path.stat().st_size == tail.bytes_read
    assert tail.read().records == [] and tail.bytes_read == path.stat().st_size  # nothing new: nothing read
    append(path, line(300))
    before = tail.bytes_read
    (offset, record), = tail.read().records
    assert record.id == "s-300" and tail.bytes_read - before == len(line(300))  # the new line, not the file again
    assert record_at(path, offset) == record
    assert offset == sum(map(len, lines))


def test_a_line_being_written_waits_for_the_next_read(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    whole, torn = line(0), line(1)
    path.write_bytes(whole + torn[:40])
    tail = RecordTail(path)
    assert [r.id for _, r in tail.read().records] == ["s-0"] and tail.offset == len(whole)
    append(path, torn[40:-1])  # still no newline
    assert tail.read().records == [] and tail.offset == len(whole)
    append(path, b"\n" + line(2))
    assert [r.id for _, r in tail.read().records] == ["s-1", "s-2"]


def test_a_replaced_or_shortened_file_is_read_again_from_its_start(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    path.write_bytes(line(0) + line(1))
    tail = RecordTail(path)
    assert len(tail.read().records) == 2
    other = tmp_path / "new.jsonl"
    other.write_bytes(line(7))
    os.replace(other, path)
    got = tail.read()
    assert got.restarted and [r.id for _, r in got.records] == ["s-7"]
    path.write_bytes(b"")
    got = tail.read()
    assert got.restarted and got.records == []
    path.unlink()
    assert tail.read().restarted


def test_lines_that_are_not_records_are_named_and_skipped(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    path.write_bytes(line(0) + b'{"not": "a record"}\n' + b"\n" + b"x" * 1500 + b"\n" + line(1))
    tail = RecordTail(path, max_line=1000)
    got = tail.read()
    assert [r.id for _, r in got.records] == ["s-0", "s-1"]
    assert got.problems[0].startswith(f"{path}:2: not a sample record")
    assert got.problems[1] == f"{path}:4: a line of over 1,000 bytes: skipped"


def test_a_line_too_long_is_skipped_across_reads(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    path.write_bytes(line(0) + b"y" * 5000)
    tail = RecordTail(path, max_line=1000)
    got = tail.read(budget=600)
    assert [r.id for _, r in got.records] == ["s-0"]
    got = tail.read(budget=600)
    assert got.problems == [f"{path}:2: a line of over 1,000 bytes: skipped"]
    while tail.read(budget=600).more:
        pass
    append(path, b"y" * 10 + b"\n" + line(1))
    assert [r.id for _, r in tail.read(budget=600).records] == ["s-1"]


def test_a_budget_splits_a_large_file_over_reads(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    path.write_bytes(b"".join(line(i) for i in range(50)))
    tail = RecordTail(path)
    ids: list[str] = []
    reads = 0
    while True:
        got = tail.read(budget=2000)
        ids += [r.id for _, r in got.records]
        reads += 1
        if not got.more:
            break
    assert ids == [f"s-{i}" for i in range(50)] and reads > 5
    assert tail.bytes_read < 2 * path.stat().st_size  # a partial line is read again, never the file


def test_a_fifo_named_samples_jsonl_is_a_problem_not_a_wait(tmp_path: Path) -> None:
    """A FIFO made ``open()`` wait for a writer for good (the view and ``report`` hung, deaf to Ctrl-C)."""
    path = tmp_path / "samples.jsonl"
    with fifo(path) as released:
        with pytest.raises(DataError, match=f"{path}: a FIFO, not a regular file"):
            RecordTail(path).read()
        with pytest.raises(DataError, match=f"{path}: a FIFO, not a regular file"):
            list(read_lines(path))
        with pytest.raises(DataError, match="a FIFO"):
            record_at(path, 0)
        assert not torn_tail(path)
    assert released == []
