"""``structbench convert --to inspect``: Inspect reads one log per entry with every sample, the oracle's 1.0 in
each; ``structbench report`` reads the logs back (converted ones, and those of ``inspect eval structbench/...``)
into the same report as the run directory."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from extras import require_extra

require_extra("inspect_ai", "inspect")

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.log import EvalSample, read_eval_log, read_eval_log_sample_summaries  # noqa: E402

from interop_runs import LIMIT, run_records, sb, sb_here  # noqa: E402
from structbench.inspect_tasks import benchmark_task  # noqa: E402
from structbench.interop.inspect_log import eval_sample  # noqa: E402
from structbench.report.inspect_runs import sample_record  # noqa: E402
from structbench.runfiles.records import SampleRecord  # noqa: E402
from structbench.runfiles.results import MetricsFile  # noqa: E402


def _prompt(sample: EvalSample) -> Any:
    return sample.input if isinstance(sample.input, str) else [{"role": m.role, "content": m.text}
                                                               for m in sample.input]


@pytest.fixture(scope="module")
def logs(oracle_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``structbench convert RUN --to inspect --out logs`` of the oracle run, once for the tests that only read the
    logs (a conversion is seconds of CPU), in this process."""
    root = tmp_path_factory.mktemp("converted")
    sb_here(root, "convert", str(oracle_run), "--to", "inspect", "--out", "logs")
    return root / "logs"


@pytest.mark.shared
def test_one_log_per_entry_with_every_sample_and_the_oracles_score(oracle_run: Path, logs: Path) -> None:
    metrics = MetricsFile.model_validate_json((oracle_run / "metrics.json").read_text())
    entries = {(e.benchmark, e.variant, e.strategy): e for e in metrics.results}
    records = run_records(oracle_run)
    read = [read_eval_log(str(p)) for p in sorted(logs.glob("*.eval"))]
    assert len(read) == len(entries) == 14
    seen = set()
    for log in read:
        meta = log.eval.metadata or {}
        key = (meta["benchmark"], meta["variant"], meta["strategy"])
        seen.add(key)
        entry = entries[key]
        assert log.status == "success" and log.eval.model == "structbench/oracle"
        assert log.eval.task == "_".join(key) and log.eval.task_registry_name == f"structbench/{key[0]}"
        assert log.eval.config.limit == LIMIT and meta["run"]["manifest"]["config"]["benches"] == ["scitab",
                                                                                                   "structext"]
        assert log.stats.started_at and log.stats.completed_at
        assert log.results is not None and log.results.headline is not None
        (score,) = log.results.scores
        head = entry.headline.name
        assert log.results.headline.metric == head and score.metrics[head].value == 1.0
        assert score.metrics[f"{head}_ci_low"].value == entry.headline.ci_low
        assert score.metrics[f"{head}_ci_high"].value == entry.headline.ci_high
        assert {k: m.value for k, m in score.metrics.items() if m.group == "structbench_metrics"} == entry.metrics
        mine = {k[4]: r for k, r in records.items() if k[:3] == key}
        assert log.samples is not None and sorted(s.id for s in log.samples) == sorted(mine) and len(mine) == LIMIT
        for sample in log.samples:
            record = mine[str(sample.id)]
            assert sample.target == record["gold"] and _prompt(sample) == record["prompt"]
            assert sample.output.completion == record["output"] and sample.messages[-1].text == record["output"]
            assert sample.scores is not None
            assert sample.scores[key[0]].value == 1.0 and json.loads(str(sample.scores[key[0]].answer)) == \
                record["parsed"]
            assert sample.metadata["task"] == record["task"] and sample.metadata["meta"] == record["meta"]
            assert all(sample.metadata[k] == v for k, v in record["meta"].items())  # breakdown keys, flat
            assert sample.error is None and sample.total_time == record["seconds"]
    assert seen == set(entries)


@pytest.mark.shared
def test_the_converted_logs_report_as_the_run_does(oracle_run: Path, logs: Path, tmp_path: Path) -> None:
    sb_here(tmp_path, "report", str(oracle_run), "--out", "a/report.html", "--json", "a.json")
    sb_here(tmp_path, "report", str(logs), "--out", "b/report.html", "--json", "b.json")
    a, b = (json.loads((tmp_path / f).read_text())["results"] for f in ("a.json", "b.json"))
    assert len(a) == len(b) == 14
    for x, y in zip(a, b, strict=True):
        assert {k: v for k, v in x.items() if k != "run"} == {k: v for k, v in y.items() if k != "run"}
    md_a = (tmp_path / "a" / "report.md").read_text().replace(str(oracle_run), "RUN")
    md_b = (tmp_path / "b" / "report.md").read_text().replace(str(logs), "RUN")
    assert md_a == md_b


@pytest.mark.shared
def test_a_log_of_inspect_eval_reports_as_a_structbench_run(shared_datasets: Path, tmp_path: Path) -> None:
    """The same samples under ``inspect eval structbench/scitab --model structbench/oracle`` and ``structbench run``:
    the report reads both, with the same scores."""
    (log,) = inspect_eval(benchmark_task("scitab", strategy="cot", data_dir=shared_datasets, limit=LIMIT),
                          model="structbench/oracle", log_dir=str(tmp_path / "ilogs"), display="none")
    assert log.status == "success"
    # the run in a process of its own: it forks its workers, and Inspect's eval may have left a thread here
    sb(tmp_path, "run", "-m", "oracle", "-b", "scitab", "-s", "cot", "-n", str(LIMIT), "--data-dir",
       str(shared_datasets), "--out", "run", "--no-progress")
    sb_here(tmp_path, "report", "ilogs", "--out", "i/report.html", "--json", "i.json")
    sb_here(tmp_path, "report", "run", "--out", "r/report.html", "--json", "r.json")
    (via_inspect,), (via_run,) = (json.loads((tmp_path / f).read_text())["results"] for f in ("i.json", "r.json"))
    assert via_inspect["model"] == "structbench/oracle" and via_run["model"] == "oracle"
    for field in ("benchmark", "variant", "strategy", "headline", "metrics", "n", "errors", "baselines",
                  "confusion_matrices", "interval"):
        assert via_inspect[field] == via_run[field], field
    assert via_inspect["metrics"]["macro_f1"] == 1.0
    html = (tmp_path / "i" / "report.html").read_text()
    assert "068fc4e5-d40c-4788-a5a7-bad858cbd7c7" in html  # the sample browser has the log's samples


def _records() -> list[SampleRecord]:
    base: dict[str, Any] = {"benchmark": "toy", "variant": "small", "strategy": "vote", "model": "m", "task": "t",
                            "meta": {"rows": 3, "kind": "x", "nested": {"a": [1]}}, "gold": "yes"}
    return [
        SampleRecord(**base, id="thought", prompt=[{"role": "system", "content": "be brief"},
                                                   {"role": "user", "content": "is 3 there?"}],
                     output="yes", outputs=["no", "yes", "yes"], parsed="yes", score=1.0, values={"f1": 1.0},
                     confidence=0.75, artifacts={"votes": {"yes": 2, "no": 1}}, reasoning="3 is in row 2",
                     reasoning_tokens=5, calls=3, cached_calls=1, seconds=1.5),
        SampleRecord(**base, id="text-prompt", prompt="a completion prompt", output="no", parsed="no", score=0.0,
                     calls=1, seconds=0.25),
        SampleRecord(**base, id="cut-off", prompt="p", output="", reasoning="and then", reasoning_cut_off=True,
                     replies_cut_off=1, calls=1),
        SampleRecord(**base, id="model-error", prompt="p", output="", error="HTTP 500 after 6 retries",
                     error_kind="model", calls=1),
        SampleRecord(**base, id="harness", prompt="p", output="garbage", parsed=None, score=0.0,
                     error="Traceback (most recent call last):\n  ...\nValueError: bad", error_kind="harness"),
        SampleRecord(**base, id="too-long", prompt=None, output="", error="prompt too long", error_kind="context"),
    ]


def test_every_kind_of_record_comes_back_from_its_sample_unchanged() -> None:
    """Thoughts, sampled replies, artifacts, confidence, timings, and each kind of error survive a trip through a
    written-and-read Inspect sample."""
    for record in _records():
        sample = EvalSample.model_validate_json(eval_sample(record, "structbench/m", 1).model_dump_json())
        assert sample_record(sample, "toy", "small", "vote", "m") == record, record.id
    thought = eval_sample(_records()[0], "structbench/m", 1)
    assert [c.message.text for c in thought.output.choices] == ["no", "yes", "yes"]
    assert thought.messages[-1].content[0].reasoning == "3 is in row 2"  # type: ignore[index, union-attr]
    harness = eval_sample(_records()[4], "structbench/m", 1)
    assert harness.scores is None and harness.error is not None and "ValueError: bad" in harness.error.message


@pytest.mark.shared
def test_an_older_run_directory_converts_and_an_unreadable_one_is_refused(oracle_run: Path, tmp_path: Path) -> None:
    """A run written before later fields existed converts; a manifest, metrics file or record this structbench
    cannot read is exit 2 with one line naming the file, and nothing is written."""
    old = tmp_path / "old"
    shutil.copytree(oracle_run, old)
    manifest = json.loads((old / "manifest.json").read_text())
    for key in ("packages", "git_revision", "model_context", "workers", "platform"):
        manifest.pop(key, None)
    for key in ("system_prompt", "chat_template_args", "generation", "model_options", "reasoning",
                "allow_modified_data"):
        manifest["config"].pop(key)
    manifest["structbench"] = "0.0.1"
    (old / "manifest.json").write_text(json.dumps(manifest))
    lines = [json.loads(x) for x in (old / "samples.jsonl").read_text().splitlines()]
    for line in lines:
        for key in ("reasoning", "reasoning_tokens", "reasoning_cut_off", "replies_cut_off", "error_kind",
                    "cached_calls", "confidence"):
            line.pop(key)
    (old / "samples.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    metrics = json.loads((old / "metrics.json").read_text())
    for entry in metrics["results"]:
        for key in ("too_long", "reasoning_cut_off", "replies_cut_off", "baselines", "confusion_matrices"):
            entry.pop(key)
        for key in ("ci_low", "ci_high", "confidence"):
            entry["headline"].pop(key)
    (old / "metrics.json").write_text(json.dumps(metrics))
    sb_here(tmp_path, "convert", "old", "--to", "inspect", "--out", "logs")
    logs = [read_eval_log(str(p)) for p in (tmp_path / "logs").glob("*.eval")]
    assert len(logs) == 14 and all(log.results.scores[0].metrics[log.results.headline.metric].value == 1.0  # type: ignore[union-attr]
                                   for log in logs)

    def refused(name: str, *, manifest: Any = None, record: Any = None, metrics: bool = True) -> str:
        bad = tmp_path / name
        shutil.copytree(old, bad)
        if manifest is not None:
            (bad / "manifest.json").write_text(json.dumps(manifest))
        if record is not None:
            with (bad / "samples.jsonl").open("a") as fh:
                fh.write(json.dumps(record) + "\n")
        if not metrics:
            (bad / "metrics.json").unlink()
        proc = sb_here(tmp_path, "convert", name, "--to", "inspect", "--out", f"{name}-logs", check=2)
        assert not (tmp_path / f"{name}-logs").exists()
        (line,) = proc.stderr.strip().splitlines()
        return line

    renamed = dict(manifest, config={**manifest["config"], "model_name": manifest["config"].pop("model")})
    line = refused("renamed", manifest=renamed)
    assert "manifest.json" in line and "structbench 0.0.1" in line and "model" in line
    line = refused("newer", record={**lines[0], "id": "extra", "judge_votes": 3})
    assert f"samples.jsonl:{len(lines) + 1}" in line and "structbench 0.0.1" in line
    assert "did not finish" in refused("unfinished", metrics=False)


@pytest.mark.shared
def test_a_damaged_line_of_a_run_this_structbench_wrote_names_no_version(oracle_run: Path, tmp_path: Path) -> None:
    """A record line this very structbench cannot read is damage, not another format: the error names the file and
    line and says nothing of versions (it once blamed "structbench 0.1.0, which this structbench (0.1.0) cannot
    read")."""
    bad = tmp_path / "bad"
    shutil.copytree(oracle_run, bad)
    records = bad / "samples.jsonl"
    lines = records.read_text().splitlines(keepends=True)
    lines[4] = "{garbage\n"
    records.write_text("".join(lines))
    proc = sb_here(tmp_path, "convert", "bad", "--to", "inspect", "--out", "logs", check=2)
    (line,) = proc.stderr.strip().splitlines()
    assert "samples.jsonl:5: not a sample record" in line and "structbench" not in line.split("record")[1]
    assert not (tmp_path / "logs").exists()


@pytest.mark.shared
def test_inspects_data_frames_read_the_converted_logs(oracle_run: Path, logs: Path) -> None:
    """``evals_df`` has each log's headline, ``samples_df`` a row per record with the breakdown keys as columns."""
    pytest.importorskip("pandas")
    from inspect_ai.analysis import evals_df, samples_df

    evals = evals_df(str(logs), quiet=True)
    assert len(evals) == 14 and set(evals["score_headline_value"]) == {1.0}
    assert set(evals["score_headline_metric"]) == {"macro_f1", "rougeL"}
    assert set(evals["model"]) == {"structbench/oracle"}
    samples = samples_df(str(logs), quiet=True)
    assert len(samples) == len(run_records(oracle_run)) == 14 * LIMIT
    structext = samples[samples["metadata_language"].notna()]
    assert len(structext) == 8 * LIMIT and {"metadata_template", "metadata_depth"} <= set(samples.columns)


def _without_random_ids(value: Any) -> Any:
    """A sample's JSON without what Inspect's models draw anew each time they are built (ids, event stamps)."""
    if isinstance(value, dict):
        return {k: _without_random_ids(v) for k, v in value.items()
                if k not in ("id", "uuid", "timestamp", "working_start")}
    if isinstance(value, list):
        return [_without_random_ids(v) for v in value]
    return value


@pytest.mark.shared
def test_samples_built_in_forked_children_are_those_built_here(oracle_run: Path) -> None:
    """``convert`` builds and serializes the samples a chunk at a time in forked children (``sample_members``):
    the same members, in the same order, as built one at a time in this process. An entry of one chunk is built
    here (a child would build it while this process waits)."""
    from unittest.mock import patch

    from structbench.interop import inspect_log
    from structbench.interop.rundir import read_run

    run = read_run(oracle_run)
    for entry in run.entries:
        with patch.object(inspect_log, "CHUNK", 3):
            forked = list(inspect_log.sample_members(run, entry))
        here = list(inspect_log.serialized(inspect_log.eval_samples(run, entry)))
        assert len(forked) == len(entry.records) > 3
        assert [name for name, _, _ in forked] == [name for name, _, _ in here]
        for (_, sample, summary), (_, sample_here, summary_here) in zip(forked, here, strict=True):
            assert _without_random_ids(json.loads(sample)) == _without_random_ids(json.loads(sample_here))
            assert _without_random_ids(json.loads(summary)) == _without_random_ids(json.loads(summary_here))
        assert len(entry.records) <= inspect_log.CHUNK
        with patch.object(inspect_log, "fork_imap", side_effect=AssertionError("a child forked for one chunk")):
            alone = list(inspect_log.sample_members(run, entry))
        assert [name for name, _, _ in alone] == [name for name, _, _ in here]


@pytest.mark.shared
def test_a_sweeps_converted_logs_report_as_its_run_does(shared_datasets: Path, tmp_path: Path) -> None:
    """Each cell of a sweep is a log of its own; ``report`` took two cells of one entry for the same log given twice
    and refused them."""
    sb(tmp_path, "run", "-m", "oracle", "-b", "scitab", "-n", str(LIMIT), "--sweep", "serialization=markdown,csv",
       "--data-dir", str(shared_datasets), "--out", "run", "--no-progress")
    sb_here(tmp_path, "convert", "run", "--to", "inspect", "--out", "logs")
    sb_here(tmp_path, "report", "run", "--out", "a.md", "--json", "a.json")
    sb_here(tmp_path, "report", "logs", "--out", "b.md", "--json", "b.json")
    a, b = (json.loads((tmp_path / f).read_text())["results"] for f in ("a.json", "b.json"))
    assert sorted(x["cell"] for x in a) == ["serialization=csv", "serialization=markdown"]
    assert [{k: v for k, v in x.items() if k != "run"} for x in a] == [{k: v for k, v in y.items() if k != "run"}
                                                                      for y in b]


USAGE = {"prompt_tokens": 100, "completion_tokens": 42, "total_tokens": 142,
         "prompt_tokens_details": {"cached_tokens": 60}, "completion_tokens_details": {"reasoning_tokens": 40}}
"""What the loopback server reports for every call: 100 prompt tokens (60 from the prompt cache), 42 completion
tokens (40 of them thinking)."""


@pytest.mark.parametrize("usage", [USAGE, None], ids=["reported", "unknown"])
def test_the_runs_token_usage_is_in_inspects_own_usage_fields(tmp_path: Path, usage: dict[str, Any] | None) -> None:
    """``inspect view`` and Inspect's data frames read a log's tokens from ``stats.model_usage`` and each sample's
    ``model_usage``; they were empty, the tokens only in structbench's metadata. Read back with Inspect's own reader:
    Inspect's input tokens leave the cached ones out; a server that reported no usage leaves them absent, not 0."""
    from structbench.testing.openai_server import MockOpenAIServer, serve_in_thread

    (tmp_path / "prices.yaml").write_text("mock: {input: 1, output: 2}\n")  # per million tokens
    env = {"STRUCTBENCH_PLUGINS": "toybench"}
    with serve_in_thread(MockOpenAIServer(reply="yes", usage=usage, no_usage=usage is None)) as url:
        sb(tmp_path, "run", "-m", "openai:mock", "--base-url", url, "-b", "toy", "-s", "direct", "--limit", "3",
           "--prices", "prices.yaml", "--no-progress", "--out", "run", env=env)
    sb_here(tmp_path, "convert", "run", "--to", "inspect", "--out", "logs", env=env)
    (path,) = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(path))
    assert log.samples is not None and len(log.samples) == 3
    if usage is None:
        assert log.stats.model_usage == {} and all(s.model_usage == {} for s in log.samples)
        return
    per_call = {"input_tokens": 40, "output_tokens": 42, "total_tokens": 142, "input_tokens_cache_read": 60,
                "reasoning_tokens": 40, "input_tokens_cache_write": None, "total_cost": None}
    for sample in log.samples:
        assert {k: u.model_dump() for k, u in sample.model_usage.items()} == {"structbench/openai:mock": per_call}
    (total,) = log.stats.model_usage.values()
    assert list(log.stats.model_usage) == ["structbench/openai:mock"] == [log.eval.model]
    assert (total.input_tokens, total.output_tokens, total.total_tokens, total.input_tokens_cache_read,
            total.reasoning_tokens) == (120, 126, 426, 180, 120)
    assert total.total_cost == pytest.approx(3 * (100 + 2 * 42) / 1e6)
    summaries = read_eval_log_sample_summaries(str(path))  # what ``inspect view`` lists the samples from
    assert [{k: u.model_dump() for k, u in s.model_usage.items()} for s in summaries] == \
        [{"structbench/openai:mock": per_call}] * 3
