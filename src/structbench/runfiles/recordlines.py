"""The lines of a ``samples.jsonl``, read a line at a time, and the rule that picks each sample's current record.

The run reads them back when it resumes, and ``rundir`` (the reader that report, compare and the rest use) builds
its columns from them. They live apart from ``rundir`` because a run's start-up reads them and needs none of the
columns' numpy (``docs/develop/performance.md``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO, TypeVar

from pydantic import ValidationError

from structbench.core.errors import DataError
from structbench.runfiles.records import RecordKey, RecordSummary, SampleRecord

R = TypeVar("R", SampleRecord, RecordSummary)


def read_records(path: Path, *, repair: bool = False) -> Iterator[SampleRecord]:
    """Records of a ``samples.jsonl``, read a line at a time (a run's file can be larger than memory); a torn final
    line (no newline) is skipped, and cut off when ``repair``."""
    for _, record in read_lines(path, repair=repair):
        yield record


def current_records(records: Iterable[R]) -> dict[RecordKey, R]:
    """The current record of each key: its last line. A sample tried again (after a failure, or a crash before
    its line was known to be written) appends a new line and the earlier ones stay as history; the run, its
    metrics, ``report`` and ``compare`` all read a run directory through this one rule."""
    return {r.key: r for r in records}


def read_lines(path: Path, *, repair: bool = False) -> Iterator[tuple[int, SampleRecord]]:
    """(byte offset of its line, record) for each record of ``path``; ``DataError`` naming the file and line for a
    line that is not a record."""
    if not path.exists():
        return
    try:
        fh = path.open("rb")
    except OSError as err:  # a directory, unreadable
        raise DataError(f"{path}: cannot be read as a run's records: {err.strerror or err}") from err
    with fh:
        complete = 0
        for lineno, raw in enumerate(_lines(fh, path), start=1):
            if not raw.endswith(b"\n"):  # torn: a write the crash cut short
                if repair:
                    with open(path, "r+b") as out:
                        out.truncate(complete)
                return
            offset, complete = complete, complete + len(raw)
            if not raw.strip():
                continue
            try:
                yield offset, SampleRecord.model_validate_json(raw)
            except ValidationError as err:
                raise DataError(f"{path}:{lineno}: not a sample record: {err.errors()[0]['msg']}") from err


def _lines(fh: BinaryIO, path: Path) -> Iterator[bytes]:
    try:
        yield from fh
    except OSError as err:  # a directory opens on some systems, and fails when read
        raise DataError(f"{path}: cannot be read as a run's records: {err.strerror or err}") from err
