"""The paper view: a run's model placed in a paper table, computed the paper's way, with intervals."""

from __future__ import annotations

import json
import math
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from structbench.report.api import ReportOptions, prepare
from structbench.report.entries import StatsOptions, collect
from structbench.report.paper import EMPTY, Filled, Gap, cell_text, fill_tables, run_notes
from structbench.report.paper_sections import paper_sections
from structbench.report.runs import BenchmarkCache, load_run
from structbench.runfiles.runconfig import Reasoning
from structbench.runner.store import read_records

STATS = StatsOptions(resamples=300, seed=0)


@pytest.fixture(scope="module")
def toy_paper_runs(tmp_path_factory: pytest.TempPathFactory, run_factory: Callable[..., Path]) -> dict[str, Path]:
    """A model run under both option orders (two runs), a second model under one order only, and a run
    whose ``size`` the table does not accept."""
    import papertoy  # noqa: F401  registers ``papertoy`` (here, not at collection: other tests list the benchmarks)

    root = tmp_path_factory.mktemp("paper")

    def run(name: str, accuracy: float, options: dict[str, str], salt: str, benches: tuple[str, ...] = ("papertoy",),
            strategies: tuple[str, ...] = ("direct", "vote")) -> Path:
        from report.conftest import noisy_oracle  # type: ignore[import-not-found]
        from structbench.data.datasets import DataContext
        from structbench.runfiles.runconfig import RunConfig
        from structbench.runner.run import Run
        from structbench.runner.selection import prepare as prepare_run

        config = RunConfig(model=salt, benches=list(benches), strategies=list(strategies), options=options)
        Run(root / name, config).execute(
            noisy_oracle(accuracy, salt), prepare_run(config, DataContext(offline=True)), cache=None, concurrency=4,
            progress=False,
        )
        return root / name

    return {
        "a-md": run("a-md", 0.7, {"serialization": "markdown"}, "model-a"),
        "a-csv": run("a-csv", 0.7, {"serialization": "csv"}, "model-a"),
        "b-md": run("b-md", 0.4, {}, "model-b", benches=("papertoy", "papertoy:big"),
                    strategies=("direct", "refine")),
        "c-small": run("c-small", 0.9, {"size": "20"}, "model-c"),
        "d-direct": run("d-direct", 0.5, {}, "model-d", strategies=("direct",)),
    }


def _filled(paths: list[Path]):
    runs = [load_run(p) for p in paths]
    views = collect(runs, STATS, BenchmarkCache())
    tables = fill_tables(views, runs, STATS)
    assert [t.table.name for t in tables] == ["papertoy-table1"]
    return tables[0], views


def _accuracy(records: list, task: str | None = None) -> float:
    chosen = [r for r in records if task is None or r.task == task]
    return sum(r.score for r in chosen) / len(chosen)


def test_cells_are_the_metric_of_the_selected_records(toy_paper_runs: dict[str, Path]) -> None:
    filled, _ = _filled([toy_paper_runs["a-md"], toy_paper_runs["a-csv"]])
    ((_, row),) = filled.rows
    assert row.label == "model-a"
    md = [r for r in read_records(toy_paper_runs["a-md"] / "samples.jsonl")]
    csv = [r for r in read_records(toy_paper_runs["a-csv"] / "samples.jsonl")]
    direct = [r for r in md if r.strategy == "direct"]
    cells = row.cells
    assert isinstance(cells["red"], Filled) and cells["red"].value == pytest.approx(_accuracy(direct, "red"))
    assert cells["red"].n == sum(r.task == "red" for r in direct)
    # the order column averages the two option orders, each over its own run's records
    orders = (_accuracy(direct) + _accuracy([r for r in csv if r.strategy == "direct"])) / 2
    assert cells["orders"].value == pytest.approx(orders) and not cells["orders"].partial
    # Mean and Change are computed from the row's cells; "direct" itself (no orders) is the first run's
    d, v = cells["direct"].value, cells["vote"].value
    assert cells["overall"].value == pytest.approx((d + v) / 2)
    assert cells["change"].value == pytest.approx((v - d) / d)
    assert cells["tasks"].value == pytest.approx((cells["red"].value + cells["blue"].value) / 2)
    for key in ("direct", "vote", "red", "blue", "orders", "overall", "same", "tasks"):
        cell = cells[key]
        assert isinstance(cell, Filled) and cell.low <= cell.value <= cell.high


def test_intervals_pair_the_same_samples_and_not_disjoint_ones(toy_paper_runs: dict[str, Path]) -> None:
    filled, views = _filled([toy_paper_runs["a-md"], toy_paper_runs["a-csv"]])
    cells = filled.rows[0][1].cells
    direct, same, tasks = cells["direct"], cells["same"], cells["tasks"]
    assert isinstance(direct, Filled) and isinstance(same, Filled) and isinstance(tasks, Filled)
    # the mean of a column with itself resamples both with the same rows: the same interval
    assert (same.low, same.high) == pytest.approx((direct.low, direct.high))
    # a single-measure cell over a whole entry has the entry's own headline interval (same seed, same order)
    view = next(v for v in views if v.strategy == "direct" and str(v.run).endswith("a-md"))
    assert view.interval is not None
    assert (direct.low, direct.high) == pytest.approx((view.interval.low, view.interval.high))
    # red and blue are disjoint samples: resampled independently, so the interval of their mean is not the
    # paired one (which would reuse the red rows' draws for the blue half)
    assert math.isfinite(tasks.low) and tasks.low < tasks.value < tasks.high


def test_uncovered_partial_and_excluded(toy_paper_runs: dict[str, Path]) -> None:
    paths = [toy_paper_runs[k] for k in ("a-md", "a-csv", "b-md", "c-small")]
    filled, _ = _filled(paths)
    rows = {row.label: row for _, row in filled.rows}
    assert set(rows) == {"model-a", "model-b", "model-b (refine)"}  # model-c's run has size=20: excluded
    b = rows["model-b"].cells
    assert isinstance(b["vote"], Gap) and "--strategy vote" in (b["vote"].command or "")
    assert isinstance(b["overall"], Gap) and "Vote" in b["overall"].reason
    assert isinstance(b["orders"], Filled) and "serialization markdown only" in b["orders"].partial
    assert "--option serialization=csv" in b["orders"].partial
    assert cell_text(filled.data, "vote", b["vote"]) == EMPTY
    assert cell_text(filled.data, "orders", b["orders"]).endswith("†")
    refine = rows["model-b (refine)"].cells["refine"]
    assert isinstance(refine, Filled) and refine.n == 200  # the big variant
    fill_c = next(f for f in filled.fills if f.model.model == "model-c")
    assert "size=40" in next(iter(fill_c.excluded.values()))


def _model_d_run(path: Path, **settings: Any) -> Path:
    """A run of model-d's direct answers on papertoy with these ``RunConfig`` settings."""
    import papertoy  # noqa: F401
    from report.conftest import noisy_oracle  # type: ignore[import-not-found]
    from structbench.data.datasets import DataContext
    from structbench.runfiles.runconfig import RunConfig
    from structbench.runner.run import Run
    from structbench.runner.selection import prepare as prepare_run

    config = RunConfig(model="model-d", benches=["papertoy"], strategies=["direct"], **settings)
    Run(path, config).execute(noisy_oracle(0.7, "model-d"), prepare_run(config, DataContext(offline=True)),
                              cache=None, concurrency=4, progress=False)
    return path


def test_fill_commands_run_the_way_the_runs_ran(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    _model_d_run(tmp_path / "d", limit=30, seed=4, max_tokens=64, data_dir=str(tmp_path / "data"),
                 model_options={"n_ctx": "4096"},
                 reasoning=Reasoning(budget=1000, tags=[("[THINK]", "[/THINK]")], opened=True))
    filled, _ = _filled([tmp_path / "d"])
    (_, row), = filled.rows
    vote = row.cells["vote"]
    assert isinstance(vote, Gap) and vote.command is not None
    flags = (f"--data-dir {tmp_path / 'data'} --limit 30 --seed 4 --max-tokens 64 --reasoning-budget 1000 "
             "--think-tags '[THINK],[/THINK]' --thought-opened -M n_ctx=4096")
    assert vote.command.endswith(flags)  # run against the same server, it reads the replies as the run did
    whole = "structbench run --model model-d --preset papertoy-table1 " + flags
    assert f"The whole table for model-d: {whole}" in run_notes(filled)
    runs = [load_run(tmp_path / "d")]
    (section,) = paper_sections(collect(runs, STATS, BenchmarkCache()), runs, STATS, figures=False)
    assert section.children[0].title.endswith(f"the whole table: {whole}")


def test_a_reasoning_budget_is_a_run_the_paper_did_not_make(tmp_path: Path) -> None:
    """``--reasoning-budget`` raises every request's max_tokens above the paper's: noted under the table, as an option
    that differs from the preset is; so are think tags and an opened thought, which change what is read."""
    plain = _model_d_run(tmp_path / "plain", limit=30)
    assert not any(" ran with " in line for line in run_notes(_filled([plain])[0]))
    budget = _model_d_run(tmp_path / "budget", limit=30, reasoning=Reasoning(budget=1000))
    assert f"model-d: {budget} ran with --reasoning-budget 1000, which the paper did not run with (it changes how " \
           "replies are asked for or read)." in run_notes(_filled([budget])[0])
    tags = _model_d_run(tmp_path / "tags", limit=30, reasoning=Reasoning(tags=[("[THINK]", "[/THINK]")], opened=True))
    assert any(f"{tags} ran with --think-tags '[THINK],[/THINK]' --thought-opened, which" in line
               for line in run_notes(_filled([tags])[0]))


def test_rendered_section(toy_paper_runs: dict[str, Path]) -> None:
    paths = [toy_paper_runs[k] for k in ("a-md", "b-md", "c-small")]
    runs = [load_run(p) for p in paths]
    views = collect(runs, STATS, BenchmarkCache())
    (section,) = paper_sections(views, runs, STATS, figures=True)
    (child,) = section.children
    assert child.title.startswith("PaperToy Table 1")
    table = next(b for b in child.blocks if hasattr(b, "rows"))
    labels = [r[0] for r in table.rows]
    assert labels == ["Closed", "Big model", "Open", "Small model", "Human", "model-a", "model-b", "model-b (refine)"]
    assert table.rows[1][1:4] == ["90.0", "92.0", "91.0"] and table.rows[1][-1] == "–"
    a = table.rows[5]
    assert a[1].count("[") == 1 and a[1].split(" ")[0].replace(".", "").isdigit()
    assert {(5, j) for j in range(11)} <= table.bold
    texts = [b.text for b in child.blocks if hasattr(b, "text")]
    assert any("model-c" in t and "size=40" in t for t in texts)
    assert any(t.startswith("— model-b / Vote") and "structbench run --model model-b" in t for t in texts)
    assert any("--preset papertoy-table1" in t for t in texts)
    figure = next(b for b in child.blocks if hasattr(b, "svg"))
    assert "<svg" in figure.svg and "Small model" in figure.svg and "model-a" in figure.svg
    assert child.children[0].collapsed and "Made up" in child.children[0].blocks[-1].text


def test_report_puts_the_runs_own_results_before_the_paper_tables(toy_paper_runs: dict[str, Path]) -> None:
    """The overview, the leaderboard and each benchmark's own section come first; then the paper tables a model's row
    fills whole, and those the runs fill only in part folded, each one line saying how to fill it; the entries'
    details last."""
    doc, _ = prepare([toy_paper_runs["a-md"], toy_paper_runs["b-md"]], ReportOptions(stats=STATS, figures=False))
    titles = [s.title for s in doc.sections if not s.collapsed]
    assert titles == ["Overview", "Leaderboard", "papertoy:small — Toy paper", "papertoy:big — Toy paper",
                      "Paper tables"]  # model-a's row is whole
    assert all(s.collapsed for s in doc.sections[len(titles):])  # the entries' details
    part, _ = prepare([toy_paper_runs["d-direct"]], ReportOptions(stats=STATS, figures=False))
    titles = [s.title for s in part.sections if not s.collapsed]
    assert titles == ["Overview", "papertoy:small — Toy paper",
                      "Paper tables the runs fill in part"]  # one model: no leaderboard
    (table,) = part.sections[len(titles) - 1].children
    assert table.collapsed and table.title.startswith("PaperToy Table 1: the runs fill ")
    assert table.title.endswith(" cells; the whole table: structbench run --model model-d --preset papertoy-table1")
    assert any(hasattr(b, "rows") for b in table.blocks)  # the table itself, folded


def test_entries_of_other_variants_do_not_fill_a_table(toy_paper_runs: dict[str, Path]) -> None:
    from dataclasses import replace

    from papertoy import TABLE
    from structbench.report.paper import ModelRuns, Source, TableFill

    runs = [load_run(toy_paper_runs["b-md"])]
    views = collect(runs, STATS, BenchmarkCache())
    model = ModelRuns("model-b", [Source(v, runs[0]) for v in views])
    only_small = TableFill(replace(TABLE, variants=("small",)), model, STATS)
    refine = only_small.row(TABLE.rows[1])
    assert refine is None  # its only column needs the big variant, which this table does not take
    assert any("papertoy:big" in k and "small" in why for k, why in only_small.excluded.items())
    assert TableFill(TABLE, model, STATS).row(TABLE.rows[1]) is not None


def test_fill_commands_quote_every_value_and_redact_the_base_url(tmp_path: Path) -> None:
    """A model named ``mock:gpt; touch /tmp/PWNED #`` made a command that ran ``touch`` when pasted, and an older
    run's manifest holding ``?key=`` showed the key in it."""
    import papertoy  # noqa: F401
    from report.conftest import noisy_oracle  # type: ignore[import-not-found]
    from structbench.data.datasets import DataContext
    from structbench.runfiles.runconfig import RunConfig
    from structbench.runner.run import Run
    from structbench.runner.selection import prepare as prepare_run

    model = "mock:gpt; touch /tmp/PWNED #"
    config = RunConfig(model=model, benches=["papertoy"], strategies=["direct"], limit=30)
    Run(tmp_path / "d", config).execute(noisy_oracle(0.7, "m"), prepare_run(config, DataContext(offline=True)),
                                        cache=None, concurrency=4, progress=False)
    manifest = json.loads((tmp_path / "d" / "manifest.json").read_text())
    manifest["config"]["base_url"] = "http://h:8000/v1/$(touch x)?key=sk-older0123456789"  # as an older run wrote it
    (tmp_path / "d" / "manifest.json").write_text(json.dumps(manifest))
    filled, views = _filled([tmp_path / "d"])
    (_, row), = filled.rows
    vote = row.cells["vote"]
    assert isinstance(vote, Gap) and vote.command is not None
    words = shlex.split(vote.command)
    assert words[:6] == ["structbench", "run", "--model", model, "--base-url",
                         "http://h:8000/v1/$(touch x)?key=[REDACTED]"]
    assert "sk-older" not in vote.command
    section = next(iter(paper_sections(views, [load_run(tmp_path / "d")], STATS, figures=False)))
    texts = [section.children[0].title, *(b.text for b in section.children[0].blocks if hasattr(b, "text"))]
    commands = [t[t.index("structbench run"):] for t in texts if "structbench run" in t]
    assert commands and all(shlex.split(c)[2:4] == ["--model", model] for c in commands)
