"""``export`` and ``score``: prompts out to another harness, its raw outputs back in for scoring.

Every exported line carries a ``fingerprint`` (a hash of the strategy's first prompt and the gold) and
the settings it was exported with; ``score`` recomputes the fingerprint of each sample it scores and
refuses predictions made for another sample (an equal id under another ``--seed``, variant, strategy or
option), naming the settings to score with. A raw output's thought (between ``<think>`` tags) is taken out
before the benchmark's parser reads it, as the backends take it out of a reply."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import math
import shlex
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from structbench.backends.base import Request, Response, sampling_fields
from structbench.backends.reasoning import ThinkTags, split_reasoning
from structbench.contract.benchmark import AS_WRITTEN, Attempt, Benchmark, Exclusion, Scored, Strategy
from structbench.core.errors import DataError, UsageError
from structbench.data.perturb import PerturbationOptions
from structbench.data.sample import Sample
from structbench.runfiles.outcomes import OutcomesBuilder
from structbench.runfiles.results import MISSING_LEFT_OUT, ResultEntry, compute_result
from structbench.runner.failures import Failure


class _FirstCall(Exception):
    def __init__(self, request: Request) -> None:
        self.request = request


async def _capture(request: Request) -> Response:
    raise _FirstCall(request)


async def first_request(strategy: Strategy, sample: Sample) -> Request | None:
    """The request ``strategy`` sends first for ``sample`` (None where it makes no model call)."""
    try:
        await strategy.run(sample, _capture)
    except _FirstCall as call:
        return call.request
    return None


def with_first_requests(strategy: Strategy, samples: Iterable[Sample]) -> Iterator[tuple[Sample, Request | None]]:
    """Each sample with the request a strategy sends first for it, as the samples are read (one event loop; run
    directly, not through ``Runner.run``, whose handler of Ctrl-C, set and reset for each sample, cost more than most
    strategies' first request)."""
    with asyncio.Runner() as runner:
        loop = runner.get_loop()
        for sample in samples:
            yield sample, loop.run_until_complete(first_request(strategy, sample))


def first_requests(strategy: Strategy, samples: Iterable[Sample]) -> list[Request | None]:
    """The request a strategy sends first for each sample (None where it makes no model call)."""
    return [request for _, request in with_first_requests(strategy, samples)]


class ExportSettings(BaseModel):
    """What an export was made with; written on every exported line so ``score`` can name the settings to use."""

    model_config = ConfigDict(extra="forbid")

    bench: str
    """``BENCH:VARIANT``."""
    strategy: str
    seed: int = 0
    limit: int | None = None
    options: dict[str, str] = Field(default_factory=dict)

    def flags(self) -> str:
        """The ``score`` arguments that select the same samples: ``BENCH:VARIANT --strategy S --seed N ...``."""
        parts = [self.bench, "--strategy", self.strategy, "--seed", str(self.seed)]
        if self.limit is not None:
            parts += ["--limit", str(self.limit)]
        for key, value in self.options.items():
            parts += ["--option", shlex.quote(f"{key}={value}")]
        return " ".join(parts)


def fingerprint(request: Request | None, sample: Sample) -> str:
    """A short hash of what a prediction answers (the strategy's first prompt) and of what it is scored
    against (the gold): equal ids from another seed, variant, strategy or option differ here."""
    payload = {"prompt": request.prompt_payload() if request else None, "gold": sample.gold.model_dump(mode="json")}
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:FINGERPRINT_LENGTH]


FINGERPRINT_LENGTH = 16


def export_lines(
    bench: Benchmark,
    variant: str,
    samples: Iterable[Sample],
    strategy: Strategy,
    settings: ExportSettings | None = None,
) -> Iterator[dict[str, Any]]:
    """One object per sample, as the samples are read: id, fingerprint, benchmark, variant, strategy, prompt, gold,
    meta, the settings of the export, the perturbation its prompt shows (benchmarks that accept ``data.perturb``'s:
    its name and seed) and the benchmark's own fields."""
    settings = settings or ExportSettings(bench=f"{bench.name}:{variant}", strategy=strategy.name)
    perturbation = bench.options.perturbation_fields() if isinstance(bench.options, PerturbationOptions) else {}
    for sample, request in with_first_requests(strategy, samples):
        line: dict[str, Any] = {
            "id": sample.id,
            "fingerprint": fingerprint(request, sample),
            "benchmark": bench.name,
            "variant": variant,
            "strategy": strategy.name,
            "task": sample.task,
            "prompt": request.prompt_payload() if request else None,
            "generation": sampling_fields(request.params) if request else None,
            "gold": sample.gold.model_dump(),
            "meta": sample.meta,
            "exported_with": settings.model_dump(),
            **perturbation,
        }
        line.update(bench.export_fields(sample))
        yield line


@dataclass(frozen=True)
class Prediction:
    """One line of a predictions file."""

    output: str | list[str]
    fingerprint: str | None = None
    """Copied from the export line: ``score`` checks it against the sample it scores."""
    exported_with: ExportSettings | None = None
    where: str | None = None
    """Where it was read: ``FILE:LINE`` (JSON lines) or ``FILE, row N`` (Parquet)."""


PARQUET_MAGIC = b"PAR1"


def read_predictions(path: Path) -> dict[str, Prediction]:
    """Predictions by id, from JSON lines (``{"id": ..., "output": ..., "fingerprint": ...}``), a Parquet file with
    those columns (``export --format parquet`` with an ``output`` column added), or a folder that ``export --format
    hf`` wrote; a bad line or row names the file and where. Any other field (the rest of the export line) is
    ignored, except ``exported_with``."""
    predictions: dict[str, Prediction] = {}
    for where, obj in _prediction_rows(path):
        if not isinstance(obj, dict) or "id" not in obj or "output" not in obj:
            raise DataError(f"{where}: a prediction needs the fields 'id' and 'output'")
        output = obj["output"]
        ok = isinstance(output, str) or (isinstance(output, list) and all(isinstance(o, str) for o in output))
        if not ok:
            raise DataError(f"{where}: 'output' must be a string or a list of strings")
        fp = obj.get("fingerprint")
        if fp is not None and not isinstance(fp, str):
            raise DataError(f"{where}: 'fingerprint' must be the string written by structbench export")
        try:
            settings = ExportSettings.model_validate(obj["exported_with"]) if obj.get("exported_with") else None
        except ValidationError as err:
            raise DataError(f"{where}: 'exported_with' is not what structbench export writes") from err
        key = str(obj["id"])
        if key in predictions:
            raise DataError(f"{where}: duplicate id {key!r}")
        predictions[key] = Prediction(output, fp, settings, where)
    if not predictions:
        raise DataError(f"{path}: no predictions in it (lines with 'id', 'fingerprint' and 'output')")
    return predictions


def _prediction_rows(path: Path) -> Iterable[tuple[str, Any]]:
    """(where, object) for each prediction of a JSON lines file, a Parquet file or an ``export --format hf`` folder."""
    files = sorted(path.glob("data/*.parquet")) if path.is_dir() else [path]
    if path.is_dir() and not files:
        raise DataError(f"{path}: a folder of predictions must be one `structbench export --format hf` wrote "
                        "(data/*.parquet)")
    for file in files:
        try:
            with file.open("rb") as fh:
                parquet = fh.read(len(PARQUET_MAGIC)) == PARQUET_MAGIC
        except OSError as err:
            raise DataError(f"{file}: cannot read predictions: {err.strerror}") from err
        yield from (_parquet_rows(file) if parquet else _json_lines(file))


def _json_lines(path: Path) -> Iterator[tuple[str, Any]]:
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise DataError(f"{path}: cannot read predictions: {err.strerror}") from err
    raw = raw.removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte-order mark, as some editors write
    for lineno, data in enumerate(raw.splitlines(), start=1):
        try:
            line = data.decode("utf-8")
        except UnicodeDecodeError as err:
            raise DataError(f"{path}:{lineno}: not UTF-8 (byte {err.start + 1} of the line)") from None
        if not line.strip():
            continue
        try:
            yield f"{path}:{lineno}", json.loads(line)
        except json.JSONDecodeError as err:
            raise DataError(f"{path}:{lineno}: not JSON: {err.msg}") from err


def _parquet_rows(path: Path) -> Iterator[tuple[str, Any]]:
    """The rows of a Parquet file as export lines: ``exported_with`` as ``export`` wrote it (Parquet keeps no empty
    mapping, so its missing ``options`` are none; a column kept as JSON text is decoded)."""
    try:
        from structbench.runner.tabular import read_parquet
    except ImportError as err:
        raise UsageError(f"{path}: reading Parquet needs pyarrow: pip install 'structbench[datasets]' ({err})"
                         ) from None
    for number, row in enumerate(read_parquet(path), start=1):
        settings = row.get("exported_with")
        if isinstance(settings, str):
            with contextlib.suppress(json.JSONDecodeError):
                settings = json.loads(settings)
        if isinstance(settings, dict):
            row["exported_with"] = {**settings, "options": settings.get("options") or {}}
        yield f"{path}, row {number}", row


def _where(source: Path, prediction: Prediction) -> str:
    return prediction.where or str(source)


def _settings_hint(predictions: Mapping[str, Prediction], settings: ExportSettings | None) -> str:
    """What to score with: the export's own settings when the lines carry them, else the flags to check."""
    exported = {p.exported_with.flags() for p in predictions.values() if p.exported_with is not None}
    if len(exported) == 1:
        flags = exported.pop()
        if settings is None or settings.flags() != flags:
            return f"these predictions were exported with `structbench export {flags}`: score with `{flags}`"
    return ("score with the same BENCH:VARIANT, --strategy, --seed, --limit, --option and --data-dir "
            "as the export")


class PredictionCheck:
    """Refuse (``UsageError``) predictions that are not answers to exactly these samples, a sample at a time as
    samples are read: an id the samples lack, a missing fingerprint (when required), or a fingerprint of another
    prompt or gold; the fingerprints of the samples passed to ``sample``, then (``finish``) what no sample claimed."""

    def __init__(self, strategy: Strategy, predictions: Mapping[str, Prediction], *, bench: Benchmark, variant: str,
                 source: Path, settings: ExportSettings | None, require_fingerprint: bool) -> None:
        self.strategy = strategy
        self.predictions = predictions
        self.label = f"{bench.name}:{variant}"
        self.source = source
        self.settings = settings
        self.unclaimed = set(predictions)
        self.wrong: list[str] = []
        self.bare = next((p for p in predictions.values() if p.fingerprint is None), None) \
            if require_fingerprint else None

    def sample(self, sample: Sample, runner: asyncio.Runner) -> None:
        prediction = self.predictions.get(sample.id)
        if prediction is None:
            return
        self.unclaimed.discard(sample.id)
        if prediction.fingerprint is not None:
            request = runner.run(first_request(self.strategy, sample))
            if prediction.fingerprint != fingerprint(request, sample):
                self.wrong.append(sample.id)

    def finish(self) -> None:
        if self.unclaimed:
            unknown = [k for k in self.predictions if k in self.unclaimed]
            raise UsageError(
                f"{self.source}: {len(unknown)} id(s) not in {self.label} (e.g. {unknown[0]!r}); "
                + _settings_hint(self.predictions, self.settings)
            )
        if self.bare is not None:
            raise UsageError(
                f"{_where(self.source, self.bare)}: no 'fingerprint': copy it from the export line (structbench "
                "export writes one per sample), so score can check the prediction answers that very sample; "
                "--unchecked scores by id alone"
            )
        if self.wrong:
            first = self.predictions[self.wrong[0]]
            raise UsageError(
                f"{_where(self.source, first)}: {len(self.wrong)} prediction(s) were exported for other samples than "
                f"{self.label} has under these settings (e.g. {self.wrong[0]!r}: its prompt or gold "
                f"differs); {_settings_hint(self.predictions, self.settings)}"
            )


MissingPolicy = Literal["wrong", "skip", "error"]
"""What ``score`` does with a sample that has no prediction: score it as an empty reply (wrong, counted in n), leave
it out of n and every metric, or refuse the file."""


def score_predictions(
    bench: Benchmark,
    variant: str,
    samples: Iterable[Sample],
    strategy: Strategy,
    predictions: Mapping[str, Prediction | str | list[str]],
    *,
    source: Path,
    model: str = "predictions",
    settings: ExportSettings | None = None,
    require_fingerprint: bool = False,
    on_failure: Callable[[Failure], None] | None = None,
    missing: MissingPolicy = "wrong",
    on_scored: Callable[[Scored, bool], None] | None = None,
    think_tags: ThinkTags | None = None,
    thought_opened: bool = False,
) -> ResultEntry:
    """Check the predictions (``PredictionCheck``), then parse and score them with the benchmark's own parser.
    A sample without a prediction is, as ``missing`` says, scored as an empty reply (``wrong``: refused where the
    benchmark's scoring leaves an empty reply out of its averages, since it would not count as wrong), left out of
    n and the metrics (``skip``, listed in ``extra.excluded``), or refused (``error``). A sample the scorer fails on
    is a harness error: counted apart, handed to ``on_failure``, and left out of the metrics. Fingerprints are
    checked where the predictions carry them; ``require_fingerprint`` refuses predictions without one.
    ``on_scored`` gets each outcome that counts, and whether its prediction was missing (``score --samples``).
    ``think_tags`` and ``thought_opened`` say how each output's thought is found, as ``run``'s ``--think-tags`` and
    ``--thought-opened`` do (``answers_of``).

    The samples are read once, as a stream, and scored as they pass (the outcomes kept as columns,
    ``structbench.runfiles.outcomes``); a check that fails is raised after the last sample, before anything is
    returned."""
    preds = {k: p if isinstance(p, Prediction) else Prediction(p) for k, p in predictions.items()}
    listed = next((p for p in preds.values() if isinstance(p.output, list)), None)
    if listed is not None and not strategy.several:
        raise UsageError(f"{_where(source, listed)}: 'output' is a list, but the {strategy.name} strategy takes one "
                         "reply per sample (a list is for self-consistency's samples)")
    checker = PredictionCheck(strategy, preds, bench=bench, variant=variant, source=source, settings=settings,
                              require_fingerprint=require_fingerprint)
    scored = OutcomesBuilder()
    absent: list[str] = []
    uncounted = 0  # missing samples the benchmark's averages would leave out (missing="wrong" refuses them)
    harness_errors = cut_off = replies_cut_off = 0
    with asyncio.Runner() as runner:
        for sample in samples:
            checker.sample(sample, runner)
            is_missing = sample.id not in preds
            if is_missing:
                absent.append(sample.id)
                if missing != "wrong":
                    continue
                attempt = Attempt(output="")
            else:
                attempt, cut = answers_of(preds[sample.id].output, tags=think_tags, opened=thought_opened)
                replies_cut_off += cut
                cut_off += cut > 0 and not any(t.strip() for t in (attempt.output, *attempt.outputs))
            try:
                outcome = bench.outcome(sample, attempt, strategy)
            except Exception as err:  # a scorer bug costs this sample, not the whole file
                harness_errors += 1
                if on_failure is not None:
                    where = f"{bench.name}:{variant}/{strategy.name}/{sample.id}"
                    on_failure(Failure("harness", where, f"scoring failed: {type(err).__name__}: {err}"))
                continue
            uncounted += is_missing and not bench.averaged(outcome) and _averages_a_reply(bench, sample, strategy)
            scored.add(outcome)
            if on_scored is not None:
                on_scored(outcome, is_missing)
    checker.finish()
    label = f"{bench.name}:{variant}"
    if absent and missing == "error":
        raise UsageError(f"{source}: {len(absent)} sample(s) of {label} have no prediction (e.g. {absent[0]!r}); "
                         "--missing wrong scores them as wrong, --missing skip leaves them out")
    if uncounted:
        raise UsageError(
            f"{source}: {len(absent)} sample(s) of {label} have no prediction (e.g. {absent[0]!r}), and its scoring "
            "under these options leaves an empty reply out of its averages, so they cannot count as wrong: "
            "--missing skip leaves them out of n and the metrics"
        )
    left_out = [Exclusion(reason=MISSING_LEFT_OUT, count=len(absent))] if absent and missing == "skip" else []
    return compute_result(bench, variant, strategy.name, model, scored.build(), missing=absent, left_out=left_out,
                          harness_errors=harness_errors, reasoning_cut_off=cut_off, replies_cut_off=replies_cut_off)


def _averages_a_reply(bench: Benchmark, sample: Sample, strategy: Strategy) -> bool:
    """Whether the benchmark would count a (wrong) reply to ``sample`` in its averages: where it leaves the sample
    out whatever the reply (RelationalFactQA's CoT queries galois did not score), a missing prediction is left out
    as any answer would be, and counting it as wrong changes nothing."""
    try:
        return bench.averaged(bench.outcome(sample, Attempt(output="x"), strategy))
    except Exception:  # a scorer that cannot read a stand-in reply: take it that it would count one
        return True


def sample_line(scored: Scored, missing: bool) -> dict[str, Any]:
    """One line of ``score --samples``: a scored prediction's id, the answer the parser read, the gold, the
    per-sample headline score and every per-sample metric value by name (a value that is not a number is null),
    as another scorer's per-sample log can be compared with it (lm-eval's ``--log_samples``)."""
    line: dict[str, Any] = {
        "id": scored.id,
        "task": scored.task,
        "parsed": scored.parsed,
        "gold": scored.gold,
        "score": _finite(scored.score),
        "values": {name: _finite(value) for name, value in scored.values.items()},
    }
    if missing:
        line["missing"] = True
    return line


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def answers_of(output: str | list[str], *, tags: ThinkTags | None = None, opened: bool = False
               ) -> tuple[Attempt, int]:
    """A prediction's raw output(s) as the attempt parsers read, each reply's thought taken out as a backend takes
    it out (``tags``, default ``<think>``; one never closed leaves the reply without an answer; ``opened``: each
    reply began inside its thought), and how many replies ended inside their thought. Where a thought was taken
    out, the output as written is kept under ``AS_WRITTEN``."""
    texts = output if isinstance(output, list) else [output]
    splits = [split_reasoning(text, tags=tags, opened=opened) for text in texts]
    answers = [split.answer for split in splits]
    attempt = Attempt.from_prediction(answers if isinstance(output, list) else answers[0])
    if answers != texts:
        attempt.artifacts[AS_WRITTEN] = output
    return attempt, sum(split.cut_off for split in splits)
