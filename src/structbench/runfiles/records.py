"""One line of ``samples.jsonl``: a sample under one strategy and model, with its outcome."""

import sys
from dataclasses import dataclass
from dataclasses import fields as dataclass_fields
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from structbench.backends.usage import CallUsage, Usage, UsageKey, usage_groups
from structbench.contract.benchmark import Scored
from structbench.core.trusted import trusted

_NO_VALUES: dict[str, float] = {}

RecordKey = tuple[str, str, str, str, str, int, str]
"""(benchmark, variant, strategy, model, sample id, epoch, sweep cell)."""

ErrorKind = Literal["model", "harness", "context", "turns"]
"""Who failed: the model (its call failed after retries), the harness (a bug in a strategy, parser or scorer), or
neither: the prompt does not fit the model's context (``context``; the server or backend said so), or a tool loop
reached its turn limit still calling tools (``turns``: no final answer)."""
UNSCORED_KINDS: tuple[ErrorKind, ...] = ("harness", "context", "turns")
"""Error kinds of records that take no part in metrics (they were not scored)."""
SETTLED_KINDS: tuple[ErrorKind, ...] = ("context", "turns")
"""Error kinds a resumed run leaves as they are: the same request would end the same way."""


class _Outcome:
    """What a full record and its summary both answer: whether it counts, its key, its scored part."""

    __slots__ = ()

    if TYPE_CHECKING:
        benchmark: str
        variant: str
        strategy: str
        model: str
        id: str
        task: str
        parsed: Any
        gold: Any
        score: float
        values: dict[str, float]
        meta: dict[str, Any]
        cluster: str | None
        epoch: int
        cell: str
        error: str | None
        error_kind: ErrorKind | None

    @property
    def counted(self) -> bool:
        """Whether the record takes part in metrics: everything but harness errors, prompts that do not fit the
        model's context and tool loops that reached their turn limit (none of them was scored)."""
        return self.error_kind not in UNSCORED_KINDS

    @property
    def settled(self) -> bool:
        """Whether a resumed run leaves the sample as it is: it finished, its prompt does not fit the model's
        context (sent again, it would be refused again), or its tool loop reached the turn limit (asked again, it
        would be answered from the cache the same way); other failures are tried again."""
        return self.error is None or self.error_kind in SETTLED_KINDS

    @property
    def key(self) -> RecordKey:
        """What a record is the outcome of: one sample under one strategy and model, in one epoch and sweep cell."""
        return (self.benchmark, self.variant, self.strategy, self.model, self.id, self.epoch, self.cell)

    def scored(self) -> Scored:
        return Scored(id=self.id, task=self.task, parsed=self.parsed, gold=self.gold, score=self.score,
                      values=self.values, meta=self.meta, cluster=self.cluster, epoch=self.epoch)


class SampleRecord(_Outcome, BaseModel):
    """Everything known about one (benchmark, variant, strategy, model, sample, epoch)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    benchmark: str
    variant: str
    strategy: str
    model: str
    id: str
    task: str
    prompt: str | list[dict[str, str]] | None
    """The strategy's first model call: the prompt text or the chat messages."""
    output: str
    """The raw text the parser read."""
    outputs: list[str] | None = None
    """All sampled texts, for strategies that draw several."""
    parsed: Any = None
    gold: Any = None
    score: float = 0.0
    values: dict[str, float] = Field(default_factory=dict)
    meta: dict[str, Any] = Field(default_factory=dict)
    cluster: str | None = None
    """The sample's cluster (``Benchmark.cluster``: the table or database it shares with other samples); intervals
    resample clusters. None in records written before clusters, or where the sample shares nothing."""
    epoch: int = Field(0, ge=0)
    """Which repeat of the sample this is (``--epochs``): each epoch is its own record, request seed and cache
    entry."""
    cell: str = ""
    """The sweep's cell the sample was asked in (``runner.sweep``: ``key=value`` pairs joined by ``;``); ``""`` in a
    run without a sweep."""
    confidence: float | None = None
    artifacts: dict[str, Any] = Field(default_factory=dict)
    reasoning: str | None = None
    """The thought behind ``output`` (of the reply it came from), kept apart: no parser reads it. Secrets
    redacted; cut to its head and tail beyond ``runner.thoughts.MAX_REASONING_CHARS``. None: no thought."""
    reasoning_tokens: int | None = None
    """The thought's length in tokens, where the backend knew it (a local tokenizer, the server's usage)."""
    reasoning_cut_off: bool = False
    """The sample has no answer because its replies ran out of tokens inside their thoughts: scored as a reply
    without an answer (never parsed from the thought), and counted in the result's ``reasoning_cut_off``."""
    replies_cut_off: int = 0
    """How many of the sample's replies ended inside their thought (self-consistency draws each count)."""
    replies_unclosed: int = 0
    """Of ``replies_cut_off``, those the model ended itself (``finish_reason`` ``stop``) without closing the thought:
    no budget ran out, the closing tag was never written (wrong ``--think-tags``, a chat template's thought). 0 in
    records written before format 1.4."""
    turn_limit: bool = False
    """The sample's tool loop reached its turn limit still calling tools and was scored as a reply without an answer
    (``--turn-limit wrong``, the default since format 1.4): in ``n``, and counted in the result's
    ``turn_limit_scored``. A loop at its limit counted apart is an ``error_kind`` ``turns`` instead."""
    error: str | None = None
    """Why the sample failed (the message; for a harness error, its traceback)."""
    error_kind: ErrorKind | None = None
    """``model``: a model call failed for good (after retries); the sample is scored as wrong.
    ``harness``: a strategy, parser or scorer raised (a bug); the sample is not scored and takes no part
    in any metric. ``context``: the prompt does not fit the model's context (the server refused it as too long,
    or the backend checked); not scored, in no metric, counted apart (``too_long``) and never sent again.
    ``turns``: a tool loop reached its turn limit (``--max-turns``) still calling tools under ``--turn-limit apart``
    (and in every run of format 1.3 and earlier); not scored, in no metric, counted apart (``turn_limit``), its
    trace kept in ``artifacts``. None when the sample did not fail. Model and
    harness errors are retried when the run resumes."""
    calls: int = 0
    """Model calls the strategy made, cache hits included."""
    cached_calls: int = 0
    seconds: float = 0.0
    usage: Usage | None = None
    """Tokens of the model calls made for this sample in this run (the strategy's and a judge's), summed; reused
    calls are in ``reused_usage``. None in records written before usage was kept."""
    reused_usage: Usage | None = None
    """Tokens of the sample's calls answered from the response cache (paid for by the run that first made them)."""
    call_usage: list[CallUsage] = Field(default_factory=list)
    """Every model call of the sample, in order: its model, tokens, and whether it was reused or batched."""

    @property
    def out_of_tokens(self) -> bool:
        """Whether the sample went unanswered for lack of tokens: cut off in its thought by the budget, not only by
        replies the model ended without closing the thought (``replies_unclosed``)."""
        return self.reasoning_cut_off and self.replies_unclosed < self.replies_cut_off

    def usage_by(self) -> tuple[tuple[UsageKey, Usage], ...]:
        """The record's calls summed per (model, batch, reused)."""
        return tuple(usage_groups(self.call_usage).items())

    @model_validator(mode="after")
    def _kind_goes_with_error(self) -> "SampleRecord":
        if self.error is None and self.error_kind is not None:
            raise ValueError("error_kind is set but error is not")
        if self.error is not None and self.error_kind is None:
            # Records written before the two kinds were told apart: every failure was scored as wrong.
            self.error_kind = "model"
        return self

    def slim(self) -> "RecordSummary":
        """What metrics and failure summaries read of this record, kept in memory for every sample of a run
        while the full record stays on disk."""
        return RecordSummary(
            sys.intern(self.benchmark), sys.intern(self.variant), sys.intern(self.strategy), sys.intern(self.model),
            self.id, sys.intern(self.task), self.parsed, self.gold, self.score, self.values or _NO_VALUES,
            self.meta, self.cluster, self.epoch, self.error, self.error_kind, self.reasoning_cut_off,
            self.replies_cut_off, self.replies_unclosed, self.usage_by() if self.call_usage else (),
            sys.intern(self.cell), self.turn_limit,
        )

    def row(self) -> "SummaryRow":
        """``slim`` as a plain tuple, its calls' usage as counts: what a worker sends the run's process for each
        record, pickled and unpickled in a fraction of a summary's time (#44)."""
        groups = tuple((key, UsageCounts(*_COUNTS(usage))) for key, usage in usage_groups(self.call_usage).items()) \
            if self.call_usage else ()
        return SummaryRow._make((*_ROW_HEAD(self), groups, self.cell, self.turn_limit))

    def as_failed(self, error: str) -> "SampleRecord":
        """This sample as a failure with only its identity, prompt and gold: what is written when the full
        record cannot be (it is tried again on the next run)."""
        fields: dict[str, Any] = {
            "benchmark": self.benchmark, "variant": self.variant, "strategy": self.strategy, "model": self.model,
            "id": self.id, "task": self.task, "prompt": self.prompt, "output": "", "error": error,
            "cluster": self.cluster, "epoch": self.epoch, "cell": self.cell,
        }
        try:
            return SampleRecord.model_validate(fields)
        except ValidationError:
            return SampleRecord.model_validate({**fields, "prompt": None})


@dataclass(frozen=True, slots=True)
class RecordSummary(_Outcome):
    """A record without its texts (prompt, outputs, artifacts, timings): a few hundred bytes where the full
    record is kilobytes, so a run of any size keeps one per sample (``SampleRecord.slim``). Repeated names
    are interned; ``values`` and ``meta`` are the record's own (never mutated)."""

    benchmark: str
    variant: str
    strategy: str
    model: str
    id: str
    task: str
    parsed: Any
    gold: Any
    score: float
    values: dict[str, float]
    meta: dict[str, Any]
    cluster: str | None
    epoch: int
    error: str | None
    error_kind: ErrorKind | None
    reasoning_cut_off: bool = False
    replies_cut_off: int = 0
    replies_unclosed: int = 0
    usage_groups: tuple[tuple[UsageKey, Usage], ...] = ()
    """The record's calls summed per (model, batch, reused): what costs are computed from."""
    cell: str = ""
    turn_limit: bool = False

    def usage_by(self) -> tuple[tuple[UsageKey, Usage], ...]:
        return self.usage_groups

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled as plain values (``Usage`` as its counts): a worker sends one per record, and the run's process
        unpickles that in two thirds of the time the dataclass's state and pydantic's own take (#44)."""
        groups = tuple((key, _COUNTS(usage)) for key, usage in self.usage_groups)
        return _summary, (_HEAD(self), groups, tuple(getattr(self, name) for name in _TAIL))


_NAMES = tuple(f.name for f in dataclass_fields(RecordSummary))
_AT = _NAMES.index("usage_groups")
_HEAD = attrgetter(*_NAMES[:_AT])
_TAIL = _NAMES[_AT + 1:]
_USAGE_FIELDS = tuple(Usage.__pydantic_fields__)
_COUNTS = attrgetter(*_USAGE_FIELDS)


def _summary(head: tuple[Any, ...], groups: tuple[tuple[UsageKey, tuple[int | None, ...]], ...],
             tail: tuple[Any, ...]) -> RecordSummary:
    """A ``RecordSummary`` from its pickled form (``RecordSummary.__reduce__``): an equal one."""
    usage = tuple((key, trusted(Usage, dict(zip(_USAGE_FIELDS, counts, strict=True)))) for key, counts in groups)
    values: tuple[Any, ...] = (*head, usage, *tail)
    return RecordSummary(*values)


class UsageCounts(NamedTuple):
    """A ``Usage``'s counts as a plain tuple (``SummaryRow``), read by name as the model is."""

    calls: int
    prompt_tokens: int | None
    completion_tokens: int | None
    reasoning_tokens: int | None
    cached_tokens: int | None
    unknown: int


class SummaryRow(NamedTuple):
    """A ``RecordSummary``'s fields as a plain tuple, in the same order, its calls' usage as ``UsageCounts``: what a
    worker sends the run's process for each record (``SampleRecord.row``). The run's columns read it as they read a
    summary (``runfiles.columns.RecordColumns``); no dataclass nor pydantic model is built for it on either side."""

    benchmark: str
    variant: str
    strategy: str
    model: str
    id: str
    task: str
    parsed: Any
    gold: Any
    score: float
    values: dict[str, float]
    meta: dict[str, Any]
    cluster: str | None
    epoch: int
    error: str | None
    error_kind: ErrorKind | None
    reasoning_cut_off: bool
    replies_cut_off: int
    replies_unclosed: int
    usage_groups: tuple[tuple[UsageKey, UsageCounts], ...]
    cell: str
    turn_limit: bool

    def usage_by(self) -> tuple[tuple[UsageKey, UsageCounts], ...]:
        return self.usage_groups


_ROW_HEAD = attrgetter(*_NAMES[:_AT])

AnyRecord = SampleRecord | RecordSummary
"""A record, full or summarized: what metrics, tables and paired tests read of it, both have."""
