"""``structbench convert --to lm-eval``: the files lm-evaluation-harness writes, as its own readers and typed schema
(``lm_eval.result_schema``) take them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extras import require_extra

require_extra("lm_eval", "dev")

from lm_eval.result_schema import EvalResults, SampleResult  # noqa: E402
from lm_eval.utils import (  # noqa: E402
    get_file_datetime,
    get_file_task_name,
    get_latest_filename,
    get_results_filenames,
    get_sample_results_filenames,
    make_table,
)
from pydantic import TypeAdapter  # noqa: E402

from interop_runs import LIMIT, run_records, sb  # noqa: E402
from structbench.runfiles.results import MetricsFile  # noqa: E402


@pytest.mark.shared
def test_lm_evals_readers_take_the_results_and_samples(oracle_run: Path, tmp_path: Path) -> None:
    sb(tmp_path, "convert", str(oracle_run), "--to", "lm-eval", "--out", "lm")
    files = [str(p.relative_to(tmp_path)) for p in (tmp_path / "lm").rglob("*") if p.is_file()]
    (results_path,) = get_results_filenames(files)
    samples_paths = get_sample_results_filenames(files)
    assert Path(results_path).parent.name == "oracle"  # lm-eval's <output>/<model>/ layout
    assert get_latest_filename([results_path]) == results_path
    metrics = MetricsFile.model_validate_json((oracle_run / "metrics.json").read_text())
    tasks = {f"{e.benchmark}_{e.variant}_{e.strategy}": e for e in metrics.results}
    assert {get_file_task_name(Path(p).name) for p in samples_paths} == set(tasks)
    assert {get_file_datetime(Path(p).name) for p in samples_paths} == {
        get_file_datetime(Path(results_path).name).removesuffix(".json")}

    results = json.loads((tmp_path / results_path).read_text())
    # lm-eval's TypedDict; its "configs" are TaskConfig dumps (lists, dicts) that the TypedDict does not describe.
    TypeAdapter(EvalResults).validate_python({k: v for k, v in results.items() if k != "configs"})
    assert results["model_name"] == "oracle" and results["config"]["limit"] == LIMIT
    for task, entry in tasks.items():
        got = results["results"][task]
        assert got["sample_len"] == entry.n == LIMIT
        assert {k.removesuffix(",none"): v for k, v in got.items() if k.endswith(",none") and "_stderr" not in k} \
            == entry.metrics
        assert got[f"{entry.headline.name},none"] == 1.0 and f"{entry.headline.name}_stderr,none" in got
        assert results["configs"][task]["output_type"] == "generate_until"
    table = make_table(results)
    assert all(task in table for task in tasks) and "macro_f1" in table and "rougeL" in table

    records = run_records(oracle_run)
    for path in samples_paths:
        task = get_file_task_name(Path(path).name)
        entry = tasks[task]
        lines = [json.loads(x) for x in (tmp_path / path).read_text().splitlines()]
        assert len(lines) == LIMIT and [x["doc_id"] for x in lines] == list(range(LIMIT))
        per_sample = [m["metric"] for m in results["configs"][task]["metric_list"]]
        for line in lines:
            TypeAdapter(SampleResult).validate_python(line)
            record = records[(entry.benchmark, entry.variant, entry.strategy, "oracle", line["doc"]["id"])]
            assert line["target"] == record["gold"] and line["resps"] == [[record["output"]]]
            assert line["filtered_resps"] == [record["parsed"]] and line["score"] == 1.0
            assert line["arguments"]["gen_args_0"]["arg_0"] == json.dumps(record["prompt"], ensure_ascii=False)
            assert all(isinstance(line[m], float) for m in per_sample)  # what Zeno and W&B read per metric
        assert results["task_hashes"][task]


@pytest.mark.shared
def test_a_documents_epochs_are_one_line_and_lm_evals_repeats(shared_datasets: Path, tmp_path: Path) -> None:
    """Each epoch was a line of its own under a doc_id of its own, and the results said ``repeats: 1``: tools that
    join on ``doc_id`` across models paired other rows."""
    sb(tmp_path, "run", "-m", "oracle", "-b", "scitab", "-n", "3", "--epochs", "2", "--data-dir", str(shared_datasets),
       "--out", "run", "--no-progress")
    sb(tmp_path, "convert", "run", "--to", "lm-eval", "--out", "lm")
    (results_path,) = (tmp_path / "lm").rglob("results_*.json")
    results = json.loads(results_path.read_text())
    task = "scitab_all_zero_shot"
    assert results["configs"][task]["repeats"] == 2
    assert results["n-samples"][task] == {"original": 3, "effective": 3}
    (samples_path,) = (tmp_path / "lm").rglob(f"samples_{task}_*.jsonl")
    lines = [json.loads(x) for x in samples_path.read_text().splitlines()]
    assert [x["doc_id"] for x in lines] == [0, 1, 2] and len({x["doc"]["id"] for x in lines}) == 3
    for line in lines:
        TypeAdapter(SampleResult).validate_python(line)
        assert len(line["resps"]) == len(line["filtered_resps"]) == 2 and line["score"] == 1.0
