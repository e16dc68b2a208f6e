"""``structbench publish``: runs as a Hugging Face dataset folder, and its upload to the Hub.

The folder has two configurations, each a Parquet file per run under ``data/<config>/``:

- ``samples``: one row per sample record, a column per ``SampleRecord`` field (and ``run``). Text, numbers and
  flags are typed columns; fields whose type varies by benchmark (the prompt, parsed answer, gold, values, meta,
  artifacts) are JSON text, so every run's file has one schema and ``datasets`` loads them together.
- ``results``: tidy rows, one per (run, entry, metric) over all samples and one per breakdown group, with the
  denominator, and on the headline's row its interval and baselines. An entry without any metric (n = 0) still
  has its headline row, with no value.

``README.md`` is the dataset card: the configurations (``configs:`` in its YAML header, made with
``huggingface_hub``'s ``DatasetCardData``), the models, benchmarks and strategies, each benchmark's data source,
license and citation (``Benchmark.provenance``), and a table of headlines. ``runs/<run>/`` keeps each run's
manifest and ``metrics.json``. Every file is redacted (``structbench.core.redact``) before it is written, and the
folder appears whole: it is built beside ``--out`` and renamed into place.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import types
import typing
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from structbench.core.atomic import move_into_place, staging_dir, write_text_atomic
from structbench.core.errors import StructbenchError, UsageError
from structbench.core.redact import redact, register_env_secrets
from structbench.interop.rundir import Entry, RunData
from structbench.runfiles.records import SampleRecord

SPLIT = "train"
"""Each configuration's one split (a table of results, not a train/test division)."""
ROW_GROUP = 4096
"""Rows of ``samples`` written at once (one Parquet row group)."""
MARK = "<!-- written by structbench publish -->"
"""The card's last line: ``--out`` may be replaced only when it holds a folder ``publish`` wrote."""
class UploadError(StructbenchError):
    """The Hub refused or could not take the upload (exit 2; the folder is complete on disk)."""

    exit_code = UsageError.exit_code


def _arrow_type(annotation: Any) -> pa.DataType | None:
    """The typed column for a record field, or None where the field's values vary in type (stored as JSON)."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return _arrow_type(args[0]) if len(args) == 1 else None
    if typing.get_origin(annotation) is typing.Literal:
        return pa.string() if all(isinstance(a, str) for a in typing.get_args(annotation)) else None
    if typing.get_origin(annotation) is list and args == [str]:
        return pa.list_(pa.string())
    return {str: pa.string(), int: pa.int64(), float: pa.float64(), bool: pa.bool_()}.get(annotation)


def sample_schema() -> tuple[pa.Schema, list[str]]:
    """The ``samples`` columns (``run``, then every record field) and the names of those stored as JSON text."""
    hints = typing.get_type_hints(SampleRecord)
    fields, as_json = [pa.field("run", pa.string(), nullable=False)], []
    for name in SampleRecord.model_fields:
        kind = _arrow_type(hints[name])
        if kind is None:
            as_json.append(name)
        fields.append(pa.field(name, kind or pa.string()))
    return pa.schema(fields), as_json


def sample_rows(run: RunData) -> Iterator[dict[str, Any]]:
    """The run's records as ``samples`` rows (JSON-text columns encoded; secrets redacted), one full record read at
    a time."""
    _, as_json = sample_schema()
    for entry in run.entries:
        for record in entry.records.full():
            row: dict[str, Any] = {"run": run.name, **record.model_dump(mode="json")}
            for name in as_json:
                row[name] = None if row[name] is None else json.dumps(row[name], ensure_ascii=False, sort_keys=True)
            redacted: dict[str, Any] = json.loads(redact(json.dumps(row, ensure_ascii=False)))
            yield redacted


RESULT_SCHEMA = pa.schema([
    pa.field("run", pa.string(), nullable=False), pa.field("model", pa.string()), pa.field("benchmark", pa.string()),
    pa.field("variant", pa.string()), pa.field("strategy", pa.string()), pa.field("cell", pa.string()),
    pa.field("breakdown", pa.string()),
    pa.field("group", pa.string()), pa.field("metric", pa.string()), pa.field("value", pa.float64()),
    pa.field("headline", pa.bool_()), pa.field("n", pa.int64()), pa.field("ci_low", pa.float64()),
    pa.field("ci_high", pa.float64()), pa.field("confidence", pa.float64()),
    pa.field("baseline_chance", pa.float64()), pa.field("baseline_majority", pa.float64()),
    pa.field("errors", pa.int64()), pa.field("harness_errors", pa.int64()), pa.field("too_long", pa.int64()),
    pa.field("reasoning_cut_off", pa.int64()), pa.field("turn_limit", pa.int64()),
    pa.field("turn_limit_scored", pa.int64()),
])
"""``results`` columns: ``breakdown``/``group`` are null on the rows over all samples; ``ci_*``, ``confidence``
and the baselines are set on the headline's row over all samples; the error counts on every row over all
samples; ``cell`` names a sweep's cell (``""`` without a sweep)."""


def result_rows(run: RunData, entry: Entry) -> list[dict[str, Any]]:
    """The entry's rows: each metric over all samples (the headline first, with its interval and baselines; with no
    value where nothing was scored), then each breakdown group's metrics."""
    r = entry.result
    base = {"run": run.name, "model": r.model, "benchmark": r.benchmark, "variant": r.variant, "strategy": r.strategy,
            "cell": r.cell}
    counts = {"errors": r.errors, "harness_errors": r.harness_errors, "too_long": r.too_long,
              "reasoning_cut_off": r.reasoning_cut_off, "turn_limit": r.turn_limit,
              "turn_limit_scored": r.turn_limit_scored}
    head = r.headline
    rows = [{**base, "breakdown": None, "group": None, "metric": head.name, "value": head.value, "headline": True,
             "n": r.n, "ci_low": head.ci_low, "ci_high": head.ci_high, "confidence": head.confidence,
             "baseline_chance": r.baselines.get("chance"), "baseline_majority": r.baselines.get("majority"),
             **counts}]
    rows += [{**base, "breakdown": None, "group": None, "metric": name, "value": value, "headline": False, "n": r.n,
              **counts} for name, value in r.metrics.items() if name != head.name]
    rows += [{**base, "breakdown": key, "group": value, "metric": name, "value": metric, "headline": name == head.name,
              "n": group.n}
             for key, groups in r.breakdowns.items() for value, group in groups.items()
             for name, metric in group.metrics.items()]
    return rows


def _parquet(rows: Iterable[dict[str, Any]], schema: pa.Schema, path: Path) -> tuple[int, int, int]:
    """Write the rows, a row group of ``ROW_GROUP`` at a time (a run of any size streams through); returns how many
    rows, the file's size and the rows' size in memory (Arrow)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    count = nbytes = 0
    with pq.ParquetWriter(path, schema) as writer:
        it = iter(rows)
        while batch := list(itertools.islice(it, ROW_GROUP)):
            table = pa.Table.from_pylist(batch, schema=schema)
            writer.write_table(table)
            count, nbytes = count + len(batch), nbytes + table.nbytes
        if not count:
            writer.write_table(schema.empty_table())
    return count, path.stat().st_size, nbytes


def _unique_names(runs: Sequence[RunData]) -> list[str]:
    names: list[str] = []
    for run in runs:
        name, k = run.name, 2
        while name in names:
            name, k = f"{run.name}-{k}", k + 1
        names.append(name)
    return names


def write_folder(runs: Sequence[RunData], folder: Path, *, repo: str | None = None) -> None:
    """Write the dataset folder of ``runs`` into ``folder`` (which must be new and empty)."""
    from structbench.interop.card import Table, dataset_card

    schema, as_json = sample_schema()
    names = _unique_names(runs)
    counts = {"results": [0, 0, 0], "samples": [0, 0, 0]}
    for run, name in zip(runs, names, strict=True):
        made = _parquet((dict(row, run=name) for row in sample_rows(run)), schema,
                        folder / "data" / "samples" / f"{name}.parquet")
        counts["samples"] = [a + b for a, b in zip(counts["samples"], made, strict=True)]
        results = [dict(row, run=name) for entry in run.entries for row in result_rows(run, entry)]
        results = json.loads(redact(json.dumps(results)))
        made = _parquet(results, RESULT_SCHEMA, folder / "data" / "results" / f"{name}.parquet")
        counts["results"] = [a + b for a, b in zip(counts["results"], made, strict=True)]
        for file, data in (("manifest.json", run.manifest), ("metrics.json", run.metrics.model_dump(mode="json"))):
            write_text_atomic(folder / "runs" / name / file,
                              redact(json.dumps(data, indent=2, ensure_ascii=False, default=str)) + "\n")
    tables = {"results": Table(RESULT_SCHEMA, *counts["results"]), "samples": Table(schema, *counts["samples"])}
    card = dataset_card(runs, names, as_json, repo=repo, split=SPLIT, tables=tables)
    write_text_atomic(folder / "README.md", redact(card) + f"\n{MARK}\n")


def _ours(folder: Path) -> bool:
    card = folder / "README.md"
    return card.is_file() and card.read_text(encoding="utf-8", errors="replace").rstrip().endswith(MARK)


def publish(runs: Sequence[RunData], out: Path, *, repo: str | None = None) -> Path:
    """Build the folder beside ``out`` and move it into place; ``out`` may be missing, empty, or a folder an
    earlier ``publish`` wrote (replaced whole). Returns ``out``."""
    if not runs:
        raise UsageError("give at least one run directory")
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not _ours(out))):
        raise UsageError(f"--out {out}: exists and is not a folder `structbench publish` wrote; give a new or empty "
                         "folder")
    register_env_secrets()
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = staging_dir(out)
    try:
        write_folder(runs, staging, repo=repo)
        old = None
        if out.exists():
            old = out.parent / f"{staging.name}.old"
            os.replace(out, old)
        move_into_place(staging, out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return out


def upload(folder: Path, repo: str, *, private: bool = False) -> str:
    """Upload the folder to the dataset repository ``repo`` (created when missing) with ``huggingface_hub``; the
    token is the one ``huggingface_hub`` finds (``HF_TOKEN``, or ``hf auth login``). Returns the commit's URL."""
    try:
        from huggingface_hub import HfApi
    except ImportError as err:
        raise UsageError(f"--repo needs huggingface_hub: pip install 'structbench[datasets]' ({err})") from None
    api = HfApi()
    try:
        api.create_repo(repo_id=repo, repo_type="dataset", private=private, exist_ok=True)
        info = api.upload_folder(repo_id=repo, folder_path=str(folder), repo_type="dataset",
                                 commit_message="structbench publish")
    except Exception as err:  # the Hub's HTTP, auth and validation errors: one line, the folder stays
        raise UploadError(redact(f"--repo {repo}: the upload failed ({type(err).__name__}: {err}); the folder is "
                                 f"complete at {folder}: run again, or upload it with `hf upload {repo} {folder} "
                                 "--repo-type dataset`").splitlines()[0]) from None
    return str(getattr(info, "commit_url", "") or f"https://huggingface.co/datasets/{repo}")
