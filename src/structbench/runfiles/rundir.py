"""The one reader of a run directory: its manifest, ``metrics.json`` and the current record of every sample.

``samples.jsonl`` is read once, as a stream (a line at a time), into the run files' columns per result entry
(``runfiles.columns``, those the run itself keeps: each record's outcome, error kind and message, cut-off thought and
replies and its calls' tokens), with a digest of its prompt and the byte offset of its line. A sample tried again has
several lines; its current record is the last (``current_records``, the rule the run itself follows). The columns
are a few dozen bytes a record; the full records (prompts, outputs, artifacts) stay on disk and are read back one
at a time, in the entry's order, by ``EntryRecords.full``. So report, compare, convert, publish and export read a
run of any size without holding every full record at once.

Records of an entry are in sample-id order, then epoch (``samples.jsonl`` is in completion order, which varies
from run to run; a bootstrap, a log and a table must not).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import overload

import numpy as np

from structbench.core.errors import UsageError
from structbench.core.regular import open_regular
from structbench.runfiles.cells import cell_options
from structbench.runfiles.columns import EntryKey as EntryKey  # where the readers of a run name an entry
from structbench.runfiles.columns import RecordColumns
from structbench.runfiles.manifest import Manifest, read_manifest
from structbench.runfiles.outcomes import Categories, Growing, Outcomes
from structbench.runfiles.recordlines import current_records as current_records  # the rule every reader follows
from structbench.runfiles.recordlines import line_at, read_lines, torn_tail
from structbench.runfiles.recordlines import read_records as read_records
from structbench.runfiles.records import RecordSummary, SampleRecord
from structbench.runfiles.results import MetricsFile, ResultEntry, read_metrics
from structbench.runfiles.runconfig import RunConfig
from structbench.runfiles.runformat import MANIFEST, METRICS, SAMPLES

log = logging.getLogger(__name__)


def entry_key(result: ResultEntry | SampleRecord | RecordSummary) -> EntryKey:
    """The entry a result or a record belongs to."""
    return (result.benchmark, result.variant, result.strategy, result.model, result.cell)


def prompt_digest(record: SampleRecord) -> bytes:
    """A digest of what the record's model was asked (its prompt as JSON): records of two runs with the same digest
    and gold are the same question."""
    import json

    return hashlib.blake2b(json.dumps(record.prompt, sort_keys=True).encode(), digest_size=16).digest()


class EntryRecords(Sequence[RecordSummary]):
    """The current records of one result entry, in sample-id then epoch order: the run files' columns in memory
    (``columns``, every line's; read as ``RecordSummary`` objects built when read, or as ``outcomes``), full records
    on disk (``full``)."""

    def __init__(self, key: EntryKey, source: _Source, messages: Categories) -> None:
        self.key = key
        self.columns = RecordColumns(key, messages)
        """Every record of the entry as the run kept it (a sample tried again has several rows): what the metrics
        read (``analysis.record_metrics``)."""
        self._source = source
        self._where = Growing(np.int64)
        self._digests: list[bytes] = []
        self._rows = np.zeros(0, dtype=np.int64)
        """The current rows, in order (``_finish``)."""

    def _add(self, record: SampleRecord, where: int) -> None:
        self._where.set(self.columns.add(record), where)
        self._digests.append(prompt_digest(record))

    def _finish(self) -> None:
        """Keep each key's last row, sorted by (id, epoch)."""
        self._rows = self.columns.current()

    # --- the sequence of summaries ----------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> RecordSummary: ...
    @overload
    def __getitem__(self, index: slice) -> list[RecordSummary]: ...
    def __getitem__(self, index: int | slice) -> RecordSummary | list[RecordSummary]:
        if isinstance(index, slice):
            return list(self._summaries(self._rows[index]))
        if not -len(self) <= index < len(self):
            raise IndexError(f"record {index} of {len(self)}")
        return next(self._summaries(self._rows[index:index + 1] if index >= 0 else self._rows[[index]]))

    def __iter__(self) -> Iterator[RecordSummary]:
        return self._summaries(self._rows)

    def _summaries(self, rows: np.ndarray) -> Iterator[RecordSummary]:
        return self.columns.summaries(rows, usage=False)

    # --- columns ----------------------------------------------------------------------------------

    def counted_rows(self) -> np.ndarray:
        """Positions (in this entry's order) of the records that take part in metrics."""
        return np.flatnonzero(self.columns.counting(self._rows))

    def outcomes(self, *, counted: bool = True) -> Outcomes:
        """The outcomes of the records (only those that take part in metrics when ``counted``), as columns."""
        return self.columns.scored(self.columns.counted(self._rows) if counted else self._rows)

    def counted(self) -> list[RecordSummary]:
        """The records that take part in metrics (all but harness errors, prompts too long, turn limits)."""
        return list(self._summaries(self.columns.counted(self._rows)))

    def epochs(self) -> np.ndarray:
        """Each record's epoch, in order."""
        return np.array(self.columns.epochs(self._rows))

    def failures(self) -> int:
        """How many records hold an error (of any kind)."""
        return self.columns.with_error(self._rows)

    def digests(self) -> list[bytes]:
        """Each record's ``prompt_digest``, in order."""
        return [self._digests[i] for i in self._rows.tolist()]

    # --- full records -----------------------------------------------------------------------------

    def full(self, positions: Sequence[int] | np.ndarray | None = None) -> Iterator[SampleRecord]:
        """The full records (at ``positions`` of this entry's order, or all), read back one at a time."""
        rows = self._rows if positions is None else self._rows[np.asarray(positions, dtype=np.int64)]
        return self._source.read(self._where.array()[rows].tolist())


class _Source:
    """Where full records are read back from: a ``samples.jsonl`` by byte offset, or records held in memory."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self.held: list[SampleRecord] = []

    def read(self, where: list[int]) -> Iterator[SampleRecord]:
        if self.path is None:
            for i in where:
                yield self.held[i]
            return
        with open_regular(self.path) as fh:
            for offset in where:
                yield line_at(fh, self.path, offset)


@dataclass
class RunFiles:
    """A run directory as every reader of it sees it: manifest, metrics, and each result entry's records."""

    path: Path
    manifest: Manifest | None
    """None for a directory without one (``score --out`` results placed in a folder)."""
    metrics: MetricsFile
    entries: dict[EntryKey, EntryRecords] = field(default_factory=dict)
    """Every entry that has records, in order of its first record."""

    @property
    def config(self) -> RunConfig | None:
        """The run's configuration, as recorded in the manifest."""
        return self.manifest.config if self.manifest is not None else None

    @property
    def options(self) -> dict[str, str]:
        """The run's ``--option`` pairs, as recorded in the manifest."""
        return dict(self.config.options) if self.config is not None else {}

    @property
    def sweeps(self) -> dict[str, list[str]]:
        """The run's ``--sweep`` keys and values, in the sweep's order, as recorded in the manifest."""
        return {k: list(v) for k, v in self.config.sweeps.items()} if self.config is not None else {}

    def cell_options(self, benchmark: str, cell: str) -> dict[str, str]:
        """The run's options with those of one sweep cell (``BENCH.KEY`` pairs, which win): what the cell's
        benchmark was built with."""
        return {**self.options, **{f"{benchmark}.{k}": v for k, v in cell_options(cell).items()}}

    def records(self, key: EntryKey | ResultEntry) -> EntryRecords:
        """The records of one entry (none: an empty one)."""
        wanted = key if isinstance(key, tuple) else entry_key(key)
        found = self.entries.get(wanted)
        return found if found is not None else held_entry(wanted)

    def __len__(self) -> int:
        return sum(len(e) for e in self.entries.values())


def index_records(records: Iterable[tuple[int, SampleRecord]], source: _Source) -> dict[EntryKey, EntryRecords]:
    """Records (each with where ``source`` finds it again) as columns per entry."""
    messages = Categories()
    entries: dict[EntryKey, EntryRecords] = {}
    for where, record in records:
        key = entry_key(record)
        entry = entries.get(key)
        if entry is None:
            entry = entries[key] = EntryRecords(key, source, messages)
        entry._add(record, where)
    for entry in entries.values():
        entry._finish()
    return entries


def held_records(records: Sequence[SampleRecord]) -> dict[EntryKey, EntryRecords]:
    """Records already in memory (Inspect logs read back) as entries, like a run directory's."""
    source = _Source()
    source.held = list(records)
    return index_records(enumerate(source.held), source)


def held_entry(key: EntryKey, records: Sequence[SampleRecord] = ()) -> EntryRecords:
    """The records of one entry, held in memory (those of other entries left out; none: an empty entry)."""
    found = held_records([r for r in records if entry_key(r) == key]).get(key)
    return found if found is not None else EntryRecords(key, _Source(), Categories())


def read_run_files(path: Path) -> RunFiles:
    """Read ``metrics.json`` (required), ``manifest.json`` and ``samples.jsonl`` (optional) of a run directory;
    ``UsageError`` (exit 2) with one clear line when it is not one, ``DataError`` when a file does not read."""
    if not path.is_dir():
        raise UsageError(f"{path}: no such run directory")
    if not (path / METRICS).exists():  # one that is not a regular file is named by read_metrics
        if (path / MANIFEST).exists():
            raise UsageError(f"{path}: no {METRICS} yet (the run did not finish; resume it with "
                             f"`structbench run --resume {path}`)")
        raise UsageError(f"{path}: not a structbench run directory (no {METRICS} or {MANIFEST})")
    manifest = read_manifest(path)
    metrics = read_metrics(path / METRICS)
    return RunFiles(path, manifest, metrics, read_entries(path))


def read_entries(path: Path) -> dict[EntryKey, EntryRecords]:
    """The records of a run directory's ``samples.jsonl``, as columns per entry (``RunFiles.entries``); an incomplete
    last line (being written, or torn by a crash) is left out, with a warning naming the file."""
    source = _Source(path / SAMPLES)
    entries = index_records(read_lines(path / SAMPLES), source)
    if torn_tail(path / SAMPLES):
        log.warning("warning: %s: its last line is incomplete (being written, or torn by a crash) and is left out; "
                    "where no run is writing it, `structbench run --resume %s` cuts it off and runs that sample again",
                    path / SAMPLES, path)
    return entries
