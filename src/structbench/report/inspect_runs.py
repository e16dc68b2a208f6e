"""Inspect AI logs as the report reads runs: the logs ``inspect eval structbench/<bench>`` writes, and those
``structbench convert --to inspect`` writes, become run directories (``rundir.RunFiles``) of sample records and result
entries, so ``structbench report`` and ``compare`` read either path the same way.

A log's samples become records: the prompt from the input, the parsed answer, gold, score and values from the
score's ``Scored`` record, output, outputs, confidence and artifacts from the strategy's attempt, the thought
from the reply's reasoning part, and (converted logs) the record's remaining fields from the sample's metadata.
A sample Inspect holds with an error and no score was not scored: it is counted apart, as a harness error is
(Inspect's own metrics leave it out too). The result entry is the converted run's own (kept in the log), or
computed from the records by the benchmark's metrics, as a run computes it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from structbench.core.errors import DataError, UsageError
from structbench.core.untrusted import check_archive, check_size, schema_error
from structbench.runfiles.manifest import Manifest
from structbench.runfiles.records import SampleRecord
from structbench.runfiles.results import MetricsFile, ResultEntry, compute_result
from structbench.runfiles.rundir import RunFiles, held_records

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample
    from inspect_ai.model import ModelOutput


LOG_SUFFIXES = (".eval", ".json")


def holds_logs(path: Path) -> bool:
    """Whether ``path`` is an Inspect log file, or a directory of ``.eval`` logs that is not a run directory."""
    from structbench.runfiles.runformat import MANIFEST, METRICS

    if path.is_file():
        return path.suffix in LOG_SUFFIXES and path.name not in (MANIFEST, METRICS)
    return path.is_dir() and not (path / METRICS).exists() and not (path / MANIFEST).exists() and any(
        path.glob("*.eval"))


def _read(path: Path) -> EvalLog:
    try:
        from inspect_ai.log import read_eval_log
    except ImportError as err:
        raise UsageError(f"{path}: reading Inspect logs needs inspect-ai: pip install 'structbench[inspect]' ({err})"
                         ) from None
    if path.suffix == ".eval":
        check_archive(path)  # its members' sizes, before Inspect inflates any of them
    else:
        check_size(path)
    try:
        return read_eval_log(str(path))
    except Exception as err:  # Inspect raises several kinds for a file that is not a log
        raise DataError(f"{path}: not an Inspect log Inspect can read ({schema_error(err)})") from None


def _prompt(value: str | list[Any]) -> str | list[dict[str, str]]:
    if isinstance(value, str):
        return value
    return [{"role": m.role, "content": m.text} for m in value]


def _thought(output: ModelOutput, text: str) -> str | None:
    """The reasoning part of the reply the parser read (the choice with its text; the only one otherwise)."""
    from inspect_ai.model import ContentReasoning

    choices = output.choices
    match = [c for c in choices if c.message.text == text] or (choices if len(choices) == 1 else [])
    if not match or isinstance(match[0].message.content, str):
        return None
    parts = [p.reasoning for p in match[0].message.content if isinstance(p, ContentReasoning) and not p.redacted]
    return "\n\n".join(parts) if parts else None


def sample_record(sample: EvalSample, benchmark: str, variant: str, strategy: str, model: str) -> SampleRecord:
    """One Inspect sample as a structbench record (``interop.inspect_schema`` says where each part is)."""
    from structbench.runfiles.inspect_schema import ATTEMPT, RECORD

    metadata = sample.metadata or {}
    rest = dict(metadata.get(RECORD) or {})
    score = (sample.scores or {}).get(benchmark)
    kept = (score.metadata if score is not None else None) or {}
    scored = kept.get("scored")
    attempt = sample.store.get(ATTEMPT) or {}
    output = str(kept.get("output", "") if scored else rest.get("output", attempt.get("output", "")))
    fields: dict[str, Any] = {
        "benchmark": benchmark, "variant": variant, "strategy": strategy, "model": model, "id": str(sample.id),
        "task": metadata.get("task", ""), "prompt": _prompt(sample.input), "output": output,
        "outputs": attempt.get("outputs") or None, "meta": metadata.get("meta") or {},
        "confidence": attempt.get("confidence"), "artifacts": attempt.get("artifacts") or {},
        "calls": attempt.get("calls", 0), "reasoning": _thought(sample.output, output),
        "seconds": sample.total_time or 0.0,
    }
    if scored:  # the benchmark's outcome: parsed, gold, score, values, meta (and cluster, epoch where it has them)
        fields.update({k: v for k, v in scored.items() if k in SampleRecord.model_fields and k != "id"})
        fields["outputs"] = kept.get("outputs") or None
    fields.update(rest)  # a converted record's own fields
    if "epoch" in SampleRecord.model_fields and "epoch" not in fields:  # records that know epochs count from 0
        fields["epoch"] = max(sample.epoch - 1, 0)
    if sample.error is not None and "error" not in rest:  # written by Inspect: its error, not scored or scored
        fields["error"] = sample.error.message
        fields["error_kind"] = "model" if scored else "harness"
    try:
        return SampleRecord.model_validate(fields)
    except ValueError as err:
        raise DataError(f"sample {sample.id}: not a structbench sample ({err})") from None


def _kept_entry(log: EvalLog) -> Any:
    """The result entry a converted log carries whole, as JSON (None for a log of ``inspect eval``)."""
    from structbench.runfiles.inspect_schema import RESULT

    return (log.results.metadata or {}).get(RESULT) if log.results is not None else None


def _entry(log: EvalLog, records: list[SampleRecord], benchmark: str, variant: str, strategy: str,
           model: str) -> ResultEntry:
    """The converted run's own result entry, or the benchmark's metrics over the records."""
    from structbench.benchmarks import BENCHMARKS

    kept = _kept_entry(log)
    if kept is not None:
        return ResultEntry.model_validate(kept)
    options = (log.eval.metadata or {}).get("options") or {}
    bench = BENCHMARKS.get(benchmark)(options)
    return compute_result(
        bench, variant, strategy, model, [r.scored() for r in records if r.counted],
        errors=sum(r.error_kind == "model" for r in records),
        harness_errors=sum(r.error_kind == "harness" for r in records),
        too_long=sum(r.error_kind == "context" for r in records),
        turn_limit=sum(r.error_kind == "turns" for r in records),
        turn_limit_scored=sum(r.turn_limit for r in records if r.counted),
        reasoning_cut_off=sum(r.reasoning_cut_off for r in records if r.counted),
        replies_cut_off=sum(r.replies_cut_off for r in records),
        replies_unclosed=sum(r.replies_unclosed for r in records),
    )


def _manifest(log: EvalLog, model: str) -> dict[str, Any]:
    """The manifest a log carries (converted) or one made of its spec (``inspect eval``)."""
    meta = log.eval.metadata or {}
    kept = (meta.get("run") or {}).get("manifest")
    if isinstance(kept, dict):
        return kept
    benchmark = meta["benchmark"]
    options = {f"{benchmark}.{k}": v if isinstance(v, str) else json.dumps(v)
               for k, v in (meta.get("options") or {}).items()}
    return {
        "structbench": log.eval.packages.get("structbench", "unknown"),
        "source": "inspect",
        "config": {"model": model, "benches": [f"{benchmark}:{meta['variant']}"], "strategies": [meta["strategy"]],
                   "options": options, "seed": meta.get("seed", 0), "limit": meta.get("limit")},
        "status": {"success": "complete", "cancelled": "interrupted", "error": "stopped"}.get(log.status, log.status),
        "inspect": {"model": log.eval.model, "task": log.eval.task, "created": log.eval.created},
    }


def _order(item: tuple[Path, EvalLog]) -> tuple[str, int, str]:
    """Logs of a converted run in its entries' order, others by file name (a malformed place: last)."""
    run = (item[1].eval.metadata or {}).get("run")
    run = run if isinstance(run, dict) else {}
    entry = run.get("entry", 0)
    return (str(run.get("path", "")), entry if isinstance(entry, int) else 1 << 62, item[0].name)


def _merge(manifest: dict[str, Any], other: dict[str, Any]) -> None:
    """Add another log's benchmark, strategy and options to a manifest made of logs (a converted run's logs all
    carry the run's whole manifest)."""
    if manifest.get("source") != "inspect":
        return
    config, more = manifest["config"], other["config"]
    for key in ("benches", "strategies"):
        config[key] = list(dict.fromkeys([*config[key], *more[key]]))
    config["options"] = {**config["options"], **more["options"]}


def load_inspect_runs(path: Path) -> list[RunFiles]:
    """The logs at ``path`` (a log file, or a directory of ``.eval`` logs) as runs: one per model."""

    logs = sorted(((file, _read(file)) for file in ([path] if path.is_file() else sorted(path.glob("*.eval")))),
                  key=_order)
    by_model: dict[str, tuple[dict[str, Any], list[ResultEntry], list[SampleRecord], Path]] = {}
    seen: dict[tuple[str, str, str, str, str], Path] = {}
    for file, log in logs:
        try:
            _add_log(file, log, by_model, seen)
        except (ValueError, TypeError, AttributeError, KeyError, IndexError) as err:  # its metadata's shape is wrong
            raise DataError(f"{file}: not a log of `inspect eval structbench/...` or `structbench convert` "
                            f"({schema_error(err)})") from None
    if not by_model:
        raise UsageError(f"{path}: no Inspect log (.eval) here")
    runs = []
    for manifest, entries, records, file in by_model.values():
        try:
            runs.append(RunFiles(path, Manifest.model_validate(manifest), MetricsFile(results=entries),
                                 held_records(records)))
        except ValueError as err:
            raise DataError(f"{file}: the run manifest it carries is not one ({schema_error(err)})") from None
    return runs


def _add_log(file: Path, log: EvalLog,
             by_model: dict[str, tuple[dict[str, Any], list[ResultEntry], list[SampleRecord], Path]],
             seen: dict[tuple[str, str, str, str, str], Path]) -> None:
    """Read one log into ``by_model`` (its model's manifest, result entries and records)."""
    meta = log.eval.metadata or {}
    if not all(k in meta for k in ("benchmark", "variant", "strategy")):
        raise UsageError(f"{file}: not a log of `inspect eval structbench/...` or `structbench convert` (its "
                         "metadata names no benchmark, variant and strategy)")
    if (log.eval.config.epochs or 1) > 1 and "epoch" not in SampleRecord.model_fields:
        raise UsageError(f"{file}: {log.eval.config.epochs} epochs; this structbench's records have one reply "
                         "per sample")
    model = str(meta.get("model") or log.eval.model)
    key = (str(meta["benchmark"]), str(meta["variant"]), str(meta["strategy"]), model)
    kept = _kept_entry(log)
    # a sweep's cell: a log of its own each
    cell = str(meta.get("cell") or (kept.get("cell") if isinstance(kept, dict) else "") or "")
    if (*key, cell) in seen:
        where = f" (sweep cell {cell})" if cell else ""
        raise UsageError(f"{file}: {key[0]}:{key[1]}/{key[2]}{where} of {model} is also in {seen[(*key, cell)]}; "
                         "give one log per benchmark, variant, strategy, model and sweep cell")
    seen[(*key, cell)] = file
    records = [sample_record(s, *key) for s in log.samples or []]
    if model in by_model:
        _merge(by_model[model][0], _manifest(log, model))
    _, entries, kept, _ = by_model.setdefault(model, (_manifest(log, model), [], [], file))
    entries.append(_entry(log, records, *key))
    kept.extend(records)
