"""Logging a finished run to its trackers: each is tried whatever the others did, and a tracker that fails is one
line naming it (``structbench log`` then exits 2; after ``structbench run`` it is a warning, the run being safe on
disk either way)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from structbench.core.errors import StructbenchError
from structbench.core.redact import redact
from structbench.interop.trackers.payload import Payload
from structbench.interop.trackers.registry import TRACKERS, Tracking


@dataclass(frozen=True)
class Outcome:
    """What became of the run at one tracker."""

    tracker: str
    where: str | None = None
    """Where it was logged (a run id, a URL, a folder); None when it failed."""
    error: str | None = None
    """Why it failed, in one line."""


def log_each(run_dir: Path, tracking: Tracking) -> list[Outcome]:
    """Log the run in ``run_dir`` to every tracker of ``tracking``; a run directory that is not a finished run is a
    ``UsageError`` (nothing is logged)."""
    return log_payload(Payload(run_dir, samples=tracking.samples), tracking)


def log_payload(payload: Payload, tracking: Tracking) -> list[Outcome]:
    """Log a run already read (``Payload``) to every tracker of ``tracking``, each failure one ``Outcome``."""
    outcomes = []
    for name in tracking.to:
        try:
            where = TRACKERS.get(name).load()(payload, tracking.options_for(name))
        except Exception as err:  # a tracker's library raises its own errors: each is one line
            outcomes.append(Outcome(name, error=_one_line(err)))
        else:
            outcomes.append(Outcome(name, where=redact(where)))
    return outcomes


def log_after_run(run_dir: Path, tracking: Tracking, notify: Callable[[str], None]) -> list[Outcome]:
    """``log_each`` for a run that just finished: every failure, even reading the run back, is a warning naming the
    command that tries again, never an error."""
    again = f"`structbench log {run_dir} --to {','.join(tracking.to)}` tries again"
    try:
        outcomes = log_each(run_dir, tracking)
    except Exception as err:  # the run is on disk: nothing here may lose it
        notify(f"warning: the run was not logged to {', '.join(tracking.to)}: {_one_line(err)}; {again}")
        return [Outcome(name, error=_one_line(err)) for name in tracking.to]
    for outcome in outcomes:
        if outcome.error is None:
            notify(f"logged to {outcome.tracker}: {outcome.where}")
        else:
            notify(f"warning: logging to {outcome.tracker} failed: {outcome.error}; the run is safe in {run_dir}: "
                   f"{again}")
    return outcomes


def _one_line(err: BaseException) -> str:
    text = str(err).strip()
    first = text.splitlines()[0] if text else ""
    label = "" if isinstance(err, StructbenchError) else f"{type(err).__name__}: "
    return redact(f"{label}{first}" if first else type(err).__name__)
