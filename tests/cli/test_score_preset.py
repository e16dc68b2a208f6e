"""``structbench score --preset NAME``: exported predictions scored as the paper's released code scored them,
with structbench's corrected scores beside; a bench or strategy the preset does not run is a usage error."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from structbench.testing.cli import Invocation, invoke


def sb(tmp_path: Path, *args: str, check: int = 0) -> Invocation:
    env = {**os.environ, "STRUCTBENCH_CACHE": str(tmp_path / "cache")}
    proc = invoke(*args, env=env, cwd=tmp_path)
    assert proc.returncode == check, proc.stderr + proc.stdout
    return proc


def test_score_with_a_preset_scores_the_papers_way(tmp_path: Path) -> None:
    sb(tmp_path, "export", "structext", "--preset", "structext-table3", "--strategy", "naive", "--limit", "30",
       "--out", "items.jsonl")
    lines = [json.loads(line) for line in (tmp_path / "items.jsonl").read_text().splitlines()]
    assert {line["variant"] for line in lines} == {"test"}  # the preset's variant
    with (tmp_path / "preds.jsonl").open("w") as fh:
        for i, line in enumerate(lines):  # nothing, the answer under the heading the prompt asks for, the answer
            output = ["", "### Answer:\n" + line["answer"], line["answer"]][i % 3]
            fh.write(json.dumps({"id": line["id"], "fingerprint": line["fingerprint"], "output": output}) + "\n")
    common = ["--strategy", "naive", "--limit", "30", "-p", "preds.jsonl"]
    paper = sb(tmp_path, "score", "structext", "--preset", "structext-table3", *common, "--out", "paper.json")
    own = sb(tmp_path, "score", "structext:test", *common, "--out", "own.json")
    paper_entry = json.loads((tmp_path / "paper.json").read_text())["results"][0]
    own_entry = json.loads((tmp_path / "own.json").read_text())["results"][0]
    # the released scorer skips the 10 empty replies and compares whole replies (the package, gold first)
    rouge = pytest.importorskip("rouge").Rouge()
    released = []
    for i, line in enumerate(lines):
        if i % 3:
            output = ["", "### Answer:\n" + line["answer"], line["answer"]][i % 3]
            f = rouge.get_scores(line["answer"], output)[0]["rouge-l"]["f"]
            released.append(0.0 if f < 0.75 else f)
    assert paper_entry["extra"]["excluded"][0]["count"] == 10
    assert paper_entry["metrics"]["rougeL"] == pytest.approx(sum(released) / len(released), abs=1e-9)
    assert paper_entry["metrics"]["rougeL"] < 0.6
    assert own_entry["metrics"]["rougeL"] == pytest.approx(20 / 30)
    assert paper_entry["extra"]["corrected"]["metrics"]["rougeL"] == pytest.approx(own_entry["metrics"]["rougeL"])
    assert "structbench's corrected scoring of the same outputs (scorer=structbench" in paper.stdout
    assert "left out: 10 empty replies" in paper.stderr and "corrected" not in own.stdout


def test_score_with_a_preset_refuses_what_it_does_not_run(tmp_path: Path) -> None:
    wrong = sb(tmp_path, "score", "structext:hard", "--preset", "structext-table3", "-s", "naive", "-p", "x.jsonl",
               check=2)
    assert "--preset structext-table3 runs structext:test, not structext:hard" in wrong.stderr
    several = sb(tmp_path, "score", "structext", "--preset", "structext-table3", "-p", "x.jsonl", check=2)
    assert "runs the strategies naive, self_cot, ps_cot, rule_hint on structext:test: give --strategy" in several.stderr
    fixed = sb(tmp_path, "score", "structext", "--preset", "structext-table3", "-s", "naive",
               "-o", "scorer=structbench", "-p", "x.jsonl", check=2)
    assert "preset structext-table3 runs the paper's scorer=released" in fixed.stderr
