"""Samples that failed, counted by kind, and the summary a command prints about them before exiting with 3."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from structbench.runfiles.records import SETTLED_KINDS, ErrorKind, RecordSummary, SampleRecord

KIND_MEANING: dict[str, str] = {
    "model": "a model call failed after all retries; scored as wrong",
    "harness": "a bug in a strategy, parser or scorer; not scored, left out of the metrics",
}


@dataclass(frozen=True)
class Failure:
    """One failed sample: who failed, where, and the error message."""

    kind: ErrorKind
    where: str
    """``benchmark:variant/strategy/id`` (``benchmark:variant[cell]/strategy/id`` in a sweep)."""
    message: str


def failures_of(records: Iterable[SampleRecord | RecordSummary]) -> list[Failure]:
    """The failed records, in the order given; a prompt that does not fit the model's context and a tool loop at its
    turn limit are no failures (they are counted apart, ``too_long`` and ``turn_limit``, and a resumed run leaves
    them)."""
    return [
        Failure(r.error_kind or "model",
                f"{r.benchmark}:{r.variant}{f'[{r.cell}]' if r.cell else ''}/{r.strategy}/{r.id}", r.error)
        for r in records
        if r.error is not None and r.error_kind not in SETTLED_KINDS
    ]


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def failure_summary(failures: Sequence[Failure], total: int, *, details: str, retry: str) -> str:
    """Lines for stderr: how many samples failed of ``total``, of which kinds, and the first error message.

    ``details`` says where the full messages are; ``retry`` how to try the failed samples again."""
    kinds = Counter(f.kind for f in failures)
    parts = [f"{_plural(kinds[k], k + ' error')} ({KIND_MEANING[k]})" for k in ("model", "harness") if kinds[k]]
    first = failures[0]
    message = first.message.strip().splitlines()[0] if first.message.strip() else "(no message)"
    return "\n".join(
        [
            f"{_plural(len(failures), 'sample')} of {total} failed: {', '.join(parts)}.",
            f"first error ({first.kind}, {first.where}): {message}",
            f"{details}; {retry}.",
        ]
    )
