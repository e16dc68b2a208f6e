"""Follow a ``samples.jsonl`` as a run appends to it: each read returns only the records written since the last.

``RecordTail`` remembers the byte offset up to which it has read whole lines; a read seeks there and reads what
follows, never the file again. A last line without its newline is being written (or was torn by a crash): it is
left for the next read. A file replaced, or cut shorter than what was read, is read again from its start and the
read says so (``restarted``), so a reader drops what it built from the old one. A line that is not a record, or
longer than ``MAX_LINE``, is skipped and named (file and line) in ``problems``: a run directory is untrusted input.

The reader knows nothing of the view: it could serve any follower of a run directory (issue 39 gathers the run
directory's readers in one place).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from pydantic import ValidationError

from structbench.core.errors import DataError
from structbench.runfiles.records import SampleRecord

CHUNK = 8 * 1024 * 1024
"""Bytes read at most by one ``read`` (beyond them only to complete a line): a file of gigabytes is caught up with
over several reads, each a bounded amount of work."""
MAX_LINE = 64 * 1024 * 1024
"""A line longer than this is not read (it is skipped and named)."""


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
    """The records of one ``samples.jsonl``, read incrementally (see the module docstring)."""

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
            fh = self.path.open("rb")
        except FileNotFoundError:
            if self._identity is not None:
                self._identity = None
                self._restart()
                out.restarted = True
            return out
        except OSError as err:
            raise DataError(f"{self.path}: cannot be read: {err.strerror or err}") from None
        with fh:
            st = os.fstat(fh.fileno())
            identity = (st.st_dev, st.st_ino)
            if self._identity is not None and (identity != self._identity or st.st_size < self.offset):
                self._restart()
                out.restarted = True
            self._identity = identity
            if st.st_size > self.offset:
                self._take(fh, st.st_size, budget, out)
        return out

    def _take(self, fh: BinaryIO, size: int, budget: int, out: TailRead) -> None:
        fh.seek(self.offset)
        buf = fh.read(min(budget, size - self.offset))
        while b"\n" not in buf and self.offset + len(buf) < size and len(buf) <= self.max_line:
            more = fh.read(min(budget, self.max_line + 1 - len(buf)))  # only to complete one line
            if not more:
                break
            buf += more
        self.bytes_read += len(buf)
        view = memoryview(buf)
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
        pos = start
        while pos <= last:
            end = buf.index(b"\n", pos)
            line = view[pos:end + 1]
            self.lines += 1
            self._parse(self.offset + pos, bytes(line), out)
            pos = end + 1
        self.offset += pos
        out.more = self.offset < size and size - self.offset > len(buf) - pos

    def _parse(self, offset: int, line: bytes, out: TailRead) -> None:
        if not line.strip():
            return
        if len(line) > self.max_line:
            out.problems.append(f"{self.path}:{self.lines}: a line of over {self.max_line:,} bytes: skipped")
            return
        try:
            out.records.append((offset, SampleRecord.model_validate_json(line)))
        except ValidationError as err:
            out.problems.append(f"{self.path}:{self.lines}: not a sample record: {err.errors()[0]['msg']}")


def record_at(path: Path, offset: int, *, max_line: int = MAX_LINE) -> SampleRecord:
    """The record whose line starts at ``offset`` (a ``TailRead`` gave it); ``DataError`` when it is not there."""
    try:
        with path.open("rb") as fh:
            fh.seek(offset)
            line = fh.readline(max_line + 1)
    except OSError as err:
        raise DataError(f"{path}: cannot be read: {err.strerror or err}") from None
    if not line.endswith(b"\n"):
        raise DataError(f"{path}: no whole record at byte {offset}")
    try:
        return SampleRecord.model_validate_json(line)
    except ValidationError as err:
        raise DataError(f"{path}: byte {offset}: not a sample record: {err.errors()[0]['msg']}") from None
