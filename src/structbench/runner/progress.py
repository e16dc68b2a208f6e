"""A Rich progress bar with rate, ETA and error count (silent when disabled)."""

from __future__ import annotations

from types import TracebackType
from typing import Any


class RunProgress:
    """Counts finished samples and errors; draws on stderr when ``enabled``."""

    def __init__(self, total: int, enabled: bool = True, description: str = "evaluating") -> None:
        self.total = total
        self.errors = 0
        self.done = 0
        self._progress: Any = None
        self._task: Any = None
        if enabled and total:
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
                console=Console(stderr=True),
                refresh_per_second=5,
            )
            self._task = self._progress.add_task(description, total=total, errors=0, rate="")

    def __enter__(self) -> RunProgress:
        if self._progress is not None:
            self._progress.start()
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
