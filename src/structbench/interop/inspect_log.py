"""``structbench convert --to inspect``: one Inspect AI log (``.eval``) per result entry of a run, built from
``inspect_ai.log``'s own types and serialized and laid out as its ``.eval`` writer does, a sample at a time (so an
entry of any size converts in bounded memory), so ``read_eval_log``, ``inspect view`` and ``evals_df``/``samples_df``
read it as they read a log of ``inspect eval``.

A log has the shape ``inspect eval structbench/<benchmark>`` gives its logs (``inspect_tasks``): the task
``<benchmark>_<variant>_<strategy>``, the same ``eval.metadata`` keys, each sample's score with the ``Scored``
record in its metadata, and the strategy's attempt in the sample's store, so ``structbench report`` reads
both alike (``report.inspect_runs``). Where a sample's record keeps it: the prompt as the input messages, the
reply (its thought as a reasoning part) as the last message, every sampled reply as a choice of the output,
the parsed answer, the gold as target, the breakdown keys in the metadata, the error. The results hold every
metric of ``metrics.json`` (headline first, then ``<headline>_ci_low``/``_ci_high``) and the whole result
entry in their metadata; the run's configuration, manifest and timings are in the log's spec and stats.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypeVar
from zipfile import ZIP_DEFLATED, ZipFile

from inspect_ai._util.constants import LOG_SCHEMA_VERSION
from inspect_ai._util.json import to_json_safe
from inspect_ai.event import ModelEvent
from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalError,
    EvalLog,
    EvalMetric,
    EvalPlan,
    EvalPlanStep,
    EvalResults,
    EvalSample,
    EvalScore,
    EvalSpec,
    EvalStats,
    HeadlineMetric,
)
from inspect_ai.log._condense import condense_sample
from inspect_ai.log._recorders.eval import (
    HEADER_JSON,
    JOURNAL_DIR,
    SAMPLES_DIR,
    START_JSON,
    SUMMARIES_JSON,
    LogStart,
)
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    Content,
    ContentReasoning,
    ContentText,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.scorer import Score
from pydantic import ValidationError

from structbench.benchmarks import BENCHMARKS
from structbench.core.errors import UsageError
from structbench.core.forkmap import cpu_count, fork_imap
from structbench.core.redact import redact
from structbench.core.untrusted import file_name, inside
from structbench.interop.inspect_json import (
    PLACED,
    SCORED_PLACED,
    Member,
    error_fields,
    sample_member,
    sample_usage,
    usage_fields,
)
from structbench.interop.rundir import Entry, RunData
from structbench.runfiles.cells import cell_options, options_for
from structbench.runfiles.inspect_schema import ATTEMPT, METRICS_GROUP, RECORD, RESULT
from structbench.runfiles.records import SampleRecord
from structbench.runfiles.runconfig import RunConfig

SOLVER = "structbench/structbench_strategy"

STATUS = {"complete": "success", "stopped": "error", "interrupted": "cancelled", "running": "started"}
"""A run's manifest status -> the log's status (``running``: a session that ended without saying how)."""


def inspect_model(config: RunConfig) -> str:
    """The run's model as Inspect names it: the ``structbench`` provider (``inspect eval --model
    structbench/BACKEND[:NAME]`` runs the same backend)."""
    return f"structbench/{config.model}"


def _id(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:22]


def _stamp(moment: datetime | None) -> str:
    return (moment or datetime.now(UTC)).astimezone(UTC).isoformat(timespec="seconds")


def chat_input(prompt: str | list[dict[str, str]] | None) -> str | list[ChatMessage]:
    """A record's prompt as a sample's input: the text, or the chat messages."""
    if prompt is None:
        return ""
    if isinstance(prompt, str):
        return prompt
    kinds = {"system": ChatMessageSystem, "assistant": ChatMessageAssistant}
    return [kinds.get(m.get("role", "user"), ChatMessageUser)(content=m.get("content", "")) for m in prompt]


def _reply(text: str, reasoning: str | None, model: str) -> ChatMessageAssistant:
    content: str | list[Content] = text
    if reasoning is not None:
        content = [ContentReasoning(reasoning=reasoning), ContentText(text=text)]
    return ChatMessageAssistant(content=content, model=model)


def model_output(record: SampleRecord, model: str) -> ModelOutput:
    """Every reply the record keeps as a choice (the sampled replies, else the one the parser read); the thought
    goes with the reply it came from."""
    texts = record.outputs or ([record.output] if record.output or record.error is None else [])
    thought_at = texts.index(record.output) if record.output in texts else None
    stop: Literal["max_tokens", "stop"] = "max_tokens" if record.out_of_tokens else "stop"
    return ModelOutput(model=model, choices=[
        ChatCompletionChoice(message=_reply(text, record.reasoning if i == thought_at else None, model),
                             stop_reason=stop)
        for i, text in enumerate(texts)
    ])


def _target(gold: Any) -> str | list[str]:
    if isinstance(gold, str):
        return gold
    if isinstance(gold, list) and all(isinstance(g, str) for g in gold):
        return list(gold)
    return "" if gold is None else json.dumps(gold, ensure_ascii=False, default=str)


def _error(record: SampleRecord) -> EvalError | None:
    fields = error_fields(record)
    return None if fields is None else EvalError(**fields)


def eval_sample(record: SampleRecord, model: str, epoch: int) -> EvalSample:
    """One record as an Inspect sample (``PLACED`` fields in their places, the rest under ``metadata[RECORD]``)."""
    scored = record.counted
    placed = PLACED | (SCORED_PLACED if scored else frozenset())
    if record.prompt is None:  # no model call: the input is empty, the record says so
        placed -= {"prompt"}
    rest = record.model_dump(mode="json", exclude=set(placed))
    output = model_output(record, model)
    input_ = chat_input(record.prompt)
    scores = None
    if scored:
        scores = {record.benchmark: Score(
            value=record.score,
            answer=json.dumps(record.parsed, ensure_ascii=False, default=str),
            explanation=f"gold: {json.dumps(record.gold, ensure_ascii=False, default=str)}",
            metadata={"scored": record.scored().model_dump(mode="json"), "output": record.output,
                      "outputs": record.outputs},
        )}
    asked: list[ChatMessage] = [ChatMessageUser(content=input_)] if isinstance(input_, str) else list(input_)
    messages = list(asked)
    if record.output or record.reasoning is not None:
        messages.append(_reply(record.output, record.reasoning, model))
    events: list[Any] = []
    if record.calls == 1 and record.prompt is not None:  # the one exchange is known whole
        events.append(ModelEvent(model=model, input=asked, tools=[], tool_choice="none", config=GenerateConfig(),
                                 output=output))
    flat = {k: v for k, v in record.meta.items() if k not in ("task", "meta", RECORD)
            and (v is None or isinstance(v, str | int | float | bool))}
    return EvalSample(
        id=record.id,
        epoch=epoch,
        input=input_,
        target=_target(record.gold),
        messages=messages,
        output=output,
        scores=scores,
        metadata={"task": record.task, **flat, "meta": record.meta, RECORD: rest},
        store={ATTEMPT: {"output": record.output, "outputs": record.outputs or [], "confidence": record.confidence,
                         "artifacts": record.artifacts, "calls": record.calls}},
        events=events,
        model_usage={name: ModelUsage(**fields) for name, fields in sample_usage(record, model).items()},
        total_time=record.seconds,
        working_time=record.seconds,
        error=_error(record),
    )


def _options(config: RunConfig, benchmark: str) -> dict[str, str]:
    """The run options that reach ``benchmark`` (its own and the bare keys it declares; a benchmark that cannot
    be loaded gets its own only)."""
    try:
        return {k: str(v) for k, v in options_for(BENCHMARKS.get(benchmark), config.options).items()}
    except UsageError:
        prefix = f"{benchmark}."
        return {k.removeprefix(prefix): v for k, v in config.options.items() if k.startswith(prefix)}


def generate_config(config: RunConfig) -> GenerateConfig:
    """The run's request settings as Inspect's ``GenerateConfig`` (unset ones left out)."""
    fields = {
        "max_tokens": config.max_tokens, "system_message": config.system_prompt,
        "temperature": config.generation.temperature, "top_p": config.generation.top_p,
        "seed": config.generation.seed, "reasoning_effort": config.reasoning.effort,
        "reasoning_tokens": config.reasoning.budget or None,
    }
    try:
        return GenerateConfig.model_validate({k: v for k, v in fields.items() if v is not None})
    except ValidationError:  # a value Inspect does not take: the manifest in the metadata still has it
        return GenerateConfig()


def _metrics(entry: Entry) -> dict[str, EvalMetric]:
    r = entry.result
    head = r.headline
    order = [head.name, *(k for k in r.metrics if k != head.name)]
    metrics = {k: EvalMetric(name=k, group=METRICS_GROUP, value=r.metrics[k]) for k in order if k in r.metrics}
    for bound in ("ci_low", "ci_high"):
        value = getattr(head, bound)
        if value is not None:
            metrics[f"{head.name}_{bound}"] = EvalMetric(
                name=f"{head.name}_{bound}", value=value,
                metadata={"confidence": head.confidence, "method": "percentile bootstrap over the samples"})
    return metrics


def entry_usage(entry: Entry, model: str) -> dict[str, ModelUsage]:
    """The log's ``stats.model_usage``: the tokens of the entry's calls made in this run (``metrics.json``'s
    ``usage``), per model as Inspect names it, with their cost where one model made them all and the run's prices
    cost them; empty where ``metrics.json`` kept no usage (a run written before it did), and a model whose tokens
    are unknown is left out."""
    totals = entry.result.usage
    if totals is None:
        return {}
    by_model = {f"structbench/{label}": usage for label, usage in totals.by_model.items()} or {model: totals.usage}
    out = {}
    for name, usage in by_model.items():
        fields = usage_fields(usage)
        if fields is not None:
            cost = totals.cost_usd if len(by_model) == 1 else None
            out[name] = ModelUsage(**fields, total_cost=cost)
    return out


def eval_header(run: RunData, entry: Entry) -> EvalLog:
    """The Inspect log of one result entry of ``run`` without its samples (``eval_samples`` yields them)."""
    r, config = entry.result, run.config
    position = run.entries.index(entry)
    model = inspect_model(config)
    epochs = set(entry.records.epochs().tolist())
    ids = [s.id for s in entry.records]
    options = {**_options(config, r.benchmark), **cell_options(r.cell)}  # a sweep cell's options win
    run_info = {"path": str(run.path), "name": run.name, "entry": position, "manifest": run.manifest}
    spec = EvalSpec(
        eval_id=_id(run.name, entry.task, "eval"),
        run_id=_id(run.name),
        created=_stamp(run.started),
        task=entry.task,
        task_id=_id(run.name, entry.task),
        task_display_name=entry.task,
        task_registry_name=f"structbench/{r.benchmark}",
        task_args={"variant": r.variant, "strategy": r.strategy, "data_dir": config.data_dir, "seed": config.seed,
                   "limit": config.limit, "max_tokens": config.max_tokens, **options},
        dataset=EvalDataset(name=f"{r.benchmark}:{r.variant}", samples=len(ids), sample_ids=ids),
        model=model,
        model_base_url=config.base_url,
        model_args=dict(config.model_options),
        model_generate_config=generate_config(config),
        config=EvalConfig(limit=config.limit, epochs=max(len(epochs), 1), log_samples=True),
        packages={str(k): str(v) for k, v in run.manifest.get("packages", {}).items()},
        metadata={"benchmark": r.benchmark, "variant": r.variant, "strategy": r.strategy, "cell": r.cell,
                  "seed": config.seed, "limit": config.limit, "options": options, "model": r.model, "run": run_info},
    )
    errors = entry.records.failures()
    results = EvalResults(
        total_samples=len(ids),
        completed_samples=len(ids) - errors,
        scores=[EvalScore(
            name=r.benchmark, scorer=r.benchmark, scored_samples=r.n,
            unscored_samples=r.harness_errors + r.too_long + r.turn_limit,
            metrics=_metrics(entry),
            metadata={"n": r.n, "errors": r.errors, "harness_errors": r.harness_errors, "too_long": r.too_long,
                      "turn_limit": r.turn_limit, "turn_limit_scored": r.turn_limit_scored, "baselines": r.baselines,
                      "headline": r.headline.model_dump(mode="json")},
        )],
        headline=HeadlineMetric(scorer=r.benchmark, score=r.benchmark, metric=r.headline.name),
        metadata={RESULT: r.model_dump(mode="json")},
    )
    status = STATUS.get(str(run.manifest.get("status")), "started")
    stop = run.manifest.get("stop_reason")
    log = EvalLog(
        version=LOG_SCHEMA_VERSION,
        status=status,  # type: ignore[arg-type]
        eval=spec,
        plan=EvalPlan(steps=[EvalPlanStep(solver=SOLVER, params={"bench": r.benchmark, "strategy": r.strategy})],
                      config=spec.model_generate_config),
        results=results,
        stats=EvalStats(started_at=_stamp(run.started), completed_at=_stamp(run.finished) if run.finished else "",
                        model_usage=entry_usage(entry, model)),
        error=EvalError(message=str(stop), traceback="", traceback_ansi="") if stop and status != "success" else None,
    )
    return _redacted(log)


def eval_samples(run: RunData, entry: Entry, positions: Iterable[int] | None = None) -> Iterator[EvalSample]:
    """The samples of one result entry (those at ``positions`` of its order, or all), each built from its full
    record as it is read back, redacted."""
    model = inspect_model(run.config)
    first = _first_epoch(entry)
    for record in entry.records.full(None if positions is None else list(positions)):
        yield _redacted(eval_sample(record, model, record.epoch - first + 1))


def _first_epoch(entry: Entry) -> int:
    epochs = entry.records.epochs()
    return int(epochs.min()) if len(epochs) else 1


CHUNK = 256
"""Samples a forked child builds and serializes at a time (``sample_members``)."""


def serialized(samples: Iterable[EvalSample]) -> Iterator[Member]:
    """Each sample condensed (as Inspect's writer condenses it) and serialized, with its summary."""
    for sample in samples:
        sample = condense_sample(sample)
        yield (f"{SAMPLES_DIR}/{sample.id}_epoch_{sample.epoch}.json", to_json_safe(sample, indent=None),
               to_json_safe(sample.summary(), indent=None))


def members(run: RunData, entry: Entry, positions: Iterable[int] | None = None) -> Iterator[Member]:
    """The members of one entry's samples (those at ``positions`` of its order, or all), each from its full record
    as it is read back (``members_of``)."""
    records = entry.records.full(None if positions is None else list(positions))
    return members_of(records, inspect_model(run.config), _first_epoch(entry))


def members_of(records: Iterable[SampleRecord], model: str, first: int = 0) -> Iterator[Member]:
    """Each record's member as ``serialized`` makes it from Inspect's models (redacted), but written as JSON
    directly (``inspect_json.sample_member``, a fifth of the CPU) where that covers the record; Inspect's models
    build the rest. ``first``: the epoch that is the log's first."""
    for record in records:
        epoch = record.epoch - first + 1
        member = sample_member(record, model, epoch)
        yield member if member is not None else next(serialized([_redacted(eval_sample(record, model, epoch))]))


def sample_members(run: RunData, entry: Entry) -> Iterator[Member]:
    """The samples of one entry as ``write_eval`` writes them, in order (``members``), ``CHUNK`` at a time in forked
    children (``forkmap.fork_imap``, one per CPU), each reading its records back from ``samples.jsonl`` itself,
    while this process writes the members of the chunks before; here, one at a time, where forking is not
    possible or the entry is one chunk (a child would build it while this process waits)."""
    if len(entry.records) <= CHUNK:
        yield from members(run, entry)
        return
    chunks = (range(start, min(start + CHUNK, len(entry.records))) for start in range(0, len(entry.records), CHUNK))
    for chunk_members in fork_imap(lambda chunk: list(members(run, entry, chunk)), chunks, children=cpu_count()):
        yield from chunk_members


M = TypeVar("M", EvalLog, EvalSample)


def _redacted(model: M) -> M:
    """``model`` with every secret the run's environment holds taken out of its text."""
    text = model.model_dump_json()
    clean = redact(text)
    return model if clean == text else type(model).model_validate_json(clean)


def log_name(log: EvalLog) -> str:
    """Inspect's file name for a log: ``<created>_<task>_<task id>.eval``."""
    created = datetime.fromisoformat(log.eval.created).astimezone(UTC).strftime("%Y-%m-%dT%H-%M-%S+00-00")
    return f"{created}_{log.eval.task.replace('_', '-')}_{log.eval.task_id}.eval"


def write_eval(header: EvalLog, samples: Iterable[Member], path: Path) -> None:
    """An ``.eval`` log in Inspect's layout (a zip: the start journal, one member per sample, the samples'
    summaries, the header), written a sample at a time (``serialized`` or ``sample_members`` makes them): each is
    written and dropped; the summaries wait in a temporary file. So a log of any size is written in bounded memory.
    Members are deflated (as Inspect's logs were before zstd, which every reader of ``.eval`` reads): Inspect's zstd
    starts a pool of threads per member, twice the CPU of deflate for a sample's few kilobytes, for the same size."""
    with ZipFile(path, "w", ZIP_DEFLATED, compresslevel=5) as zf, tempfile.TemporaryFile() as summaries:
        zf.writestr(f"{JOURNAL_DIR}/{START_JSON}",
                    to_json_safe(LogStart(version=header.version, eval=header.eval, plan=header.plan), indent=None))
        summaries.write(b"[")
        for n, (name, sample, summary) in enumerate(samples):
            zf.writestr(name, sample)
            summaries.write((b"," if n else b"") + summary)
        summaries.write(b"]")
        summaries.seek(0)
        with zf.open(SUMMARIES_JSON, "w", force_zip64=True) as member:
            shutil.copyfileobj(summaries, member)
        zf.writestr(HEADER_JSON, to_json_safe(header, indent=None))


def write_logs(run: RunData, out: Path) -> list[Path]:
    """One ``.eval`` log per result entry of ``run`` in ``out``, each written whole or not at all (to a temporary
    file renamed over the final name), its samples streamed from the run's records."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for entry in run.entries:
        header = eval_header(run, entry)
        path = inside(out / file_name(log_name(header), "a result's task"), out, "convert --out")
        with tempfile.TemporaryDirectory(dir=out, prefix=".convert-") as tmp:
            staged = Path(tmp) / path.name
            write_eval(header, sample_members(run, entry), staged)
            os.replace(staged, path)
        written.append(path)
    return written
