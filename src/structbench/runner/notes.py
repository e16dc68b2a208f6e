"""Warnings structbench's modules log, as a run's notes: within a run they join its other notes (the command prints
them; ``evaluate``'s ``notify=`` and ``EvalResult.notes`` get them), once a run, from every process of it."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from structbench.core.errors import LoggedWarning

Notify = Callable[[str], None]
"""Where a run's notes and warnings go (one line each): the command prints them to stderr."""


class ToNotes(logging.Handler):
    """Gives each warning structbench's modules log to ``note`` (redacted)."""

    def __init__(self, note: Notify) -> None:
        super().__init__(logging.WARNING)
        self.note = note

    def emit(self, record: logging.LogRecord) -> None:
        from structbench.core.redact import redact

        self.note(redact(record.getMessage()))


@contextmanager
def notes_from_logs(note: Notify) -> Iterator[None]:
    """Within the block, what structbench's modules log as warnings (a benchmark's while it loads its data: queries it
    left out, a file it read oddly; the sandbox's weaker isolation) goes to ``note`` with the run's other notes
    (``EvalResult.notes``, a ``notify=``), instead of straight to stderr; a ``LoggedWarning``, logged as well, is
    not shown a second time as a Python warning. A forked worker sends its notes to the driver (``notes_to``)."""
    import warnings

    logger = logging.getLogger("structbench")
    handler, propagated = ToNotes(note), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False  # (the command's own handler would print it a second time)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LoggedWarning)
            yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagated


def notes_to(note: Notify) -> None:
    """In this process, send what ``notes_from_logs`` catches to ``note`` instead: a forked worker's logged warnings
    go to the driver, which says each once for the run (every worker would say it once otherwise)."""
    for handler in logging.getLogger("structbench").handlers:
        if isinstance(handler, ToNotes):
            handler.note = note
