"""The report over real run directories: files, self-containment, paper-style tables, figures, intervals."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from structbench.backends.usage import totals_cell
from structbench.contract.benchmark import Scored
from structbench.core.errors import UsageError
from structbench.report.api import ReportOptions, markdown_report, write_report
from structbench.report.entries import StatsOptions, headline_interval
from structbench.report.html import prompt_text, script_json
from structbench.report.runs import load_run
from structbench.runfiles.records import SampleRecord
from structbench.runfiles.results import MetricsFile
from structbench.runner.store import read_records
from toybench import ToyBench

OPTIONS = ReportOptions(stats=StatsOptions(resamples=300, seed=5))


@pytest.fixture(scope="module")
def report(toy_runs: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, Path]:
    out = tmp_path_factory.mktemp("report") / "r.html"
    written = write_report(list(toy_runs), out, OPTIONS)
    assert written == [out, out.with_suffix(".md")]
    return out.read_text(), out.with_suffix(".md").read_text(), out.parent


def records(run: Path) -> list[SampleRecord]:
    return list(read_records(run / "samples.jsonl"))


def md_table(md: str, caption: str) -> list[list[str]]:
    """The rows of the Markdown table under ``*caption*`` (header included)."""
    block = md.split(f"*{caption}*\n\n", 1)[1].split("\n\n", 1)[0]
    lines = [line for line in block.splitlines() if not line.startswith("|---")]
    return [[c.strip() for c in line.strip("|").split("|")] for line in lines]


def test_html_is_self_contained(report: tuple[str, str, Path]) -> None:
    html, _, _ = report
    assert html.startswith("<!DOCTYPE html>")
    external = re.findall(r'(?:src|href)\s*=\s*"(?!#|data:)([^"]*)"', html)
    assert external == []
    assert "<script src" not in html and "@import" not in html and "url(http" not in html
    assert html.count("<svg") >= 4  # line plots of both variants, confusion matrices, label bars
    ids = re.findall(r'\sid="([^"]+)"', html)
    assert len(ids) == len(set(ids)), [i for i, n in Counter(ids).items() if n > 1]
    payload = re.search(r'<script type="application/json" id="sb-data">(.*?)</script>', html, re.S)
    assert payload is not None
    data = json.loads(payload.group(1))
    assert len(data["records"]) == 2 * (40 + 200 + 40) * 2


def test_the_html_carries_the_texts_of_the_first_samples_of_each_entry_and_every_row(
    toy_runs: tuple[Path, Path], tmp_path: Path
) -> None:
    """A large run's report stays bounded: the prompts and replies of ``texts`` samples an entry, every row."""
    out = tmp_path / "r.html"
    write_report([toy_runs[0]], out, ReportOptions(stats=StatsOptions(resamples=20), figures=False, texts=3))
    payload = re.search(r'<script type="application/json" id="sb-data">(.*?)</script>', out.read_text(), re.S)
    assert payload is not None
    data = json.loads(payload.group(1))
    rows = data["records"]
    full = {(r.benchmark, r.variant, r.strategy, r.id): r for r in records(toy_runs[0])}
    assert len(rows) == len(full)
    entries = Counter((r["benchmark"], r["variant"], r["strategy"]) for r in rows)
    with_texts = [r for r in rows if "prompt" in r]
    assert len(with_texts) == 3 * len(entries)
    for r in with_texts:
        record = full[(r["benchmark"], r["variant"], r["strategy"], r["id"])]
        assert r["output"] == record.output and data["prompts"][r["prompt"]] == prompt_text(record.prompt)
    for r in rows:  # what the rows and filters show is there for every sample
        record = full[(r["benchmark"], r["variant"], r["strategy"], r["id"])]
        assert (r["score"], r["parsed"], r["gold"], r["meta"]) == (record.score, record.parsed, record.gold,
                                                                   record.meta)
    assert data["left_out"].startswith(f"The prompts and replies of {len(rows) - len(with_texts)} of the {len(rows)}")
    assert "structbench view" in data["left_out"]


def test_markdown_has_paper_style_tables(report: tuple[str, str, Path], toy_runs: tuple[Path, Path]) -> None:
    _, md, folder = report
    assert "## toy:small — Toy table lookup" in md and "## toylabels:small — Toy lookup, macro-F1" in md
    pivot = md_table(md, "accuracy by model and strategy, with 95% bootstrap confidence intervals (resampling samples)")
    assert pivot[0] == ["model", "direct", "vote"]
    assert [row[0] for row in pivot[1:]] == ["weak", "strong"]
    assert "**" in pivot[2][1] and "**" not in pivot[1][1]  # the stronger model is bold
    by_rows = md_table(md, "accuracy by rows")
    assert by_rows[0][:2] == ["model", "strategy"] and by_rows[0][2].startswith("2 (n=")
    assert "![accuracy vs rows](r_figures/toy-small-by-rows.svg)" in md
    assert (folder / "r_figures" / "toy-small-by-rows.svg").read_text().startswith("<svg")
    # Per-entry details keep every metric per group.
    assert "## toy:small / vote / strong" in md and "### by rows" in md


def test_confusion_matrix_and_label_distribution(report: tuple[str, str, Path], toy_runs: tuple[Path, Path]) -> None:
    _, md, _ = report
    weak = [r for r in records(toy_runs[0]) if r.benchmark == "toylabels" and r.strategy == "direct"]
    counts = Counter((r.gold, r.parsed or "(none)") for r in weak)
    table = md_table(md, "Confusion matrix (labels): weak / direct, 40 samples")
    assert table[0] == ["", "pred: yes", "pred: no", "pred: (none)"]
    assert [row[0] for row in table[1:]] == ["gold: yes", "gold: no"]  # rectangular: no gold row for (none)
    for row, gold in zip(table[1:], ("yes", "no"), strict=True):
        assert [c.strip("*") for c in row[1:]] == [str(counts[(gold, p)]) for p in ("yes", "no", "(none)")]
    assert table[1][1].startswith("**") and table[2][2].startswith("**") and "**" not in table[1][3]
    section = md.split("### toylabels:small predicted labels", 1)[1]
    labels = md_table(section, "Distribution of predicted labels (parsed answers)")
    assert labels[0][:3] == ["label", "gold", "weak / direct"]
    parsed = Counter(r.parsed or "(none)" for r in weak)
    gold = Counter(r.gold for r in weak)
    for row in labels[1:]:
        assert int(row[1]) == gold[row[0]] and int(row[2]) == parsed[row[0]]


def loop_ci(values: list[Any], metric: Callable[[list[Any]], float], seed: int, resamples: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    stats = [metric([values[i] for i in rng.integers(0, len(values), size=len(values))]) for _ in range(resamples)]
    low, high = np.percentile(stats, [2.5, 97.5])
    return float(low), float(high)


def macro_f1(pairs: list[tuple[str, str]]) -> float:
    f1s = []
    for c in ("yes", "no"):
        tp = sum(g == c and p == c for g, p in pairs)
        fp = sum(g != c and p == c for g, p in pairs)
        fn = sum(g == c and p != c for g, p in pairs)
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return sum(f1s) / 2


def test_headline_intervals_match_an_independent_computation(
    report: tuple[str, str, Path], toy_runs: tuple[Path, Path]
) -> None:
    _, md, _ = report
    overview = md_table(md, "Headline metric of every run entry")
    header = ["benchmark", "variant", "strategy", "model", "metric", "value", "SE", "95% CI", "resampled", "n",
              "errors", "harness errors", "baselines", "tokens, cost"]
    assert overview[0] == header
    rows = {(r[0], r[1], r[2], r[3]): r for r in overview[1:]}
    assert len(rows) == 12
    for run in toy_runs:  # the calls' tokens as metrics.json sums them
        for entry in MetricsFile.model_validate_json((run / "metrics.json").read_text()).results:
            assert entry.usage is not None and entry.usage.usage.prompt_tokens
            assert rows[(entry.benchmark, entry.variant, entry.strategy, run.name)][-1] == totals_cell(entry.usage)
    for run in toy_runs:
        by_entry: dict[tuple[str, str, str], list[SampleRecord]] = {}
        for r in sorted(records(run), key=lambda r: r.id):  # the report resamples records in id order
            by_entry.setdefault((r.benchmark, r.variant, r.strategy), []).append(r)
        for (bench, variant, strategy), recs in by_entry.items():
            row = rows[(bench, variant, strategy, run.name)]
            if bench == "toylabels":
                pairs = [(r.gold, r.parsed or "(none)") for r in recs]
                value = macro_f1(pairs)
                low, high = loop_ci(pairs, macro_f1, 5, 300)
            else:
                scores = [r.score for r in recs]
                value = float(np.mean(scores))
                low, high = loop_ci(scores, lambda xs: sum(xs) / len(xs), 5, 300)
                assert row[6] == f"{np.std(scores, ddof=1) / np.sqrt(len(scores)):.4f}"
            assert row[5] == f"{value:.4f}"
            assert row[7] == f"[{low:.4f}, {high:.4f}]"
            assert row[8] == f"{len(recs)} samples"  # the toy benchmarks declare no clusters


def test_script_json_cannot_close_the_script_element() -> None:
    data = {"output": "</script><script>alert(1)</script><!-- & -->", "x": float("nan")}
    text = script_json(data)
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"output": data["output"], "x": None}


def test_bad_arguments_are_usage_errors(toy_runs: tuple[Path, Path], tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"\.html or \.md"):
        write_report(list(toy_runs), tmp_path / "r.txt")
    with pytest.raises(UsageError, match="no metrics.json"):
        write_report([tmp_path], tmp_path / "r.html")


def test_markdown_only(toy_runs: tuple[Path, Path], tmp_path: Path) -> None:
    written = write_report(toy_runs[:1], tmp_path / "only.md", ReportOptions(stats=StatsOptions(resamples=50)))
    assert written == [tmp_path / "only.md"]
    assert not (tmp_path / "only.html").exists()
    assert "![accuracy vs rows](only_figures/toy-small-by-rows.svg)" in (tmp_path / "only.md").read_text()


def test_a_failing_aggregate_gives_no_interval_and_says_why(toy_runs: tuple[Path, Path]) -> None:
    class Flaky(ToyBench):
        def aggregate(self, scored: Sequence[Scored]) -> dict[str, float]:
            if len({s.id for s in scored}) < len(scored):
                raise ValueError("duplicate samples")
            return {**super().aggregate(scored), "accuracy": 0.5}  # not the mean score: resamples re-aggregate

    recs = [r for r in records(toy_runs[0]) if (r.benchmark, r.variant, r.strategy) == ("toy", "small", "direct")]
    result = next(e for e in load_run(toy_runs[0]).metrics.results if e.benchmark == "toy")
    iv, why = headline_interval(result, [r.scored() for r in recs], Flaky(), StatsOptions(resamples=20))
    assert iv is None and why is not None and "duplicate samples" in why
    iv, why = headline_interval(result, [r.scored() for r in recs], None, StatsOptions(resamples=20),
                                "could not be loaded (ImportError)")
    assert iv is None and why is not None and "ImportError" in why


def test_an_unloadable_benchmark_shows_no_interval_under_its_name(
    run_factory: Callable[..., Path], tmp_path: Path
) -> None:
    """The mean per-sample score never stands in for a corpus metric's interval: no CI, and the reason."""
    run = run_factory(tmp_path, "m", accuracy=0.6, benches=("toylabels",), strategies=("direct",))
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["config"]["options"] = {"toylabels.colour": "red"}  # the benchmark now refuses its options
    (run / "manifest.json").write_text(json.dumps(manifest))
    out = tmp_path / "r.md"
    write_report([run], out, OPTIONS)
    md = out.read_text()
    overview = md_table(md, "Headline metric of every run entry")
    assert overview[1][6] == "–" and overview[1][7] == "–"  # no SE, no CI
    pivot = md_table(md, "macro_f1 by model and strategy, with 95% bootstrap confidence intervals")
    assert pivot[1][1].endswith("(no CI)")
    assert "no confidence interval for macro_f1: toylabels could not be loaded" in md


def test_a_run_whose_programs_had_no_namespaces_says_so_in_a_note(
    run_factory: Callable[..., Path], tmp_path: Path
) -> None:
    """Two runs compared, one on a laptop with namespaces and one in a container without: the report tells them
    apart (the manifest's ``sandbox.isolation``); a run that ran no program, or had namespaces, gets no note."""
    run = run_factory(tmp_path, "m", accuracy=1.0, strategies=("direct",))
    path = run / "manifest.json"
    manifest = json.loads(path.read_text())
    notes = {}
    for isolation in (None, "namespaces", "guard", "off", "none", "cage"):
        if isolation is not None:
            path.write_text(json.dumps({**manifest, "sandbox": {"isolation": isolation}}))
        md = markdown_report([run], OPTIONS)
        notes[isolation] = [line for line in md.splitlines() if "model-written code" in line]
    assert notes[None] == notes["namespaces"] == []
    assert notes["guard"] == [f"> {run}: model-written code ran without namespace isolation (the kernel refused "
                              "namespaces: audit-hook guard only)."]
    assert notes["off"] == [f"> {run}: model-written code ran without namespace isolation (sandbox=off: audit-hook "
                            "guard only)."]
    assert notes["none"] == [f"> {run}: model-written code ran without isolation (neither namespaces nor the "
                             "audit-hook guard)."]
    assert notes["cage"] == [f"> {run}: model-written code ran with isolation 'cage', which this structbench does "
                             "not know."]


def test_a_thinking_models_report_counts_cut_off_samples_and_carries_thoughts(thinking_run: Path,
                                                                            tmp_path: Path) -> None:
    recs = records(thinking_run)
    cut = [r for r in recs if r.reasoning_cut_off]
    assert cut and len(cut) < len(recs)
    assert all(r.reasoning and r.reasoning.startswith("Perhaps it is no") for r in recs)
    assert all(r.output == "" and r.parsed is None for r in cut)
    out = tmp_path / "r.html"
    write_report([thinking_run], out, OPTIONS)
    md = out.with_suffix(".md").read_text()
    assert "cut off in thought" in md
    assert f"{len(cut)} of {len(recs)} sample(s) got no answer" in md
    html = out.read_text()
    payload = json.loads(re.search(r'<script type="application/json" id="sb-data">(.*?)</script>', html,
                                   re.S).group(1))  # type: ignore[union-attr]
    shown = payload["records"]
    assert sum(r["reasoning_cut_off"] for r in shown) == len(cut)
    assert all(r["reasoning"].startswith("Perhaps it is no") for r in shown)
    assert "model's thought" in html
