"""A run's records as columns per result entry, a few dozen bytes a record: the one column holder of the run files.

The runner keeps its records in them as it goes (``runner.kept``, which adds resume's lookup), ``rundir`` reads a
finished run's ``samples.jsonl`` into them, and the view fills them from a file being written (``view.watch``);
the metrics (``analysis.record_metrics``) and the view's counts read them alike. An entry's ``RecordColumns`` hold
each record's outcome (``runfiles.outcomes``: ids, scores, epochs, codes of the answers, meta values and clusters),
its error kind and message (each distinct message once, shared by the entries of one ``EntryColumns``), its cut-off
thought and replies and its calls' tokens per (model, batch, reused). A sample tried again appends a row: as on disk,
the last row of a key is its record (``latest``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, overload

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
"""Codes of the records that take no part in metrics (``RecordSummary.counted``)."""
SETTLED = tuple(KINDS.index(k) for k in SETTLED_KINDS)
"""Codes of the errors that settle a key all the same (a prompt too long, a tool loop at its turn limit)."""
USAGE_FIELDS = ("calls", "unknown", *TOKEN_FIELDS)
UNKNOWN = -1
"""A token count the calls did not report (None)."""


def last_rows(ids: np.ndarray, epochs: np.ndarray) -> np.ndarray:
    """The last row of each (id, epoch), in (id, epoch) order."""
    if not len(ids):
        return np.zeros(0, dtype=np.int64)
    rows = np.arange(len(ids))
    order = np.lexsort((rows, epochs, ids))
    last = np.ones(len(order), dtype=bool)
    last[:-1] = (ids[order][1:] != ids[order][:-1]) | (epochs[order][1:] != epochs[order][:-1])
    return order[last]


class RecordColumns:
    """The records of one result entry, as columns (see the module docstring); read by rows (indices of its
    records, in the order they were added)."""

    def __init__(self, key: EntryKey, messages: Categories) -> None:
        self.key = key
        self.outcomes = OutcomesBuilder()
        self.kind = Growing(np.int8)
        self.error = Growing(np.int32, NONE)
        """Codes into the shared error messages (``NONE``: no error)."""
        self.reasoning_cut_off = Growing(np.bool_)
        self.replies_cut_off = Growing(np.int32)
        self.turn_limit = Growing(np.bool_)
        """Scored at the tool loop's turn limit (``SampleRecord.turn_limit``)."""
        self.replies_unclosed = Growing(np.int32)
        self.usage: dict[UsageKey, dict[str, Growing]] = {}
        self._messages = messages

    def __len__(self) -> int:
        return len(self.outcomes)

    def add(self, record: Any) -> int:
        """Append a record (a ``SampleRecord``, its ``RecordSummary`` or ``SummaryRow``); returns its row."""
        row = self.outcomes.add(record)
        if record.error_kind is not None:
            self.kind.set(row, KINDS.index(record.error_kind))
        if record.error is not None:
            self.error.set(row, self._messages.code(record.error))
        if record.reasoning_cut_off:
            self.reasoning_cut_off.set(row, True)
        if record.replies_cut_off:
            self.replies_cut_off.set(row, record.replies_cut_off)
        if record.turn_limit:
            self.turn_limit.set(row, True)
        if record.replies_unclosed:
            self.replies_unclosed.set(row, record.replies_unclosed)
        for group, usage in record.usage_by():
            columns = self._usage_columns(group)
            for name, column in columns.items():
                value = getattr(usage, name)
                if value is not None:
                    column.set(row, value)
        return row

    def extend(self, records: Sequence[Any]) -> None:
        """Append records in bulk: what ``add`` does for each, a column at a time (the run keeps what its workers
        finish this way, ``runner.kept``: a few calls a column instead of some two dozen a record, #44)."""
        start = len(self.outcomes)
        self.outcomes.extend(records)
        sparse: dict[Growing, tuple[list[int], list[Any]]] = {
            column: ([], []) for column in (self.kind, self.error, self.reasoning_cut_off, self.replies_cut_off,
                                            self.turn_limit, self.replies_unclosed)}
        usage: dict[tuple[UsageKey, str], tuple[list[int], list[Any]]] = {}
        code = self._messages.code
        for row, record in enumerate(records, start):
            if record.error_kind is not None:
                at = sparse[self.kind]
                at[0].append(row)
                at[1].append(KINDS.index(record.error_kind))
            if record.error is not None:
                at = sparse[self.error]
                at[0].append(row)
                at[1].append(code(record.error))
            if record.reasoning_cut_off:
                at = sparse[self.reasoning_cut_off]
                at[0].append(row)
                at[1].append(True)
            if record.replies_cut_off:
                at = sparse[self.replies_cut_off]
                at[0].append(row)
                at[1].append(record.replies_cut_off)
            if record.turn_limit:
                at = sparse[self.turn_limit]
                at[0].append(row)
                at[1].append(True)
            if record.replies_unclosed:
                at = sparse[self.replies_unclosed]
                at[0].append(row)
                at[1].append(record.replies_unclosed)
            for group, calls in record.usage_by():
                self._usage_columns(group)
                for name in USAGE_FIELDS:
                    value = getattr(calls, name)
                    if value is not None:
                        into = usage.get((group, name))
                        if into is None:
                            into = usage[group, name] = ([], [])
                        into[0].append(row)
                        into[1].append(value)
        for column, (rows, values) in sparse.items():
            column.put(rows, values)
        for (group, name), (rows, values) in usage.items():
            self.usage[group][name].put(rows, values)

    def _usage_columns(self, group: UsageKey) -> dict[str, Growing]:
        """The token columns of ``group`` (made when it first comes)."""
        columns = self.usage.get(group)
        if columns is None:
            columns = self.usage[group] = {
                name: Growing(np.int64, 0 if name in ("calls", "unknown") else UNKNOWN) for name in USAGE_FIELDS}
        return columns

    def _sync(self) -> None:
        """Every column as long as the rows (a column grows only when a row sets it)."""
        n = len(self)
        for column in (self.outcomes.epoch, self.kind, self.error, self.reasoning_cut_off, self.replies_cut_off,
                       self.turn_limit, self.replies_unclosed,
                       *(c for columns in self.usage.values() for c in columns.values())):
            column.grow_to(n)

    def _columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(ids, epochs, error kinds) of every row so far."""
        self._sync()
        return self.outcomes.ids.array(), self.outcomes.epoch.array(), self.kind.array()

    def current(self) -> np.ndarray:
        """The rows that are their key's record (its last row), in (id, epoch) order: how readers of a finished run
        list them (``samples.jsonl`` is in completion order, which varies from run to run)."""
        ids, epochs, _ = self._columns()
        return last_rows(ids, epochs)

    def latest(self) -> np.ndarray:
        """The rows that are their key's record (its last row), in row order: how the run computes its metrics."""
        return np.sort(self.current())

    def epochs(self, rows: np.ndarray) -> np.ndarray:
        """The epochs of ``rows``."""
        self._sync()
        return self.outcomes.epoch.array()[rows]

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

    def counting(self, rows: np.ndarray) -> np.ndarray:
        """Which of ``rows`` take part in metrics (all but harness errors, prompts too long, turn limits), as a
        mask."""
        self._sync()
        return ~np.isin(self.kind.array()[rows], UNCOUNTED)

    def counted(self, rows: np.ndarray) -> np.ndarray:
        """Those of ``rows`` that take part in metrics."""
        return rows[self.counting(rows)]

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
            turn_limit_scored=int(self.turn_limit.array()[rows][counted].sum()),
            reasoning_cut_off=int(self.reasoning_cut_off.array()[rows][counted].sum()),
            replies_cut_off=int(self.replies_cut_off.array()[rows].sum()),
            replies_unclosed=int(self.replies_unclosed.array()[rows].sum()),
        )

    def failed(self, rows: np.ndarray) -> np.ndarray:
        """Which of ``rows`` failed (a model or harness error: not a prompt too long for the model, nor a tool loop
        at its turn limit), as a mask."""
        self._sync()
        return (self.error.array()[rows] != NONE) & ~np.isin(self.kind.array()[rows], SETTLED)

    def with_error(self, rows: np.ndarray) -> int:
        """How many of ``rows`` hold an error (of any kind)."""
        self._sync()
        return int((self.error.array()[rows] != NONE).sum())

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

    def summaries(self, rows: np.ndarray, *, usage: bool = True) -> Iterator[RecordSummary]:
        """``rows`` as ``RecordSummary`` objects, built as they are read (their calls' usage left out unless
        ``usage``: what reads a finished run sums it from the columns, ``usage_groups``)."""
        bench, variant, strategy, model, cell = self.key
        self._sync()
        messages = self._messages.values
        groups_of = self.usage.items() if usage else ()
        for start in range(0, len(rows), 4096):
            chunk = rows[start:start + 4096]
            kinds, errors = self.kind.array()[chunk].tolist(), self.error.array()[chunk].tolist()
            cut, replies = self.reasoning_cut_off.array()[chunk].tolist(), self.replies_cut_off.array()[chunk].tolist()
            at_limit = self.turn_limit.array()[chunk].tolist()
            unclosed = self.replies_unclosed.array()[chunk].tolist()
            calls = [(group, {name: c.array()[chunk].tolist() for name, c in columns.items()})
                     for group, columns in groups_of]
            for k, s in enumerate(self.outcomes.build(chunk)):
                groups = tuple(  # the columns' own counts: built without validating them again
                    (group, trusted(Usage, {n: None if v[k] == UNKNOWN else v[k] for n, v in values.items()}))
                    for group, values in calls if values["calls"][k]
                )
                yield RecordSummary(
                    bench, variant, strategy, model, s.id, s.task, s.parsed, s.gold, s.score, s.values, s.meta,
                    s.cluster, s.epoch, None if errors[k] == NONE else messages[errors[k]], KINDS[kinds[k]], cut[k],
                    replies[k], unclosed[k], groups, cell, at_limit[k],
                )


C = TypeVar("C", bound=RecordColumns)


@dataclass(frozen=True)
class Counts:
    """What ``compute_result`` counts apart from the scored outcomes."""

    counted: np.ndarray
    """The rows that take part in metrics."""
    errors: int
    harness_errors: int
    too_long: int
    turn_limit: int
    turn_limit_scored: int
    reasoning_cut_off: int
    replies_cut_off: int
    replies_unclosed: int


class EntryColumns(Generic[C]):
    """Records of several result entries, as columns per entry (made by ``make``: ``RecordColumns``, or the runner's
    that add resume's lookup) sharing one table of error messages."""

    def __init__(self, make: Callable[[EntryKey, Categories], C]) -> None:
        self.entries: dict[EntryKey, C] = {}
        self._make = make
        self._messages = Categories()

    def __len__(self) -> int:
        return sum(len(e) for e in self.entries.values())

    def entry(self, key: EntryKey) -> C:
        """The records of ``key`` (an empty entry made for it when it has none yet)."""
        found = self.entries.get(key)
        if found is None:
            found = self.entries[key] = self._make(key, self._messages)
        return found

    def add(self, record: Any) -> None:
        """Append a record (a ``SampleRecord``, its ``RecordSummary`` or ``SummaryRow``)."""
        self.entry((record.benchmark, record.variant, record.strategy, record.model, record.cell)).add(record)

    def usage_groups(self) -> Iterator[tuple[UsageKey, Usage]]:
        """The calls of every current record (the last of each key), per (model, batch, reused) and entry."""
        for entry in self.entries.values():
            yield from entry.usage_groups(entry.latest()).items()


class RecordView(Sequence[RecordSummary]):
    """Records as a sequence of ``RecordSummary`` built when read (``Run.records``): a run of a million samples
    hands them out without holding a million objects."""

    def __init__(self, parts: Sequence[tuple[RecordColumns, np.ndarray]]) -> None:
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
