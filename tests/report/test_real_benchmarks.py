"""The report over oracle and mock runs of all five real benchmarks: confusion matrices, exclusions, intervals.

The intervals of the non-mean headlines (SciTab macro-F1, StructFact weighted F1) are checked against an
independent cluster percentile bootstrap (whole tables, or shared evidence) that scores each resample with
scikit-learn.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import f1_score

from structbench.backends.oracle import OracleBackend
from structbench.report import paper_sections
from structbench.report.api import ReportOptions, write_report
from structbench.report.entries import StatsOptions
from structbench.report.paper import FilledTable
from structbench.report.paper_plots import placement_figure
from structbench.runner.store import read_records

BENCHES = {
    "structfact": {},
    "scitab": {},
    "skabench": {"questions": "3", "testbed": "all"},
    "structext": {},
    "rfqa": {},
}
"""Each benchmark's default variant and strategy; SKA-Bench built small but over every testbed."""
LIMIT = 30
RESAMPLES = 100
"""Enough for the intervals' check (the report's bootstrap against sklearn's, resample by resample, agrees or not
at any count); each sklearn resample costs about 6 ms, so 400 cost the two interval tests about 5 CPU s."""
SEED = 3


@pytest.fixture(scope="module")
def real_report(
    shared_datasets: Path, tmp_path_factory: pytest.TempPathFactory, run_factory: Callable[..., Path]
) -> dict[str, object]:
    """The ten runs and their report. The paper tables' placement figures, but the first, are not drawn (each about
    0.4 CPU s of matplotlib, 16 in all; none is read here): the paper tables themselves are filled and rendered, and
    ``tests/report/test_paper.py::test_rendered_section`` checks a placement figure's content."""
    root = tmp_path_factory.mktemp("real")
    runs = []
    for name, options in BENCHES.items():
        for model, backend in (("oracle", OracleBackend()), ("noisy", None)):
            runs.append(
                run_factory(root, f"{name}-{model}", accuracy=0.6, benches=(name,), strategies=(), limit=LIMIT,
                         data_dir=shared_datasets, backend=backend, options=options)
            )
    out = root / "report" / "r.html"
    options = ReportOptions(stats=StatsOptions(resamples=RESAMPLES, seed=SEED))
    drawn: list[str] = []

    def first_placement_only(filled: FilledTable, name: str) -> str | None:
        drawn.append(name)
        return placement_figure(filled, name) if len(drawn) == 1 else None

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(paper_sections, "placement_figure", first_placement_only)
        write_report(runs, out, options, json_out=root / "report" / "r.json")
    assert len(drawn) > 1  # the paper tables with figures were reached
    return {
        "runs": {p.name: p for p in runs},
        "html": out.read_text(),
        "md": out.with_suffix(".md").read_text(),
        "json": json.loads((root / "report" / "r.json").read_text())["results"],
    }


def _entry(results: object, run: str) -> dict[str, object]:
    assert isinstance(results, list)
    return next(r for r in results if Path(r["run"]).name == run)


def test_every_benchmark_is_reported_and_the_oracle_is_perfect(real_report: dict[str, object]) -> None:
    results = real_report["json"]
    assert isinstance(results, list) and len(results) == 2 * len(BENCHES)
    for name in BENCHES:
        oracle, noisy = _entry(results, f"{name}-oracle"), _entry(results, f"{name}-noisy")
        assert oracle["headline"]["value"] == 1.0, name  # type: ignore[index]
        assert oracle["errors"] == oracle["harness_errors"] == noisy["harness_errors"] == 0
        assert noisy["headline"]["value"] < 1.0 and noisy["interval"] is not None, name  # type: ignore[index]
        assert f"## {name}:" in str(real_report["md"]) and f"{name}:" in str(real_report["html"])


def _tally(run: Path, gold_rows: list[str], columns: list[str], keep: object = None) -> list[list[int]]:
    """A confusion matrix recomputed from ``samples.jsonl``: unparsed answers in the last column."""
    pairs = Counter()
    for r in read_records(run / "samples.jsonl"):
        if keep is None or r.gold in keep:  # type: ignore[operator]
            pairs[(r.gold, r.parsed if r.parsed is not None else columns[-1])] += 1
    return [[pairs[(g, p)] for p in columns] for g in gold_rows]


def _md_rows(md: str, caption: str) -> list[list[str]]:
    block = md.split(f"*{caption}*\n\n", 1)[1].split("\n\n", 1)[0]
    rows = [line for line in block.splitlines() if not line.startswith("|---")]
    return [[c.strip().strip("*") for c in line.strip("|").split("|")] for line in rows]


def test_scitab_confusion_matrices_reach_html_and_markdown(real_report: dict[str, object]) -> None:
    md, html = str(real_report["md"]), str(real_report["html"])
    run = real_report["runs"]["scitab-noisy"]  # type: ignore[index]
    columns = ["supports", "refutes", "not enough info", "invalid"]
    entry = _entry(real_report["json"], "scitab-noisy")
    three = entry["confusion_matrices"]["3-class"]  # type: ignore[index]
    two = entry["confusion_matrices"]["2-class"]  # type: ignore[index]
    assert three["predicted"] == two["predicted"] == columns and two["gold"] == ["supports", "refutes"]
    assert three["counts"] == _tally(run, three["gold"], columns)
    assert two["counts"] == _tally(run, ["supports", "refutes"], columns, keep={"supports", "refutes"})
    for matrix, title in ((three, "three-class"), (two, "two-class, NEI claims left out")):
        caption = f"Confusion matrix ({title}): scitab-noisy / zero_shot, {sum(map(sum, matrix['counts']))} samples"
        rows = _md_rows(md, caption)
        assert rows[0] == ["", *(f"pred: {c}" for c in columns)]
        assert [[int(x) for x in row[1:]] for row in rows[1:]] == matrix["counts"]
        assert caption in html
    section = html.split('<section id="scitab-all-confusion-matrices">', 1)[1].split("</section>", 1)[0]
    assert '<figure class="plot"><svg' in section
    assert "<figcaption>Confusion matrices (rows: gold, columns: predicted), 4 of 4</figcaption>" in section


def test_structfact_confusion_matrix_counts_every_sample(real_report: dict[str, object]) -> None:
    entry = _entry(real_report["json"], "structfact-noisy")
    matrix = entry["confusion_matrices"]["labels"]  # type: ignore[index]
    assert matrix["predicted"][-1] == "NONE" and sum(map(sum, matrix["counts"])) == entry["n"] == 25
    assert "Confusion matrix (labels, NONE = no option found): structfact-noisy / zero_shot" in str(real_report["md"])


def test_exclusions_are_in_metrics_and_report(real_report: dict[str, object]) -> None:
    md = str(real_report["md"])
    for run, reason in (("skabench-oracle", "testbed context(s) not built: too little noise"),
                        ("rfqa-oracle", "queries without a gold table (missing_table"),
                        ("scitab-oracle", "claims on the 5 tables held out for demonstrations")):
        entry = _entry(real_report["json"], run)
        excluded = entry["extra"]["excluded"]  # type: ignore[index]
        hits = [e for e in excluded if e["reason"].startswith(reason)]
        assert hits and all(e["count"] >= 1 for e in hits), excluded
        on_disk = json.loads((real_report["runs"][run] / "metrics.json").read_text())  # type: ignore[index]
        assert on_disk["results"][0]["extra"]["excluded"] == excluded
        rows = _md_rows(md.split(f"## {entry['benchmark']}:", 1)[1], "Samples the benchmark left out, and why")
        assert [run, entry["strategy"], str(hits[0]["count"]), hits[0]["reason"]] in rows
        assert hits[0]["reason"] in str(real_report["html"])


def _sklearn_bootstrap(gold: list[str], pred: list[str], clusters: list[str], metric: object) -> tuple[float, float]:
    """The documented cluster resamples (clusters coded in order of first appearance; rows of
    default_rng(seed).integers(0, C, (R, C)); every question of a drawn cluster comes along), each scored by
    sklearn."""
    codes: dict[str, int] = {}
    for c in clusters:
        codes.setdefault(c, len(codes))
    members = [[i for i, c in enumerate(clusters) if codes[c] == k] for k in range(len(codes))]
    rows = np.random.default_rng(SEED).integers(0, len(codes), size=(RESAMPLES, len(codes)))
    g, p = np.array(gold, dtype=object), np.array(pred, dtype=object)
    values = []
    for row in rows:
        picked = [i for k in row for i in members[k]]
        values.append(metric(list(g[picked]), list(p[picked])))  # type: ignore[operator]
    low, high = np.percentile(values, [2.5, 97.5])
    return float(low), float(high)


def _labels(run: Path, unparsed: str) -> tuple[list[str], list[str], list[str]]:
    """Gold, predicted labels and clusters in the order every interval resamples in: by cluster, then id."""
    records = sorted(read_records(run / "samples.jsonl"), key=lambda r: (str(r.cluster), r.id))
    assert all(r.cluster is not None for r in records)
    return ([str(r.gold) for r in records], [unparsed if r.parsed is None else str(r.parsed) for r in records],
            [str(r.cluster) for r in records])


def test_scitab_macro_f1_interval_is_a_bootstrap_of_macro_f1(real_report: dict[str, object]) -> None:
    entry = _entry(real_report["json"], "scitab-noisy")
    gold, pred, tables = _labels(real_report["runs"]["scitab-noisy"], "invalid")  # type: ignore[index]

    def macro(g: list[str], p: list[str]) -> float:  # classes present in gold or predictions; invalid is none
        present = sorted((set(g) | set(p)) - {"invalid"})
        return float(f1_score(g, p, labels=present, average="macro", zero_division=0))

    assert entry["headline"]["name"] == "macro_f1"  # type: ignore[index]
    assert entry["headline"]["value"] == pytest.approx(macro(gold, pred))  # type: ignore[index]
    interval = entry["interval"]
    assert interval["method"] == "aggregate"  # type: ignore[index]
    assert (interval["unit"], interval["clusters"]) == ("table", len(set(tables)))  # type: ignore[index]
    low, high = _sklearn_bootstrap(gold, pred, tables, macro)
    assert (interval["low"], interval["high"]) == pytest.approx((low, high), abs=1e-12)  # type: ignore[index]
    mean_score = np.mean([float(g == p) for g, p in zip(gold, pred, strict=True)])
    assert entry["headline"]["value"] != pytest.approx(mean_score)  # a headline that is not a mean  # type: ignore[index]


def test_structfact_weighted_f1_interval_is_a_bootstrap_of_weighted_f1(real_report: dict[str, object]) -> None:
    entry = _entry(real_report["json"], "structfact-noisy")
    gold, pred, evidence = _labels(real_report["runs"]["structfact-noisy"], "NONE")  # type: ignore[index]

    def weighted(g: list[str], p: list[str]) -> float:
        return float(f1_score(g, p, average="weighted", zero_division=0))

    assert entry["headline"]["name"] == "weighted_f1"  # type: ignore[index]
    assert entry["headline"]["value"] == pytest.approx(weighted(gold, pred))  # type: ignore[index]
    low, high = _sklearn_bootstrap(gold, pred, evidence, weighted)
    interval = entry["interval"]
    assert (interval["unit"], interval["clusters"]) == ("evidence", len(set(evidence)))  # type: ignore[index]
    assert (interval["low"], interval["high"]) == pytest.approx((low, high), abs=1e-12)  # type: ignore[index]
