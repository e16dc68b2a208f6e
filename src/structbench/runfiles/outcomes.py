"""Scored outcomes held as columns: what metrics, breakdowns and intervals read, a few dozen bytes an outcome.

A run of a million samples cannot keep a ``Scored`` object (a kilobyte or two) per sample; ``Outcomes`` keeps
numpy columns instead: ids, scores and epochs as arrays, and what repeats (tasks, answers, gold labels, meta
values, clusters) as integer codes into the distinct values, each stored once. It is a ``Sequence[Scored]``, so a
benchmark's ``aggregate`` reads it as it reads a list: each ``Scored`` is built when it is read and dropped after
(``__iter__`` builds them a chunk at a time). The core reads the columns themselves: breakdown groups and epochs
are index arrays (``take``), intervals sort and resample the id, cluster and epoch columns
(``stats.metric.Table``), and the chance baseline answers every sample with every label at once (``answered``).

``OutcomesBuilder`` appends outcomes (a ``Scored``, a ``SampleRecord`` or a ``RecordSummary``: they read alike)
one at a time into growing columns; ``Outcomes.of`` turns a list into columns.
"""

from __future__ import annotations

import json
import math
from collections.abc import Hashable, Iterator, Sequence
from typing import Any, overload

import numpy as np

from structbench.contract.benchmark import CORRECTED, Scored
from structbench.core.trusted import trusted

NONE = -1
"""The code of an absent value (a sample without that meta key, an outcome without a cluster)."""
CHUNK = 4096
"""Outcomes built at once while iterating (their columns read as Python lists together)."""


_PLAIN = frozenset({str, int, float, bool, type(None)})
"""Types whose values ``value_key`` keys by themselves."""


def value_key(value: Any) -> Hashable:
    """What tells values apart as their JSON does: ``1``, ``1.0`` and ``True`` are three values (Python finds them
    equal), two lists with the same items one; lists and mappings by their JSON text (keys sorted)."""
    kind = type(value)
    if value is None or kind in (str, int, float, bool):
        return kind, value
    return kind, json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


class Categories:
    """Distinct values in order of first appearance, each stored once; ``code`` numbers a value."""

    __slots__ = ("_index", "values")

    def __init__(self) -> None:
        self.values: list[Any] = []
        self._index: dict[Hashable, int] = {}

    def code(self, value: Any) -> int:
        key = value_key(value)
        found = self._index.get(key)
        if found is None:
            found = self._index[key] = len(self.values)
            self.values.append(value)
        return found

    def codes(self, values: Sequence[Any]) -> list[int]:
        """``code`` of each value, in order (a plain value already seen is looked up here, without a call)."""
        index, code, plain = self._index, self.code, _PLAIN
        out = []
        for value in values:
            kind = type(value)
            found = index.get((kind, value)) if kind in plain else None
            out.append(code(value) if found is None else found)
        return out

    def __len__(self) -> int:
        return len(self.values)


class Growing:
    """A numpy column appended to one value at a time (its buffer doubles), rows not set holding ``fill``.

    Rows appended in order (each the next row: what a run does for every column of every record) wait in a
    Python list and are written to the array together when it is read or a row is skipped: a list append is a
    fraction of a numpy item assignment, and the run's process sets some two dozen columns per record (#44)."""

    __slots__ = ("_data", "_pending", "dtype", "fill", "size")

    def __init__(self, dtype: Any, fill: Any = 0, size: int = 0) -> None:
        self.dtype = np.dtype(dtype)
        self.fill = fill
        self.size = size
        self._data = np.full(max(16, size), fill, dtype=self.dtype)
        self._pending: list[Any] = []
        """The values of the last ``len(_pending)`` rows, not yet in ``_data``."""

    def _reserve(self, n: int) -> None:
        if n > len(self._data):
            bigger = np.full(max(n, 2 * len(self._data)), self.fill, dtype=self.dtype)
            bigger[: self.size] = self._data[: self.size]
            self._data = bigger

    def _flush(self) -> None:
        pending = self._pending
        if pending:
            end = self.size
            self.size = start = end - len(pending)
            self._reserve(end)
            self._data[start:end] = pending
            self.size = end
            pending.clear()

    def set(self, row: int, value: Any) -> None:
        """Row ``row`` (rows up to it that were never set keep ``fill``).

        Not ``put([row], [value])`` nor a helper shared with it: appending the next row, the run's hot path, would
        cost 3,480 or 2,151 instructions a call instead of 1,529 (callgrind, 100,000 appends)."""
        if row == self.size:  # the next row: kept until the column is read (a run sets every column this way)
            self._pending.append(value)
            self.size = row + 1
            return
        self._flush()
        if row >= self.size:
            self._reserve(row + 1)
            self.size = row + 1
        self._data[row] = value

    def put(self, rows: Sequence[int], values: list[Any]) -> None:
        """Rows ``rows`` (ascending, distinct) set to ``values``: what ``set`` does for each, at once."""
        if not len(rows):
            return
        first, last = rows[0], rows[-1]
        if first == self.size and last - first + 1 == len(rows):  # the next rows, all of them
            self._pending.extend(values)
            self.size = last + 1
            return
        self._flush()
        if last >= self.size:
            self._reserve(last + 1)
            self.size = last + 1
        self._data[np.asarray(rows, dtype=np.int64)] = values

    def grow_to(self, size: int) -> None:
        if size > self.size:
            self._flush()
            self._reserve(size)
            self.size = size

    def array(self) -> np.ndarray:
        """The rows so far (a view: copy it to keep it past the next append)."""
        self._flush()
        return self._data[: self.size]


class Strings:
    """Strings appended one at a time, kept as UTF-8 bytes in numpy chunks (a fixed width each): a short id takes
    its length in bytes, not a Python object's 50 or more. Bytes sort as the strings do (UTF-8 keeps the order of
    code points)."""

    __slots__ = ("_chunks", "_current", "size")

    PER_CHUNK = 65536

    def __init__(self) -> None:
        self._chunks: list[np.ndarray] = []
        self._current: list[bytes] = []
        self.size = 0

    def append(self, text: str) -> None:
        self._current.append(text.encode())
        self.size += 1
        if len(self._current) >= self.PER_CHUNK:
            self._chunks.append(np.array(self._current, dtype=bytes))
            self._current = []

    def extend(self, texts: Sequence[str]) -> None:
        """``append`` each of ``texts``."""
        current = self._current
        current.extend([text.encode() for text in texts])
        self.size += len(texts)
        while len(current) >= self.PER_CHUNK:
            self._chunks.append(np.array(current[:self.PER_CHUNK], dtype=bytes))
            current = self._current = current[self.PER_CHUNK:]

    def array(self) -> np.ndarray:
        """Every string so far, as one ``S`` array (the chunks joined once)."""
        if self._current:
            self._chunks.append(np.array(self._current, dtype=bytes))
            self._current = []
        if len(self._chunks) > 1:
            self._chunks = [np.concatenate(self._chunks)]
        return self._chunks[0] if self._chunks else np.array([], dtype="S1")


class Outcomes(Sequence[Scored]):
    """Scored outcomes as columns (see the module docstring). Immutable: ``take`` and ``answered`` make new ones
    that share the distinct values."""

    __slots__ = ("_corrected", "_tables", "cluster", "epoch", "gold", "ids", "meta", "parsed", "score", "task",
                 "values")

    def __init__(
        self,
        ids: np.ndarray,
        task: np.ndarray,
        parsed: np.ndarray,
        gold: np.ndarray,
        score: np.ndarray,
        values: dict[str, tuple[np.ndarray, np.ndarray]],
        meta: dict[str, np.ndarray],
        cluster: np.ndarray,
        epoch: np.ndarray,
        tables: _Tables,
    ) -> None:
        self.ids = ids
        """(N,) ``S`` array: each outcome's sample id, UTF-8."""
        self.task = task
        """(N,) codes into ``tables.tasks``."""
        self.parsed = parsed
        """(N,) codes into ``tables.answers`` (shared with ``gold``)."""
        self.gold = gold
        self.score = score
        """(N,) float64."""
        self.values = values
        """Metric name -> ((N,) float64 values, (N,) bool: whether the outcome has that value)."""
        self.meta = meta
        """Meta key -> (N,) codes into ``tables.meta`` (``NONE``: the outcome has no such key)."""
        self.cluster = cluster
        """(N,) codes into ``tables.clusters`` (``NONE``: no cluster)."""
        self.epoch = epoch
        """(N,) int32."""
        self._tables = tables
        self._corrected: Outcomes | bool | None = False

    # --- building ---------------------------------------------------------------------------------

    @classmethod
    def of(cls, scored: Sequence[Any]) -> Outcomes:
        """``scored`` (``Scored`` objects, or records) as columns; an ``Outcomes`` as it is."""
        if isinstance(scored, Outcomes):
            return scored
        builder = OutcomesBuilder()
        for s in scored:
            builder.add(s)
        return builder.build()

    # --- the sequence -----------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.score)

    @overload
    def __getitem__(self, index: int) -> Scored: ...
    @overload
    def __getitem__(self, index: slice) -> Outcomes: ...
    def __getitem__(self, index: int | slice) -> Scored | Outcomes:
        if isinstance(index, slice):
            return self.take(np.arange(len(self))[index])
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"outcome {index} of {n}")
        return next(self._rows(np.array([index % n])))

    def __iter__(self) -> Iterator[Scored]:
        for start in range(0, len(self), CHUNK):
            yield from self._rows(np.arange(start, min(start + CHUNK, len(self))))

    def __repr__(self) -> str:
        return f"Outcomes({len(self)} outcomes)"

    def _rows(self, rows: np.ndarray) -> Iterator[Scored]:
        t = self._tables
        tasks, answers, metas, clusters = t.tasks.values, t.answers, t.meta.values, t.clusters.values
        ids = [i.decode() for i in self.ids[rows].tolist()]
        task = [tasks[c] for c in self.task[rows].tolist()]
        parsed = [answers[c] for c in self.parsed[rows].tolist()]
        gold = [answers[c] for c in self.gold[rows].tolist()]
        score = self.score[rows].tolist()
        values = [(name, v[rows].tolist(), has[rows].tolist()) for name, (v, has) in self.values.items()]
        meta = [(key, codes[rows].tolist()) for key, codes in self.meta.items()]
        cluster = [None if c == NONE else clusters[c] for c in self.cluster[rows].tolist()]
        epoch = self.epoch[rows].tolist()
        for k in range(len(rows)):
            yield _scored({
                "id": ids[k], "task": task[k], "parsed": parsed[k], "gold": gold[k], "score": score[k],
                "values": {name: v[k] for name, v, has in values if has[k]},
                "meta": {key: metas[codes[k]] for key, codes in meta if codes[k] != NONE},
                "cluster": cluster[k], "epoch": epoch[k],
            })

    # --- columns ----------------------------------------------------------------------------------

    def take(self, index: np.ndarray | Sequence[int]) -> Outcomes:
        """The outcomes at ``index`` (positions, repeats allowed), in that order."""
        idx = np.asarray(index, dtype=np.int64)
        return Outcomes(
            self.ids[idx], self.task[idx], self.parsed[idx], self.gold[idx], self.score[idx],
            {name: (v[idx], has[idx]) for name, (v, has) in self.values.items()},
            {key: codes[idx] for key, codes in self.meta.items()}, self.cluster[idx], self.epoch[idx], self._tables,
        )

    @property
    def id_array(self) -> np.ndarray:
        """The ids (``S``: sorted as the strings are)."""
        return self.ids

    @property
    def epoch_array(self) -> np.ndarray:
        return self.epoch

    @property
    def score_array(self) -> np.ndarray:
        return self.score

    def cluster_ranks(self) -> np.ndarray:
        """Each outcome's cluster as its rank among the distinct clusters in string order (``NONE`` for none):
        sorting by it sorts by the cluster."""
        names = self._tables.clusters.values
        if not names:
            return np.full(len(self), NONE, dtype=np.int64)
        rank = np.empty(len(names), dtype=np.int64)
        rank[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names))
        return np.where(self.cluster == NONE, NONE, rank[np.maximum(self.cluster, 0)])

    def samples(self) -> int:
        """Distinct sample ids."""
        return len(np.unique(self.ids)) if len(self) else 0

    def labels(self, which: str) -> list[Any]:
        """``parsed`` or ``gold`` of every outcome, in order (the values themselves, shared)."""
        answers = self._tables.answers
        return [answers[c] for c in getattr(self, which).tolist()]

    def groups(self, key: str) -> list[tuple[str, np.ndarray]]:
        """The breakdown ``key`` (``task`` or a meta key): each group's value as text (``str(value)``, as
        ``metrics.json`` names it) and the positions of its outcomes, in order of first appearance; outcomes
        without the key are in none."""
        codes, names = (self.task, self._tables.tasks.values) if key == "task" else \
            (self.meta.get(key), self._tables.meta.values)
        if codes is None or not len(codes):
            return []
        present = np.flatnonzero(codes != NONE)
        if not len(present):
            return []
        texts: dict[str, list[int]] = {}
        for code in np.unique(codes[present]).tolist():
            if names[code] is not None:  # a key whose value is None is in no group, as one without the key
                texts.setdefault(str(names[code]), []).append(code)
        out = []
        for text, group in texts.items():
            rows = present[np.isin(codes[present], group)]
            out.append((int(rows[0]), text, rows))
        return [(text, rows) for _, text, rows in sorted(out, key=lambda item: item[0])]

    def by_epoch(self) -> list[Outcomes]:
        """The outcomes of each epoch, in epoch order (one ``Outcomes`` when there is one epoch)."""
        epochs = np.unique(self.epoch)
        if len(epochs) <= 1:
            return [self]
        return [self.take(np.flatnonzero(self.epoch == e)) for e in epochs]

    def corrected(self) -> Outcomes | None:
        """The structbench-scoring twins of outcomes scored the paper's way (``benchmark.corrected_scored``, for
        every outcome at once): None unless every outcome has them."""
        if self._corrected is not False:
            return self._corrected  # type: ignore[return-value]
        twins = {name.removeprefix(CORRECTED): col for name, col in self.values.items() if name.startswith(CORRECTED)}
        result = None
        if twins and len(self):
            present = np.zeros(len(self), dtype=bool)
            for _, has in twins.values():
                present |= has
            if present.all():
                score = self.score.copy()
                if "score" in twins:
                    v, has = twins.pop("score")
                    score[has] = v[has]
                result = Outcomes(self.ids, self.task, self.parsed, self.gold, score, twins, self.meta, self.cluster,
                                  self.epoch, self._tables)
        self._corrected = result
        return result

    def answered(self, answers: Sequence[Any]) -> Outcomes:
        """These outcomes as if outcome ``i`` had been answered ``answers[i]``: scored 1.0 where that equals its gold,
        no further values (the baselines' trivial predictors, ``stats.baselines``)."""
        t = self._tables
        codes = np.fromiter((t.answer_codes.code(a) for a in answers), dtype=np.int32, count=len(answers))
        gold = t.answers
        score = np.fromiter((float(a == gold[g]) for a, g in zip(answers, self.gold.tolist(), strict=True)),
                            dtype=float, count=len(answers))
        return Outcomes(self.ids, self.task, codes, self.gold, score, {}, self.meta, self.cluster, self.epoch, t)

    def repeated(self, times: int) -> Outcomes:
        """Every outcome ``times`` times in a row (outcome ``i``'s copies at ``i * times`` to
        ``i * times + times - 1``)."""
        return self.take(np.repeat(np.arange(len(self)), times))


def _scored(fields: dict[str, Any]) -> Scored:
    """A ``Scored`` of fields already valid (read back from its columns), built without validating them again (an
    aggregate may read every outcome several times, each built anew)."""
    return trusted(Scored, fields)


class _Tables:
    """The distinct values an ``Outcomes`` and the ones made from it share."""

    __slots__ = ("answer_codes", "answers", "clusters", "meta", "tasks")

    def __init__(self) -> None:
        self.tasks = Categories()
        self.answer_codes = Categories()
        self.answers = self.answer_codes.values
        self.meta = Categories()
        self.clusters = Categories()


class OutcomesBuilder:
    """Outcomes appended one at a time (``add``), into columns that grow; ``build`` gives the ``Outcomes``."""

    def __init__(self) -> None:
        self._tables = _Tables()
        self.ids = Strings()
        self.task = Growing(np.int32)
        self.parsed = Growing(np.int32)
        self.gold = Growing(np.int32)
        self.score = Growing(np.float64)
        self.values: dict[str, tuple[Growing, Growing]] = {}
        self.meta: dict[str, Growing] = {}
        self.cluster = Growing(np.int32, NONE)
        self.epoch = Growing(np.int32)

    def __len__(self) -> int:
        return self.ids.size

    @property
    def answers(self) -> list[Any]:
        """The distinct answers and gold values so far: what the codes in ``parsed`` and ``gold`` stand for."""
        return self._tables.answers

    def add(self, s: Any) -> int:
        """Append one outcome (anything with ``Scored``'s fields); returns its row."""
        t, row = self._tables, self.ids.size
        self.ids.append(s.id)
        self.task.set(row, t.tasks.code(s.task))
        self.parsed.set(row, t.answer_codes.code(s.parsed))
        self.gold.set(row, t.answer_codes.code(s.gold))
        self.score.set(row, s.score)
        for name, value in s.values.items():
            column = self.values.get(name)
            if column is None:
                column = self.values[name] = (Growing(np.float64, math.nan), Growing(np.bool_, False))
            column[0].set(row, value)
            column[1].set(row, True)
        for key, value in s.meta.items():
            codes = self.meta.get(key)
            if codes is None:
                codes = self.meta[key] = Growing(np.int32, NONE)
            codes.set(row, t.meta.code(value))
        if s.cluster is not None:
            self.cluster.set(row, t.clusters.code(s.cluster))
        self.epoch.set(row, s.epoch)
        return row

    def extend(self, batch: Sequence[Any]) -> None:
        """Append outcomes in bulk: what ``add`` does for each, a column at a time (the same codes, in the same
        order)."""
        t, start = self._tables, self.ids.size
        rows = range(start, start + len(batch))
        self.ids.extend([s.id for s in batch])
        self.task.put(rows, t.tasks.codes([s.task for s in batch]))
        answers = t.answer_codes.codes([a for s in batch for a in (s.parsed, s.gold)])  # in ``add``'s order
        self.parsed.put(rows, answers[0::2])
        self.gold.put(rows, answers[1::2])
        self.score.put(rows, [s.score for s in batch])
        values: dict[str, tuple[list[int], list[Any]]] = {}
        meta_rows: list[int] = []
        meta_keys: list[str] = []
        meta_values: list[Any] = []
        clustered: tuple[list[int], list[Any]] = ([], [])
        for row, s in zip(rows, batch, strict=True):
            for name, value in s.values.items():
                found = values.get(name)
                if found is None:
                    found = values[name] = ([], [])
                found[0].append(row)
                found[1].append(value)
            for key, value in s.meta.items():
                meta_rows.append(row)
                meta_keys.append(key)
                meta_values.append(value)
            if s.cluster is not None:
                clustered[0].append(row)
                clustered[1].append(s.cluster)
        for name, (at, vals) in values.items():
            column = self.values.get(name)
            if column is None:
                column = self.values[name] = (Growing(np.float64, math.nan), Growing(np.bool_, False))
            column[0].put(at, vals)
            column[1].put(at, [True] * len(at))
        meta: dict[str, tuple[list[int], list[int]]] = {}
        for row, key, code in zip(meta_rows, meta_keys, t.meta.codes(meta_values), strict=True):
            found = meta.get(key)
            if found is None:
                found = meta[key] = ([], [])
            found[0].append(row)
            found[1].append(code)
        for key, (at, codes) in meta.items():
            column_of = self.meta.get(key)
            if column_of is None:
                column_of = self.meta[key] = Growing(np.int32, NONE)
            column_of.put(at, codes)
        self.cluster.put(clustered[0], t.clusters.codes(clustered[1]))
        self.epoch.put(rows, [s.epoch for s in batch])

    def build(self, rows: np.ndarray | None = None) -> Outcomes:
        """The outcomes so far (those at ``rows`` when given), as an ``Outcomes`` of their own (copies)."""
        n = self.ids.size
        for column in (self.task, self.parsed, self.gold, self.score, self.cluster, self.epoch,
                       *(c for pair in self.values.values() for c in pair), *self.meta.values()):
            column.grow_to(n)
        pick = slice(None) if rows is None else np.asarray(rows, dtype=np.int64)

        def col(c: Growing) -> np.ndarray:
            return np.array(c.array()[pick])

        return Outcomes(
            np.array(self.ids.array()[pick]), col(self.task), col(self.parsed), col(self.gold), col(self.score),
            {name: (col(v), col(has)) for name, (v, has) in self.values.items()},
            {key: col(codes) for key, codes in self.meta.items()}, col(self.cluster), col(self.epoch), self._tables,
        )
