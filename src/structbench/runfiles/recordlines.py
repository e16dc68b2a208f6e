r"""The lines of a ``samples.jsonl``, read a chunk at a time, and the rule that picks each sample's current record.

One reader (``RecordTail``) serves every reader of the file: ``rundir`` (report, compare and the rest) and a run that
resumes read a finished file to its end (``read_lines``), and the view follows a file being written, each read
taking only what was appended since the last. Both parse a line the same way (``parse_line``) and name a line that
is not a record the same way (``FILE:LINE: not a sample record: ...``): a ``DataError`` (exit 2) for a finished
file, a problem the view lists and skips for a followed one. A last line without its newline is being written, or
was torn by a crash: it is left (cut off when a resumed run ``repair``\ s the file). Nothing here needs numpy: a
run's start-up reads these lines (``docs/develop/performance.md``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, TypeVar

from pydantic import ValidationError

from structbench.core.errors import DataError
from structbench.core.regular import open_regular
from structbench.runfiles.records import RecordKey, RecordSummary, SampleRecord

R = TypeVar("R", SampleRecord, RecordSummary)

CHUNK = 8 * 1024 * 1024
"""Bytes read at most by one ``read`` (beyond them only to complete a line): a file of gigabytes is caught up with
over several reads, each a bounded amount of work."""
MAX_LINE = 64 * 1024 * 1024
"""A line longer than this is not read by the view (it is skipped and named); a finished file's lines have no
limit."""


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


def parse_line(line: bytes, path: Path, lineno: int) -> SampleRecord | None:
    """The record of line ``lineno`` of ``path`` (None for a blank line); ``DataError`` naming the file and line when
    it is not one."""
    if not line.strip():
        return None
    try:
        return SampleRecord.model_validate_json(line)
    except ValidationError as err:
        raise DataError(f"{path}:{lineno}: not a sample record: {err.errors()[0]['msg']}") from None


def read_lines(path: Path, *, repair: bool = False) -> Iterator[tuple[int, SampleRecord]]:
    """(byte offset of its line, record) for each record of a finished ``path``, one at a time (``RecordTail`` read
    to the end); ``DataError`` naming the file and line for a line that is not a record."""
    if not path.exists():
        return
    reader = RecordTail(path, max_line=sys.maxsize)
    try:
        fh = open_regular(path)  # a FIFO is refused, not waited on
    except OSError as err:  # unreadable
        raise DataError(f"{path}: {UNREADABLE}: {err.strerror or err}") from err
    with fh:
        size = os.fstat(fh.fileno()).st_size
        try:
            while reader.offset < size:
                before = reader.offset
                for offset, lineno, line in reader.take(fh, size, CHUNK, TailRead()):
                    record = parse_line(line, path, lineno)
                    if record is not None:
                        yield offset, record
                if reader.offset == before:  # what is left is a torn last line: a write a crash cut short
                    break
        except OSError as err:  # a read that fails (an I/O error)
            raise DataError(f"{path}: {UNREADABLE}: {err.strerror or err}") from err
    if repair and reader.offset < size:
        with open(path, "r+b") as out:
            out.truncate(reader.offset)


def torn_tail(path: Path) -> bool:
    """Whether ``path`` ends in a line without its newline (being written, or torn by a crash)."""
    try:
        with open_regular(path) as fh:
            if fh.seek(0, os.SEEK_END) == 0:
                return False
            fh.seek(-1, os.SEEK_END)
            return fh.read(1) != b"\n"
    except (OSError, DataError):
        return False


def torn_line(path: Path) -> int | None:
    """The number of ``path``'s last line where it has no newline (``torn_tail``), else None."""
    if not torn_tail(path):
        return None
    lines = 1
    with open_regular(path) as fh:
        while chunk := fh.read(CHUNK):
            lines += chunk.count(b"\n")
    return lines


UNREADABLE = "cannot be read as a run's records"


@dataclass
class TailRead:
    """What one ``RecordTail.read`` found."""

    records: list[tuple[int, SampleRecord]] = field(default_factory=list)
    """The new records, each with the byte offset of its line (``record_at`` reads it again)."""
    restarted: bool = False
    """The file was replaced or cut shorter: these records start again from its first line."""
    problems: list[str] = field(default_factory=list)
    """Lines skipped, one message each (``samples.jsonl:17: not a sample record: ...``)."""
    more: bool = False
    """Whole lines wait beyond what this read took (it stopped at its byte budget)."""


class RecordTail:
    """The records of one ``samples.jsonl``, read incrementally: ``RecordTail`` remembers the byte offset up to which
    it has read whole lines; a read seeks there and reads what follows, never the file again. A file replaced, or cut
    shorter than what was read, is read again from its start and the read says so (``restarted``), so a follower
    drops what it built from the old one. A line that is not a record, or longer than ``max_line``, is skipped and
    named (file and line) in ``problems``: a run directory is untrusted input."""

    def __init__(self, path: Path, *, max_line: int = MAX_LINE) -> None:
        self.path = path
        self.max_line = max_line
        self.offset = 0
        """Bytes of whole lines read so far: where the next read starts."""
        self.lines = 0
        """Whole lines read so far (for the line numbers of problems)."""
        self.bytes_read = 0
        """Bytes read from the file over every read (a partial last line read twice counts twice)."""
        self._identity: tuple[int, int] | None = None
        self._skipping = False

    def _restart(self) -> None:
        self.offset = self.lines = 0
        self._skipping = False

    def read(self, budget: int = CHUNK) -> TailRead:
        """The records appended since the last read (at most about ``budget`` bytes of them)."""
        out = TailRead()
        try:
            fh = open_regular(self.path)  # a FIFO is refused (a DataError), not waited on
        except FileNotFoundError:
            if self._identity is not None:
                self._identity = None
                self._restart()
                out.restarted = True
            return out
        except OSError as err:
            raise DataError(f"{self.path}: {UNREADABLE}: {err.strerror or err}") from None
        with fh:
            st = os.fstat(fh.fileno())
            identity = (st.st_dev, st.st_ino)
            if self._identity is not None and (identity != self._identity or st.st_size < self.offset):
                self._restart()
                out.restarted = True
            self._identity = identity
            if st.st_size > self.offset:
                for offset, lineno, line in self.take(fh, st.st_size, budget, out):
                    try:
                        record = parse_line(line, self.path, lineno)
                    except DataError as err:
                        out.problems.append(str(err))
                        continue
                    if record is not None:
                        out.records.append((offset, record))
        return out

    def take(self, fh: BinaryIO, size: int, budget: int, out: TailRead) -> Iterator[tuple[int, int, bytes]]:
        """(byte offset, line number, line without its newline) of the whole lines of ``fh`` (``size`` bytes) from
        ``offset`` on, within about ``budget`` bytes; lines too long are named in ``out.problems``, and ``out.more``
        says whether whole lines wait beyond the budget."""
        fh.seek(self.offset)
        buf = fh.read(min(budget, size - self.offset))
        while b"\n" not in buf and self.offset + len(buf) < size and len(buf) <= self.max_line:
            more = fh.read(min(budget, self.max_line + 1 - len(buf)))  # only to complete one line
            if not more:
                break
            buf += more
        self.bytes_read += len(buf)
        start = 0
        if self._skipping:  # the rest of a line too long to read
            end = buf.find(b"\n")
            if end < 0:
                self.offset += len(buf)
                out.more = self.offset < size
                return
            start = end + 1
            self._skipping = False
            self.lines += 1
        last = buf.rfind(b"\n")
        if last < start:  # no whole line: one being written, or one too long
            if len(buf) - start > self.max_line:
                self.lines += 1
                out.problems.append(f"{self.path}:{self.lines}: a line of over {self.max_line:,} bytes: skipped")
                self._skipping = True
                self.offset += len(buf)
            else:
                self.offset += start
            out.more = self._skipping and self.offset < size
            return
        lines = buf[start:last + 1].split(b"\n")  # split in C: a finished file is read no slower than line by line
        lines.pop()  # what follows the last newline: nothing
        offset, end = self.offset + start, self.offset + last + 1
        for line in lines:
            self.lines += 1
            if len(line) >= self.max_line:  # with its newline, over the limit
                out.problems.append(f"{self.path}:{self.lines}: a line of over {self.max_line:,} bytes: skipped")
            else:
                yield offset, self.lines, line
            offset += len(line) + 1
        self.offset = end
        out.more = end < size and size - end > len(buf) - last - 1


def record_at(path: Path, offset: int, *, max_line: int = MAX_LINE) -> SampleRecord:
    """The record whose line starts at ``offset`` (a ``TailRead`` gave it); ``DataError`` when it is not there."""
    try:
        with open_regular(path) as fh:
            return line_at(fh, path, offset, max_line)
    except OSError as err:
        raise DataError(f"{path}: {UNREADABLE}: {err.strerror or err}") from None


def line_at(fh: BinaryIO, path: Path, offset: int, max_line: int = sys.maxsize) -> SampleRecord:
    """The record whose line starts at ``offset`` of the open ``fh``; ``DataError`` when it is not there (the file
    changed under its reader)."""
    fh.seek(offset)
    line = fh.readline(max_line + 1 if max_line < sys.maxsize else -1)
    if not line.endswith(b"\n"):
        raise DataError(f"{path}: no whole record at byte {offset}")
    try:
        return SampleRecord.model_validate_json(line)
    except ValidationError as err:
        raise DataError(f"{path}: byte {offset}: not a sample record: {err.errors()[0]['msg']}") from None
