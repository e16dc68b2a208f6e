"""``structbench generate NAME``: write a test set of a benchmark, seeded, in the layout its loader reads.

One command per generator in ``generate_app``; each imports its generator inside, so ``--help`` stays cheap. A set
written here is read back with the benchmark's own options (``--data-dir DIR`` or ``-o questions_file=FILE``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from structbench.cli.common import DataDirOpt, OfflineOpt

generate_app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Write a benchmark's test set, seeded, in the layout its loader reads (see each command's --help).",
)

OutFile = Annotated[Path, typer.Option("--out", help="File to write (whole or not at all).")]
GenSeedOpt = Annotated[int, typer.Option("--seed", help="Seed of every random draw: the same seed, the same set.")]


@generate_app.command("structfact")
def structfact(
    out: OutFile,
    tables: Annotated[
        str,
        typer.Option("--tables", help="rfqa[/<dataset>[/<db>]], scitab, synthetic, or CSV files (comma-separated)."),
    ] = "rfqa",
    per_task: Annotated[int, typer.Option("--per-task", min=1, help="Questions per task (five tasks).")] = 200,
    label_mix: Annotated[
        str, typer.Option("--label-mix", help="paper or balanced: the labels' proportions.")
    ] = "paper",
    seed: GenSeedOpt = 0,
    data_dir: DataDirOpt = None,
    offline: OfflineOpt = False,
    token_counter: Annotated[
        str, typer.Option("--token-counter", help="A token counter spec (regex, cl100k, hf:MODEL ...).")
    ] = "regex",
    max_evidence_tokens: Annotated[
        int | None, typer.Option("--max-evidence-tokens", min=1, help="Evidence budget in tokens (the paper's).")
    ] = None,
) -> None:
    """StructFact questions over tables, verified, in the release's JSON format (read back with
    -b structfact:generated -o questions_file=FILE)."""
    from structbench.benchmarks.structfact.generated.writer import write_set

    for line in write_set(out, tables=tables, per_task=per_task, label_mix=label_mix, seed=seed, data_dir=data_dir,
                         offline=offline, counter_spec=token_counter, budget=max_evidence_tokens):
        typer.echo(line)


@generate_app.command("rfqa")
def rfqa(
    data: Annotated[Path, typer.Argument(help="A CSV file or a folder of CSV files (one table each).")],
    out: OutFile,
    per_category: Annotated[int, typer.Option("--per-category", min=1, help="Pairs per QATCH category.")] = 3,
    seed: GenSeedOpt = 0,
    max_attributes: Annotated[int, typer.Option("--max-attributes", min=1)] = 3,
    max_rows: Annotated[int, typer.Option("--max-rows", min=1)] = 1000,
) -> None:
    """RelationalFactQA-style NL/SQL pairs with gold tables over any CSV tables, as JSON lines (read back with
    -b rfqa:generated -o path=FILE)."""
    from structbench.benchmarks.rfqa.generator import generate_pairs, write_pairs

    pairs = generate_pairs(data, per_category=per_category, seed=seed, max_attributes=max_attributes,
                           max_rows=max_rows)
    write_pairs(pairs, out)
    typer.echo(f"wrote {len(pairs)} pairs to {out}")


@generate_app.command("databench")
def databench(
    out: Annotated[Path, typer.Option("--out", help="Folder to write DIR/databench/ into (whole or not at all).")],
    datasets: Annotated[int, typer.Option("--datasets", min=1, help="Datasets (tables), 20 questions each.")] = 3,
    rows: Annotated[int, typer.Option("--rows", min=20, help="Rows of each whole table (the sample has 20).")] = 120,
    seed: GenSeedOpt = 0,
) -> None:
    """DataBench datasets of invented rows in the Hub's layout (data/<id>_<Name>/ with all.parquet,
    sample.parquet and qa.parquet: 4 questions of each answer type, answered over the whole table and the sample);
    read back with -b databench --data-dir DIR."""
    from structbench.benchmarks.databench.generator import write_set

    for line in write_set(out, count=datasets, rows=rows, seed=seed):
        typer.echo(line)


@generate_app.command("claimdb")
def claimdb(
    out: Annotated[Path, typer.Option("--out", help="Folder to write DIR/claimdb/ in (read with --data-dir DIR).")],
    seed: GenSeedOpt = 0,
) -> None:
    """A small ClaimDB set in the Hub's layout: test-public.jsonl and test_databases.zip (three SQLite databases and
    their labelled claims), read back with -b claimdb --data-dir DIR."""
    from structbench.benchmarks.claimdb.generator import write_set

    for line in write_set(out, seed=seed):
        typer.echo(line)


@generate_app.command("tablebench")
def tablebench(
    out: Annotated[Path, typer.Option("--out", help="Folder to write tablebench/ into (each file whole or not at "
                                                    "all).")],
    size: Annotated[int, typer.Option("--size", min=1, help="Tables of each kind (each asked its questions).")] = 1,
    seed: GenSeedOpt = 0,
) -> None:
    """TableBench questions of every subtype and chart type over invented tables, in the Hub repository's layout
    (OUT/tablebench/TableBench.jsonl and TableBench_{DP,TCoT,SCoT,PoT}.jsonl; read back with --data-dir OUT)."""
    from structbench.benchmarks.tablebench.generate import write_set

    for line in write_set(out, seed=seed, size=size):
        typer.echo(line)
