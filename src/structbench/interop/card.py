"""The dataset card (``README.md``) of a ``structbench publish`` folder: its YAML header (configurations,
license, tags) through ``huggingface_hub``'s ``DatasetCardData``, and a body that says what the rows are, which
models, benchmarks and strategies they cover, each benchmark's data source, license and citation, and every
entry's headline with its denominator, interval and baselines. Names read from the runs are written as text
(``core.mdtext``), never as Markdown or HTML."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from structbench.contract.provenance import Provenance, combined_license
from structbench.core.mdtext import md_code, md_inline
from structbench.interop.rundir import RunData
from structbench.runfiles.cells import cell_text


@dataclass(frozen=True)
class Table:
    """One configuration's files, as its header describes them."""

    schema: pa.Schema
    rows: int
    size: int
    """Bytes of its Parquet files."""
    nbytes: int
    """Bytes of its rows in memory (Arrow): what ``datasets`` calls the split's ``num_bytes``."""


def _provenance(benchmark: str) -> tuple[str, Provenance | None]:
    from structbench.benchmarks import BENCHMARKS

    if benchmark not in BENCHMARKS:
        return benchmark, None
    try:
        cls = BENCHMARKS.get(benchmark)
    except Exception:  # a plugin that no longer imports: the card says what it cannot
        return benchmark, None
    return cls.title, cls.provenance


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.4f}"


def _row(*cells: str) -> str:
    """A row of a pipe table, each cell text (``md_inline``)."""
    return "| " + " | ".join(map(md_inline, cells)) + " |\n"


def _header(runs: Sequence[RunData], licenses: list[str], split: str, tables: Mapping[str, Table]) -> str:
    """The YAML header: configurations, license, tags, and each configuration's features and size (``datasets``
    caches a local folder under its name and this header, so a header that changes with the data keeps a folder
    published again in the same place from loading as the cached earlier one)."""
    from datasets import DatasetInfo, Features, SplitDict, SplitInfo
    from datasets.info import DatasetInfosDict
    from huggingface_hub import DatasetCardData

    license_id = combined_license(licenses)
    extra: dict[str, Any] = {}
    if license_id == "other":
        extra = {"license_name": "per-benchmark",
                 "license_details": "Each benchmark's data keeps its own license: see Benchmarks below."}
    data = DatasetCardData(
        license=license_id,
        pretty_name="structbench results: " + ", ".join(sorted({r.config.model for r in runs})),
        tags=["structbench", "evaluation", "llm-evaluation", "structured-data"],
        configs=[{"config_name": c, "data_files": [{"split": split, "path": f"data/{c}/*.parquet"}]}
                 for c in tables],
        **extra,
    )
    DatasetInfosDict({
        c: DatasetInfo(config_name=c, features=Features.from_arrow_schema(t.schema), download_size=t.size,
                       dataset_size=t.nbytes, splits=SplitDict({split: SplitInfo(split, num_bytes=t.nbytes,
                                                                                  num_examples=t.rows)}))
        for c, t in tables.items()
    }).to_dataset_card_data(data)
    return f"---\n{data.to_yaml()}\n---\n"


def _benchmarks(runs: Sequence[RunData]) -> tuple[str, list[str]]:
    used: dict[str, set[str]] = {}
    for run in runs:
        for entry in run.entries:
            used.setdefault(entry.result.benchmark, set()).add(entry.result.variant)
    parts, licenses = [], []
    for name in sorted(used):
        title, source = _provenance(name)
        parts.append(f"### {md_inline(title)} ({md_code(name)})\n")
        if source is None:
            licenses.append("unknown")
            parts.append("The benchmark declares no data source, license or citation (`Benchmark.provenance`); "
                         "check its terms before sharing these rows.\n")
            continue
        licenses.append(source.license)
        parts.append("".join(f"- data of {md_code(f'{name}:{v}')}: {source.for_variant(v)}\n"
                             for v in sorted(used[name])))
        parts.append(f"- license of the released data: **{source.license}**. {source.license_note}\n")
        parts.append(f"- paper: {source.paper}\n\n```bibtex\n{source.bibtex}\n```\n")
    return "\n".join(parts), licenses


def dataset_card(runs: Sequence[RunData], names: Sequence[str], as_json: Sequence[str], *, repo: str | None,
                 split: str, tables: Mapping[str, Table]) -> str:
    """The whole ``README.md``."""
    benchmarks, licenses = _benchmarks(runs)
    where = repo or "PATH/TO/THIS/FOLDER"
    models = sorted({r.config.model for r in runs})
    strategies = sorted({e.result.strategy for r in runs for e in r.entries})
    entries = sorted({f"{e.result.benchmark}:{e.result.variant}" for r in runs for e in r.entries})
    run_rows = "".join(_row(
        name, run.config.model, ", ".join(sorted({e.task for e in run.entries})), str(len(run)),
        str(run.manifest.get("status", "unknown")), run.written_by, f"runs/{name}/manifest.json",
    ) for run, name in zip(runs, names, strict=True))
    head_rows = "".join(_row(
        e.result.model, f"{e.result.benchmark}:{e.result.variant}",
        e.result.strategy + (f" [{cell_text(e.result.cell)}]" if e.result.cell else ""), e.result.headline.name,
        _fmt(e.result.headline.value), f"[{_fmt(e.result.headline.ci_low)}, {_fmt(e.result.headline.ci_high)}]",
        str(e.result.n), str(e.result.errors),
        ", ".join(f"{k} {v:.4f}" for k, v in e.result.baselines.items()) or "–",
    ) for run in runs for e in run.entries)
    json_cols = ", ".join(map(md_code, as_json))
    return f"""{_header(runs, licenses, split, tables)}
# structbench results

Evaluation results written by `structbench publish`: {len(runs)} run(s) of
{", ".join(map(md_code, models))} on {", ".join(map(md_code, entries))}, strategies
{", ".join(map(md_code, strategies))}.

```python
from datasets import load_dataset

results = load_dataset("{where}", "results", split="{split}")   # one row per run, entry and metric
samples = load_dataset("{where}", "samples", split="{split}")   # one row per sample record
```

## Configurations

- `results`: one row per (run, benchmark, variant, strategy, sweep `cell`, model) and metric over all samples, then
  one per breakdown group (`breakdown`, `group`) and metric. `n` is the denominator; the headline's row (`headline`
  true, no breakdown) carries its percentile bootstrap interval (`ci_low`, `ci_high`, `confidence`) and the
  chance and majority baselines on the same samples. An entry where nothing was scored has its headline row
  with no value, never a 0.
- `samples`: one row per sample: the record structbench wrote in the run's `samples.jsonl`, with its `run`.
  Columns whose type differs between benchmarks are JSON text: {json_cols}. `error_kind` says who failed
  (`model`: scored as wrong; `harness` and `context`: in no metric).

Each run's configuration and manifest (versions, backend, sessions and timings) and its `metrics.json` are under
`runs/<run>/`.

## Runs

| run | model | entries | samples | status | structbench | configuration |
|---|---|---|---|---|---|---|
{run_rows}
## Headlines

| model | benchmark | strategy | metric | value | 95% CI | n | errors | baselines |
|---|---|---|---|---|---|---|---|---|
{head_rows}
## Benchmarks

The prompts and gold answers in these rows are the benchmarks' data: they keep the benchmarks' licenses.

{benchmarks}
## Secrets

Every file here was passed through structbench's redaction (API keys, credentials in URLs and headers, and the
values of credential-like environment variables are replaced by `[REDACTED]`).
"""
