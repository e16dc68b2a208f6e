"""``progress.json``: what the session filling a run directory is doing now, rewritten about once a second while it
runs (``runner.heartbeat``) and read by ``structbench view``.

The other run files say what is finished; this one says what only the running process knows: the jobs it has to do,
the calls in flight and how long the oldest has waited, retries and timeouts. It is advisory: a reader that finds it
missing, damaged or stale goes on without it, and nothing else reads it.
"""

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from structbench.core.errors import DataError
from structbench.core.regular import read_regular
from structbench.runfiles.runformat import PROGRESS

MAX_BYTES = 64 * 1024
"""A ``progress.json`` larger than this is not one (it holds a few hundred bytes)."""


class CallsNow(BaseModel):
    """The model calls of the session at the moment of writing (``backends.stats.CallSnapshot``)."""

    model_config = ConfigDict(extra="allow")

    in_flight: int = 0
    oldest_seconds: float | None = None
    """How long the oldest call in flight has waited (None: none is in flight)."""
    retries: int = 0
    timeouts: int = 0
    answered: int = 0
    """Calls the model answered (the response cache's answers not counted)."""
    tokens: int = 0
    """Completion tokens of those answers, where the backend reports them."""
    tokens_per_second: float | None = None
    """``tokens`` over the session's time so far."""


class Heartbeat(BaseModel):
    """The whole of ``progress.json``. Unknown fields (a newer structbench's) are kept as they are."""

    model_config = ConfigDict(extra="allow")

    pid: int
    """The process that fills the run directory."""
    session: int
    """Which of the manifest's ``sessions`` this is (from 0)."""
    started: str
    """When the session started (UTC, ISO 8601): the same as its entry in the manifest."""
    updated: str
    """When this file was written (UTC, ISO 8601)."""
    ended: bool = False
    """The session's last word: it wrote this after its last job (the manifest then says how it ended)."""
    done: int = 0
    """Jobs (sample, strategy, epoch) this session finished, failed ones included."""
    total: int | None = None
    """Jobs this session has to do; None while the stream of samples has not said how many."""
    settled_before: int = 0
    """Jobs of the run that earlier sessions settled (not done again): the run's progress is ``settled_before +
    done`` of ``settled_before + total``."""
    errors: int = 0
    """Jobs of this session that failed (a model or harness error)."""
    too_long: int = 0
    """Jobs whose prompt does not fit the model's context."""
    calls: CallsNow = CallsNow()


def read_heartbeat(run_dir: Path) -> Heartbeat | None:
    """The run directory's ``progress.json``; None when there is none or it is not one (it is advisory)."""
    path = run_dir / PROGRESS
    try:
        raw = read_regular(path, MAX_BYTES + 1)  # a FIFO is not waited on
    except (OSError, DataError):
        return None
    if len(raw) > MAX_BYTES:
        return None
    try:
        data = json.loads(raw)
        return Heartbeat.model_validate(data) if isinstance(data, dict) else None
    except (ValueError, ValidationError):
        return None
