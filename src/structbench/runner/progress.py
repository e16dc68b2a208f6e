"""Run progress on stderr: a Rich bar on a terminal, periodic plain lines in logs (CI, nohup), or nothing."""

from __future__ import annotations

import sys
import threading
import time
from types import TracebackType
from typing import Any, Literal, TextIO

ProgressMode = Literal["auto", "bar", "lines", "off"]


def _duration(seconds: float) -> str:
    hours, rest = divmod(round(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


class RunProgress:
    """Counts finished samples and errors and shows them on stderr.

    ``auto`` draws a bar when stderr is a terminal and prints a line every ``interval`` seconds otherwise,
    so a run in a log file is never silent until its end."""

    def __init__(
        self,
        total: int,
        enabled: bool | ProgressMode = True,
        description: str = "evaluating",
        *,
        interval: float = 30.0,
        stream: TextIO | None = None,
    ) -> None:
        self.total = total
        self.errors = 0
        self.done = 0
        self.description = description
        self.interval = interval
        self.stream = stream or sys.stderr
        mode: ProgressMode = "auto" if enabled is True else "off" if enabled is False else enabled
        if mode == "auto":
            mode = "bar" if self.stream.isatty() else "lines"
        self.mode: ProgressMode = mode if total else "off"
        self._started = time.monotonic()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self._progress: Any = None
        self._task: Any = None
        if self.mode == "bar":
            self._make_bar()

    def _make_bar(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TimeElapsedColumn(),
            TextColumn("[red]{task.fields[errors]} errors"),
            console=Console(file=self.stream),
            refresh_per_second=5,
        )
        self._task = self._progress.add_task(self.description, total=self.total, errors=0, rate="")

    def line(self) -> str:
        """``evaluating: 120/400 samples (30%), 2.1/s, elapsed 57s, ETA 2m13s, 3 errors``."""
        elapsed = time.monotonic() - self._started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        parts = [f"{self.description}: {self.done}/{self.total} samples ({100 * self.done / self.total:.0f}%)"]
        if self.done:
            parts.append(f"{rate:.2f}/s")
        parts.append(f"elapsed {_duration(elapsed)}")
        if self.done and self.done < self.total:
            parts.append(f"ETA {_duration((self.total - self.done) / rate)}")
        parts.append(f"{self.errors} errors")
        return ", ".join(parts)

    def _tick(self) -> None:
        while not self._stop.wait(self.interval):
            print(self.line(), file=self.stream, flush=True)

    def __enter__(self) -> RunProgress:
        self._started = time.monotonic()
        if self._progress is not None:
            self._progress.start()
        elif self.mode == "lines":
            print(self.line(), file=self.stream, flush=True)
            self._ticker = threading.Thread(target=self._tick, name="structbench-progress", daemon=True)
            self._ticker.start()
        return self

    def advance(self, error: bool = False) -> None:
        self.done += 1
        self.errors += error
        if self._progress is not None:
            speed = self._progress.tasks[0].speed
            rate = f"{speed:.1f}/s" if speed else ""
            self._progress.update(self._task, advance=1, errors=self.errors, rate=rate)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._progress is not None:
            self._progress.stop()
        if self._ticker is not None:
            self._stop.set()
            self._ticker.join()
            print(self.line(), file=self.stream, flush=True)
