"""``structbench generate NAME``: write a test set of a benchmark, seeded, in the layout its loader reads.

One command per generator in ``generate_app``; each imports its generator inside, so ``--help`` stays cheap. A set
written here is read back with the benchmark's own options (``--data-dir DIR``, ``-o questions_file=FILE`` or
``-o path=FILE``)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from structbench.cli.common import DataDirOpt, OfflineOpt, echo
from structbench.core.errors import DataError, UsageError

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
        typer.Option("--tables", help="rfqa (or rfqa/<dataset> or rfqa/<dataset>/<db>), scitab, synthetic, or CSV "
                     "files (comma-separated)."),
    ] = "rfqa",
    per_task: Annotated[
        int, typer.Option("--per-task", min=1, help="Questions per task (five tasks; at most 1,000,000).")
    ] = 200,
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
    -b structfact:generated -o questions_file=FILE). A task that gets fewer questions than asked (the tables cannot
    ask it, or some questions no draw made) gets what there is, with one note on stderr saying how many and why."""
    from structbench.benchmarks.structfact.generated.writer import write_set

    for line in write_set(out, tables=tables, per_task=per_task, label_mix=label_mix, seed=seed, data_dir=data_dir,
                         offline=offline, counter_spec=token_counter, budget=max_evidence_tokens,
                         note=lambda line: echo(f"note: {line}", err=True)):
        echo(line)


@generate_app.command("rfqa")
def rfqa(
    data: Annotated[Path, typer.Argument(help="A CSV file or a folder of CSV files (one table each).")],
    out: OutFile,
    per_category: Annotated[
        int, typer.Option("--per-category", min=1, help="Pairs per QATCH category and table (at most 1,000).")
    ] = 3,
    seed: GenSeedOpt = 0,
    max_attributes: Annotated[
        int, typer.Option("--max-attributes", min=1, help="The most columns a projection draws (up to 1,000).")
    ] = 3,
    max_rows: Annotated[
        int, typer.Option("--max-rows", min=1, help="The most rows a gold table keeps (up to 1,000,000).")
    ] = 1000,
) -> None:
    """RelationalFactQA-style NL/SQL pairs with gold tables over any CSV tables, as JSON lines (read back with
    -b rfqa:generated -o path=FILE). A table and category with fewer distinct questions than asked get what there
    is, with one note on stderr saying how many and why."""
    from structbench.benchmarks.rfqa.generator import generate_pairs, write_pairs

    pairs = generate_pairs(data, per_category=per_category, seed=seed, max_attributes=max_attributes,
                           max_rows=max_rows, note=lambda line: echo(f"note: {line}", err=True))
    if not pairs:  # (a file -b rfqa:generated refuses: "no pairs")
        raise DataError(f"{data}: no question could be asked of its tables (no rows, or no column a category needs); "
                        "nothing written")
    write_pairs(pairs, out)
    echo(f"wrote {len(pairs)} pairs to {out}")


@generate_app.command("databench")
def databench(
    out: Annotated[Path, typer.Option("--out", help="Folder to write DIR/databench/ into (whole or not at all).")],
    datasets: Annotated[
        int, typer.Option("--datasets", min=1, help="Datasets (tables), 20 questions each (at most 10,000).")
    ] = 3,
    rows: Annotated[
        int, typer.Option("--rows", min=20, help="Rows of each whole table (the sample has 20; at most 100,000).")
    ] = 120,
    seed: GenSeedOpt = 0,
) -> None:
    """DataBench datasets of invented rows in the Hub's layout (data/<id>_<Name>/ with all.parquet,
    sample.parquet and qa.parquet: 4 questions of each answer type, answered over the whole table and the sample);
    read back with -b databench --data-dir DIR."""
    from structbench.benchmarks.databench.generator import write_set

    for line in write_set(out, count=datasets, rows=rows, seed=seed):
        echo(line)


@generate_app.command("claimdb")
def claimdb(
    out: Annotated[Path, typer.Option("--out", help="Folder to write DIR/claimdb/ in (read with --data-dir DIR).")],
    seed: GenSeedOpt = 0,
) -> None:
    """A small ClaimDB set in the Hub's layout: test-public.jsonl and test_databases.zip (three SQLite databases and
    their labelled claims), read back with -b claimdb --data-dir DIR."""
    from structbench.benchmarks.claimdb.generator import write_set

    for line in write_set(out, seed=seed):
        echo(line)


@generate_app.command("tablebench")
def tablebench(
    out: Annotated[Path, typer.Option("--out", help="Folder to write tablebench/ into (each file whole or not at "
                                                    "all).")],
    size: Annotated[int, typer.Option("--size", min=1, help="Tables of each kind (each asked its questions; at "
                                                                 "most 4,000).")] = 1,
    seed: GenSeedOpt = 0,
) -> None:
    """TableBench questions of every subtype and chart type over invented tables, in the Hub repository's layout
    (OUT/tablebench/TableBench.jsonl and TableBench_{DP,TCoT,SCoT,PoT}.jsonl; read back with --data-dir OUT)."""
    from structbench.benchmarks.tablebench.generate import write_set

    for line in write_set(out, seed=seed, size=size):
        echo(line)


class CheckChoice(StrEnum):
    """How synthesized rows are checked: a batch of rows per call, or one row per call."""

    batch = "batch"
    row = "row"


@generate_app.command("skabench")
def skabench(
    out: OutFile,
    rfqa: Annotated[
        str | None,
        typer.Option("--rfqa", metavar="SOURCE/DB", help="A RelationalFactQA database, e.g. galois/world_1."),
    ] = None,
    csv: Annotated[Path | None, typer.Option("--csv", metavar="DIR", help="A folder of CSV tables.")] = None,
    scitab: Annotated[Path | None, typer.Option("--scitab", metavar="FILE", help="SciTab's sci_tab.json.")] = None,
    data_dir: DataDirOpt = None,
    questions: Annotated[int, typer.Option("--questions", min=1, help="Questions to build (at most 100,000).")] = 30,
    knowledge: Annotated[
        str, typer.Option("--knowledge", help="all, or a comma list of kg, table, kg+text, table+text.")
    ] = "all",
    templates: Annotated[
        str | None, typer.Option("--templates", help="A comma list of question templates (default: all).")
    ] = None,
    seed: GenSeedOpt = 0,
    min_rows: Annotated[int, typer.Option("--min-rows", min=1, help="Tables with fewer rows are skipped.")] = 8,
    min_columns: Annotated[
        int, typer.Option("--min-columns", min=1, help="Tables with fewer columns are skipped (the paper kept 6+).")
    ] = 3,
    max_rows: Annotated[
        int | None, typer.Option("--max-rows", min=1, help="Rows of a large table kept per instance (default 5000, "
                                                                "at most 500,000).")
    ] = None,
    synthesize_model: Annotated[
        str | None,
        typer.Option("--synthesize-model", metavar="BACKEND[:NAME][,...]",
                     help="Add LLM-synthesized noisy rows to Table and Table+Text instances; several models take "
                          "turns (the paper: GPT-4o and DeepSeek-V3)."),
    ] = None,
    check_model: Annotated[
        str | None, typer.Option("--check-model", metavar="BACKEND[:NAME]",
                                 help="Derives the condition and checks rows (default: the first synthesize model).")
    ] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="The models' OpenAI-compatible server.")] = None,
    synthesize_rows: Annotated[
        int, typer.Option("--synthesize-rows", min=1, help="Accepted rows to add per instance (at most 200,000).")
    ] = 20,
    per_call: Annotated[
        int, typer.Option("--per-call", min=1, help="Rows asked for per generation request (at most 1,000).")
    ] = 20,
    patience: Annotated[
        int, typer.Option("--patience", min=1, help="Stop after this many rounds without a new row (at most 1,000).")
    ] = 5,
    check: Annotated[CheckChoice, typer.Option("--check", help="Check rows a batch or a row per call.")] = (
        CheckChoice.batch
    ),
    cache: Annotated[
        Path | None, typer.Option("--cache", help="Response cache file (default: $STRUCTBENCH_CACHE/responses.sqlite).")
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Call the synthesis models without the cache.")] = False,
) -> None:
    """SKA-Bench instances (knowledge graphs, tables, and either with text) built from a database, optionally with
    LLM-synthesized noisy rows (--synthesize-model), as JSON lines (read back with -b skabench:jsonl -o path=FILE),
    each written as it is built. Tables that hold fewer distinct questions than --questions give what they hold, with
    one note on stderr saying how many and why.
    A model call that fails for good writes nothing and exits with code 3; completed calls are cached, so running
    the command again retries only what failed."""
    from structbench.benchmarks.skabench import build
    from structbench.tools.skabench_build import write_set

    if cache is not None and no_cache:
        raise UsageError("--cache and --no-cache exclude each other")
    source = build.Source(rfqa=rfqa, csv=csv, scitab=scitab, data_dir=data_dir)
    shape = build.Shape(questions=questions, knowledge=knowledge, templates=templates, seed=seed, min_rows=min_rows,
                        min_columns=min_columns, **({} if max_rows is None else {"max_rows": max_rows}))
    synthesis = None if synthesize_model is None else build.Synthesis(
        models=synthesize_model, check_model=check_model, base_url=base_url, rows=synthesize_rows, per_call=per_call,
        patience=patience, check="row" if check is CheckChoice.row else "batch",
    )
    count = write_set(out, source, shape, synthesis, cache=cache, no_cache=no_cache,
                      note=lambda line: echo(line, err=True))
    echo(f"wrote {count} instances to {out}")
