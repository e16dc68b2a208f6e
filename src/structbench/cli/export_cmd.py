"""``structbench export``: each sample's prompt, gold and fingerprint as JSON lines, Parquet or a datasets folder."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from structbench.cli.common import (
    BenchArg,
    DataDirOpt,
    LimitOpt,
    ModifiedDataOpt,
    OfflineOpt,
    OptionOpt,
    PresetScoreOpt,
    SeedOpt,
    StrategyOpt,
    echo,
    load_one,
    preset_entry,
)
from structbench.core.atomic import atomic_path
from structbench.core.errors import UsageError


class ExportFormat(StrEnum):
    """``export --format``."""

    jsonl = "jsonl"
    parquet = "parquet"
    hf = "hf"


def export(
    bench: BenchArg,
    out: Annotated[Path, typer.Option("--out", help="File to write (a folder for --format hf).")],
    limit: LimitOpt = None,
    seed: SeedOpt = 0,
    strategy: StrategyOpt = None,
    option: OptionOpt = None,
    data_dir: DataDirOpt = None,
    allow_modified_data: ModifiedDataOpt = False,
    format: Annotated[
        ExportFormat,
        typer.Option("--format", "-f", help="jsonl (JSON lines), parquet (typed columns), or hf (a Hugging Face "
                     "datasets folder: datasets.load_dataset(OUT))."),
    ] = ExportFormat.jsonl,
    preset: PresetScoreOpt = None,
    offline: OfflineOpt = False,
) -> None:
    """Write each sample's prompt (the strategy's first model call), gold, meta and fingerprint: JSON lines, Parquet,
    or a Hugging Face datasets folder."""
    from structbench.core.forkmap import forking
    from structbench.runner.export import export_lines

    if preset is not None:
        bench, strategy, option = preset_entry(preset, bench, strategy, option)
    with forking():  # a generated suite drafts its samples in forked children, ahead of the lines written here
        b, variant, samples, strat, settings = load_one(bench, strategy, option, limit, seed, data_dir,
                                                         allow_modified_data, offline)
        lines = export_lines(b, variant, samples, strat, settings)
        if format != ExportFormat.jsonl:  # a typed table of every line: built in memory
            _export_arrow(format, lines, out, f"{b.title}: {b.name}:{variant}, strategy {strat.name}",
                          settings.flags())
        else:  # a line at a time, as the samples are read
            with atomic_path(out) as tmp, tmp.open("w", encoding="utf-8") as fh:
                for line in lines:
                    fh.write(json.dumps(line, ensure_ascii=False) + "\n")
    echo(f"wrote {samples.count} samples to {out}")


def _export_arrow(format: ExportFormat, lines: Any, out: Path, title: str, flags: str) -> None:
    """``--format parquet`` or ``hf`` (needs ``pip install 'structbench[datasets]'``)."""
    try:
        from structbench.runner import tabular
    except ImportError as err:
        raise UsageError(f"--format {format.value} needs pyarrow: pip install 'structbench[datasets]' ({err})"
                         ) from None
    if format == ExportFormat.parquet:
        tabular.write_parquet(lines, out)
    else:
        if out.exists() and not out.is_dir():
            raise UsageError(f"--out {out}: --format hf writes a folder; this is a file")
        description = (f"Exported with `structbench export {flags} --format hf`. Score a model's outputs with "
                       f"`structbench score {flags} --predictions FILE` (lines with `id`, `fingerprint`, `output`).")
        tabular.write_hf_dataset(lines, out, title=title, description=description)
