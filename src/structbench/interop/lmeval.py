"""``structbench convert --to lm-eval``: a run as lm-evaluation-harness writes its results, so the tools built on
lm-eval's files (its ``make_table``, the Hub's results datasets, Zeno and W&B loaders) read it.

The layout and fields are lm-eval's (``lm_eval/loggers/evaluation_tracker.py``, ``lm_eval/result_schema.py``):
``OUT/<model, sanitized>/results_<time>.json`` and one ``samples_<task>_<time>.jsonl`` per task, a task being
one result entry (``<benchmark>_<variant>_<strategy>``). Results are keyed ``<metric>,<filter>`` with the
filter ``none``; the headline's ``_stderr`` is the standard error of structbench's bootstrap (the interval's
bounds are in the task's config); the other metrics have none (``make_table`` leaves the column empty). Each
sample line (one a sample: its epochs are lm-eval's repeats) has the document (id, task, gold, breakdown keys), the
prompt and request settings as ``arguments``, the raw replies of each epoch as ``resps``, their parsed answers as
``filtered_resps``, the sample's ``score`` and per-sample values (means over its epochs) as its metrics, and
lm-eval's three hashes.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from structbench.core.atomic import atomic_path, write_text_atomic
from structbench.core.redact import redact
from structbench.core.untrusted import file_name, inside
from structbench.interop.rundir import Entry, RunData
from structbench.report.entries import StatsOptions, headline_interval
from structbench.report.runs import BenchmarkCache
from structbench.runfiles.cells import cell_options
from structbench.runfiles.records import SampleRecord

FILTER = "none"
"""lm-eval's name for the unfiltered answers; structbench's parser is part of the benchmark, not a filter."""


def sanitize_model_name(name: str) -> str:
    """The model's directory name, as lm-eval makes it (``lm_eval.utils.sanitize_model_name``)."""
    return re.sub(r"[\"<>:/|\\?*\[\]]+", "__", name)


def hash_string(text: str) -> str:
    """lm-eval's hash of documents, prompts and targets (``lm_eval.utils.hash_string``: SHA-256, hex)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def sample_line(records: Sequence[SampleRecord], doc_id: int, gen_kwargs: dict[str, Any]) -> dict[str, Any]:
    """One line of a samples file: a document's generation request (``generate_until``) and its scored replies, one
    per epoch in order (lm-eval's repeats), its metrics their mean over the epochs (lm-eval's schema takes only
    numbers beside its own fields)."""
    first = records[0]
    doc = {"id": first.id, "task": first.task, "gold": first.gold, "meta": first.meta}
    prompt = _text(first.prompt) if first.prompt is not None else ""
    target = _text(first.gold)
    names = list(dict.fromkeys(k for r in records for k in ("score", *r.values)))
    per_sample = {k: sum(_value(r, k) for r in records) / len(records) for k in names}
    line: dict[str, Any] = {
        "doc_id": doc_id,
        "doc": doc,
        "target": target,
        "arguments": {"gen_args_0": {"arg_0": prompt, "arg_1": gen_kwargs}},
        "resps": [list(r.outputs or [r.output]) for r in records],
        "filtered_resps": [_text(r.parsed) if r.parsed is not None else "" for r in records],
        "filter": FILTER,
        "metrics": names,
        "doc_hash": hash_string(json.dumps(doc, indent=2, ensure_ascii=False, default=str)),
        "prompt_hash": hash_string(prompt),
        "target_hash": hash_string(target),
    }
    line.update(per_sample)
    return line


def _value(record: SampleRecord, name: str) -> float:
    return record.score if name == "score" else record.values.get(name, 0.0)


def documents(records: Iterable[SampleRecord]) -> Iterator[list[SampleRecord]]:
    """An entry's records (in its order: a sample's epochs together), a sample's epochs at a time."""
    group: list[SampleRecord] = []
    for record in records:
        if group and record.id != group[0].id:
            yield group
            group = []
        group.append(record)
    if group:
        yield group


def _gen_kwargs(run: RunData) -> dict[str, Any]:
    c = run.config
    kwargs = {"max_gen_toks": c.max_tokens, "temperature": c.generation.temperature, "top_p": c.generation.top_p,
              "seed": c.generation.seed}
    return {k: v for k, v in kwargs.items() if v is not None}


def _task_results(entry: Entry, stderr: float | None) -> dict[str, Any]:
    r = entry.result
    results: dict[str, Any] = {"name": entry.task, "alias": entry.task, "sample_len": r.n}
    for name in [r.headline.name, *(k for k in r.metrics if k != r.headline.name)]:
        if name not in r.metrics:
            continue
        results[f"{name},{FILTER}"] = r.metrics[name]
        if name == r.headline.name and stderr is not None:
            results[f"{name}_stderr,{FILTER}"] = stderr
    return results


def _task_config(run: RunData, entry: Entry, title: str) -> dict[str, Any]:
    r = entry.result
    per_sample = list(dict.fromkeys(k for rec in entry.records for k in ("score", *rec.values)))
    return {
        "task": entry.task,
        "dataset_path": f"structbench/{r.benchmark}",
        "dataset_name": r.variant,
        "test_split": "test",
        "description": title,
        "output_type": "generate_until",
        "generation_kwargs": _gen_kwargs(run),
        "repeats": max(run.config.epochs, 1),
        "metric_list": [{"metric": m, "aggregation": "mean", "higher_is_better": True if m == "score" else None}
                        for m in per_sample],
        "metadata": {
            "structbench": run.written_by, "benchmark": r.benchmark, "variant": r.variant, "strategy": r.strategy,
            "headline": r.headline.model_dump(mode="json"), "n": r.n, "errors": r.errors,
            "harness_errors": r.harness_errors, "too_long": r.too_long, "baselines": r.baselines,
            "note": ("results are the benchmark's corpus metrics (metrics.json); each sample's metrics are its "
                     "score and per-sample values"),
        },
    }


def _date_id(run: RunData) -> str:
    """lm-eval's time stamp in file names (``isoformat`` with ``-`` for ``:``), of the run's end."""
    moment = (run.finished or run.started or datetime.now(UTC)).astimezone(UTC).replace(tzinfo=None)
    return moment.isoformat().replace(":", "-")


def results_file(run: RunData, hashes: dict[str, str]) -> dict[str, Any]:
    """lm-eval's aggregated results of the run (without its samples, as lm-eval saves them)."""
    from structbench.benchmarks import BENCHMARKS

    config, benches = run.config, BenchmarkCache()
    options = dict(config.options)
    results, configs, versions, higher, counts = {}, {}, {}, {}, {}
    for entry in run.entries:
        r = entry.result
        cell = {f"{r.benchmark}.{k}": v for k, v in cell_options(r.cell).items()}  # a sweep cell's options win
        bench = benches.get(r.benchmark, {**options, **cell})
        interval, _ = headline_interval(r, entry.records.outcomes(), bench, StatsOptions())
        title = BENCHMARKS.get(r.benchmark).title if r.benchmark in BENCHMARKS else r.benchmark
        results[entry.task] = _task_results(entry, interval.se if interval is not None else None)
        configs[entry.task] = _task_config(run, entry, title)
        versions[entry.task] = run.written_by
        higher[entry.task] = {m: (True if m == r.headline.name else None) for m in r.metrics}
        docs = len({summary.id for summary in entry.records})  # a document's epochs are one line, lm-eval's repeats
        counts[entry.task] = {"original": docs, "effective": docs}
    started = run.started
    return {
        "results": results,
        "group_subtasks": {task: [] for task in results},
        "configs": configs,
        "versions": versions,
        "n-shot": {},
        "higher_is_better": higher,
        "n-samples": counts,
        "config": {
            "model": config.model,
            "model_args": dict(config.model_options) or None,
            "batch_size": None,
            "limit": config.limit,
            "bootstrap_iters": StatsOptions().resamples,
            "gen_kwargs": _gen_kwargs(run) or None,
            "random_seed": config.seed,
        },
        **({"git_hash": str(run.manifest["git_revision"])} if run.manifest.get("git_revision") else {}),
        **({"date": started.timestamp()} if started is not None else {}),
        "model_source": str(run.manifest.get("backend", {}).get("backend") or config.model.partition(":")[0]),
        "model_name": config.model,
        "model_name_sanitized": sanitize_model_name(config.model),
        "system_instruction": config.system_prompt,
        "system_instruction_sha": hash_string(config.system_prompt) if config.system_prompt else None,
        "fewshot_as_multiturn": None,
        "chat_template": None,
        "chat_template_sha": None,
        "task_hashes": hashes,
        "total_evaluation_time_seconds": str(run.seconds),
    }


def write_lmeval(run: RunData, out: Path) -> list[Path]:
    """The run's results and samples files under ``out/<model>/``; each written whole (a temporary file renamed
    over it). Secrets are redacted."""
    folder = inside(out / file_name(sanitize_model_name(run.config.model), "the run's model"), out, "convert --out")
    date_id = _date_id(run)
    kwargs = _gen_kwargs(run)
    written, hashes = [], {}
    for entry in run.entries:
        path = inside(folder / file_name(f"samples_{entry.task}_{date_id}.jsonl", "a result's task"), out,
                      "convert --out")
        digest = hashlib.sha256()  # lm-eval's hash of the joined hashes, fed a record at a time
        with atomic_path(path) as tmp, tmp.open("w", encoding="utf-8") as fh:
            for i, group in enumerate(documents(entry.records.full())):  # a document's records at a time
                x = sample_line(group, i, kwargs)
                digest.update((x["doc_hash"] + x["prompt_hash"] + x["target_hash"]).encode("utf-8"))
                fh.write(redact(json.dumps(x, ensure_ascii=False, default=str) + "\n"))
            fh.flush()
            os.fsync(fh.fileno())
        hashes[entry.task] = digest.hexdigest()
        written.append(path)
    path = folder / f"results_{date_id}.json"
    write_text_atomic(path, redact(json.dumps(results_file(run, hashes), indent=2, ensure_ascii=False, default=str)))
    return [path, *written]
