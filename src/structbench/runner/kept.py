"""What a run keeps in memory of its records: the run files' columns per result entry (``runfiles.columns``), a few
dozen bytes a record, and resume's lookup of the keys an earlier session settled.

The full records are in ``samples.jsonl``; the run needs of them what its metrics, failure summary, costs and
resume read. The store (``runner.store``) adds every record to ``KeptRecords`` as it is written, whether this
process made it or a worker sent it (a ``SampleRecord``, or a worker's ``SummaryRow``: they read alike).
``settled`` answers whether an earlier session finished a key from a sorted array of key hashes, so resuming a run of
a million samples holds no object per sample.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from structbench.runfiles.columns import NONE, SETTLED, EntryColumns, EntryKey, RecordColumns
from structbench.runfiles.outcomes import Categories, Outcomes

WAITING = 512
"""Records an entry holds before it appends them to its columns (read sooner, it appends them then): few enough
that the full records a resumed run reads back take little room while they wait."""


def key_hash(sample_id: str, epoch: int) -> int:
    """The hash a record's (id, epoch) is looked up by (this process's; ids are confirmed after a match)."""
    return hash((sample_id, epoch))


@dataclass(frozen=True)
class Settled:
    """The keys an earlier session settled: their hashes, sorted, and each one's id and epoch (to confirm a match)."""

    hashes: np.ndarray
    ids: np.ndarray
    epochs: np.ndarray


class EntryRecords(RecordColumns):
    """The records of one result entry, as columns, with the keys an earlier session settled."""

    def __init__(self, key: EntryKey, messages: Categories) -> None:
        super().__init__(key, messages)
        self._settled: Settled | None = None
        self._waiting: list[Any] = []
        """Records added and not yet in the columns: they go in together (``extend``) when the columns are read, or
        ``WAITING`` at a time."""

    def add(self, record: Any) -> int:
        """Keep a record to append with others (``RecordColumns.extend``, in bulk, #44); returns its row."""
        waiting = self._waiting
        waiting.append(record)
        if len(waiting) >= WAITING:
            self._take_waiting()
        return len(self) - 1

    def __len__(self) -> int:
        return len(self.outcomes) + len(self._waiting)

    def _take_waiting(self) -> None:
        if self._waiting:
            waiting, self._waiting = self._waiting, []
            self.extend(waiting)

    def _sync(self) -> None:
        self._take_waiting()
        super()._sync()

    def scored(self, rows: np.ndarray) -> Outcomes:
        self._take_waiting()
        return super().scored(rows)

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


class KeptRecords(EntryColumns[EntryRecords]):
    """Every record of a run directory, as columns per result entry (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__(EntryRecords)

    def freeze_settled(self) -> None:
        for entry in self.entries.values():
            entry.freeze_settled()

    def settled(self, key: EntryKey, sample_id: str, epoch: int) -> bool:
        """Whether an earlier session finished (or found too long) this sample's epoch under the entry ``key``."""
        found = self.entries.get(key)
        return found is not None and found.settled(sample_id, epoch)
