"""A run's jobs by reference, and running one to its record line: what every kind of worker does.

A job is named by three indices (selection, strategy, sample) into the run's selections and its epoch, so a worker that
holds the same selections (forked from the run's process, or prepared from the same configuration on
another machine) receives four integers per job instead of the sample.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from structbench.records import RecordSummary
from structbench.runner.calls import ModelCaller
from structbench.runner.engine import Job, Outcome, attempt_job, finish_job
from structbench.runner.settings import RequestSettings
from structbench.runner.store import encode_record

if TYPE_CHECKING:
    from structbench.runner.selection import Selection

JobRef = tuple[int, int, int, int]
"""(selection index, strategy index, sample index, epoch)."""


def job_of(selections: Sequence[Selection], ref: JobRef) -> Job:
    sel = selections[ref[0]]
    return Job(sel.bench, sel.variant, sel.strategies[ref[1]], sel.samples[ref[2]], ref[3], sel.cell)


def selections_digest(selections: Sequence[Selection]) -> str:
    """A digest of what the job references point at (benchmarks, variants, cells, strategies, sample ids in order):
    a worker that prepared its own selections must hold exactly the run's."""
    h = hashlib.sha256()
    for sel in selections:
        h.update(f"{sel.bench.name}:{sel.variant}|{sel.cell}|{','.join(s.name for s in sel.strategies)}|".encode())
        for sample in sel.samples:
            h.update(sample.id.encode() + b"\0")
    return h.hexdigest()[:16]


@dataclass(frozen=True)
class Finished:
    """A finished job as the run directory's writer receives it."""

    ref: JobRef
    record: RecordSummary
    """The record as stored, without its texts (``SampleRecord.slim``)."""
    line: bytes
    """The ``samples.jsonl`` line, validated and redacted."""


class JobRunner:
    """Runs jobs by reference on one model: the strategy (which waits for the model), then parsing, scoring
    and the record line (CPU work the writer need not do)."""

    def __init__(
        self, selections: Sequence[Selection], caller: ModelCaller, model: str, settings: RequestSettings | None
    ) -> None:
        self.selections = selections
        self.caller = caller
        self.model = model
        self.settings = settings

    async def attempt(self, ref: JobRef) -> tuple[JobRef, Job, Outcome]:
        """The strategy's part: what waits for the model."""
        job = job_of(self.selections, ref)
        return ref, job, await attempt_job(job, self.caller, self.settings)

    def finish(self, ref: JobRef, job: Job, outcome: Outcome) -> Finished:
        """Parsing, scoring and the record line: CPU only."""
        stored, line = encode_record(finish_job(job, outcome, self.model))
        return Finished(ref, stored.slim(), line)

    async def run(self, ref: JobRef) -> Finished:
        return self.finish(*await self.attempt(ref))
