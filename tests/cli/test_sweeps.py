"""Sweeps as a user meets them: ``structbench run --sweep`` over serializations and perturbations, one run with one
result per cell and a robustness section; exports that differ cell by cell as declared; a loopback model whose
accuracy depends on the table format; a resumed sweep that repeats no call."""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
import time
from csv import reader as csv_reader
from pathlib import Path
from typing import Any

import pytest

from faults import child_pythonpath, send_sigint, serve
from patience import patience
from structbench.testing.cli import Invocation, invoke

GENERATED = ["-b", "structfact:generated", "-o", "tables=synthetic", "-s", "zero_shot"]
"""StructFact's generated claims over a fictional world's tables: no download, every sample shows tables."""


def _env(tmp_path: Path) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=child_pythonpath(), STRUCTBENCH_CACHE=str(tmp_path / "cache"),
                OPENAI_API_KEY="sk-test")


def sb(tmp_path: Path, *args: str) -> Invocation:
    proc = invoke(*args, env=_env(tmp_path), cwd=tmp_path)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def metrics(run_dir: Path) -> dict[str, Any]:
    return dict(json.loads((run_dir / "metrics.json").read_text()))


def records(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / "samples.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def export(tmp_path: Path, entry: str, *options: str, n: int = 10, strategy: str = "zero_shot",
           data_dir: Path | None = None) -> list[dict[str, Any]]:
    out = tmp_path / f"export-{abs(hash((entry, options)))}.jsonl"
    flags = [flag for o in options for flag in ("-o", o)] + (["--data-dir", str(data_dir)] if data_dir else [])
    proc = sb(tmp_path, "export", entry, *flags, "-n", str(n), "--strategy", strategy, "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in out.read_text().splitlines()]


def data_block(line: dict[str, Any]) -> str:
    text = line["prompt"][-1]["content"]
    return text.split("Data:\n", 1)[1].split("\nQ: ", 1)[0]


def test_an_oracle_sweep_gives_one_result_per_cell_all_at_the_maximum(tmp_path: Path) -> None:
    formats, perturbations = ["paper", "csv", "indexed_row_major", "df_loader"], ["none", "shuffle_rows", "transpose",
                                                                                   "no_header"]
    args = ["run", "-m", "oracle", *GENERATED, "-o", "per_task=2", "--sweep", f"serialization={','.join(formats)}",
            "--sweep", f"perturbation={','.join(perturbations)}", "--out", "r", "--no-progress"]
    proc = sb(tmp_path, *args)
    assert proc.returncode == 0, proc.stderr
    results = metrics(tmp_path / "r")["results"]
    cells = {f"perturbation={p};serialization={f}" for f in formats for p in perturbations}
    assert len(results) == 16 and {r["cell"] for r in results} == cells
    assert all(r["headline"]["value"] == 1.0 and r["n"] == 10 for r in results)
    assert [r["cell"] for r in results][:2] == ["perturbation=none;serialization=paper",
                                                "perturbation=shuffle_rows;serialization=paper"]  # the grid's order
    recs = records(tmp_path / "r")
    assert len(recs) == 160 and {r["cell"] for r in recs} == cells
    for p in perturbations:  # each format its own prompt (the perturbations: test_every_cells_prompts_differ...)
        shown = [r["prompt"][-1]["content"] for r in recs if r["cell"].startswith(f"perturbation={p};")]
        assert len(shown) == len(set(shown)) == 40
    (summary,) = metrics(tmp_path / "r")["robustness"]
    assert summary["reference"] == "perturbation=none;serialization=paper"
    assert (summary["score"], summary["spread"], summary["mad"], summary["significant"]) == (1.0, 0.0, 0.0, 0)
    assert summary["axes"] == {"serialization": formats, "perturbation": perturbations}
    assert "| zero_shot | serialization=paper, perturbation=transpose | oracle |" in proc.stdout  # the sweep's order
    assert "Across the 16 cells of the sweep" in proc.stdout
    again = sb(tmp_path, *args)  # the same command finds the run complete and asks nothing
    assert again.returncode == 0 and len(records(tmp_path / "r")) == 160
    report = sb(tmp_path, "report", "r", "--out", "rep.html")
    assert report.returncode == 0, report.stderr
    md = (tmp_path / "rep.md").read_text()
    assert "## Robustness" in md and "Robustness score (worst cell's weighted_f1): 1.0000" in md
    assert "| serialization=paper, perturbation=none | 10 | **1.0000 [1.0000, 1.0000]** | reference |" in md  # worst
    assert list((tmp_path / "rep_figures").glob("robustness-*.svg"))
    assert "| strategy | oracle |" in md  # 16 cells: the benchmark's headline table has them as rows
    assert "| zero_shot [perturbation=transpose, serialization=csv] | **1.0000 [1.0000, 1.0000]** |" in md
    converted = sb(tmp_path, "convert", "r", "--to", "lm-eval", "--out", "lm")
    assert converted.returncode == 0, converted.stderr
    (results_file,) = (tmp_path / "lm" / "oracle").glob("results_*.json")
    tasks = json.loads(results_file.read_text())["results"]
    assert len(tasks) == 16 and "structfact_generated_zero_shot_perturbation-transpose_serialization-csv" in tasks
    compare = sb(tmp_path, "compare", "r", "r")
    assert compare.returncode == 0 and "Entries of a sweep pair cell by cell" in compare.stdout
    assert "structfact:generated [perturbation=transpose, serialization=csv]" in compare.stdout


def _generated(n: int) -> list[Any]:
    """The generated claims the exports show, loaded here: what each perturbation can change is known."""
    from structbench.benchmarks import BENCHMARKS
    from structbench.data.datasets import DataContext

    bench = BENCHMARKS.get("structfact")({"tables": "synthetic"})
    return list(itertools.islice(bench.load("generated", DataContext.from_env(None, offline=True), seed=0, limit=n), n))


def test_every_cells_prompts_differ_as_declared(tmp_path: Path) -> None:
    from structbench.data.perturb import perturb

    samples = _generated(10)
    base = export(tmp_path, "structfact:generated", "tables=synthetic", "serialization=csv")
    assert [line["id"] for line in base] == [s.id for s in samples]
    assert [line["perturbation"] for line in base] == ["none"] * 10
    formats = {fmt: export(tmp_path, "structfact:generated", "tables=synthetic", f"serialization={fmt}")
               for fmt in ("paper", "csv", "json", "html", "indexed_row_major", "dataframe", "df_loader", "concat")}
    for i, line in enumerate(base):  # the same sample in every format, its prompt each format's own
        assert {lines[i]["id"] for lines in formats.values()} == {line["id"]}
        assert all(lines[i]["gold"] == line["gold"] for lines in formats.values())
        shown = [data_block(lines[i]) for lines in formats.values()]
        assert len(set(shown)) == len(shown)
    changed: dict[str, int] = {}
    for name in ("shuffle_rows", "shuffle_columns", "transpose", "empty_rows", "no_header", "dates", "thousands"):
        lines = export(tmp_path, "structfact:generated", "tables=synthetic", "serialization=csv",
                       f"perturbation={name}")
        assert {(x["perturbation"], x["perturbation_seed"]) for x in lines} == {(name, 0)}
        for sample, before, after in zip(samples, base, lines, strict=True):
            assert after["id"] == before["id"] and after["gold"] == before["gold"]
            declared = perturb(sample.evidence, name) != list(sample.evidence)  # the perturbation acts on it
            assert (data_block(after) != data_block(before)) == declared, (name, sample.id)
        changed[name] = sum(data_block(a) != data_block(b) for a, b in zip(lines, base, strict=True))
        if name in ("shuffle_rows", "empty_rows"):  # the same lines, reordered or with blank ones among them
            for before, after in zip(base, lines, strict=True):
                assert sorted(x for x in data_block(after).splitlines() if x.strip(",")) == sorted(
                    x for x in data_block(before).splitlines() if x.strip(","))
        if name == "transpose":
            assert any(",0,1" in data_block(x) for x in lines)  # ToRR's labels
        if name == "dates":
            assert all("December 16, 1930" not in data_block(x) for x in lines)
            assert any("1930-12-16" in data_block(x) for x in lines)
    assert changed["thousands"] == 0  # the generated tables write their numbers with separators already
    assert all(changed[n] > 0 for n in changed if n != "thousands"), changed
    seeded = export(tmp_path, "structfact:generated", "tables=synthetic", "serialization=csv",
                    "perturbation=shuffle_rows", "perturbation_seed=1")
    again = export(tmp_path, "structfact:generated", "tables=synthetic", "serialization=csv",
                   "perturbation=shuffle_rows", "perturbation_seed=0")
    shuffled = [data_block(x) for x in again]
    assert [data_block(x) for x in seeded] != shuffled  # another seed, another draw; the same seed, the same
    assert shuffled == [data_block(x) for x in export(tmp_path, "structfact:generated", "tables=synthetic",
                                                      "serialization=csv", "perturbation=shuffle_rows")]


@pytest.mark.shared
def test_scitab_and_skabench_tables_are_perturbed_as_declared(tmp_path: Path, shared_datasets: Path) -> None:
    plain = export(tmp_path, "scitab", n=5, data_dir=shared_datasets)
    transposed = export(tmp_path, "scitab", "perturbation=transpose", n=5, data_dir=shared_datasets)
    shuffled = export(tmp_path, "scitab", "serialization=csv", "perturbation=shuffle_columns", n=5,
                      data_dir=shared_datasets)
    for a, b, c in zip(plain, transposed, shuffled, strict=True):
        assert a["id"] == b["id"] == c["id"] and a["gold"] == b["gold"] == c["gold"]
        assert "\n|| " in a["prompt"][-1]["content"] and "\n||   | 0 | 1 |" in b["prompt"][-1]["content"]
        line = a["prompt"][-1]["content"].split("\nClaim:")[0].splitlines()[1]  # the header, "|| a | b ||"
        paper = line.removeprefix("|| ").removesuffix(" ||").split(" | ")
        shown = next(csv_reader([next(x for x in c["prompt"][-1]["content"].split("\nClaim:")[0].splitlines()[1:]
                                      if x)]))
        assert sorted(shown) == sorted(paper) and shown != paper  # the same columns, in another order
    ska = export(tmp_path, "skabench", "knowledge=table", "testbed=noise", "budget=4k", n=4, strategy="direct",
                 data_dir=shared_datasets)
    ska_csv = export(tmp_path, "skabench", "knowledge=table", "testbed=noise", "budget=4k", "serialization=csv",
                     "perturbation=thousands", n=4, strategy="direct", data_dir=shared_datasets)
    for a, b in zip(ska, ska_csv, strict=True):
        assert a["id"] == b["id"] and b["perturbation"] == "thousands"
        paper, shown = (x["prompt"][-1]["content"].split("**Task Description:**")[0] for x in (a, b))
        assert paper.startswith("### Table:\n|") and shown.startswith("### Table:\n") and "|" not in shown
        grouped = re.findall(r'"(\d{1,3}(?:,\d{3})+)(?:\.\d+)?"', shown)  # CSV quotes a cell with commas
        assert all(f"|{n.replace(',', '')}" in paper for n in grouped)
    assert any(re.search(r'"\d{1,3}(,\d{3})+', x["prompt"][-1]["content"]) for x in ska_csv)


def _replies(tmp_path: Path, share: dict[str, float], n: int, data_dir: Path) -> tuple[Path, dict[str, list[bool]]]:
    """A scripted model over SciTab's claims: right on a share of the claims in each serialization (every claim in
    the paper's lines, a quarter in CSV ...), wrong on the others; returns the replies file and who is right."""
    from structbench.benchmarks.scitab.prompts import ZERO_SHOT_ANSWERS

    replies: dict[str, str] = {}
    right: dict[str, list[bool]] = {}
    for fmt, part in share.items():
        lines = export(tmp_path, "scitab", f"serialization={fmt}", n=n, data_dir=data_dir)
        right[fmt] = [(i % 4) < part * 4 for i in range(len(lines))]
        for line, ok in zip(lines, right[fmt], strict=True):
            gold = line["gold"]["label"]
            answer = gold if ok else next(label for label in ZERO_SHOT_ANSWERS if label != gold)
            replies[line["prompt"][-1]["content"]] = ZERO_SHOT_ANSWERS[answer]
    path = tmp_path / "replies.json"
    path.write_text(json.dumps(replies))
    return path, right


@pytest.mark.shared
def test_a_model_whose_accuracy_depends_on_the_format_shows_its_spread_and_worst_cell(
    tmp_path: Path, shared_datasets: Path
) -> None:
    replies, right = _replies(tmp_path, {"paper": 1.0, "csv": 0.25, "concat": 0.75}, 80, shared_datasets)
    with serve(tmp_path, "--replies", str(replies), "--reply", "no idea") as server:
        proc = sb(tmp_path, "run", "-m", "openai:m", "--base-url", server.url, "-b", "scitab", "-n", "80",
                  "--data-dir", str(shared_datasets), "--sweep", "serialization=paper,csv,concat", "--out", "r",
                  "--no-progress", "--no-cache")
        assert proc.returncode == 0, proc.stderr
        assert len(server.answered()) == 240
    m = metrics(tmp_path / "r")
    by_cell = {r["cell"]: r for r in m["results"]}
    for fmt, oks in right.items():
        assert by_cell[f"serialization={fmt}"]["metrics"]["accuracy"] == sum(oks) / len(oks)
    assert [by_cell[f"serialization={f}"]["metrics"]["accuracy"] for f in right] == [1.0, 0.25, 0.75]
    (s,) = m["robustness"]
    cells = {c["cell"]: c for c in s["cells"]}
    f1 = {fmt: by_cell[f"serialization={fmt}"]["headline"]["value"] for fmt in right}
    assert s["reference"] == "serialization=paper" and cells["serialization=paper"]["reference"]
    assert s["worst"] == "serialization=csv" and s["score"] == f1["csv"] and s["best"] == "serialization=paper"
    assert s["spread"] == pytest.approx(f1["paper"] - f1["csv"])
    mean = sum(f1.values()) / 3
    assert s["mad"] == pytest.approx(sum(abs(v - mean) for v in f1.values()) / 3)
    csv = cells["serialization=csv"]
    assert csv["pairs"] == 80 and csv["delta"] == pytest.approx(f1["csv"] - f1["paper"])
    assert csv["delta_ci_high"] < 0 and csv["p_adjusted"] < 0.05 and csv["significant"] is True
    assert csv["p_adjusted"] >= csv["p_randomization"]  # Holm over the two tested cells
    assert cells["serialization=concat"]["delta"] < 0
    assert s["unit"] == "table" and s["correction"] == "holm"
    # every figure has an interval from the grid resampled as a whole; the csv cell's drop is no accident of
    # picking the worst of three cells
    assert s["shared"] == 80 and set(s["intervals"]) == {"score", "best_value", "mean", "spread", "mad", "drop"}
    assert s["drop"] == pytest.approx(f1["paper"] - f1["csv"]) and s["intervals"]["drop"][0] > 0
    assert s["p_drop"] < 0.05 and s["drop_significant"] is True
    report = sb(tmp_path, "report", "r", "--out", "rep.md")
    text = (tmp_path / "rep.md").read_text()
    assert report.returncode == 0 and f"Robustness score (worst cell's macro_f1): {f1['csv']:.4f} [" in text
    assert "beyond what picking the worst of these cells gives by chance (randomization of the cells, p = " in text


def test_a_resumed_sweep_repeats_no_call(tmp_path: Path) -> None:
    from structbench.testing.openai_server import request_digest

    args = ["run", "-m", "openai:m", *GENERATED, "-o", "per_task=4", "--sweep", "serialization=paper,csv",
            "--sweep", "perturbation=none,transpose", "-c", "2", "--out", "r", "--no-progress"]
    with serve(tmp_path, "--latency", "0.1", "--reply", "A") as server:
        args[3:3] = ["--base-url", server.url]
        proc = subprocess.Popen([sys.executable, "-m", "structbench", *args], env=_env(tmp_path), cwd=tmp_path,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        while len(records(tmp_path / "r")) < 25:  # into the second cell or further
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.01)
        send_sigint(proc)
        proc.communicate(timeout=patience(60))
        assert proc.returncode == 130
        done = records(tmp_path / "r")
        assert 25 <= len({(r["cell"], r["id"]) for r in done}) < 80
        time.sleep(0.3)  # the server logs what was in flight at the signal (cancelled: never received)
        first = len(server.answered())
        resumed = sb(tmp_path, *args)
        assert resumed.returncode == 0, resumed.stderr
        answered = server.answered()
        assert sb(tmp_path, *args).returncode == 0 and server.answered() == answered  # complete: nothing asked
    final = records(tmp_path / "r")
    assert len(final) == 80 and len({(r["cell"], r["id"]) for r in final}) == 80
    again = answered[first:]
    finished = {request_digest({"messages": r["prompt"]}) for r in done}
    assert again and not set(again) & finished  # no call the first session finished is made again
    assert len(again) == len(set(again)) <= 80 - len(done)
    prompts = {request_digest({"messages": r["prompt"]}) for r in final}  # a list transposes to itself: one call
    assert set(answered) == prompts and len(answered) - len(prompts) <= 2  # at most the 2 cancelled at Ctrl-C
    assert len({r["cell"] for r in final}) == 4 and len(metrics(tmp_path / "r")["results"]) == 4


@pytest.mark.shared
def test_a_robustness_preset_runs_its_grid_and_only_the_reference_fills_the_papers_table(
    tmp_path: Path, shared_datasets: Path
) -> None:
    listed = sb(tmp_path, "list").stdout
    assert "robust-scitab  robustness grid, 28 cells" in listed and "sweep perturbation: none, shuffle_rows" in listed
    proc = sb(tmp_path, "run", "-m", "oracle", "--preset", "robust-scitab", "--limit", "3", "--data-dir",
              str(shared_datasets), "--out", "r", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["sessions"][0]["model_calls"] == 28 * 3  # the documented cost: cells x samples
    assert len(manifest["config"]["sweeps"]["serialization"]) == 7 and len(metrics(tmp_path / "r")["results"]) == 28
    refused = sb(tmp_path, "run", "-m", "oracle", "--preset", "robust-scitab", "--sweep", "serialization=csv")
    assert refused.returncode == 2 and "preset robust-scitab sweeps serialization over paper,csv" in refused.stderr
    report = sb(tmp_path, "report", "r", "--out", "rep.md")
    text = (tmp_path / "rep.md").read_text()
    assert report.returncode == 0
    assert ("oracle: r (zero_shot, 27 sweep cells) does not fill this table: the paper did not run them "
            "(perturbation, serialization not at the paper's values).") in text
    table4 = text.split("### SciTab Table 4")[1].split("\n### ")[0]
    assert "| **oracle** | **—** | **100.00 [100.00, 100.00]** | **—** | **—** |" in table4  # the reference cell
