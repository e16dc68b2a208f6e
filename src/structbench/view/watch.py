"""One run directory followed by the view: its manifest, heartbeat and metrics re-read when they change, its records
read incrementally (``runfiles.recordlines.RecordTail``) into the run files' columns (``runfiles.columns``, those a
run keeps of them), and from those its status, progress, result entries and the sample browser's answers.

Nothing here writes: files are opened for reading only, and the run's lock is looked up, never taken.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from structbench.backends.prices import Prices, totals
from structbench.backends.usage import Usage, UsageKey, UsageTotals, totals_cell
from structbench.core.errors import StructbenchError
from structbench.report.runs import BenchmarkCache
from structbench.runfiles.cells import cell_options
from structbench.runfiles.columns import EntryColumns, EntryKey, RecordColumns
from structbench.runfiles.heartbeat import Heartbeat, read_heartbeat
from structbench.runfiles.manifest import INTERRUPTED, TERMINATED, Manifest, read_manifest
from structbench.runfiles.outcomes import Growing
from structbench.runfiles.recordlines import CHUNK, RecordTail, record_at
from structbench.runfiles.records import SampleRecord
from structbench.runfiles.results import MetricsFile, read_metrics
from structbench.runfiles.runformat import LOCK, MANIFEST, METRICS, SAMPLES
from structbench.view import liveness
from structbench.view.live import Snapshot, entry_json, label, live_entries
from structbench.view.samples import OUTCOMES, SEARCH_LINES, Columns, Query, detail, haystack, read_lines, row

READ_PER_REFRESH = 64 * 1024 * 1024
"""Bytes of new records read at most per refresh: a large finished run is caught up with over a few refreshes."""
MAX_FILE = 16 * 1024 * 1024
"""A manifest or metrics file larger than this is not read (each holds kilobytes)."""
MAX_PROBLEMS = 20
LIVE_EVERY = 1.0
"""Seconds at least between two computations of a running run's entries (more when one takes long)."""
GROUP_VALUES = 200
"""Values of a breakdown offered at most in the sample browser's group filter."""
FAILED_NOTE = ("the process that ran it ended without recording how (killed?); `structbench run --resume {path}` "
               "continues it")


def stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


@dataclass
class Loaded:
    """A small file of the run (manifest or metrics) as last read, and when."""

    stamp: tuple[int, int] | None = None
    value: Any = None
    error: str | None = None


class RunWatch:
    """A run directory, followed (see the module docstring). Thread-safe: the server reads it from worker threads."""

    def __init__(self, path: Path, run_id: str, benches: BenchmarkCache, *, resamples: int) -> None:
        self.path = path
        self.id = run_id
        self.benches = benches
        self.resamples = resamples
        self._lock = threading.Lock()
        self._manifest = Loaded()
        self._metrics = Loaded()
        self.heartbeat: Heartbeat | None = None
        self.tail = RecordTail(self.path / SAMPLES)
        self.version = 0
        """Counts the records read (and restarts): what the live entries were computed at is compared with it."""
        self._forget()
        self._live: list[dict[str, Any]] = []
        self._live_version = -1
        self._next_live = 0.0
        self.computing = False

    def _forget(self) -> None:
        """Drop what was built from the records (``samples.jsonl`` was replaced: the tail reads it from its start)."""
        self.kept = EntryColumns(RecordColumns)
        self.offsets: dict[EntryKey, Growing] = {}
        self.problems: list[str] = []
        self.version += 1
        self._counted: tuple[Any, dict[str, int], UsageTotals] | None = None

    # -- reading -----------------------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Read what changed since the last refresh: the small files when their size or time changed, the records
        appended since (at most ``READ_PER_REFRESH`` bytes of them)."""
        with self._lock:
            self._load(self._manifest, self.path / MANIFEST, lambda: read_manifest(self.path))
            self._load(self._metrics, self.path / METRICS, lambda: read_metrics(self.path / METRICS))
            self.heartbeat = read_heartbeat(self.path)
            start = self.tail.bytes_read
            while True:
                try:
                    got = self.tail.read(CHUNK)
                except StructbenchError as err:
                    self._problem(str(err))
                    break
                if got.restarted:
                    self._forget()
                for offset, record in got.records:
                    self._add(offset, record)
                for problem in got.problems:
                    self._problem(problem)
                if not got.more or self.tail.bytes_read - start >= READ_PER_REFRESH:
                    break

    def _load(self, slot: Loaded, path: Path, read: Callable[[], Any]) -> None:
        now = stamp(path)
        if now == slot.stamp:
            return
        slot.stamp = now
        if now is None:
            slot.value, slot.error = None, None
        elif now[1] > MAX_FILE:
            slot.value, slot.error = None, f"{path}: {now[1]:,} bytes, more than the {MAX_FILE:,} a run file may have"
        else:
            try:
                slot.value, slot.error = read(), None
            except StructbenchError as err:
                slot.value, slot.error = None, str(err)

    def _add(self, offset: int, record: SampleRecord) -> None:
        key = (record.benchmark, record.variant, record.strategy, record.model, record.cell)
        column = self.offsets.get(key)
        if column is None:
            column = self.offsets[key] = Growing(np.int64)
        column.set(self.kept.entry(key).add(record), offset)
        self.version += 1

    def _problem(self, text: str) -> None:
        if len(self.problems) < MAX_PROBLEMS and text not in self.problems:  # a file refused again at each refresh
            self.problems.append(text)

    # -- what the page shows -------------------------------------------------------------------------------------

    @property
    def manifest(self) -> Manifest | None:
        return self._manifest.value

    @property
    def metrics(self) -> MetricsFile | None:
        """``metrics.json`` when it is the last session's: a resumed run's file from an earlier session is not, until
        the session that finished rewrites it (just after the manifest says how it ended)."""
        value, m = self._metrics.value, self.manifest
        if value is None or m is None or not m.sessions or self._metrics.stamp is None:
            return value
        started = liveness.parse_time(m.sessions[-1].started)
        if started is not None and self._metrics.stamp[0] < started.timestamp() * 1e9 - 1e9:
            return None
        return value

    def session_beat(self) -> Heartbeat | None:
        """The heartbeat of the manifest's last session (an older session's is not this one's)."""
        m, beat = self.manifest, self.heartbeat
        if m is None or beat is None or not m.sessions:
            return None
        last = m.sessions[-1]
        return beat if beat.session == len(m.sessions) - 1 and beat.started == last.started else None

    def status(self) -> tuple[str, str | None]:
        """``running``, ``done``, ``stopped``, ``failed`` or ``unreadable``, and why where there is more to say."""
        if self._manifest.error is not None:
            return "unreadable", self._manifest.error
        m = self.manifest
        if m is None:
            if self.metrics is not None:
                return "done", "a results file without a manifest (structbench score --out)"
            return "unreadable", self._metrics.error or f"{self.path}: no {MANIFEST}"
        if m.status == "complete" or (m.status is None and self.metrics is not None):
            return "done", None
        if m.status == "stopped":
            return "stopped", m.stop_reason
        if m.status == "interrupted":
            return ("stopped" if m.stop_reason in (INTERRUPTED, TERMINATED) else "failed"), m.stop_reason
        if liveness.alive(self.session_beat(), self.path / LOCK):
            return "running", None
        return "failed", FAILED_NOTE.format(path=self.path)

    def _current(self) -> Iterator[tuple[EntryKey, RecordColumns, np.ndarray]]:
        for key, entry in self.kept.entries.items():
            yield key, entry, entry.latest()

    def state(self) -> dict[str, Any]:
        """The run as the runs table and its panel show it (a JSON object)."""
        with self._lock:
            status, why = self.status()
            m = self.manifest
            counts, usage = self._counts()
            beat = self.session_beat()
            entries, live = self._entries(status)
            progress = _progress(status, beat, counts)
            if status == "running" and beat is not None:
                progress.update(_pace(beat))
            return {
                "id": self.id, "path": str(self.path), "status": status, "why": why,
                "model": m.config.model if m is not None else None,
                "benches": list(m.config.benches) if m is not None else [],
                "started": m.sessions[0].started if m is not None and m.sessions else None,
                "sessions": len(m.sessions) if m is not None else 0,
                "progress": progress, "counts": counts,
                "calls": beat.calls.model_dump() if beat is not None and status == "running" else None,
                "usage": _usage_json(usage), "entries": entries, "live": live,
                "report": status == "done" and self.metrics is not None,
                "problems": [*(e for e in (self._metrics.error,) if e), *self.problems],
            }

    def _counts(self) -> tuple[dict[str, int], UsageTotals]:
        """The current records counted (samples, settled, errors by kind, cut-off thoughts) and their calls' tokens
        and cost; computed again only when records were read since."""
        if self._counted is not None and self._counted[0] == (self.version, self._manifest.stamp):
            return self._counted[1], self._counted[2]
        counts = {"samples": 0, "settled": 0, "errors": 0, "harness_errors": 0, "too_long": 0, "cut_off": 0}
        groups: dict[UsageKey, Usage] = {}
        for _, entry, rows in self._current():
            c = entry.counts(rows)
            counts["samples"] += len(rows)
            counts["settled"] += len(rows) - int(entry.failed(rows).sum())
            counts["errors"] += c.errors
            counts["harness_errors"] += c.harness_errors
            counts["too_long"] += c.too_long
            counts["cut_off"] += c.reasoning_cut_off
            for group, calls in entry.usage_groups(rows).items():
                groups[group] = groups.get(group, Usage()) + calls
        spent = totals(groups.items(), _prices(self.manifest))
        self._counted = ((self.version, self._manifest.stamp), counts, spent)
        return counts, spent

    def reportable(self) -> bool:
        """Whether the run is done and has its metrics (its report can be made)."""
        with self._lock:
            return self.status()[0] == "done" and self.metrics is not None

    def _entries(self, status: str) -> tuple[list[dict[str, Any]], bool]:
        """The entries: a finished run's from ``metrics.json``, else the last live computation (True)."""
        metrics = self.metrics
        if status == "done" and metrics is not None:
            return [entry_json(r, live=False) for r in metrics.results], False
        return list(self._live), True

    # -- live entries --------------------------------------------------------------------------------------------

    def wants_live(self) -> bool:
        """Whether the live entries are behind the records and due for a computation."""
        with self._lock:
            return (not self.computing and self._live_version != self.version
                    and time.monotonic() >= self._next_live and not (self.status()[0] == "done" and self.metrics))

    def compute_live(self) -> None:
        """Compute the entries over the records read so far (in a worker thread; the records keep being read)."""
        with self._lock:
            if self.computing:
                return
            self.computing = True
            version = self.version
            snapshots = []
            for key, entry, rows in self._current():
                c = entry.counts(rows)
                snapshots.append(Snapshot(key, entry.scored(c.counted), c))
        started = time.monotonic()
        try:
            entries = live_entries(snapshots, self.benches, self._bench_options, resamples=self.resamples)
        finally:
            took = time.monotonic() - started
            with self._lock:
                self.computing = False
                self._next_live = time.monotonic() + max(LIVE_EVERY, 2 * took)
        with self._lock:
            self._live, self._live_version = entries, version

    def _bench_options(self, key: EntryKey) -> dict[str, str]:
        config = self.manifest.config if self.manifest is not None else None
        options = dict(config.options) if config is not None else {}
        return {**options, **{f"{key[0]}.{k}": v for k, v in cell_options(key[4]).items()}}

    # -- the sample browser --------------------------------------------------------------------------------------

    def samples(self, query: Query) -> dict[str, Any]:
        """A page of the records that ``query`` keeps, newest first, with the entries and groups to filter by."""
        with self._lock:
            keys = list(self.kept.entries)
            chosen = keys if query.entry is None else keys[query.entry:query.entry + 1]
            refs: list[np.ndarray] = []
            owners: list[np.ndarray] = []
            groups: dict[str, list[str]] = {}
            for key in chosen:
                entry = self.kept.entries[key]
                rows = entry.latest()
                keep = np.ones(len(rows), dtype=bool)
                if query.outcome in OUTCOMES:
                    cols = Columns(entry.kind.array()[rows], entry.outcomes.score.array()[rows],
                                   entry.reasoning_cut_off.array()[rows])
                    keep &= OUTCOMES[query.outcome][1](cols)
                if query.entry is not None or query.group:
                    keep &= self._group_mask(key, entry, rows, query.group, groups)
                refs.append(self.offsets[key].array()[rows][keep])
                owners.append(np.full(int(keep.sum()), keys.index(key), dtype=np.int64))
        offsets = np.concatenate(refs) if refs else np.zeros(0, dtype=np.int64)
        order = np.argsort(offsets, kind="stable")[::-1]  # newest first
        candidates, owner = offsets[order], (np.concatenate(owners)[order] if owners else offsets)
        end = query.start + query.limit
        needle = query.text.strip().lower()
        searched, complete = 0, True
        if needle:
            found: list[tuple[int, dict[str, Any], int]] = []
            for start in range(0, len(candidates), 512):
                positions = range(start, min(start + 512, len(candidates)))
                lines = read_lines(self.path / SAMPLES, candidates[positions.start:positions.stop].tolist())
                for k, (offset, record) in zip(positions, lines, strict=True):
                    if record is not None and needle in haystack(record):
                        found.append((offset, record, int(owner[k])))
                searched = positions.stop
                if len(found) > end or searched >= SEARCH_LINES:
                    break
            complete = searched >= len(candidates)
            page = found[query.start:end]
            matched: int | None = len(found) if complete else None
        else:
            picked = range(query.start, min(end, len(candidates)))
            lines = read_lines(self.path / SAMPLES, candidates[picked.start:picked.stop].tolist())
            page = [(o, r, int(owner[k])) for k, (o, r) in zip(picked, lines, strict=True) if r is not None]
            matched = len(candidates)
        return {
            "rows": [row(offset, record, label(keys[k])) for offset, record, k in page],
            "matched": matched, "searched": searched if needle else None, "complete": complete,
            "entries": [label(k) for k in keys], "groups": groups,
            "outcomes": {name: text for name, (text, _) in OUTCOMES.items()},
        }

    def _group_mask(self, key: EntryKey, entry: RecordColumns, rows: np.ndarray, group: str,
                    offered: dict[str, list[str]]) -> np.ndarray:
        """Which of ``rows`` are in the breakdown group ``KEY=VALUE`` (all when ``group`` is empty); the groups of the
        entry's breakdown keys are added to ``offered``."""
        bench = self.benches.get(key[0], self._bench_options(key))
        names = ["task", *(bench.breakdown_keys if bench is not None else ())]
        outcomes = entry.scored(rows)
        wanted_key, _, wanted_value = group.partition("=")
        mask = np.ones(len(rows), dtype=bool) if not group else np.zeros(len(rows), dtype=bool)
        for name in dict.fromkeys([*names, *([wanted_key] if group else [])]):
            found = outcomes.groups(name)
            values = offered.setdefault(name, [])
            for value, positions in found:
                if value not in values and len(values) < GROUP_VALUES:
                    values.append(value)
                if group and name == wanted_key and value == wanted_value:
                    mask[positions] = True
        return mask

    def record(self, ref: int) -> dict[str, Any] | None:
        """The detail of the record whose line starts at byte ``ref``; None when no current record does."""
        with self._lock:
            known = any(bool(np.any(column.array() == ref)) for column in self.offsets.values())
        if not known:
            return None
        return detail(record_at(self.path / SAMPLES, ref))


def _prices(m: Manifest | None) -> Prices | None:
    """The prices the run's calls were costed at (as its manifest records them)."""
    if m is None or not m.prices or not isinstance(m.prices.get("models"), dict):
        return None
    try:
        return Prices.from_data(m.prices["models"], str(m.prices.get("source", "the run's prices")))
    except StructbenchError:
        return None


def _usage_json(usage: UsageTotals) -> dict[str, Any]:
    made = usage.usage
    return {"text": totals_cell(usage), "calls": made.calls, "prompt_tokens": made.prompt_tokens,
            "completion_tokens": made.completion_tokens, "cost_usd": usage.cost_usd}


def _pace(beat: Heartbeat) -> dict[str, float | None]:
    """How long the session has run, and how long the rest of its jobs should take at its pace so far."""
    started = liveness.parse_time(beat.started)
    elapsed = None if started is None else (datetime.now(UTC) - started).total_seconds()
    if elapsed is None or elapsed <= 0:
        return {"elapsed": None, "eta": None}
    left = beat.total - beat.done if beat.total is not None else None
    eta = left * elapsed / beat.done if left is not None and beat.done else None
    return {"elapsed": round(elapsed, 1), "eta": round(eta, 1) if eta is not None else None}


def _progress(status: str, beat: Heartbeat | None, counts: dict[str, int]) -> dict[str, Any]:
    """Jobs done of the run's total: the running session's heartbeat where there is one (it alone knows the total;
    records it has not counted yet, written since it was, count), else the records (every settled one done)."""
    if beat is not None:
        total = beat.settled_before + beat.total if beat.total is not None else None
        settled = counts["settled"] if total is None else min(counts["settled"], total)
        done = total if status == "done" and total is not None else max(beat.settled_before + beat.done, settled)
        return {"done": done, "total": total, "session_done": beat.done, "session_total": beat.total,
                "earlier": beat.settled_before}
    total = counts["samples"] if status == "done" else None
    return {"done": counts["settled"] if status != "done" else counts["samples"], "total": total,
            "session_done": None, "session_total": None, "earlier": None}
