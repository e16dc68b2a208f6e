"""The session's ``progress.json`` (``structbench.runfiles.heartbeat``), rewritten about once a second while it runs.

A thread of the process that fills the run directory writes what the progress line shows (jobs done of the
session's total, errors, the calls in flight, retries, timeouts, tokens per second), each time whole (renamed into
place), so ``structbench view`` can show a run that only this process knows the state of. A write that fails (a full
disk) ends the writing, never the run.
"""

from __future__ import annotations

import os
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from structbench.core.atomic import write_text_atomic
from structbench.runfiles.heartbeat import CallsNow, Heartbeat
from structbench.runfiles.runformat import PROGRESS
from structbench.runner.progress import RunProgress

INTERVAL = 1.0
"""Seconds between two writes: the view follows a run at most about this much behind."""


class HeartbeatWriter:
    """Writes ``progress.json`` from ``progress`` (the run's counters and its calls' snapshot) every ``interval``
    seconds between ``__enter__`` and ``__exit__``, and once more at the end (``ended``)."""

    def __init__(self, run_dir: Path, progress: RunProgress, *, session: int, started: str, settled_before: int,
                 interval: float = INTERVAL) -> None:
        self.path = run_dir / PROGRESS
        self.progress = progress
        self.session = session
        self.started = started
        self.settled_before = settled_before
        self.interval = interval
        self.failed = False
        """A write failed: no more are tried."""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0 = time.monotonic()

    def beat(self, *, ended: bool = False) -> Heartbeat:
        """What ``progress.json`` says now."""
        p = self.progress
        calls = p.snapshot()
        elapsed = time.monotonic() - self._t0
        age = calls.oldest_age()
        rate = round(calls.tokens / elapsed, 2) if calls.tokens and elapsed > 0 else None
        return Heartbeat(
            pid=os.getpid(), session=self.session, started=self.started,
            updated=datetime.now(UTC).isoformat(timespec="milliseconds"), ended=ended, done=p.done, total=p.total,
            settled_before=self.settled_before, errors=p.errors, too_long=p.too_long,
            calls=CallsNow(in_flight=0 if ended else calls.in_flight,
                           oldest_seconds=None if ended or age is None else round(age, 1), retries=calls.retries,
                           timeouts=calls.timeouts, answered=calls.answered, tokens=calls.tokens,
                           tokens_per_second=rate),
        )

    def write(self, *, ended: bool = False) -> None:
        """Write ``progress.json`` whole; a failure stops the writing (the run goes on)."""
        if self.failed:
            return
        try:
            write_text_atomic(self.path, self.beat(ended=ended).model_dump_json(indent=1) + "\n")
        except Exception:  # the view's file must never stop a run
            self.failed = True

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.write()

    def __enter__(self) -> HeartbeatWriter:
        self._t0 = time.monotonic()
        self.write()
        self._thread = threading.Thread(target=self._loop, name="structbench-heartbeat", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.write(ended=True)
