"""The runs the view follows: every run directory under the folders it was given, found again as new ones appear,
refreshed when a page asks (never while no page is open), their live entries computed one run at a time in a worker
thread, and finished runs' reports rendered on demand and kept while they do not change."""

from __future__ import annotations

import asyncio
import os
import time
from collections import OrderedDict
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from structbench.core.errors import UsageError
from structbench.report.api import ReportOptions, html_report
from structbench.report.runs import BenchmarkCache
from structbench.runfiles.runformat import MANIFEST, METRICS, SAMPLES
from structbench.view.samples import Query
from structbench.view.watch import RunWatch, stamp

MAX_RUNS = 500
"""Run directories followed at most (the first in path order)."""
MAX_DEPTH = 4
"""Folders below each given one searched for run directories (``runs/suite/<model>`` is two)."""
REFRESH = 0.5
"""Seconds at least between two reads of the run files (however many pages ask)."""
SCAN = 2.0
"""Seconds at least between two searches for new run directories."""
REPORTS = 8
"""Rendered reports kept."""


def find_runs(root: Path, limit: int = MAX_RUNS) -> list[Path]:
    """Run directories at or under ``root`` (a folder holding a manifest or metrics file), in path order; hidden
    folders and links to folders are not entered, nor a run directory's own subfolders."""
    found: list[Path] = []

    def walk(folder: Path, depth: int) -> None:
        if len(found) >= limit:
            return
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            return
        if any(e.name in (MANIFEST, METRICS) and e.is_file(follow_symlinks=False) for e in entries):
            found.append(folder)
            return
        if depth < MAX_DEPTH:
            for e in entries:
                if not e.name.startswith(".") and e.is_dir(follow_symlinks=False):
                    walk(Path(e.path), depth + 1)

    walk(root, 0)
    return found


class Hub:
    """Every run followed, by id (a path relative to the given folder, so the page never names a file itself)."""

    def __init__(self, roots: Sequence[Path], *, resamples: int = 1000, report: ReportOptions | None = None) -> None:
        for root in roots:
            if not root.is_dir():
                what = "not a folder" if root.exists() else "no such folder"
                raise UsageError(f"{root}: {what}; give the folder your run directories are in (default: runs/, "
                                 "where structbench run writes them)")
        self.roots = list(roots)
        self.resamples = resamples
        self.report_options = report or ReportOptions()
        self.benches = BenchmarkCache()
        self.runs: dict[str, RunWatch] = {}
        self._scanned = -SCAN
        self._refreshed = -REFRESH
        self._refreshing: asyncio.Lock | None = None
        self._live: asyncio.Task[None] | None = None
        self._reports: OrderedDict[tuple[Any, ...], str] = OrderedDict()

    def _id(self, root: Path, path: Path) -> str:
        rel = path.relative_to(root).as_posix()
        base = root.resolve().name or str(root)
        name = base if rel == "." else rel if len(self.roots) == 1 else f"{base}/{rel}"
        return name

    def scan(self) -> None:
        """Follow the run directories that appeared since the last scan."""
        self._scanned = time.monotonic()
        for root in self.roots:
            for path in find_runs(root):
                if len(self.runs) >= MAX_RUNS:
                    return
                if any(w.path == path for w in self.runs.values()):
                    continue
                run_id, k = self._id(root, path), 2
                while run_id in self.runs:
                    run_id, k = f"{self._id(root, path)}#{k}", k + 1
                self.runs[run_id] = RunWatch(path, run_id, self.benches, resamples=self.resamples)

    def refresh_now(self) -> None:
        """Read what changed in every run (and look for new runs, every ``SCAN`` seconds)."""
        if time.monotonic() - self._scanned >= SCAN:
            self.scan()
        for run in list(self.runs.values()):
            run.refresh()
        self._refreshed = time.monotonic()

    async def refresh(self) -> None:
        """``refresh_now`` in a worker thread, at most every ``REFRESH`` seconds; callers meanwhile share one."""
        if self._refreshing is None:
            self._refreshing = asyncio.Lock()
        async with self._refreshing:
            if time.monotonic() - self._refreshed >= REFRESH:
                await asyncio.to_thread(self.refresh_now)
        if self._live is None or self._live.done():
            self._live = asyncio.create_task(self._compute_live())

    async def _compute_live(self) -> None:
        """The live entries of every run whose records changed, one run at a time."""
        for run in list(self.runs.values()):
            if await asyncio.to_thread(run.wants_live):
                await asyncio.to_thread(run.compute_live)

    async def state(self) -> dict[str, Any]:
        """Every run's state (``RunWatch.state``)."""
        await self.refresh()
        runs = await asyncio.to_thread(lambda: [run.state() for run in list(self.runs.values())])
        return {"runs": runs, "time": datetime.now(UTC).isoformat(timespec="seconds"),
                "dirs": [str(r) for r in self.roots]}

    def run(self, run_id: str) -> RunWatch | None:
        return self.runs.get(run_id)

    async def samples(self, run: RunWatch, query: Query) -> dict[str, Any]:
        await self.refresh()
        return await asyncio.to_thread(run.samples, query)

    async def record(self, run: RunWatch, ref: int) -> dict[str, Any] | None:
        return await asyncio.to_thread(run.record, ref)

    def finished(self) -> list[RunWatch]:
        """The runs whose report can be made (done, with their metrics)."""
        return [run for run in self.runs.values() if run.reportable()]

    async def report(self, runs: Sequence[RunWatch]) -> str:
        """The report (``structbench report``'s HTML) over ``runs``, rendered once per state of their files."""
        key = tuple((run.path, stamp(run.path / METRICS), stamp(run.path / SAMPLES)) for run in runs)
        if key not in self._reports:
            html = await asyncio.to_thread(html_report, [run.path for run in runs], self.report_options)
            self._reports[key] = html
            while len(self._reports) > REPORTS:
                self._reports.popitem(last=False)
        self._reports.move_to_end(key)
        return self._reports[key]

