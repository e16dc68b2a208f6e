"""What a run keeps in memory of its records: columns per result entry, a few dozen bytes a record.

The full records are in ``samples.jsonl``; the run needs of them what its metrics, failure summary, costs and
resume read. ``KeptRecords`` holds it as columns (``structbench.runfiles.outcomes``: ids, scores, epochs, codes of the
answers, meta values and clusters) plus each record's error kind, message (each distinct message once), cut-off
replies and tokens, per (benchmark, variant, strategy, model). A sample tried again appends a row: as on disk,
the last row of a key is its record (``latest``). ``settled`` answers whether an earlier session finished a key
from a sorted array of key hashes, so resuming a run of a million samples holds no object per sample.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np

from structbench.backends.usage import TOKEN_FIELDS, Usage, UsageKey
from structbench.core.trusted import trusted
from structbench.runfiles.outcomes import NONE, Categories, Growing, Outcomes, OutcomesBuilder
from structbench.runfiles.records import SETTLED_KINDS, UNSCORED_KINDS, ErrorKind, RecordSummary

EntryKey = tuple[str, str, str, str, str]
"""(benchmark, variant, strategy, model, sweep cell): the records of one result entry."""

KINDS: tuple[ErrorKind | None, ...] = (None, "model", "harness", "context", "turns")
"""Error kinds by code (0: no error)."""
UNCOUNTED = tuple(KINDS.index(k) for k in UNSCORED_KINDS)
SETTLED = tuple(KINDS.index(k) for k in SETTLED_KINDS)
"""Codes of the records that take no part in metrics (``RecordSummary.counted``)."""
USAGE_FIELDS = ("calls", "unknown", *TOKEN_FIELDS)
UNKNOWN = -1
"""A token count the calls did not report (None)."""


def key_hash(sample_id: str, epoch: int) -> int:
    """The hash a record's (id, epoch) is looked up by (this process's; ids are confirmed after a match)."""
    return hash((sample_id, epoch))


@dataclass(frozen=True)
class Settled:
    """The keys an earlier session settled: their hashes, sorted, and each one's id and epoch (to confirm a match)."""

    hashes: np.ndarray
    ids: np.ndarray
    epochs: np.ndarray


class EntryRecords:
    """The records of one result entry, as columns."""

    def __init__(self, key: EntryKey, messages: Categories) -> None:
        self.key = key
        self.outcomes = OutcomesBuilder()
        self.kind = Growing(np.int8)
        self.error = Growing(np.int32, NONE)
        """Codes into the shared error messages (``NONE``: no error)."""
        self.reasoning_cut_off = Growing(np.bool_)
        self.replies_cut_off = Growing(np.int32)
        self.usage: dict[UsageKey, dict[str, Growing]] = {}
        self._messages = messages
        self._settled: Settled | None = None

    def __len__(self) -> int:
        return len(self.outcomes)

    def add(self, record: Any) -> None:
        """Append a record (a ``SampleRecord`` or its ``RecordSummary``)."""
        row = self.outcomes.add(record)
        if record.error_kind is not None:
            self.kind.set(row, KINDS.index(record.error_kind))
        if record.error is not None:
            self.error.set(row, self._messages.code(record.error))
        if record.reasoning_cut_off:
            self.reasoning_cut_off.set(row, True)
        if record.replies_cut_off:
            self.replies_cut_off.set(row, record.replies_cut_off)
        for group, usage in record.usage_by():
            columns = self.usage.get(group)
            if columns is None:
                columns = self.usage[group] = {
                    name: Growing(np.int64, 0 if name in ("calls", "unknown") else UNKNOWN) for name in USAGE_FIELDS}
            for name, column in columns.items():
                value = getattr(usage, name)
                if value is not None:
                    column.set(row, value)

    def _sync(self) -> None:
        """Every column as long as the rows (a column grows only when a row sets it)."""
        n = len(self)
        for column in (self.outcomes.epoch, self.kind, self.error, self.reasoning_cut_off, self.replies_cut_off,
                       *(c for columns in self.usage.values() for c in columns.values())):
            column.grow_to(n)

    def _columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(ids, epochs, error kinds) of every row so far."""
        self._sync()
        return self.outcomes.ids.array(), self.outcomes.epoch.array(), self.kind.array()

    def latest(self) -> np.ndarray:
        """The rows that are their key's record (its last row), in row order."""
        ids, epochs, _ = self._columns()
        if not len(ids):
            return np.zeros(0, dtype=np.int64)
        rows = np.arange(len(ids))
        order = np.lexsort((rows, epochs, ids))
        last = np.ones(len(order), dtype=bool)
        last[:-1] = (ids[order][1:] != ids[order][:-1]) | (epochs[order][1:] != epochs[order][:-1])
        return np.sort(order[last])

    def freeze_settled(self) -> None:
        """Index the keys settled so far (finished, or too long for the model): what ``settled`` looks up."""
        ids, epochs, kinds = self._columns()
        rows = self.latest()
        done = rows[(self.error.array()[rows] == NONE) | np.isin(kinds[rows], SETTLED)]
        hashes = np.fromiter((key_hash(i.decode(), e) for i, e in zip(ids[done].tolist(), epochs[done].tolist(),
                                                                        strict=True)),
                             dtype=np.int64, count=len(done))
        order = np.argsort(hashes, kind="stable")
        self._settled = Settled(hashes[order], ids[done][order], epochs[done][order])

    def settled(self, sample_id: str, epoch: int) -> bool:
        """Whether an earlier session settled (id, epoch) (as of ``freeze_settled``)."""
        found = self._settled
        if found is None or not len(found.hashes):
            return False
        h = key_hash(sample_id, epoch)
        i = int(np.searchsorted(found.hashes, h))
        encoded = sample_id.encode()
        while i < len(found.hashes) and found.hashes[i] == h:  # confirm: another key may share the hash
            if found.ids[i] == encoded and found.epochs[i] == epoch:
                return True
            i += 1
        return False

    def settled_count(self, epochs: int) -> int:
        """How many keys of the first ``epochs`` epochs were settled (as of ``freeze_settled``)."""
        if self._settled is None:
            return 0
        return int((self._settled.epochs < epochs).sum())

    def usage_groups(self, rows: np.ndarray) -> dict[UsageKey, Usage]:
        """The calls of ``rows``' records, summed per (model, batch, reused) (``records.usage_groups``)."""
        self._sync()
        out = {}
        for group, columns in self.usage.items():
            sums: dict[str, int | None] = {}
            for name, column in columns.items():
                values = column.array()[rows]
                if name in ("calls", "unknown"):
                    sums[name] = int(values.sum())
                else:
                    known = values[values != UNKNOWN]
                    sums[name] = int(known.sum()) if len(known) else None
            if sums["calls"]:
                out[group] = Usage(**sums)  # type: ignore[arg-type]
        return out

    def counts(self, rows: np.ndarray) -> Counts:
        """Errors, cut-off replies and the rows that take part in metrics, among ``rows``."""
        self._sync()
        kinds = self.kind.array()[rows]
        counted = ~np.isin(kinds, UNCOUNTED)
        return Counts(
            counted=rows[counted],
            errors=int((kinds == KINDS.index("model")).sum()),
            harness_errors=int((kinds == KINDS.index("harness")).sum()),
            too_long=int((kinds == KINDS.index("context")).sum()),
            turn_limit=int((kinds == KINDS.index("turns")).sum()),
            reasoning_cut_off=int(self.reasoning_cut_off.array()[rows][counted].sum()),
            replies_cut_off=int(self.replies_cut_off.array()[rows].sum()),
        )

    def failed(self, rows: np.ndarray) -> np.ndarray:
        """Which of ``rows`` failed (a model or harness error: not a prompt too long for the model, nor a tool loop
        at its turn limit), as a mask."""
        self._sync()
        return (self.error.array()[rows] != NONE) & ~np.isin(self.kind.array()[rows], SETTLED)

    def scored(self, rows: np.ndarray) -> Outcomes:
        """The outcomes of ``rows`` (columns of their own)."""
        return self.outcomes.build(rows)

    def answer_counts(self, rows: np.ndarray) -> tuple[Counter[str], Counter[str]]:
        """How often each label was answered and is the gold among ``rows``' counted records whose gold is a label
        (``report.summary.answer_counts`` of their summaries, in the same order), from the answer codes."""
        self._sync()
        counted = rows[~np.isin(self.kind.array()[rows], UNCOUNTED)]
        outcomes = self.outcomes
        answers = outcomes.answers
        label = [isinstance(a, str) for a in answers]
        pairs = Counter(zip(outcomes.parsed.array()[counted].tolist(), outcomes.gold.array()[counted].tolist(),
                            strict=True))
        parsed: Counter[str] = Counter()
        gold: Counter[str] = Counter()
        for (p, g), n in pairs.items():  # in order of first appearance, as the records are read
            if label[g]:
                parsed[answers[p] if label[p] else "(none)"] += n
                gold[answers[g]] += n
        return parsed, gold

    def summaries(self, rows: np.ndarray) -> Iterator[RecordSummary]:
        """``rows`` as ``RecordSummary`` objects, built as they are read."""
        bench, variant, strategy, model, cell = self.key
        self._sync()
        messages = self._messages.values
        for start in range(0, len(rows), 4096):
            chunk = rows[start:start + 4096]
            kinds, errors = self.kind.array()[chunk].tolist(), self.error.array()[chunk].tolist()
            cut, replies = self.reasoning_cut_off.array()[chunk].tolist(), self.replies_cut_off.array()[chunk].tolist()
            usage = [(group, {name: c.array()[chunk].tolist() for name, c in columns.items()})
                     for group, columns in self.usage.items()]
            for k, s in enumerate(self.outcomes.build(chunk)):
                groups = tuple(  # the columns' own counts: built without validating them again
                    (group, trusted(Usage, {n: None if v[k] == UNKNOWN else v[k] for n, v in values.items()}))
                    for group, values in usage if values["calls"][k]
                )
                yield RecordSummary(
                    bench, variant, strategy, model, s.id, s.task, s.parsed, s.gold, s.score, s.values, s.meta,
                    s.cluster, s.epoch, None if errors[k] == NONE else messages[errors[k]], KINDS[kinds[k]], cut[k],
                    replies[k], groups, cell,
                )


@dataclass(frozen=True)
class Counts:
    """What ``compute_result`` counts apart from the scored outcomes."""

    counted: np.ndarray
    """The rows that take part in metrics."""
    errors: int
    harness_errors: int
    too_long: int
    turn_limit: int
    reasoning_cut_off: int
    replies_cut_off: int


class KeptRecords:
    """Every record of a run directory, as columns per result entry (see the module docstring)."""

    def __init__(self) -> None:
        self.entries: dict[EntryKey, EntryRecords] = {}
        self._messages = Categories()

    def __len__(self) -> int:
        return sum(len(e) for e in self.entries.values())

    def entry(self, key: EntryKey) -> EntryRecords:
        found = self.entries.get(key)
        if found is None:
            found = self.entries[key] = EntryRecords(key, self._messages)
        return found

    def add(self, record: Any) -> None:
        """Append a record (a ``SampleRecord`` or its ``RecordSummary``)."""
        self.entry((record.benchmark, record.variant, record.strategy, record.model, record.cell)).add(record)

    def freeze_settled(self) -> None:
        for entry in self.entries.values():
            entry.freeze_settled()

    def settled(self, key: EntryKey, sample_id: str, epoch: int) -> bool:
        """Whether an earlier session finished (or found too long) this sample's epoch under the entry ``key``."""
        found = self.entries.get(key)
        return found is not None and found.settled(sample_id, epoch)

    def usage_groups(self) -> Iterator[tuple[UsageKey, Usage]]:
        """The calls of every current record (the last of each key), per (model, batch, reused) and entry."""
        for entry in self.entries.values():
            yield from entry.usage_groups(entry.latest()).items()


class RecordView(Sequence[RecordSummary]):
    """Records as a sequence of ``RecordSummary`` built when read (``Run.records``): a run of a million samples
    hands them out without holding a million objects."""

    def __init__(self, parts: Sequence[tuple[EntryRecords, np.ndarray]]) -> None:
        self._parts = list(parts)
        self._ends = np.cumsum([len(rows) for _, rows in self._parts], dtype=np.int64)

    def __len__(self) -> int:
        return int(self._ends[-1]) if len(self._ends) else 0

    @overload
    def __getitem__(self, index: int) -> RecordSummary: ...
    @overload
    def __getitem__(self, index: slice) -> list[RecordSummary]: ...
    def __getitem__(self, index: int | slice) -> RecordSummary | list[RecordSummary]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        if not -len(self) <= index < len(self):
            raise IndexError(f"record {index} of {len(self)}")
        index %= len(self)
        part = int(np.searchsorted(self._ends, index, side="right"))
        start = int(self._ends[part - 1]) if part else 0
        entry, rows = self._parts[part]
        return next(entry.summaries(rows[index - start: index - start + 1]))

    def __iter__(self) -> Iterator[RecordSummary]:
        for entry, rows in self._parts:
            yield from entry.summaries(rows)

    def answer_counts(self) -> dict[tuple[str, str, str, str], tuple[Counter[str], Counter[str]]]:
        """``report.summary.answer_counts`` of these records, counted from their columns: the summary paragraph
        reads it at the end of every run, and building each record's summary for it cost more than the rest."""
        out: dict[tuple[str, str, str, str], tuple[Counter[str], Counter[str]]] = {}
        for entry, rows in self._parts:
            parsed, gold = entry.answer_counts(rows)
            if gold:
                bench, variant, strategy, _, cell = entry.key
                into = out.setdefault((bench, variant, strategy, cell), (Counter(), Counter()))
                into[0].update(parsed)
                into[1].update(gold)
        return out
