"""Varied predictions (right, reformatted, near, wrong, empty) scored sample by sample equal the official scorer's
verdicts (``databench_eval.Evaluator``), over the whole tables and over the samples, through the library and through
``structbench export`` and ``score``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from structbench.benchmarks.databench import DataBench
from structbench.benchmarks.databench.source import DATA, NAME, QA_FILE
from structbench.contract.benchmark import Attempt
from structbench.data.datasets import DataContext
from structbench.data.sample import Sample
from structbench.testing.cli import invoke

databench_eval = pytest.importorskip("databench_eval")
datasets = pytest.importorskip("datasets")
pd = pytest.importorskip("pandas")

KINDS = ("right", "reformatted", "near", "wrong", "empty")


def _reformatted(gold: str, semantic: str) -> str:
    if semantic == "boolean":
        return {"True": "yes", "False": "no"}.get(gold, gold.lower())
    if semantic == "number":
        return f"{float(gold):,.4f}"
    if semantic.startswith("list"):
        return ", ".join(reversed(gold.strip("[]").split(", ")))
    return f"'{gold}' " if not gold[:4].isdigit() else f"{gold} 00:00:00"


def _near(gold: str, semantic: str) -> str:
    if semantic == "boolean":
        return gold[:-1]
    if semantic == "number":
        return str(float(gold) + 0.01)
    if semantic.startswith("list"):
        return "[" + ", ".join(gold.strip("[]").split(", ")[:-1]) + "]"
    return gold.upper() if gold.upper() != gold else gold + "s"


def predictions(samples: list[Sample]) -> list[str]:
    """One prediction per sample, the kinds in turn; a wrong one is another question's answer of the same type."""
    out = []
    for i, sample in enumerate(samples):
        gold, semantic = str(sample.gold.text), sample.task  # type: ignore[union-attr]
        kind = KINDS[i % len(KINDS)]
        others = [str(s.gold.text) for s in samples if s.task == semantic and s.gold.text != gold]  # type: ignore
        out.append({
            "right": gold,
            "reformatted": _reformatted(gold, semantic),
            "near": _near(gold, semantic),
            "wrong": others[0] if others else "zzz",
            "empty": "",
        }[kind])
    return out


def official_evaluator(root: Path) -> object:
    """The official evaluator over the set's questions, in the order of the Hub's ``qa`` configuration."""
    files = sorted((root / NAME / DATA).glob(f"*/{QA_FILE}"))
    qa = datasets.Dataset.from_pandas(pd.concat([pd.read_parquet(f) for f in files], ignore_index=True))
    return databench_eval.Evaluator(qa=qa)


@pytest.mark.parametrize("variant", ["databench", "lite"])
def test_per_sample_verdicts_equal_the_official_scorers(variant: str, generated: Path, data: DataContext) -> None:
    bench = DataBench()
    samples = list(bench.load(variant, data, seed=0, limit=None))
    preds = predictions(samples)
    strategy = bench.strategy("direct")
    ours = [bench.score(s, Attempt(output=p), strategy).score == 1.0 for s, p in zip(samples, preds, strict=True)]
    evaluator = official_evaluator(generated)
    accuracy = evaluator.eval(preds, lite=variant == "lite")  # type: ignore[attr-defined]
    assert ours == evaluator.evals  # type: ignore[attr-defined]
    assert bench.aggregate([bench.score(s, Attempt(output=p), strategy) for s, p in zip(samples, preds, strict=True)]
                           )["accuracy"] == accuracy
    assert 0.2 < accuracy < 0.9  # right and wrong verdicts both
    verdicts = {(KINDS[i % len(KINDS)], v) for i, v in enumerate(ours)}
    assert ("reformatted", True) in verdicts and ("near", False) in verdicts and ("empty", False) in verdicts


def test_the_gold_is_the_variants_answer(generated: Path, data: DataContext) -> None:
    whole = list(DataBench().load("databench", data, seed=0, limit=None))
    lite = list(DataBench().load("lite", data, seed=0, limit=None))
    qa = pd.read_parquet(generated / NAME / DATA / "001_Orchards" / QA_FILE)
    assert [s.gold.text for s in whole[:20]] == list(qa["answer"])  # type: ignore[union-attr]
    assert [s.gold.text for s in lite[:20]] == list(qa["sample_answer"])  # type: ignore[union-attr]
    assert [s.id for s in whole] == [s.id for s in lite] and len(whole) == 40


@pytest.mark.parametrize("variant", ["databench", "lite"])
def test_score_on_a_predictions_file_equals_the_official_accuracy(variant: str, generated: Path,
                                                                 tmp_path: Path) -> None:
    export = tmp_path / "export.jsonl"
    common = [f"databench:{variant}", "--strategy", "direct", "--data-dir", str(generated)]
    done = invoke("export", *common, "--out", str(export))
    assert done.returncode == 0, done.stderr
    lines = [json.loads(x) for x in export.read_text().splitlines()]
    assert {"answer", "sample_answer", "type"} <= set(lines[0])  # the release's fields, as its file has them
    bench = DataBench()
    samples = list(bench.load(variant, DataContext(data_dir=generated), seed=0, limit=None))
    preds = predictions(samples)
    with (tmp_path / "predictions.jsonl").open("w") as out:
        for line, prediction in zip(lines, preds, strict=True):
            out.write(json.dumps({"id": line["id"], "fingerprint": line["fingerprint"], "output": prediction}) + "\n")
    scored = invoke("score", *common, "--predictions", str(tmp_path / "predictions.jsonl"),
                    "--out", str(tmp_path / "m.json"))
    assert scored.returncode == 0, scored.stderr
    (entry,) = json.loads((tmp_path / "m.json").read_text())["results"]
    official = official_evaluator(generated).eval(preds, lite=variant == "lite")  # type: ignore[attr-defined]
    assert entry["n"] == len(preds) == 40 and entry["metrics"]["accuracy"] == official
