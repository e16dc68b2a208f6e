"""Run progress on stderr: a Rich bar on a terminal, periodic plain lines in logs (CI, nohup), or nothing.

Beside the samples finished, it shows what the model calls are doing (``backends.stats``): how many are in
flight and for how long the oldest has waited, the tokens per second the model writes, and the retries and
timeouts so far, so a slow server never looks like a hung run. Once a call to a server has waited ``SLOW_CALL``
seconds, a note says which settings make a slow server's run shorter (a model that runs in this process answers its
calls one at a time, so they wait for it by design: the run gives no ``slow_call`` then).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any, Literal, TextIO

from structbench.backends.stats import CallSnapshot

ProgressMode = Literal["auto", "bar", "lines", "off"]
SLOW_CALL = 60.0
"""Seconds a model call may wait before the note on slow servers is printed (once)."""
SLOW_NOTE = (
    "note: a model call has been waiting for over {wait}; replies are slow here. --max-tokens N caps every reply "
    "(a quick look; another run), --timeout S bounds each call, and a small server that runs one or two requests at "
    "once wants --concurrency 1 or 2 (the rest wait in its queue, and the wait counts towards --timeout)"
)


def _duration(seconds: float) -> str:
    hours, rest = divmod(round(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def calls_text(calls: CallSnapshot, elapsed: float, now: float | None = None) -> str:
    """``4 calls in flight (oldest 1m58s), 41 tok/s, 6 retries (4 timeouts)``: the parts that apply."""
    parts = []
    if calls.in_flight:
        age = calls.oldest_age(now)
        oldest = f" (oldest {_duration(age)})" if age is not None and age >= 1 else ""
        parts.append(f"{calls.in_flight} call{'s' if calls.in_flight != 1 else ''} in flight{oldest}")
    if calls.tokens and elapsed > 0:
        rate = calls.tokens / elapsed
        parts.append(f"{rate:.0f} tok/s" if rate >= 10 else f"{rate:.1f} tok/s")
    if calls.retries or calls.timeouts:
        timeouts = f" ({calls.timeouts} timeouts)" if calls.timeouts else ""
        parts.append(f"{calls.retries} retries{timeouts}")
    return ", ".join(parts)


class RunProgress:
    """Counts finished samples and errors and shows them on stderr, with what the model calls are doing.

    ``auto`` draws a bar when stderr is a terminal and prints a line every ``interval`` seconds otherwise,
    so a run in a log file is never silent until its end. ``calls`` returns the calls' counters now (summed
    over the run's processes)."""

    def __init__(
        self,
        total: int | None,
        enabled: bool | ProgressMode = True,
        description: str = "evaluating",
        *,
        interval: float = 30.0,
        stream: TextIO | None = None,
        calls: Callable[[], CallSnapshot] | None = None,
        slow_call: float = SLOW_CALL,
    ) -> None:
        self.total = total
        self.errors = 0
        self.too_long = 0
        self.turn_limit = 0
        self.done = 0
        self.description = description
        self.interval = interval
        self.calls = calls
        self.slow_call = slow_call
        self.slow_noted = False
        self.stream = stream or sys.stderr
        mode: ProgressMode = "auto" if enabled is True else "off" if enabled is False else enabled
        if mode == "auto":
            mode = "bar" if self.stream.isatty() else "lines"
        self.mode: ProgressMode = mode if total is None or total else "off"
        self._started = time.monotonic()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self._progress: Any = None
        self._task: Any = None
        if self.mode == "bar":
            self._make_bar()

    def _make_bar(self) -> None:
        from rich.console import Console, RenderableType
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, Task, TextColumn
        from rich.text import Text

        progress = self

        class StatusColumn(ProgressColumn):
            """Speed, elapsed time and ETA, each labelled, and the errors."""

            def render(self, task: Task) -> Text:
                return Text(", ".join(progress.status(bar=True)), no_wrap=True, overflow="ellipsis")

        class TwoLines(Progress):
            """The bar, and under it what the model calls are doing, read at every refresh (they change between
            finished samples): two lines that fit 80 columns, each cut at the edge rather than wrapped."""

            def get_renderables(self) -> Iterable[RenderableType]:
                yield self.make_tasks_table(self.tasks)
                calls = progress.calls_now()
                if calls:
                    yield Text(f"  {calls}", style="cyan", no_wrap=True, overflow="ellipsis")

        self._progress = TwoLines(
            TextColumn("[bold]{task.description}"),
            BarColumn(bar_width=20),
            MofNCompleteColumn(),
            StatusColumn(),
            console=Console(file=self.stream),
            refresh_per_second=5,
        )
        self._task = self._progress.add_task(self.description, total=self.total)

    def snapshot(self) -> CallSnapshot:
        """The calls' counters now (nothing when no ``calls`` was given, or it failed)."""
        if self.calls is None:
            return CallSnapshot()
        try:
            return self.calls()
        except Exception:  # progress must never stop a run
            return CallSnapshot()

    def calls_now(self) -> str:
        return calls_text(self.snapshot(), time.monotonic() - self._started)

    def status(self, *, bar: bool = False) -> list[str]:
        """What follows the samples done: ``2.10/s``, ``elapsed 57s``, ``ETA 2m13s`` (where a total is known), the
        calls' counters (the bar shows them on a line of their own), prompts too long and errors."""
        elapsed = time.monotonic() - self._started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        parts = [f"{rate:.2f}/s"] if self.done else []
        parts.append(f"elapsed {_duration(elapsed)}")
        if self.total and self.done and self.done < self.total:
            parts.append(f"ETA {_duration((self.total - self.done) / rate)}")
        counts = [f"{self.too_long} too long"] if self.too_long else []
        if self.turn_limit:
            counts.append(f"{self.turn_limit} at the turn limit")
        counts.append(f"{self.errors} errors")
        calls = "" if bar else self.calls_now()
        return [*parts, *([calls] if calls else []), *counts]

    def line(self) -> str:
        """``evaluating: 120/400 samples (30%), 2.10/s, elapsed 57s, ETA 2m13s, 8 calls in flight (oldest 3s),
        95 tok/s, 3 errors``."""
        if self.total:
            head = f"{self.description}: {self.done}/{self.total} samples ({100 * self.done / self.total:.0f}%)"
        else:  # a stream of samples whose number is not known before its end
            head = f"{self.description}: {self.done} samples"
        return ", ".join([head, *self.status()])

    def _note_if_slow(self) -> None:
        """Print the note on slow servers once, when a call has waited ``slow_call`` seconds."""
        if self.slow_noted or not self.slow_call:
            return
        age = self.snapshot().oldest_age()
        if age is None or age < self.slow_call:
            return
        self.slow_noted = True
        note = SLOW_NOTE.format(wait=_duration(self.slow_call))
        if self._progress is not None:
            self._progress.console.print(note, markup=False, highlight=False)
        else:
            print(note, file=self.stream, flush=True)

    def _tick(self) -> None:
        """Lines mode: a line every ``interval`` seconds; both modes: the slow-call note, checked every second."""
        last = time.monotonic()
        while not self._stop.wait(min(1.0, self.interval)):
            self._note_if_slow()
            if self._progress is None and time.monotonic() - last >= self.interval:
                last = time.monotonic()
                print(self.line(), file=self.stream, flush=True)

    def __enter__(self) -> RunProgress:
        self._started = time.monotonic()
        if self._progress is not None:
            self._progress.start()
        elif self.mode == "lines":
            print(self.line(), file=self.stream, flush=True)
        if self.mode != "off":
            self._ticker = threading.Thread(target=self._tick, name="structbench-progress", daemon=True)
            self._ticker.start()
        return self

    def set_total(self, total: int) -> None:
        """The number of samples, once the stream of jobs has ended (it was unknown, or a stream made fewer than it
        announced)."""
        self.total = total
        if self._progress is not None:
            self._progress.update(self._task, total=total)

    def advance(self, error: bool | str | None = False) -> None:
        """One sample finished: ``error`` is its ``error_kind`` (or whether it failed); a prompt too long for the
        model (``context``) and a tool loop at its turn limit (``turns``, whether scored or apart) are counted apart
        from errors."""
        self.done += 1
        if error in ("context", "turns"):
            self.too_long += error == "context"
            self.turn_limit += error == "turns"
        else:
            self.errors += bool(error)
        if self._progress is not None:
            self._progress.update(self._task, advance=1)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._ticker is not None:
            self._stop.set()
            self._ticker.join()
        if self._progress is not None:
            self._progress.stop()
        elif self._ticker is not None:
            print(self.line(), file=self.stream, flush=True)
