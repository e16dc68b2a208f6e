"""A run directory: ``manifest.json``, ``samples.jsonl`` (appended as samples finish) and ``metrics.json``.

Each record is validated, then appended with a single ``write`` on an ``O_APPEND`` descriptor, so a crash
leaves at most one torn last line, which is dropped (and truncated away) when the run is reopened. A write
that fails (disk full) is cut back off and raises ``StorageError``; nothing is appended after it. Secrets
are redacted from every line and every JSON file written here.
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
from pydantic import ValidationError

from structbench.core.atomic import json_text, make_folders
from structbench.core.atomic import write_json_atomic as write_json_atomic  # the runner writes metrics.json with it
from structbench.core.errors import StorageError
from structbench.core.redact import HOLE, redact, redact_around
from structbench.core.trusted import trusted
from structbench.runfiles.recordlines import current_records as current_records  # the run-files layer's, used here too
from structbench.runfiles.recordlines import read_records as read_records
from structbench.runfiles.records import RecordSummary, SampleRecord, SummaryRow
from structbench.runfiles.runformat import SAMPLES

if TYPE_CHECKING:
    from collections.abc import Iterator

    from structbench.backends.usage import Usage, UsageKey
    from structbench.runfiles.columns import EntryKey
    from structbench.runner.kept import EntryRecords, KeptRecords

NO_SPACE = frozenset({errno.ENOSPC, errno.EDQUOT})


def save_manifest(path: Path, data: Any) -> None:
    """``write_json_atomic``; on a full disk, overwrite the existing file in place instead (it fits in the
    blocks the file already holds), so the manifest can still say how the run ended. ``StorageError`` if
    neither works."""
    try:
        write_json_atomic(path, data, verbatim="config")
        return
    except OSError as err:
        if err.errno not in NO_SPACE or not path.exists():
            raise StorageError(f"{path}: cannot be written: {err.strerror or err}") from err
        first = err
    try:
        raw = json_text(data, verbatim="config").encode()
        with open(path, "r+b") as fh:
            fh.write(raw)
            fh.truncate(len(raw))
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as err:
        raise StorageError(f"{path}: cannot be written: {first.strerror or first}") from err


def encode_record(record: SampleRecord) -> tuple[SampleRecord, bytes]:
    """The record as it reads back from disk, and its line (validated, secrets redacted, newline-terminated).

    A record that does not validate becomes a failure with only its identity (tried again on the next run).
    Pure CPU work: workers do it, so the process that writes the run directory only appends lines."""
    try:
        line = _record_line(record)
        return SampleRecord.model_validate_json(line), line
    except (ValueError, TypeError) as err:  # not serializable (a cycle, a lone surrogate), or not read back
        mended = _mended(record)
        if mended is not None:
            return encode_record(mended)
        if isinstance(err, ValidationError):
            problem = err.errors()[0]
            where = ".".join(str(p) for p in problem["loc"])
            stored = record.as_failed(f"the record could not be written: {where}: {problem['msg']}")
        else:
            stored = record.as_failed(f"the record could not be written: {type(err).__name__}: {err}")
    try:
        return stored, _record_line(stored)
    except (ValueError, TypeError):  # the prompt itself cannot be written: the failure goes without it
        stored = stored.model_copy(update={"prompt": None})
        return stored, _record_line(stored)


def _mended(record: SampleRecord) -> SampleRecord | None:
    """The record as a line can hold it (``core.untrusted.writable``: a lone surrogate in a text, a value nested
    hundreds of levels deep, both of which a benchmark's JSON parser makes of what a model wrote; as a failure, the
    sample would fail the same way on every run), or None when nothing in it needed mending or it cannot be read out
    at all."""
    from structbench.core.untrusted import writable  # (a failure's path: not loaded on every run)

    try:
        data, changed = writable(record.model_dump())
        return SampleRecord.model_validate(data) if changed else None
    except (ValueError, TypeError):  # (a ValidationError too)
        return None


def _record_line(record: SampleRecord) -> bytes:
    """The record's line, redacted; its prompt (what the model was asked, as the user's data and flags made it) loses
    only registered secrets."""
    if record.prompt is None:
        return redact(record.model_dump_json(fallback=repr, warnings=False)).encode() + b"\n"
    prompt = orjson.dumps(record.prompt).decode()  # ``json.dumps(ensure_ascii=False)``'s text, in a tenth of its time
    holed = trusted(SampleRecord, {**record.__dict__, "prompt": HOLE})  # ``model_copy`` without its copying
    text = holed.model_dump_json(fallback=repr, warnings=False)
    return redact_around(text, prompt).encode() + b"\n"


class RunStore:
    """Appends records to a run directory and reads back what a previous session finished.

    Only what the metrics, the failure summary, costs and resuming need is kept in memory, as columns
    (``runner.kept.KeptRecords``: a few dozen bytes a record); the full records are on disk, read back a line at a
    time."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        make_folders(run_dir)
        self.samples_path = run_dir / SAMPLES
        self._kept: KeptRecords | None = None
        for record in read_records(self.samples_path, repair=True):
            self.kept.add(record)
        if self._kept is not None:
            self._kept.freeze_settled()
        try:
            self._fd = os.open(self.samples_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as err:
            raise StorageError(f"{self.samples_path}: cannot be written: {err.strerror}") from err
        self._failed: StorageError | None = None

    @property
    def kept(self) -> KeptRecords:
        """Every record so far: the earlier sessions' and this one's (``prepare_columns``)."""
        return self.prepare_columns()

    def prepare_columns(self) -> KeptRecords:
        """The columns records are kept in (``kept``), made now if they are not yet. They bring numpy (0.05-0.1 s to
        import), which a new run's start-up, up to its first request, does without (``entry``, ``usage_groups``):
        the run makes them while its first requests are out, or with the first record."""
        if self._kept is None:
            from structbench.runner.kept import KeptRecords

            self._kept = KeptRecords()
        return self._kept

    def entry(self, key: EntryKey) -> EntryRecords | None:
        """The records of one result entry so far (None: none)."""
        return self._kept.entries.get(key) if self._kept is not None else None

    def usage_groups(self) -> Iterator[tuple[UsageKey, Usage]]:
        """The calls of every current record, per (model, batch, reused) and entry (``KeptRecords.usage_groups``)."""
        return self._kept.usage_groups() if self._kept is not None else iter(())

    @property
    def failure(self) -> StorageError | None:
        """Why ``samples.jsonl`` could not be written, once it could not."""
        return self._failed

    @property
    def fd(self) -> int:
        """The descriptor ``samples.jsonl`` is appended through (a forked worker closes its copy)."""
        return self._fd

    def append(self, record: SampleRecord) -> SampleRecord:
        """Write one validated line (all of it, or none and raise ``StorageError``); returns the record as
        it reads back from disk. A record that does not validate is written as a failure instead."""
        stored, line = encode_record(record)
        self.add(stored, line)
        return stored

    def add(self, stored: SampleRecord | RecordSummary | SummaryRow, line: bytes) -> None:
        """Append a line ``encode_record`` made for ``stored`` (all of it, or none and raise ``StorageError``)."""
        if self._failed is not None:
            raise self._failed
        self._write(line)
        self.kept.add(stored)

    def _write(self, line: bytes) -> None:
        view, written = memoryview(line), 0
        try:
            while written < len(line):
                written += os.write(self._fd, view[written:])
        except OSError as err:
            self._failed = StorageError(
                f"{self.samples_path}: cannot be written: {err.strerror or err}; the run stopped after the samples in "
                "flight; free space and run the same command to resume")
            if written:  # cut the partial line back off, so nothing is ever appended to a torn line
                with contextlib.suppress(OSError):  # else the torn line is dropped when the run is reopened
                    os.ftruncate(self._fd, os.fstat(self._fd).st_size - written)
            raise self._failed from err

    def close(self) -> None:
        try:
            os.fsync(self._fd)
        except OSError as err:
            if self._failed is None:
                raise StorageError(f"{self.samples_path}: cannot be written: {err.strerror or err}") from err
        finally:
            os.close(self._fd)
