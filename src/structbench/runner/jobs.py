"""A run's jobs by reference, and running one to its record line: what every kind of worker does.

A job is named by three indices (selection, strategy, sample position in its selection's stream) and its epoch
(``JobRef``). It travels to a worker as a ``Ticket``: the reference and the sample itself, which the run's process
read from the stream, so a worker (forked, or a Ray actor on another machine) holds the benchmarks and strategies
of the run's selections but none of their samples; a forked worker is sent the reference alone where it holds its
selection's samples (a small stream, read whole before the fork: ``runner.workers.hold_streams``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from structbench.data.sample import Sample
from structbench.runfiles.records import SummaryRow
from structbench.runner.calls import ModelCaller
from structbench.runner.engine import Job, Outcome, attempt_job, finish_job
from structbench.runner.settings import RequestSettings
from structbench.runner.store import encode_record

if TYPE_CHECKING:
    from structbench.runner.selection import Selection

JobRef = tuple[int, int, int, int]
"""(selection index, strategy index, sample position in the selection's stream, epoch)."""

Ticket = tuple[JobRef, Sample]
"""A job as it is handed to whoever runs it: its reference and its sample."""


def job_of(selections: Sequence[Selection], ticket: Ticket) -> Job:
    (i, j, _, epoch), sample = ticket
    sel = selections[i]
    return Job(sel.bench, sel.variant, sel.strategies[j], sample, epoch, sel.cell)


def selections_digest(selections: Sequence[Selection]) -> str:
    """A digest of what the job references point at (benchmarks, variants, cells, strategies, and the first sample's
    id): a worker that prepared its own selections must hold the run's."""
    h = hashlib.sha256()
    for sel in selections:
        h.update(f"{sel.bench.name}:{sel.variant}|{sel.cell}|{','.join(s.name for s in sel.strategies)}|".encode())
        first = sel.samples.first
        h.update((first.id if first is not None else "").encode() + b"\0")
    return h.hexdigest()[:16]


@dataclass(frozen=True)
class Finished:
    """A finished job as the run directory's writer receives it."""

    ref: JobRef
    record: SummaryRow
    """The record as stored, without its texts (``SampleRecord.row``: a summary as a plain tuple)."""
    line: bytes
    """The ``samples.jsonl`` line, validated and redacted."""


class JobRunner:
    """Runs jobs on one model: the strategy (which waits for the model), then parsing, scoring and the record line
    (CPU work the writer need not do)."""

    def __init__(
        self, selections: Sequence[Selection], caller: ModelCaller, model: str, settings: RequestSettings | None
    ) -> None:
        self.selections = selections
        self.caller = caller
        self.model = model
        self.settings = settings

    async def attempt(self, ticket: Ticket) -> tuple[JobRef, Job, Outcome]:
        """The strategy's part: what waits for the model."""
        job = job_of(self.selections, ticket)
        return ticket[0], job, await attempt_job(job, self.caller, self.settings)

    def finish(self, ref: JobRef, job: Job, outcome: Outcome) -> Finished:
        """Parsing, scoring and the record line: CPU only."""
        stored, line = encode_record(finish_job(job, outcome, self.model))
        return Finished(ref, stored.row(), line)

    async def run(self, ticket: Ticket) -> Finished:
        return self.finish(*await self.attempt(ticket))
