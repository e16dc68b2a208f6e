"""A run directory: ``manifest.json``, ``samples.jsonl`` (appended as samples finish) and ``metrics.json``.

Each record is appended with a single ``write`` on an ``O_APPEND`` descriptor, so a crash leaves at
most one torn last line, which is dropped (and truncated away) when the run is reopened.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from structbench.errors import DataError, UsageError
from structbench.runner.records import SampleRecord

MANIFEST = "manifest.json"
SAMPLES = "samples.jsonl"
METRICS = "metrics.json"


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON to a temporary file and rename it over ``path``: readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(data, fh, indent=2, ensure_ascii=False, default=str, allow_nan=False)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def read_records(path: Path, *, repair: bool = False) -> Iterator[SampleRecord]:
    """Records of a ``samples.jsonl``; a torn final line (no newline) is skipped, and cut off when ``repair``."""
    if not path.exists():
        return
    data = path.read_bytes()
    complete, _, torn = data.rpartition(b"\n")
    if torn and repair:
        with open(path, "r+b") as fh:
            fh.truncate(len(complete) + 1 if complete else 0)
    if not complete:
        return
    for lineno, raw in enumerate(complete.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            yield SampleRecord.model_validate_json(raw)
        except ValidationError as err:
            raise DataError(f"{path}:{lineno}: not a sample record: {err.errors()[0]['msg']}") from err


class RunStore:
    """Appends records to a run directory and reads back what a previous session finished."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        run_dir.mkdir(parents=True, exist_ok=True)
        self.samples_path = run_dir / SAMPLES
        self.records: dict[tuple[str, str, str, str, str], SampleRecord] = {
            r.key: r for r in read_records(self.samples_path, repair=True)
        }
        try:
            self._fd = os.open(self.samples_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as err:
            raise UsageError(f"{self.samples_path}: {err.strerror}") from err

    def done(self, key: tuple[str, str, str, str, str]) -> bool:
        """True when ``key`` finished without error (errored samples are retried on resume)."""
        record = self.records.get(key)
        return record is not None and record.error is None

    def append(self, record: SampleRecord) -> None:
        """Write one line (all of it, or raise) and keep the record as it reads back from disk."""
        line = record.model_dump_json(fallback=repr).encode() + b"\n"
        view = memoryview(line)
        while view:
            view = view[os.write(self._fd, view) :]
        self.records[record.key] = SampleRecord.model_validate_json(line)

    def close(self) -> None:
        os.fsync(self._fd)
        os.close(self._fd)
