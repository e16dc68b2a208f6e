"""Other table formats and the shared perturbations: the instruction's table re-rendered (the rest of its wording
kept), the oracle still answering, and the robustness preset's grid run from the command line."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from structbench.benchmarks.tablebench import TableBench
from structbench.core.errors import DataError, UsageError
from structbench.data.sample import Sample
from structbench.testing.cli import invoke

START, END = "[TABLE] \n", "\n\nLet's get start!"


def parts(text: str) -> tuple[str, str, str]:
    """The instruction before its table, the table, and after it."""
    head, rest = text.split(START, 1)
    table, tail = rest.split(END, 1)
    return head, table, tail


def prompt(bench: TableBench, sample: Sample, itype: str = "DP") -> str:
    request = bench.request(sample, itype)  # type: ignore[arg-type]
    return request.messages[-1].content


def test_another_serialization_replaces_the_table_and_keeps_the_wording(samples: list[Sample]) -> None:
    sample = samples[0]
    head, table, tail = parts(sample.extra["instructions"]["DP"])
    assert head.endswith("Read the table below in JSON format:\n") and table.startswith("{'columns'")
    new_head, new_table, new_tail = parts(prompt(TableBench({"serialization": "markdown"}), sample))
    assert new_head == head.replace(" in JSON format:", ":") and new_tail == tail
    assert new_table.splitlines()[0] == "| " + " | ".join(sample.evidence[0].header) + " |"  # type: ignore[union-attr]
    assert prompt(TableBench(), sample) == sample.extra["instructions"]["DP"]  # the default: the release's own


def test_a_perturbed_table_in_the_release_s_writing_keeps_its_values(samples: list[Sample]) -> None:
    sample = samples[0]
    release = ast.literal_eval(parts(sample.extra["instructions"]["DP"])[1])
    head, table, _ = parts(prompt(TableBench({"perturbation": "shuffle_rows"}), sample))
    shuffled = ast.literal_eval(table)
    assert head == parts(sample.extra["instructions"]["DP"])[0] and shuffled["columns"] == release["columns"]
    assert shuffled["data"] != release["data"] and sorted(map(json.dumps, shuffled["data"])) == sorted(
        map(json.dumps, release["data"]))  # numbers stay numbers
    assert any(isinstance(v, int) for row in shuffled["data"] for v in row)


@pytest.mark.parametrize("options", [{"serialization": "csv", "perturbation": "transpose"},
                                     {"perturbation": "shuffle_columns"}])
def test_the_oracle_answers_the_re_rendered_prompts(samples: list[Sample], options: dict[str, str]) -> None:
    plain, changed = TableBench(), TableBench(options)
    for sample in samples:
        for itype in ("DP", "TCoT", "SCoT", "PoT"):
            request = changed.request(sample, itype)  # type: ignore[arg-type]
            assert request.messages[-1].content != sample.extra["instructions"][itype]
            assert changed.oracle(sample, request) == plain.oracle(sample, plain.request(sample, itype))  # type: ignore[arg-type]


def test_an_unknown_format_and_an_instruction_without_its_table_are_refused(samples: list[Sample]) -> None:
    with pytest.raises(UsageError, match="unknown serialization 'markdwn'. Did you mean: markdown"):
        TableBench({"serialization": "markdwn"})
    sample = samples[0].model_copy(update={"extra": {**samples[0].extra, "instructions": {"DP": "no table here"}}})
    with pytest.raises(DataError, match=f"the instruction of {sample.id} has no"):
        TableBench({"serialization": "csv"}).request(sample, "DP")


def test_the_robustness_preset_runs_its_grid(generated: Path, tmp_path: Path) -> None:
    listed = invoke("list")
    assert listed.returncode == 0 and "robust-tablebench  robustness grid, 28 cells" in listed.stdout
    run = invoke("run", "-m", "oracle", "--preset", "robust-tablebench", "--limit", "2", "--data-dir", str(generated),
                 "--out", str(tmp_path / "r"), "--no-progress", "--no-cache")
    assert run.returncode == 0, run.stderr
    results = json.loads((tmp_path / "r" / "metrics.json").read_text())["results"]
    assert len(results) == 28 and all(r["metrics"]["overall"] == 1.0 for r in results)
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["sessions"][0]["model_calls"] == 28 * 2  # the documented cost: cells x samples
